#!/usr/bin/env bash
# Builds and caches a small Debian 12 root whose init is systemd, for the
# test that runs soryu as a real service (tests/host/systemd.sh): the VM
# tests boot the host's own root with virtme-ng's init, where there is no
# systemd to start a unit.
#
# mmdebstrap (minbase, plus systemd and what the checks use) from the Debian
# mirror this machine's apt already uses (the bookworm source that
# scripts/install-deps.sh found), then the guest kernel's modules (vm/kernel.sh)
# and three units masked that would only wait for devices the VM has no udev
# events for. Built once into SORYU_VM_CACHE (default /var/cache/scx_soryu/vm)
# under a name that changes with the package list and the kernel; a second
# run only checks it. The cached root is never booted itself: the test boots
# a copy.
#
# Prints the root's path.
#
#   vm/sysroot.sh
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${SORYU_VM_CACHE:-/var/cache/scx_soryu/vm}
die() { echo "vm/sysroot.sh: $*" >&2; exit 1; }

command -v mmdebstrap >/dev/null || die "mmdebstrap not found: run scripts/install-deps.sh"
eval "$("$repo/vm/kernel.sh")"

# The mirror install-deps put in soryu.sources (the host's own bookworm URI).
uri=${SORYU_DEBIAN_URI:-$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/soryu.sources 2>/dev/null || true)}
[ -n "$uri" ] || die "no Debian mirror known: run scripts/install-deps.sh (it writes /etc/apt/sources.list.d/soryu.sources)"

pkgs=systemd,systemd-sysv,dbus,procps,kmod,iproute2
key=$(printf '%s %s %s' "$pkgs" "$SORYU_KVER" 1 | sha256sum | cut -c1-12)
root=$cache/sysroot-bookworm-$key

if [ ! -e "$root/.complete" ]; then
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.sysroot.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  mmdebstrap --quiet --variant=minbase --include="$pkgs" bookworm "$tmp/root" "$uri" >&2 ||
    die "mmdebstrap failed (mirror $uri)"
  mkdir -p "$tmp/root/usr/lib/modules"
  cp -a "$SORYU_KMODDIR" "$tmp/root/usr/lib/modules/"
  # No udev events in the VM: these would each wait 90 s for a device.
  for u in serial-getty@ttyS0.service getty@tty1.service systemd-networkd-wait-online.service; do
    ln -sf /dev/null "$tmp/root/etc/systemd/system/$u"
  done
  echo soryu-test >"$tmp/root/etc/hostname"
  touch "$tmp/root/.complete"
  rm -rf "$root"
  mv "$tmp/root" "$root"
fi
echo "$root"
