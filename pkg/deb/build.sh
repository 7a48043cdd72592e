#!/usr/bin/env bash
# Builds the scx-soryu .deb out of a staged install. `make deb` stages with
# `make install DESTDIR=STAGE PREFIX=/usr` and then runs this; see the
# Makefile for the make variables.
#
#   pkg/deb/build.sh STAGE VERSION OUTDIR
#
# It strips the staged binary (as dh_strip does; the debug symbols are not
# shipped), adds the package's files to STAGE (the copyright file, the
# changelog, lintian's overrides, DEBIAN/ with control, conffiles, md5sums
# and the maintainer scripts of this directory) and writes
# OUTDIR/scx-soryu_VERSION_ARCH.deb with dpkg-deb; files are owned by root
# (--root-owner-group, no fakeroot needed).
#
# The changelog (usr/share/doc/scx-soryu/changelog.gz, Debian's format: the
# version has no Debian revision, so this is a native package) has one
# entry, for VERSION, holding CHANGELOG.md's section of Cargo.toml's
# version; its date is SOURCE_DATE_EPOCH's, else the git commit's, so that
# two builds of one commit give the same file. Homepage: is Cargo.toml's
# homepage (else its repository), and absent when it has neither.
#
# Depends: is what dpkg-shlibdeps (Debian: dpkg-dev) computes from the
# libraries the binary links (libc6, libelf1, zlib1g, libzstd1... with the
# minimal versions their symbols files give), so it follows the build.
# Environment:
#   DEPENDS=...     the Depends: field as given, without dpkg-shlibdeps
#   DEB_ARCH=...    Architecture: (default: dpkg --print-architecture)
#   MAINTAINER=...  Maintainer: (default: "$DEBFULLNAME <$DEBEMAIL>" (or
#                   $EMAIL), else git's user.name and user.email, else
#                   "USER <USER@HOST>" of whoever builds)
set -euo pipefail

