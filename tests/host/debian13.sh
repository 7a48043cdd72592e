#!/usr/bin/env bash
# The native path on Debian 13, as a newcomer takes it: in a Debian 13
# (trixie) root, `scripts/install-deps.sh --build` installs what the build
# needs and nothing of the VM's, then a clean clone of this repository
# builds (`make build`) and passes its unit tests (`make test`): the
# README's commands.
#
# The root: mmdebstrap's minbase of trixie from the Debian mirror this
# machine's apt already uses (the one scripts/install-deps.sh wrote into
# soryu.sources), built once into SORYU_DEBIAN13_CACHE (default
# /var/cache/scx_soryu/debian13) and never changed: each run mounts an
# overlay on it, so every run starts from the bare root. Kept in the cache
# too, so that a second run costs minutes rather than a quarter of an hour:
# the packages apt downloads (a warm run installs them again, from there),
# and cargo's target/ of the dependencies, named by the root, Cargo.lock
# and the toolchain (the crate itself is compiled in every run, and the run
# checks that it was).
# Debian 13's rustc is older than the crate's rust-version, so the root gets
# this machine's rustup toolchain (~/.rustup read-only, ~/.cargo with its
# crate cache), as README.md's Requirements tells a user to.
#
# Needs root (chroot, mounts), mmdebstrap, and rustup's toolchain.
#
#   tests/host/debian13.sh
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
# shellcheck source=tests/host/lib.sh
. tests/host/lib.sh
checks_begin
started=$(date +%s)

give_up() { bad "$*"; checks_done; exit 1; }
[ "$(id -u)" = 0 ] || give_up "needs root (chroot and mounts)"
command -v mmdebstrap >/dev/null || give_up "mmdebstrap not found: run scripts/install-deps.sh"
export PATH="$PATH:${HOME:-/root}/.cargo/bin"
rustup_home=${RUSTUP_HOME:-${HOME:-/root}/.rustup}
cargo_home=${CARGO_HOME:-${HOME:-/root}/.cargo}
[ -x "$cargo_home/bin/cargo" ] && [ -d "$rustup_home/toolchains" ] ||
  give_up "no rustup toolchain in $cargo_home and $rustup_home (the root borrows it): install Rust with rustup"
rust_min=$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' Cargo.toml)

cache=${SORYU_DEBIAN13_CACHE:-/var/cache/scx_soryu/debian13}
uri=${SORYU_DEBIAN_URI:-$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/soryu.sources 2>/dev/null || true)}
# The cached root: named by what makes it, so a change makes a new one.
recipe="minbase trixie 1"
base=$cache/root-$(printf '%s' "$recipe" | sha256sum | cut -c1-12)
if [ ! -e "$base/.complete" ]; then
  [ -n "$uri" ] || give_up "no Debian mirror known: run scripts/install-deps.sh (it writes /etc/apt/sources.list.d/soryu.sources)"
  mkdir -p "$cache"
  t0=$(date +%s)
  mk=$(mktemp -d "$cache/.root.XXXXXX")
  if ! mmdebstrap --quiet --variant=minbase trixie "$mk/root" "$uri" >"$tmp/mmdebstrap.log" 2>&1; then
    sed 's/^/     | /' "$tmp/mmdebstrap.log" | tail -n 5
    rm -rf "$mk"
    give_up "mmdebstrap could not make the Debian 13 root from $uri"
  fi
  touch "$mk/root/.complete"
  rm -rf "$base"
  mv "$mk/root" "$base"
  rmdir "$mk"
  echo "made the Debian 13 root $base in $(($(date +%s) - t0))s (once)"
fi
mkdir -p "$cache/apt-archives/partial"
# cargo's target/, reused only by the same root, lock file and toolchain;
# any other is removed (a few GB each).
tkey=$( (echo "$base"; cat Cargo.lock; "$cargo_home/bin/rustc" -vV) | sha256sum | cut -c1-12)
targets=$cache/target-$tkey
for d in "$cache"/target-* "$cache"/root-*; do
  [ -e "$d" ] && [ "$d" != "$targets" ] && [ "$d" != "$base" ] && rm -rf "$d"
