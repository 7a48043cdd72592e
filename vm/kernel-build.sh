#!/usr/bin/env bash
# Builds a guest kernel from a Debian kernel source package and caches it,
# for the kernels the project tests that Debian ships no sched_ext binary
# of (6.12 LTS, 7.2). Called by vm/kernel.sh for a `source` line of
# vm/kernel.pin; not usually run by hand.
#
#   vm/kernel-build.sh PACKAGE VERSION [VARIANTS]
#
# PACKAGE is a linux-source-X package (the Debian-patched source tree as a
# tarball), VERSION its exact package version, VARIANTS comma-separated
# names of config fragments in vm/kconfig/ applied on top of base.config
# (e.g. `preempt-voluntary,debug`). The config
# starts from `make allnoconfig` plus vm/kconfig/base.config; every option
# of the fragments must hold after `make olddefconfig`, or the build stops
# and names the ones that do not. No modules: everything the guest needs
# is built in, so virtme-ng boots the image as it is.
#
# The result, in the cache (SORYU_VM_CACHE, default /var/cache/scx_soryu/vm),
# in a directory keyed by package, version, variants and a hash of the
# fragments: `bzImage`, `config`, `release` (uname -r), `build-seconds`.
# A second run with the same key only prints the directory. The build takes
# 10 to 20 minutes on two cores; it runs in a scratch directory renamed into
# place at the end, so an interrupted build never looks complete.
#
# Needs the apt sources scripts/install-deps.sh sets up, and flex, bison,
# bc, libssl-dev, libelf-dev, dwarves (pahole), xz-utils, make and gcc.
# Prints the cache directory on stdout; progress goes to stderr.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${SORYU_VM_CACHE:-/var/cache/scx_soryu/vm}

die() { echo "vm/kernel-build.sh: $*" >&2; exit 1; }
log() { echo "vm/kernel-build.sh: $*" >&2; }

[ $# -ge 2 ] && [ $# -le 3 ] || die "usage: vm/kernel-build.sh PACKAGE VERSION [VARIANTS]"
pkg=$1 ver=$2 variant=${3:-}
[[ $pkg == linux-source-* ]] || die "$pkg is not a linux-source-X package"

fragments=("$here/kconfig/base.config")
IFS=, read -r -a variants <<<"$variant"
for v in "${variants[@]}"; do
  [ -f "$here/kconfig/$v.config" ] || die "no config fragment vm/kconfig/$v.config for variant '$v'"
  fragments+=("$here/kconfig/$v.config")
done
# The recipe's own version: bump it when the way of building changes in a
# way the fragments do not show.
recipe=1
key=$(cat "${fragments[@]}" <(echo "recipe $recipe") | sha256sum | cut -c1-12)
dir=$cache/build/$pkg-$ver${variant:+-${variant//,/-}}-$key

if [ -s "$dir/bzImage" ] && [ -e "$dir/.complete" ]; then
  echo "$dir"
  exit 0
fi

for tool in apt-get dpkg-deb make gcc flex bison bc pahole xz; do
  command -v "$tool" >/dev/null || die "$tool is needed to build the guest kernel (scripts/install-deps.sh installs it)"
done
apt-cache show "$pkg=$ver" >/dev/null 2>&1 ||
  die "$pkg $ver is not in the archive (any more?): vm/kernel.sh --bump pins the current version"

mkdir -p "$cache/build"
tmp=$(mktemp -d "$cache/build/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
log "building $pkg $ver${variant:+ ($variant)}: download, unpack, configure, make bzImage (10-20 min)"
(cd "$tmp" && apt-get download -q "$pkg=$ver") >&2 || die "apt-get download $pkg=$ver failed"
dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -x -C "$tmp" --wildcards './usr/src/linux-source-*.tar.xz' ||
  die "no source tarball in $pkg $ver"
rm -f "$tmp"/*.deb
tar -xJf "$tmp"/usr/src/linux-source-*.tar.xz -C "$tmp"
rm -rf "$tmp/usr"
src=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'linux-source-*' | head -n1)
[ -n "$src" ] || die "the tarball of $pkg $ver holds no linux-source-* tree"
# A pahole older than the kernel asks for still writes BTF, but a wrong
# one: on 7.x, the kfuncs with implicit arguments keep them, and no
# sched_ext scheduler loads ("func_proto incompatible with vmlinux").
need=$(awk '$1 == "pahole" && $2 ~ /^[0-9.]+$/ { print $2; exit }' "$src/Documentation/process/changes.rst" 2>/dev/null || true)
have=$(pahole --version | tr -d v)
if [ -n "$need" ] && [ "$(printf '%s\n' "$need" "$have" | sort -V | head -n1)" != "$need" ]; then
  die "$pkg $ver needs pahole $need or later for its BTF, and this machine has $have: build it on a newer system, or pin Debian's binary kernel of that series (vm/kernel.pin)"
fi

make -C "$src" -s allnoconfig >&2
"$src/scripts/kconfig/merge_config.sh" -m -O "$src" "$src/.config" "${fragments[@]}" >/dev/null
make -C "$src" -s olddefconfig >&2
# Every line of the fragments must have survived olddefconfig.
missing=$(cat "${fragments[@]}" | grep -E '^CONFIG_[A-Z0-9_]+=' | while IFS= read -r l; do
  grep -qxF "$l" "$src/.config" || echo "$l"
done)
[ -z "$missing" ] || die "$pkg $ver: these options do not hold after olddefconfig: $(echo $missing)"

make -C "$src" -s -j"$(nproc)" bzImage >&2 || die "make bzImage failed for $pkg $ver"
install -m 644 "$src/arch/x86/boot/bzImage" "$tmp/bzImage"
install -m 644 "$src/.config" "$tmp/config"
make -C "$src" -s kernelrelease >"$tmp/release"
rm -rf "$src"
echo $(($(date +%s) - start)) >"$tmp/build-seconds"
log "built $pkg $ver${variant:+ ($variant)} ($(cat "$tmp/release")) in $(cat "$tmp/build-seconds") s"
: >"$tmp/.complete"
chmod 755 "$tmp"
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
echo "$dir"
