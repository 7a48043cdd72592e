#!/usr/bin/env bash
# Finds, fetches or builds, and caches a guest kernel for the VM tests:
# one of the kernels pinned in vm/kernel.pin, by name (SORYU_VM_KERNEL, or
# the first line of the pin file: Debian's trixie-backports 7.3).
#
#  - a `binary` line is Debian's own kernel build: its packages are
#    downloaded with `apt-get download` (signed by the archive, checked by
#    apt) and unpacked with `dpkg-deb -x`; nothing is installed on the host;
#  - a `source` line is built from a linux-source-X package by
#    vm/kernel-build.sh (10-20 minutes, once per version and config).
#
# The cache is SORYU_VM_CACHE (default /var/cache/scx_soryu/vm); a second
# run only checks it. Needs the apt sources scripts/install-deps.sh adds.
#
# Executed, it prints shell assignments for eval:
#   SORYU_KNAME     the name in vm/kernel.pin, e.g. 7.3 or 6.12-debug
#   SORYU_KVER      kernel release, e.g. 7.3.4+deb13-amd64
#   SORYU_VMLINUZ   the kernel image to boot
#   SORYU_KCONFIG   its .config (the guest has no /boot/config-* nor
#                   /proc/config.gz; libbpf needs it for Kconfig externs)
#   SORYU_KMODDIR   its modules (virtme-ng loads overlay/9p/... from
#                   there); empty for a source build, which has none
# Sourced, it exports the same variables instead.
#
# Usage: vm/kernel.sh [NAME]          # fetch or build if needed, print the assignments
#        eval "$(vm/kernel.sh 6.12)"
#        vm/kernel.sh --list          # the pinned names, one a line
#        vm/kernel.sh --all           # fetch or build every pinned kernel
#        vm/kernel.sh --bump NAME     # pin the newest upload of NAME in
#                                     # vm/kernel.pin (then run the tests
#                                     # and commit the pin)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${SORYU_VM_CACHE:-/var/cache/scx_soryu/vm}
suite=trixie-backports
pin_file=$here/kernel.pin

die() { echo "vm/kernel.sh: $*" >&2; exit 1; }
log() { echo "vm/kernel.sh: $*" >&2; }

# The pinned lines, comments and blanks left out: NAME KIND WHAT VERSION [VARIANT].
pins() { grep -Ev '^[[:space:]]*(#|$)' "$pin_file"; }
pin_of() { pins | awk -v n="$1" '$1 == n'; }

# The newest release of series $1 (e.g. 7.2) in $suite, and its package
# version: "7.2.12+deb13-amd64 7.2.12-1~bpo13+1".
newest_binary() {
  local r v
  r=$(apt-cache pkgnames "linux-image-$1." 2>/dev/null |
    grep -E "^linux-image-${1//./\\.}\.[0-9]+\+deb13-amd64\$" | sort -V | tail -n1) || return 1
  r=${r#linux-image-}
  v=$(apt-cache madison "linux-image-$r" 2>/dev/null | awk -F'|' -v s="$suite" '$3 ~ s { gsub(/ /, "", $2); print $2; exit }')
  [ -n "$r" ] && [ -n "$v" ] && echo "$r $v"
}
# The newest version of source package $1 in any configured suite.
newest_source() {
  apt-cache madison "$1" 2>/dev/null | awk -F'|' 'NR == 1 { gsub(/ /, "", $2); print $2 }' | grep .
}

case ${1:-} in
--list)
  pins | awk '{ print $1 }'
  exit 0
  ;;
--all)
  for n in $(pins | awk '{ print $1 }'); do
    SORYU_VM_KERNEL=$n "$0" >/dev/null
  done
  exit 0
  ;;
--bump)
  [ $# -eq 2 ] || die "usage: vm/kernel.sh --bump NAME (one of: $(pins | awk '{ print $1 }' | xargs))"
  read -r name kind what ver variant < <(pin_of "$2") || die "no kernel named '$2' in $pin_file"
  if [ "$kind" = binary ]; then
    new=$(newest_binary "$name") || die "apt knows no linux-image-$name.* in $suite (run scripts/install-deps.sh)"
  else
    new="$what $(newest_source "$what")" || die "apt knows no $what (run scripts/install-deps.sh)"
  fi
  awk -v n="$name" -v k="$kind" -v new="$new" -v var="${variant:-}" '
    !/^[[:space:]]*(#|$)/ && $1 == n { split(new, w, " ")
      printf "%-13s %-7s %-20s %-20s %s\n", n, k, w[1], w[2], var; next } { print }' \
    "$pin_file" >"$pin_file.new"
  sed -i 's/[[:space:]]*$//' "$pin_file.new"
  mv "$pin_file.new" "$pin_file"
  log "pinned $name: $new (was $what $ver): run scripts/test.sh, then commit vm/kernel.pin"
  exit 0
  ;;
-*) die "unknown option $1 (see the head of vm/kernel.sh)" ;;
esac

want=${1:-${SORYU_VM_KERNEL:-$(pins | awk 'NR == 1 { print $1 }')}}
read -r name kind what ver variant < <(pin_of "$want") ||
  die "no kernel named '$want' in $pin_file (pinned: $(pins | awk '{ print $1 }' | xargs))"

