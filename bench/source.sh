#!/usr/bin/env bash
# The C project the `compile` benchmark builds: Lua 5.4's upstream source,
# as Debian 12 ships it (the lua5.4 source package's .orig tarball; apt
# checks it against the signed Sources index). About 60 C files, a plain
# Makefile, no configure step and no dependency beyond cc and make, so one
# `make -j` is a real compile that fits in a benchmark interval, in the VM
# as on a host.
#
# Fetched once, from the Debian mirror this machine's apt already uses (the
# bookworm source scripts/install-deps.sh wrote into soryu.sources), into
# SORYU_SRC_CACHE (default /var/cache/scx_soryu/src); a second run only
# checks it. Prints the tarball's path; with DIR, copies it into DIR
# first (the VM sees the repository's tree, not the host's /var/cache) and
# prints the copy's path.
#
#   bench/source.sh [DIR]
set -euo pipefail
cache=${SORYU_SRC_CACHE:-/var/cache/scx_soryu/src}
pkg=lua5.4
dest=${1:-}
die() { echo "bench/source.sh: $*" >&2; exit 1; }

have() { compgen -G "$cache/${pkg}_*.orig.tar.gz" | sort -V | tail -n 1; }
emit() {
  local tar=$1
  if [ -n "$dest" ]; then
    { mkdir -p "$dest" && cp -u "$tar" "$dest/"; } 2>/dev/null || die "cannot copy $tar into $dest"
    tar=$(cd "$dest" && pwd)/${tar##*/}
  fi
  echo "$tar"
}
if tar=$(have) && [ -n "$tar" ]; then
  emit "$tar"
  exit 0
fi

uri=${SORYU_DEBIAN_URI:-$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/soryu.sources 2>/dev/null || true)}
[ -n "$uri" ] || die "no Debian mirror known: run scripts/install-deps.sh (it writes /etc/apt/sources.list.d/soryu.sources)"
[ -w "$(dirname "$cache")" ] || [ -w "$cache" ] || [ "$(id -u)" = 0 ] || die "cannot write $cache: run as root, or set SORYU_SRC_CACHE"

# A private apt state that knows only bookworm's source index: the machine's
# own apt configuration is not touched.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/dl"
printf 'Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
  "$uri" >"$tmp/src.sources"
apt=(apt-get -q -o Dir::Etc::sourcelist="$tmp/src.sources" -o Dir::Etc::sourceparts=- \
  -o Dir::State::Lists="$tmp/lists" -o Dir::Cache="$tmp/cache" -o APT::Sandbox::User=root)
# (apt-get update exits 0 when a fetch fails: look for the index itself)
"${apt[@]}" update >"$tmp/log" 2>&1 || true
compgen -G "$tmp/lists/*Sources*" >/dev/null ||
  die "cannot read bookworm's source index from $uri: $(grep -E '^(E|W|Err):' "$tmp/log" | head -n 1 | cut -c1-200)"
(cd "$tmp/dl" && "${apt[@]}" source --download-only "$pkg" >"$tmp/log" 2>&1) ||
  die "cannot download the $pkg source package: $(tail -n 1 "$tmp/log")"
mkdir -p "$cache"
cp "$tmp"/dl/"${pkg}"_*.orig.tar.gz "$cache"/ || die "no ${pkg} .orig tarball in the source package"
tar=$(have) && [ -n "$tar" ] || die "no ${pkg} .orig tarball in $cache after the download"
emit "$tar"
