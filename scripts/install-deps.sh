#!/usr/bin/env bash
# Installs what scx_soryu needs, with apt, on Debian 12 and 13 and on Ubuntu
# 24.04 or later. Idempotent: a second run only checks.
#
#   scripts/install-deps.sh --build   what building soryu needs: all a machine
#                                     whose kernel has sched_ext needs
#   scripts/install-deps.sh           that, and what the VM and the test suite
#                                     need (Debian 12 and 13; CI runs this)
#
#   build:  clang-19 (BPF; any clang >= 18 builds), libelf, zlib and zstd
#           headers, pkg-config, make, gcc. Rust >= Cargo.toml's rust-version
#           is checked, not installed: Debian's and Ubuntu's rustc are older
#           than that, so it comes from rustup.
#   VM:     qemu >= 10.0 (Debian 12: bookworm-backports), kmod, busybox-static,
#           cpio, file, virtme-ng (PyPI), the guest kernel (vm/kernel.sh),
#           mmdebstrap and the Debian 12 root with systemd (vm/sysroot.sh),
#           the Lua 5.4 source the compile benchmark builds (bench/source.sh),
#           and what building a guest kernel from Debian's source packages
#           takes (flex bison bc libssl-dev dwarves xz-utils)
#   tests:  rustfmt, stress-ng, rt-tests (cyclictest, hackbench), linux-perf
#           (perf bench), systemd (systemd-analyze), jq, bpftool, dpkg-dev
#           (make deb), lintian, python3-prometheus-client, and promtool and
#           node_exporter unpacked into a cache (tests/host/prometheus.sh)
#
# On any other system it names, in one line, what to install by hand;
# README.md's Requirements gives the package names for Arch and Fedora.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$PATH:${HOME:-/root}/.cargo/bin"
die() { echo "install-deps: $*" >&2; exit 1; }

mode=all
case "${1:-}" in
  "") ;;
  --build) mode=build ;;
  -h | --help)
    sed -n '2,/^set -e/{/^set -e/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
    exit 0
    ;;
  *) echo "install-deps: unknown option '$1': --build for the build only, nothing for everything" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "install-deps: one option at most (--build)" >&2; exit 2; }

rust_min=$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' "$repo/Cargo.toml")
by_hand="Rust >= $rust_min (rustup), clang >= 18, the libelf, zlib and zstd headers, pkg-config, make and a C compiler (README.md, Requirements, names the Arch and Fedora packages)"

# Which apt system this is. Anything else gets the one line of what to
# install by hand.
os_id= os_ver= os_name= codename=
if [ -r /etc/os-release ]; then
  # shellcheck disable=SC1091
  os_id=$(. /etc/os-release && echo "${ID:-}")
  os_ver=$(. /etc/os-release && echo "${VERSION_ID:-}")
  os_name=$(. /etc/os-release && echo "${PRETTY_NAME:-}")
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
fi
ver_ge() { dpkg --compare-versions "$1" ge "$2"; }
family=
if command -v apt-get >/dev/null && command -v dpkg >/dev/null; then
  case "$os_id" in
    debian) case "$os_ver" in 12 | 13) family=debian ;; esac ;;
    ubuntu) if ver_ge "$os_ver" 24.04; then family=ubuntu; fi ;;
  esac
fi
[ -n "$family" ] || die "no recipe for ${os_name:-this system} (it knows apt on Debian 12 and 13 and Ubuntu 24.04+): install by hand $by_hand"
if [ "$mode" = all ] && [ "$family" != debian ]; then
  die "the VM and the test suite need Debian 12 or 13 (the guest kernel comes from Debian's mirror); on ${os_name} run soryu on a kernel with sched_ext and use scripts/install-deps.sh --build"
fi

# What apt does not install: the Rust toolchain (Debian's and Ubuntu's
# rustc are older than the crate's rust-version), checked first so that
# nothing is installed in vain.
rustup_hint="install Rust >= $rust_min with rustup (Debian 13, Ubuntu: apt-get install rustup; then rustup default stable) and put ~/.cargo/bin in PATH"
command -v cargo >/dev/null || die "cargo not found: $rustup_hint"
cargo_v=$(cargo --version | awk '{print $2}')
ver_ge "$cargo_v" "$rust_min" ||
  die "cargo $cargo_v is older than the crate's rust-version $rust_min: rustup update (or $rustup_hint)"
if [ "$mode" = all ]; then
  cargo fmt --version >/dev/null 2>&1 || die "rustfmt not found (the suite runs cargo fmt --check): rustup component add rustfmt"