emit() { # emit RELEASE VMLINUZ KCONFIG KMODDIR
  grep -qx 'CONFIG_SCHED_CLASS_EXT=y' "$3" ||
    die "kernel $1 lacks CONFIG_SCHED_CLASS_EXT=y ($3): sched_ext cannot load in it"
  if [ "${BASH_SOURCE[0]}" != "$0" ]; then
    export SORYU_KNAME=$name SORYU_KVER=$1 SORYU_VMLINUZ=$2 SORYU_KCONFIG=$3 SORYU_KMODDIR=$4
  else
    printf 'SORYU_KNAME=%q\nSORYU_KVER=%q\nSORYU_VMLINUZ=%q\nSORYU_KCONFIG=%q\nSORYU_KMODDIR=%q\n' \
      "$name" "$1" "$2" "$3" "$4"
  fi
}

if [ "$kind" = source ]; then
  bdir=$("$here/kernel-build.sh" "$what" "$ver" ${variant:+"$variant"}) || exit 1
  emit "$(cat "$bdir/release")" "$bdir/bzImage" "$bdir/config" ""
  # (sourced: return, not exit)
  return 0 2>/dev/null || exit 0
fi
[ "$kind" = binary ] || die "kernel $name: unknown kind '$kind' in $pin_file"
kver=$what pkgver=$ver
cur=$(newest_binary "$name" || true)
if [ -n "$cur" ] && [ "$cur" != "$kver $pkgver" ]; then
  log "note: $suite now has $cur; the tests stay on the pinned $kver $pkgver (vm/kernel.sh --bump $name to move)"
fi

dir=$cache/$kver
root=$dir/root

if [ "$(cat "$dir/.complete" 2>/dev/null)" != "$pkgver" ]; then
  for tool in apt-get apt-cache dpkg-deb; do
    command -v "$tool" >/dev/null || die "$tool is needed to fetch the kernel"
  done
  mkdir -p "$cache"
  # Download and unpack into a scratch dir, then rename: an interrupted run
  # never leaves a half-unpacked kernel that looks complete.
  tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  # The 7.x packaging splits the kernel: linux-binary-* holds vmlinuz,
  # linux-base-* the config and System.map, linux-modules-* the modules.
  # The 6.x packaging had all of it in linux-image-*; fall back to that.
  pkgs=()
  for p in "linux-binary-$kver" "linux-base-$kver" "linux-modules-$kver"; do
    if apt-cache show "$p=$pkgver" >/dev/null 2>&1; then pkgs+=("$p=$pkgver"); fi
  done
  if [ ${#pkgs[@]} -eq 0 ]; then
    apt-cache show "linux-image-$kver=$pkgver" >/dev/null 2>&1 ||
      die "the pinned kernel $kver $pkgver is not in the archive (any more?): vm/kernel.sh --bump pins the current one"
    pkgs=("linux-image-$kver=$pkgver")
  fi
  log "downloading ${pkgs[*]} (~120 MB, once)"
  # apt-get download as root warns that it cannot drop privileges to _apt
  # for the download; harmless here.
  (cd "$tmp" && apt-get download -q "${pkgs[@]}") >&2 ||
    die "apt-get download ${pkgs[*]} failed"
  mkdir -p "$tmp/root"
  for deb in "$tmp"/*.deb; do
    dpkg-deb -x "$deb" "$tmp/root"
  done
  rm -f "$tmp"/*.deb
  # Debian's packages ship no modules.dep; virtme-ng needs one to find the
  # overlay/9p/virtio modules it loads at boot. Generate it here, once, so
  # the cache can stay read-only afterwards. depmod -b wants
  # BASE/lib/modules/VER; the 7.x packages are usr-merged.
  depmod=$(command -v depmod || echo /sbin/depmod)
  for base in "$tmp/root/usr" "$tmp/root"; do
    if [ -d "$base/lib/modules/$kver" ]; then
      "$depmod" -a -b "$base" "$kver" || die "depmod failed for $kver"
      break
    fi
  done
  chmod 755 "$tmp"
  echo "$pkgver" >"$tmp/.complete"
  rm -rf "$dir"
  mv "$tmp" "$dir"
  trap - EXIT
fi

# Locate image, config and modules (usr-merged 7.x layout first, then /boot).
find_first() {
  local f
  for f in "$@"; do
    if [ -e "$f" ]; then echo "$f"; return 0; fi
  done
  return 1
}
vmlinuz=$(find_first "$root/usr/lib/modules/$kver/vmlinuz" "$root/boot/vmlinuz-$kver") ||
  die "no vmlinuz for $kver under $root"
kconfig=$(find_first "$root/usr/lib/modules/$kver/config" "$root/boot/config-$kver") ||
  die "no kernel config for $kver under $root"
kmoddir=$(find_first "$root/usr/lib/modules/$kver" "$root/lib/modules/$kver") ||
  die "no modules for $kver under $root"

emit "$kver" "$vmlinuz" "$kconfig" "$kmoddir"