die() { echo "build.sh: $*" >&2; exit 1; }
[ $# = 3 ] || die "usage: pkg/deb/build.sh STAGE VERSION OUTDIR"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
stage=$1 version=$2 outdir=$3
name=scx-soryu
top=$(cd "$here/../.." && pwd)

[ -n "$version" ] || die "no version (Cargo.toml's [package] version, or VERSION=)"
dpkg --validate-version "$version" 2>/dev/null ||
  die "'$version' is not a Debian version (digits first; letters, digits and . + ~ - only)"
arch=${DEB_ARCH:-$(dpkg --print-architecture)}
for f in usr/bin/scx_soryu usr/lib/systemd/system/scx_soryu.service etc/default/scx_soryu; do
  [ -f "$stage/$f" ] || die "$stage/$f is missing: stage with make install DESTDIR=$stage PREFIX=/usr"
done
[ ! -e "$stage/DEBIAN" ] || die "$stage/DEBIAN exists already: start from a fresh stage"
command -v strip >/dev/null || die "strip not found (Debian: apt-get install binutils)"

# Maintainer: whoever builds this local package, found the way Debian's
# tools look for them.
if [ -z "${MAINTAINER:-}" ]; then
  user=$(id -un 2>/dev/null || echo root)
  if [ -n "${DEBEMAIL:-${EMAIL:-}}" ]; then
    MAINTAINER="${DEBFULLNAME:-$user} <${DEBEMAIL:-$EMAIL}>"
  elif gname=$(git -C "$here" config user.name 2>/dev/null) &&
    gmail=$(git -C "$here" config user.email 2>/dev/null); then
    MAINTAINER="$gname <$gmail>"
  else
    MAINTAINER="${DEBFULLNAME:-$user} <$user@$(uname -n)>"
  fi
fi

# Cargo.toml's [package] field KEY.
cargo_field() { sed -n "/^\[package\]/,/^\[/s/^$1 *= *\"\(.*\)\"/\1/p" "$top/Cargo.toml"; }
crate_version=$(cargo_field version)
homepage=$(cargo_field homepage)
[ -n "$homepage" ] || homepage=$(cargo_field repository)

# Package files: modes set here, whatever the umask.
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$stage/usr/bin/scx_soryu"
install -d -m 0755 "$stage/DEBIAN" "$stage/usr/share/doc/$name" "$stage/usr/share/lintian/overrides"
install -m 0644 "$here/copyright" "$stage/usr/share/doc/$name/copyright"
install -m 0644 "$here/lintian-overrides" "$stage/usr/share/lintian/overrides/$name"

# The changelog: CHANGELOG.md's "## VERSION ..." section of the crate's
# version, "- " items made "  * ", continuation lines indented to match.
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)}
items=$(awk -v v="$crate_version" '
    /^## / { on = ($2 == v); next }
    on && /^- / { print "  * " substr($0, 3); next }
    on && /^  [^ ]/ { print "  " $0 }' "$top/CHANGELOG.md" 2>/dev/null || true)
[ -n "$items" ] || items="  * scx_soryu $crate_version (CHANGELOG.md has no section for it)."
{
  printf '%s (%s) unstable; urgency=medium\n\n%s\n\n' "$name" "$version" "$items"
  printf ' -- %s  %s\n' "$MAINTAINER" "$(LC_ALL=C date -u -R -d "@$epoch")"
} | gzip -9n >"$stage/usr/share/doc/$name/changelog.gz"
chmod 0644 "$stage/usr/share/doc/$name/changelog.gz"
install -m 0644 "$here/conffiles" "$stage/DEBIAN/conffiles"
install -m 0755 "$here/postinst" "$here/prerm" "$here/postrm" "$stage/DEBIAN/"
find "$stage" -type d -exec chmod 0755 {} +

if [ -n "${DEPENDS+set}" ]; then
  depends=$DEPENDS
else
  command -v dpkg-shlibdeps >/dev/null ||
    die "dpkg-shlibdeps not found (Debian: apt-get install dpkg-dev), or give DEPENDS=... by hand"
  # dpkg-shlibdeps wants to run beside a debian/control; an empty one does.
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir "$work/debian"
  : >"$work/debian/control"
  bin_abs=$(cd "$stage/usr/bin" && pwd)/scx_soryu
  subst=$(cd "$work" && dpkg-shlibdeps -O -e"$bin_abs") ||
    die "dpkg-shlibdeps failed on $bin_abs"
  depends=$(sed -n 's/^shlibs:Depends=//p' <<<"$subst")
  [ -n "$depends" ] || die "dpkg-shlibdeps found no dependency in $bin_abs (is it a dynamically linked ELF?)"
fi

# md5sums of every file but the conffile (dpkg keeps conffiles' sums in
# its status file), as dh_md5sums writes them.
(cd "$stage" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\n' |
  LC_ALL=C sort | xargs -r -d '\n' md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"
size=$(du -s -k --apparent-size --exclude=DEBIAN "$stage" | cut -f1)

# sed replacement text: \, & and the delimiter | escaped.
esc() { sed 's/[\\&|]/\\&/g' <<<"$1"; }
sed -e "s|@VERSION@|$(esc "$version")|" -e "s|@ARCH@|$(esc "$arch")|" \
  -e "s|@INSTALLED_SIZE@|$size|" -e "s|@DEPENDS@|$(esc "$depends")|" \
  -e "s|@MAINTAINER@|$(esc "${MAINTAINER:-}")|" -e "s|@HOMEPAGE@|$(esc "$homepage")|" \
  -e '/^Depends: *$/d' -e '/^Homepage: *$/d' \
  "$here/control.in" >"$stage/DEBIAN/control"
chmod 0644 "$stage/DEBIAN/control"

mkdir -p "$outdir"
deb="$outdir/${name}_${version#*:}_$arch.deb"
dpkg-deb --root-owner-group --build "$stage" "$deb" >/dev/null
echo "$deb"
echo "  Version: $version  Architecture: $arch"
echo "  Depends: $depends"