done
mkdir -p "$targets"

# What the build group installs, and packages of the VM and test groups
# that must stay out.
build_pkgs="clang-19 libelf-dev zlib1g-dev libzstd-dev pkg-config make gcc"
other_pkgs="qemu-system-x86 python3-pip stress-ng rt-tests linux-perf bpftool jq lintian mmdebstrap busybox-static dpkg-dev rustc cargo"

# The checks that run inside the root, as root there; each writes one line
# to /srv/out/results.
mkdir -p "$tmp/srv/out"
cat >"$tmp/srv/inside.sh" <<'INSIDE'
#!/bin/bash
set -u
res=/srv/out/results
: >"$res"
# One line each, whatever the message holds.
line() { printf '%s %s\n' "$1" "$(printf '%s' "$2" | tr '\n' '|' | cut -c1-400)" >>"$res"; }
ok() { line ok "$*"; }
bad() { line FAIL "$*"; }
step() { echo "== $* ($(date +%T))"; }
installed() { [ "$(dpkg-query -W -f '${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]; }
pkgs_now() { dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" { print $2 }' | sort; }
cd /root/scx_soryu || { bad "no clone in the root"; exit 1; }

. /etc/os-release
[ "$ID $VERSION_ID" = "debian 13" ] && ok "the root is $PRETTY_NAME" || bad "the root is $PRETTY_NAME, not Debian 13"

have=
for p in $BUILD_PKGS; do installed "$p" && have="$have $p"; done
[ -z "$have" ] && ok "the bare root has none of the build's packages ($BUILD_PKGS)" || bad "the bare root has already:$have"
pkgs_now >/srv/out/pkgs.before

step "install-deps.sh --build without Rust"
# (install-deps also looks in $HOME/.cargo/bin: another HOME hides it.)
out=$(HOME=/nonexistent PATH=/usr/sbin:/usr/bin:/sbin:/bin bash scripts/install-deps.sh --build 2>&1) && rc=0 || rc=$?
if [ "$rc" = 1 ] && [ "$(grep -c . <<<"$out")" = 1 ] && grep -q "cargo not found: install Rust >= $RUST_MIN with rustup" <<<"$out" &&
  pkgs_now | cmp -s - /srv/out/pkgs.before; then
  ok "without Rust: one line, exit 1, nothing installed: $out"
else
  bad "without Rust: exit $rc, output: $out"
fi

step "install-deps.sh --build"
if bash scripts/install-deps.sh --build >/srv/out/install-deps.log 2>&1; then
  ok "install-deps.sh --build: $(tail -n1 /srv/out/install-deps.log)"
else
  bad "install-deps.sh --build failed: $(tail -n 3 /srv/out/install-deps.log | tr '\n' '|')"
fi
missing=
for p in $BUILD_PKGS; do installed "$p" || missing="$missing $p"; done
[ -z "$missing" ] && ok "installed: $BUILD_PKGS" || bad "not installed:$missing"
extra=
for p in $OTHER_PKGS; do installed "$p" && extra="$extra $p"; done
[ -z "$extra" ] && ok "nothing of the VM's or the tests' ($OTHER_PKGS)" || bad "installed beyond the build:$extra"
pkgs_now >/srv/out/pkgs.after
out=$(bash scripts/install-deps.sh --build 2>&1) && rc=0 || rc=$?
if [ "$rc" = 0 ] && pkgs_now | cmp -s - /srv/out/pkgs.after && ! grep -qiE 'unpacking|setting up|^get:' <<<"$out"; then
  ok "a second run only checks: $(tail -n1 <<<"$out")"
else
  bad "a second run: exit $rc, $(tail -n 3 <<<"$out" | tr '\n' '|')"
fi

# Debian 13's own Rust, as the README's requirements say: older than the
# crate's rust-version (the lists are fresh: install-deps fetched them).
deb_rustc=$(apt-cache show --no-all-versions rustc 2>/dev/null | sed -n 's/^Version: //p' | sed 's/^[0-9]*://; s/[+~-].*//')
if [ -n "$deb_rustc" ] && ! dpkg --compare-versions "$deb_rustc" ge "$RUST_MIN"; then
  ok "Debian 13's rustc is $deb_rustc, older than the crate's rust-version $RUST_MIN (rustup's $(cargo --version | awk '{print $2}') builds)"
else
  bad "Debian 13's rustc is '${deb_rustc:-unknown}' against rust-version $RUST_MIN: README.md's Requirements say it is older"
fi

step "make build"
# The cached target/ holds the last run's binary: it must not stand in for
# this run's.
rm -f target/release/scx_soryu
if make build >/srv/out/build.log 2>&1 && [ -x target/release/scx_soryu ]; then
  ok "make build: target/release/scx_soryu"
else
  bad "make build failed: $(grep -m3 -E 'error|warning: .*failed' /srv/out/build.log)"
fi
# The dependencies' build may come from the cache; the crate's own never does.
grep -q '^ *Compiling scx_soryu v' /srv/out/build.log && ok "the crate itself was compiled in this run" ||
  bad "make build did not compile scx_soryu itself (a stale target/?)" 
v=$(target/release/scx_soryu --version 2>&1) && ok "scx_soryu --version: $v" || bad "scx_soryu --version: $v"
if out=$(target/release/scx_soryu --check-flags 2>&1) && [ -z "$out" ]; then
  ok "scx_soryu --check-flags: the default flags accepted"
else
  bad "scx_soryu --check-flags: $out"
fi

step "make test"
if make test >/srv/out/test.log 2>&1; then
  n=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' /srv/out/test.log | awk '{s += $1} END {print s + 0}')
  [ "$n" -gt 0 ] && ok "make test: $n unit tests passed" || bad "make test ran no test"
else
  bad "make test failed: $(grep -E '^test .* FAILED|^error' /srv/out/test.log | head -n 3)"
fi
echo done >/srv/out/done
INSIDE
chmod 755 "$tmp/srv/inside.sh"

# The run: a mount namespace of its own (everything mounted here goes with
# it), an overlay on the cached root, the toolchain bound in, a clean clone.
root=$tmp/merged
mkdir -p "$root" "$tmp/upper" "$tmp/work"
unshare --mount --propagation private bash -euo pipefail -c '
  base=$1 tmp=$2 root=$3 rustup_home=$4 cargo_home=$5 repo=$6 archives=$7 targets=${11}
  mount -t overlay overlay -o "lowerdir=$base,upperdir=$tmp/upper,workdir=$tmp/work" "$root"
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mkdir -p "$root/root/.rustup" "$root/root/.cargo" "$root/srv"
  mount --bind "$rustup_home" "$root/root/.rustup"
  mount -o remount,bind,ro "$root/root/.rustup"
  mount --bind "$cargo_home" "$root/root/.cargo"
  mount --bind "$archives" "$root/var/cache/apt/archives"
  mount --bind "$tmp/srv" "$root/srv"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  git clone -q "$repo" "$root/root/scx_soryu"
  mkdir "$root/root/scx_soryu/target"
  mount --bind "$targets" "$root/root/scx_soryu/target"
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    BUILD_PKGS="$8" OTHER_PKGS="$9" RUST_MIN="${10}" /bin/bash /srv/inside.sh
' _ "$base" "$tmp" "$root" "$rustup_home" "$cargo_home" "$repo" "$cache/apt-archives" \
  "$build_pkgs" "$other_pkgs" "$rust_min" "$targets" >"$tmp/inside.log" 2>&1 || true

results=target/debian13-results
rm -rf "$results" && mkdir -p "$results"
cp "$tmp/inside.log" "$tmp/srv/out/"* "$results/" 2>/dev/null || true
while read -r verdict what; do
  if [ "$verdict" = ok ]; then ok "debian 13: $what"; else bad "debian 13: $what"; fi
done <"$tmp/srv/out/results" 2>/dev/null || true
if [ -e "$tmp/srv/out/done" ]; then
  ok "the run in the Debian 13 root finished ($(($(date +%s) - started))s; logs in $results)"
else
  bad "the run in the Debian 13 root stopped early (logs in $results):"
  tail -n 5 "$tmp/inside.log" | sed 's/^/     | /'
fi
checks_done
