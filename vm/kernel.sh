#!/usr/bin/env bash
# Fetches and caches the guest kernel the VM tests boot: Debian
# trixie-backports' kernel (a 7.x kernel built with CONFIG_SCHED_CLASS_EXT=y,
# which the Debian 12 host kernel lacks), at the release and package version
# pinned in vm/kernel.pin, so that a new upload never changes what is tested
# without a commit.
#
# Nothing is installed on the host: the packages are downloaded with
# `apt-get download` (signed by the archive, checked by apt) and unpacked
# with `dpkg-deb -x` into a cache directory (SORYU_VM_CACHE, default
# /var/cache/scx_soryu/vm). A second run only checks the cache. Needs the apt
# sources that scripts/install-deps.sh adds.
#
# Executed, it prints shell assignments for eval:
#   SORYU_KVER      kernel release, e.g. 7.3.4+deb13-amd64
#   SORYU_VMLINUZ   the kernel image to boot
#   SORYU_KCONFIG   its .config (the guest has no /boot/config-* nor
#                   /proc/config.gz; libbpf needs it for Kconfig externs)
#   SORYU_KMODDIR   its modules (virtme-ng loads overlay/9p/... from there)
# Sourced, it exports the same variables instead.
#
# Usage: vm/kernel.sh            # fetch if needed, print the assignments
#        eval "$(vm/kernel.sh)"
#        vm/kernel.sh --bump     # pin the newest upload in vm/kernel.pin
#                                # (then run the tests and commit the pin)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${SORYU_VM_CACHE:-/var/cache/scx_soryu/vm}
suite=trixie-backports
pin_file=$here/kernel.pin

die() { echo "vm/kernel.sh: $*" >&2; exit 1; }
log() { echo "vm/kernel.sh: $*" >&2; }

# The release and package version linux-image-amd64 in $suite points at now.
newest() {
  local v r
  v=$(apt-cache show "linux-image-amd64/$suite" 2>/dev/null | sed -n 's/^Version: //p' | head -n1)
  r=$(apt-cache depends "linux-image-amd64/$suite" 2>/dev/null |
    sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*\)$/\1/p' | head -n1)
  [ -n "$v" ] && [ -n "$r" ] && echo "$r $v"
}

if [ "${1:-}" = --bump ]; then
  new=$(newest) || die "apt cannot resolve linux-image-amd64 in $suite (run scripts/install-deps.sh)"
  old=$(grep -v '^#' "$pin_file" | head -n1)
  sed -i "s/^[^#].*/$new/" "$pin_file"
  log "pinned $new (was $old): run scripts/test.sh, then commit vm/kernel.pin"
  exit 0
fi

read -r kver pkgver < <(grep -v '^#' "$pin_file" | head -n1) || true
[ -n "${kver:-}" ] && [ -n "${pkgver:-}" ] || die "no kernel pinned in $pin_file"
cur=$(newest || true)
if [ -n "$cur" ] && [ "$cur" != "$kver $pkgver" ]; then
  log "note: $suite now has $cur; the tests stay on the pinned $kver $pkgver (vm/kernel.sh --bump to move)"
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

grep -qx 'CONFIG_SCHED_CLASS_EXT=y' "$kconfig" ||
  die "kernel $kver lacks CONFIG_SCHED_CLASS_EXT=y ($kconfig): sched_ext cannot load in it"

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  export SORYU_KVER=$kver SORYU_VMLINUZ=$vmlinuz SORYU_KCONFIG=$kconfig SORYU_KMODDIR=$kmoddir
else
  printf 'SORYU_KVER=%q\nSORYU_VMLINUZ=%q\nSORYU_KCONFIG=%q\nSORYU_KMODDIR=%q\n' \
    "$kver" "$vmlinuz" "$kconfig" "$kmoddir"
fi