fi

[ "$(id -u)" = 0 ] || die "run as root (apt-get needs it)"
export DEBIAN_FRONTEND=noninteractive

# apt_install PKG...: installs those not installed yet; refreshes the
# package lists first when apt knows one of them not at all (a fresh
# machine, or lists wiped).
installed() { [ "$(dpkg-query -W -f '${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]; }
apt_install() {
  local p need=() stale=0
  for p in "$@"; do
    installed "$p" || need+=("$p")
  done
  [ ${#need[@]} -gt 0 ] || return 0
  for p in "${need[@]}"; do
    apt-cache show --no-all-versions "$p" >/dev/null 2>&1 || stale=1
  done
  [ "$stale" = 0 ] || apt-get update -q
  apt-get install -y -q --no-install-recommends "${need[@]}"
}

# ---- the build
apt_install clang-19 libelf-dev zlib1g-dev libzstd-dev pkg-config make gcc
if [ "$mode" = build ]; then
  echo "install-deps: the build's dependencies are present; build with: make build"
  exit 0
fi

# ---- the VM and the tests (Debian 12 and 13)
VNG_VERSION=1.42
QEMU_MIN=10.0

# The Debian mirror this machine already uses (its own suite's source), so
# that no mirror is written into the project: deb822 "URIs:" lines of a
# stanza whose Suites include $codename, or one-line "deb URI $codename ...".
debian_uri() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v s="$codename" 'BEGIN { RS = ""; FS = "\n" }
      $0 ~ "(^|\n)Suites:[^\n]*[[:space:]]" s "([[:space:]]|$)" && !/(^|\n)Enabled: *no/ {
        for (i = 1; i <= NF; i++) if ($i ~ /^URIs:/) { split($i, u, /[[:space:]]+/); print u[2]; exit }
      }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk -v s="$codename" '$1 == "deb" && $3 == s { print $2; exit }' "$f"
  done
}
# suite_elsewhere SUITE: a source other than ours already has it.
suite_elsewhere() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && [ "$f" != "$sources" ] || continue
    awk -v s="$1" 'BEGIN { RS = ""; FS = "\n"; r = 1 }
      $0 ~ "(^|\n)Suites:[^\n]*[[:space:]]" s "([[:space:]]|$)" && !/(^|\n)Enabled: *no/ { r = 0 }
      END { exit r }' "$f" && return 0
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk -v s="$1" '$1 == "deb" && $3 == s { f = 1 } END { exit !f }' "$f" && return 0
  done
  return 1
}
uri=$(debian_uri | grep -v -e security -e '^$' | head -n1)
[ -n "$uri" ] || die "no Debian $codename source in /etc/apt (add one: the VM's kernel comes from that mirror)"

# More suites of that mirror:
#   trixie-backports: vm/kernel.sh `apt-get download`s the guest kernel (a 7.x
#     kernel with CONFIG_SCHED_CLASS_EXT=y); nothing is installed from it.
#   bookworm-backports (Debian 12): qemu 10.0 (below). Debian 12's own qemu
#     7.2 crashes the guest under multi-threaded TCG now and then while the
#     guest live-patches its static branches (sched_ext switching on or
#     off); docs/testing.md has the measurements.
# On Debian 12 both are pinned low, so nothing comes from them unless asked
# for by name; trixie-backports at priority 1 is only ever taken by explicit
# version (its packages are built for Debian 13: an upgrade must never pick
# one). Never `apt-get install -t trixie ...` on Debian 12: that turns into a
# partial upgrade of libc6, systemd, dpkg... to Debian 13. On Debian 13
# trixie-backports is the machine's own backports, left at apt's default,
# and added only when no source has it yet.
sources=/etc/apt/sources.list.d/soryu.sources
pinfile=/etc/apt/preferences.d/soryu
case "$codename" in
  bookworm)
    suites="trixie-backports bookworm-backports"
    pins=$(printf '%s\n' "Package: *" "Pin: release n=trixie-backports" "Pin-Priority: 1" "" \
      "Package: *" "Pin: release n=bookworm-backports" "Pin-Priority: 100")
    ;;
  *)
    suites=
    suite_elsewhere trixie-backports || suites=trixie-backports
    pins=
    ;;
esac
if [ -n "$pins" ]; then
  [ "$(cat "$pinfile" 2>/dev/null)" = "$pins" ] || printf '%s\n' "$pins" >"$pinfile"
else
  rm -f "$pinfile"
