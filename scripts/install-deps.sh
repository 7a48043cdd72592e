#!/usr/bin/env bash
# Installs everything scx_soryu needs to build, to run in a VM and to be
# tested, on Debian 12. Idempotent: a second run only checks.
#
#   build:  clang-19 + llvm-19 (BPF), libelf, zlib, zstd, pkg-config
#   VM:     qemu >= 10.0 (bookworm-backports; software emulation), kmod,
#           busybox-static, cpio,
#           virtme-ng (PyPI), a trixie-backports kernel (see vm/kernel.sh),
#           mmdebstrap and a Debian 12 root with systemd (vm/sysroot.sh),
#           the Lua 5.4 source the compile benchmark builds (bench/source.sh)
#   load:   stress-ng, rt-tests (cyclictest, hackbench), linux-perf (perf bench)
#   tests:  systemd (systemd-analyze), make (install), python3 (harness), jq,
#           bpftool (reads the loaded program back), dpkg-dev (make deb),
#           python3-prometheus-client, and promtool and node_exporter
#           unpacked into a cache (tests/host/prometheus.sh)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$PATH:${HOME:-/root}/.cargo/bin"

# What this script does not install, checked first: the Rust toolchain
# (rustup's; Debian 12's cargo is older than the crate's rust-version) and a
# C compiler for the host-side build of the policy arithmetic.
rust_min=$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' "$repo/Cargo.toml")
missing() { echo "install-deps: $*" >&2; exit 1; }
command -v cargo >/dev/null || missing "cargo not found: install Rust >= $rust_min (rustup) and put ~/.cargo/bin in PATH"
cargo_v=$(cargo --version | awk '{print $2}')
dpkg --compare-versions "$cargo_v" ge "$rust_min" ||
  missing "cargo $cargo_v is older than the crate's rust-version $rust_min: rustup update"
cargo fmt --version >/dev/null 2>&1 || missing "rustfmt not found: rustup component add rustfmt"
command -v cc >/dev/null || missing "no C compiler (cc): apt-get install gcc"

[ "$(id -u)" = 0 ] || { echo "install-deps: run as root (apt-get needs it)" >&2; exit 1; }

VNG_VERSION=1.42
export DEBIAN_FRONTEND=noninteractive

# The Debian mirror this machine already uses (its bookworm source), so that
# no mirror is written into the project: deb822 "URIs:" lines of a stanza
# whose Suites include bookworm, or one-line "deb URI bookworm ..." entries.
debian_uri() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk 'BEGIN { RS = ""; FS = "\n" }
      /(^|\n)Suites:[^\n]*[[:space:]]bookworm([[:space:]]|$)/ && !/(^|\n)Enabled: *no/ {
        for (i = 1; i <= NF; i++) if ($i ~ /^URIs:/) { split($i, u, /[[:space:]]+/); print u[2]; exit }
      }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' "$f"
  done
}
uri=$(debian_uri | grep -v -e security -e '^$' | head -n1)
[ -n "$uri" ] || { echo "install-deps: no Debian bookworm source in /etc/apt (add one: the VM's kernel and qemu come from that mirror)" >&2; exit 1; }

# Two more suites of that mirror, pinned low so nothing is taken from them
# unless asked for by name:
#   trixie-backports: vm/kernel.sh `apt-get download`s the guest kernel (a 7.x
#     kernel with CONFIG_SCHED_CLASS_EXT=y); nothing is installed from it.
#   bookworm-backports: qemu 10.0 (qemu-system-x86 below). Debian 12's own
#     qemu 7.2 crashes the guest under multi-threaded TCG now and then while
#     the guest live-patches its static branches (sched_ext switching on or
#     off); docs/testing.md has the measurements.
# (Never `apt-get install -t trixie ...`: that turns into a partial upgrade of
# libc6, systemd, dpkg... to Debian 13. Backports of bookworm are built for
# bookworm and pull only what they need.)
sources=/etc/apt/sources.list.d/soryu.sources
want=$(cat <<SRC
Types: deb
URIs: $uri
Suites: trixie-backports bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
)
# trixie-backports at priority 1: only ever taken by explicit version (its
# qemu is newer than bookworm-backports' and built for Debian 13: an upgrade
# must never pick it).
pins=$(cat <<'PIN'
Package: *
Pin: release n=trixie-backports
Pin-Priority: 1

Package: *
Pin: release n=bookworm-backports
Pin-Priority: 100
PIN
)
if [ "$(cat /etc/apt/preferences.d/soryu 2>/dev/null)" != "$pins" ]; then
  printf '%s\n' "$pins" >/etc/apt/preferences.d/soryu
fi
if [ "$(cat "$sources" 2>/dev/null)" != "$want" ]; then
  rm -f /etc/apt/sources.list.d/soryu-trixie.sources /etc/apt/preferences.d/soryu-trixie
  printf '%s\n' "$want" >"$sources"
  apt-get update -q
elif [[ "$(apt-cache policy linux-image-amd64 2>/dev/null)" != *trixie-backports* ]]; then
  # Sources present but lists never fetched (fresh machine, or lists wiped).
  apt-get update -q
fi

need=()
# busybox-static: virtme-ng builds an initramfs (to load the guest kernel's
# overlay/9p/virtio modules before mounting the root) and refuses to without
# a busybox. file: virtme-ng reads the kernel version off the image with it.
for p in clang-19 llvm-19 libelf-dev zlib1g-dev libzstd-dev pkg-config \
         kmod cpio busybox-static file stress-ng rt-tests make \
         systemd jq python3-pip bpftool dpkg-dev linux-perf python3-prometheus-client \
         mmdebstrap; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get install -y -q --no-install-recommends "${need[@]}"
fi

# qemu >= QEMU_MIN from bookworm-backports (see the sources above for why).
# A qemu 7.2 already installed from bookworm is upgraded.
QEMU_MIN=10.0
qemu_version() { dpkg-query -W -f '${Version}' qemu-system-x86 2>/dev/null | sed 's/^[0-9]*://'; }
if ! dpkg --compare-versions "$(qemu_version)" ge "$QEMU_MIN"; then
  apt-get install -y -q --no-install-recommends -t bookworm-backports qemu-system-x86
  dpkg --compare-versions "$(qemu_version)" ge "$QEMU_MIN" ||
    { echo "install-deps: qemu-system-x86 is $(qemu_version), need >= $QEMU_MIN from bookworm-backports" >&2; exit 1; }
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
  command -v vng >/dev/null 2>&1 || { echo "install-deps: virtme-ng installed but vng is not in PATH" >&2; exit 1; }
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
  (cd "$tmp" && apt-get download -q "$pkg/bookworm" >/dev/null 2>&1 || apt-get download -q "$pkg") ||
    { rm -rf "$tmp"; echo "install-deps: cannot download $pkg" >&2; exit 1; }
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