fi
want=
[ -z "$suites" ] || want=$(printf '%s\n' "Types: deb" "URIs: $uri" "Suites: $suites" "Components: main" \
  "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg")
if [ "$(cat "$sources" 2>/dev/null)" != "$want" ]; then
  rm -f /etc/apt/sources.list.d/soryu-trixie.sources /etc/apt/preferences.d/soryu-trixie
  if [ -n "$want" ]; then printf '%s\n' "$want" >"$sources"; else rm -f "$sources"; fi
  apt-get update -q
elif [[ "$(apt-cache policy linux-image-amd64 2>/dev/null)" != *trixie-backports* ]]; then
  # Sources present but lists never fetched (fresh machine, or lists wiped).
  apt-get update -q
fi

# busybox-static: virtme-ng builds an initramfs (to load the guest kernel's
# overlay/9p/virtio modules before mounting the root) and refuses to without
# a busybox. file: virtme-ng reads the kernel version off the image with it.
# flex ... xz-utils: building guest kernels from Debian's linux-source-*.
apt_install kmod cpio busybox-static file stress-ng rt-tests systemd jq python3-pip \
  bpftool dpkg-dev lintian linux-perf python3-prometheus-client mmdebstrap \
  flex bison bc libssl-dev dwarves xz-utils

# qemu >= QEMU_MIN: Debian 13's own; on Debian 12 from bookworm-backports
# (see the sources above for why), upgrading a qemu 7.2 already installed.
qemu_version() { dpkg-query -W -f '${Version}' qemu-system-x86 2>/dev/null | sed 's/^[0-9]*://'; }
if ! ver_ge "$(qemu_version)" "$QEMU_MIN"; then
  if [ "$codename" = bookworm ]; then
    apt-get install -y -q --no-install-recommends -t bookworm-backports qemu-system-x86
  else
    apt_install qemu-system-x86
  fi
  ver_ge "$(qemu_version)" "$QEMU_MIN" ||
    die "qemu-system-x86 is $(qemu_version), need >= $QEMU_MIN"
fi

# virtme-ng from PyPI (Debian 12 has none). Debian's own python3 refuses pip
# installs (PEP 668, "externally-managed-environment"); a pyenv or venv
# python does not. Try plain first, then with --break-system-packages, which
# only adds a package under /usr/local and touches no Debian package.
if ! command -v vng >/dev/null 2>&1 || [ "$(vng --version 2>/dev/null | awk '{print $NF}')" != "$VNG_VERSION" ]; then
  python3 -m pip install -q "virtme-ng==$VNG_VERSION" ||
    python3 -m pip install -q --break-system-packages "virtme-ng==$VNG_VERSION"
  # pyenv only sees a new command after a rehash of its shims.
  if command -v pyenv >/dev/null 2>&1; then pyenv rehash || true; fi
  hash -r
  command -v vng >/dev/null 2>&1 || die "virtme-ng installed but vng is not in PATH"
fi
# promtool and node_exporter, for tests/host/prometheus.sh: unpacked from
# Debian's packages into a cache, not installed (the packages would enable
# a Prometheus server and an exporter as services on this machine). Both
# are static Go binaries.
tools=${SORYU_TOOLS_CACHE:-/var/cache/scx_soryu/tools}
for pb in prometheus:promtool prometheus-node-exporter:prometheus-node-exporter; do
  pkg=${pb%%:*} bin=${pb#*:}
  [ -x "$tools/$bin" ] && "$tools/$bin" --version >/dev/null 2>&1 && continue
  mkdir -p "$tools"
  tmp=$(mktemp -d "$tools/.fetch.XXXXXX")
  (cd "$tmp" && apt-get download -q "$pkg/$codename" >/dev/null 2>&1 || apt-get download -q "$pkg") ||
    { rm -rf "$tmp"; die "cannot download $pkg"; }
  dpkg-deb -x "$tmp"/*.deb "$tmp/root"
  install -m 755 "$tmp/root/usr/bin/$bin" "$tools/$bin"
  rm -rf "$tmp"
done

# The guest kernel for the VM tests (downloaded once into its cache), and
# the Debian 12 root with systemd as init that tests/host/systemd.sh boots
# (built once with mmdebstrap from the same mirror).
"$repo/vm/kernel.sh" >/dev/null
SORYU_DEBIAN_URI=$uri "$repo/vm/sysroot.sh" >/dev/null
# The C project the compile benchmark builds (bench/source.sh, cached).
SORYU_DEBIAN_URI=$uri "$repo/bench/source.sh" >/dev/null

echo "install-deps: all present"
