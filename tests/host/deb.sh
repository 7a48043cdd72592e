#!/usr/bin/env bash
# shellcheck disable=SC2016 # single-quoted bash -c scripts expand their own "$1"
# Host-side test of `make deb` and of the package on a real dpkg: the
# package as built (fields, contents, the stripped binary, the changelog,
# Depends:, and lintian with no error or warning beside the justified
# overrides the package carries), then install, upgrade to a second build
# with a bumped version (edited flags kept), removal and purge, maintainer
# scripts included.
#
# Needs root (dpkg --root chroots into the test's root to run the
# maintainer scripts; as another user it runs itself as root of a user
# namespace, unshare -r, where the kernel allows that), dpkg-dev
# (dpkg-shlibdeps; dpkg-deb and dpkg come with every Debian) and lintian.
# The host's own system is left alone: every package operation is
# `dpkg --root=ROOT` on a scratch root holding a dash, an rm, a /dev/null
# and recording stand-ins for systemctl and deb-systemd-invoke. systemd
# does not run there, and the scripts must then call neither; what they do
# under a running systemd is tested in tests/host/systemd.sh, under a real
# one. ROOT's dpkg database holds the host's records of the packages the
# .deb depends on, so dpkg really checks Depends:.
#
# It packs BIN (default target/release/scx_soryu) when it is built;
# otherwise a copy of /usr/bin/true (an ELF, so dpkg-shlibdeps has something
# to read; the check that Depends names the daemon's libraries is then
# skipped, and says so).
#
# A package without its conffiles list must fail the "edited flags kept"
# check, and one with an unstripped binary the lintian check: the test
# builds both and checks that, so those checks cannot pass vacuously.
#
#   tests/host/deb.sh [BIN]
#
# One line per check, then "N passed, M failed"; non-zero exit on a failure.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"

# shellcheck source=tests/host/lib.sh
. "$repo/tests/host/lib.sh"
# Not root: the same test as root of a user namespace (unshare -r: dpkg and
# chroot work there, on files this user owns), when the kernel allows one.
if [ "$(id -u)" != 0 ]; then
  if [ -z "${SORYU_DEB_USERNS:-}" ] && unshare --map-root-user true 2>/dev/null; then
    SORYU_DEB_USERNS=1 exec unshare --map-root-user bash "${BASH_SOURCE[0]}" "$@"
  fi
  echo "FAIL needs root, or a user namespace (unshare -r): dpkg --root chroots to run the maintainer scripts"
  echo "0 passed, 1 failed"
  exit 1
fi

checks_begin

show() { sed 's/^/     | /' "$1"; }
oneline() { tr '\n' ' ' | sed 's/ *$//'; }

for t in dpkg dpkg-deb dpkg-shlibdeps dpkg-query make ldd chroot objdump strip lintian; do
  command -v "$t" >/dev/null || { bad "$t is missing (Debian: dpkg-dev provides dpkg-shlibdeps, binutils objdump and strip; lintian)"; exit 1; }
done

arch=$(dpkg --print-architecture)
v1=$(sed -n '/^\[package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' Cargo.toml)
v2="$v1+up1"
dpkg --compare-versions "$v2" gt "$v1" || { bad "test setup: $v2 is not newer than $v1"; exit 1; }

bin=${1:-target/release/scx_soryu}
real_bin=1
if [ ! -x "$bin" ]; then
  real_bin=0
  bin="$tmp/stub/scx_soryu"
  mkdir -p "$tmp/stub"
  cp /usr/bin/true "$bin"
  echo "note: ${1:-target/release/scx_soryu} is not built; packing a stand-in (a copy of /usr/bin/true)"
fi

# What the host has of the package's paths before the test, to check after.
host_paths=(/usr/bin/scx_soryu /usr/lib/systemd/system/scx_soryu.service /etc/default/scx_soryu)
host_state() {
  local p
  for p in "${host_paths[@]}"; do
    if [ -e "$p" ]; then echo "$p $(md5sum <"$p")"; else echo "$p absent"; fi
  done
  dpkg-query -W -f '${Status} ${Version}\n' scx-soryu 2>/dev/null || echo "scx-soryu unknown to dpkg"
}
host_state >"$tmp/host.before"

# mk LOG ARGS...: make quietly from the repository, output into LOG.
mk() {
  local log=$1
  shift
  make -s --no-print-directory -C "$repo" "$@" >"$log" 2>&1
}

# ---- make deb: refusals
if mk "$tmp/nobin.log" deb BIN="$tmp/missing/scx_soryu" DEBDIR="$tmp/none"; then
  bad "make deb without a built binary is refused"
elif grep -q 'cargo build --release' "$tmp/nobin.log" && [ ! -e "$tmp/none" ]; then
  ok "make deb without a built binary is refused, names the build command, builds nothing"
else
  bad "make deb without a built binary: no build command in the message, or something built"
  show "$tmp/nobin.log"
fi
if mk "$tmp/badver.log" deb BIN="$bin" DEBDIR="$tmp/badver" VERSION="not a version" ||
  ls "$tmp"/badver/*.deb >/dev/null 2>&1 || ! grep -q 'not a Debian version' "$tmp/badver.log"; then
  bad "make deb VERSION='not a version' is refused, saying why"
  show "$tmp/badver.log"
else
  ok "make deb VERSION='not a version' is refused: $(grep -m1 'not a Debian version' "$tmp/badver.log")"
fi

# ---- two builds: Cargo.toml's version (an environment VERSION ignored),
# and a bumped one given on the command line
deb1="$tmp/v1/scx-soryu_${v1}_$arch.deb"
deb2="$tmp/v2/scx-soryu_${v2}_$arch.deb"
if VERSION=99.0 mk "$tmp/v1.log" deb BIN="$bin" DEBDIR="$tmp/v1" && [ -f "$deb1" ] &&
  [ "$(ls "$tmp/v1")" = "${deb1##*/}" ]; then
  ok "make deb builds scx-soryu_${v1}_$arch.deb, and only that (Cargo.toml's version; VERSION from the environment ignored)"
else
  bad "make deb: no $deb1"
  show "$tmp/v1.log"
  ls "$tmp/v1" 2>/dev/null | sed 's/^/     | /'
  exit 1
fi
if mk "$tmp/v2.log" deb BIN="$bin" DEBDIR="$tmp/v2" VERSION="$v2" && [ -f "$deb2" ]; then
  ok "make deb VERSION=$v2 builds scx-soryu_${v2}_$arch.deb"
else
  bad "make deb VERSION=$v2: no $deb2"
  show "$tmp/v2.log"
  exit 1
fi

# ---- the package as built
check "control: Package scx-soryu, Version $v1 / $v2, Architecture $arch" \
  bash -c '[ "$(dpkg-deb -f "$1" Package)" = scx-soryu ] && [ "$(dpkg-deb -f "$1" Version)" = "$3" ] &&
           [ "$(dpkg-deb -f "$2" Version)" = "$4" ] && [ "$(dpkg-deb -f "$1" Architecture)" = "$5" ] &&
           [ -n "$(dpkg-deb -f "$1" Description)" ]' _ "$deb1" "$deb2" "$v1" "$v2" "$arch"
check "control: a Maintainer, and no warning from dpkg-deb while building" \
  bash -c '[ -n "$(dpkg-deb -f "$1" Maintainer)" ] && ! grep -q "dpkg-deb: warning" "$2" "$3"' \
  _ "$deb1" "$tmp/v1.log" "$tmp/v2.log"

expected_contents=$(
  cat <<'EOF'
drwxr-xr-x root/root ./
drwxr-xr-x root/root ./etc/
drwxr-xr-x root/root ./etc/default/
-rw-r--r-- root/root ./etc/default/scx_soryu
drwxr-xr-x root/root ./usr/
drwxr-xr-x root/root ./usr/bin/
-rwxr-xr-x root/root ./usr/bin/scx_soryu
drwxr-xr-x root/root ./usr/lib/
drwxr-xr-x root/root ./usr/lib/systemd/
drwxr-xr-x root/root ./usr/lib/systemd/system/
-rw-r--r-- root/root ./usr/lib/systemd/system/scx_soryu.service
drwxr-xr-x root/root ./usr/share/
drwxr-xr-x root/root ./usr/share/doc/
drwxr-xr-x root/root ./usr/share/doc/scx-soryu/
-rw-r--r-- root/root ./usr/share/doc/scx-soryu/changelog.gz
-rw-r--r-- root/root ./usr/share/doc/scx-soryu/copyright
drwxr-xr-x root/root ./usr/share/lintian/
drwxr-xr-x root/root ./usr/share/lintian/overrides/
-rw-r--r-- root/root ./usr/share/lintian/overrides/scx-soryu
drwxr-xr-x root/root ./usr/share/man/
drwxr-xr-x root/root ./usr/share/man/man8/
-rw-r--r-- root/root ./usr/share/man/man8/scx_soryu.8.gz
EOF
)
# The documentation: README.md, every docs/*.md and docs/img/*.svg
docs=$(
  cd "$repo"
  printf '%s\n' README.md docs/*.md | xargs -n1 basename | sed 's|^|-rw-r--r-- root/root ./usr/share/doc/scx-soryu/|'
  echo "drwxr-xr-x root/root ./usr/share/doc/scx-soryu/img/"
  printf '%s\n' docs/img/*.svg | xargs -n1 basename | sed 's|^|-rw-r--r-- root/root ./usr/share/doc/scx-soryu/img/|'
)
expected_contents=$(printf '%s\n%s\n' "$expected_contents" "$docs" | LC_ALL=C sort)
got_contents=$(dpkg-deb -c "$deb1" | awk '{print $1, $2, $6}' | LC_ALL=C sort)
if [ "$got_contents" = "$expected_contents" ]; then
  ok "contents: binary, unit in /usr/lib/systemd/system, /etc/default/scx_soryu, changelog, copyright, lintian overrides, the manual page, the docs; root-owned, modes 755/644"
else
  bad "contents differ from the expected ones"
  diff <(echo "$expected_contents") <(echo "$got_contents") | sed 's/^/     | /' || true
fi

x="$tmp/x1"
dpkg-deb -R "$deb1" "$x"
check "conffiles: exactly /etc/default/scx_soryu" \
  bash -c '[ "$(cat "$1/DEBIAN/conffiles")" = /etc/default/scx_soryu ]' _ "$x"
check "maintainer scripts postinst, prerm, postrm: mode 755, /bin/sh, no syntax error; no preinst" \
  bash -c 'for s in postinst prerm postrm; do f=$1/DEBIAN/$s
             [ "$(stat -c %a "$f")" = 755 ] && [ "$(head -n1 "$f")" = "#!/bin/sh" ] && sh -n "$f" || exit 1
           done; [ ! -e "$1/DEBIAN/preinst" ]' _ "$x"
cp "$bin" "$tmp/stripped" && strip --remove-section=.comment --remove-section=.note --strip-unneeded "$tmp/stripped"
check "packed files: the binary built, stripped; the shipped flags; unit running /usr/bin/scx_soryu" \
  bash -c 'cmp -s "$1/usr/bin/scx_soryu" "$2" && ! cmp -s "$2" "$3" && cmp -s "$1/etc/default/scx_soryu" service/scx_soryu.default &&
           grep -qxF "ExecStart=/usr/bin/scx_soryu \$SCX_FLAGS" "$1/usr/lib/systemd/system/scx_soryu.service"' _ "$x" "$tmp/stripped" "$bin"
# The changelog: Debian's format, one entry for the package's version,
# holding CHANGELOG.md's items of Cargo.toml's version.
zcat "$x/usr/share/doc/scx-soryu/changelog.gz" >"$tmp/changelog" 2>/dev/null || : >"$tmp/changelog"
first_item=$(awk -v v="$v1" '/^## / { on = ($2 == v); next } on && /^- / { print substr($0, 3); exit }' CHANGELOG.md)
if [ "$(dpkg-parsechangelog -l "$tmp/changelog" -S Version 2>/dev/null)" = "$v1" ] &&
  [ "$(dpkg-parsechangelog -l "$tmp/changelog" -S Source 2>/dev/null)" = scx-soryu ] &&
  [ -n "$first_item" ] && grep -qF "  * $first_item" "$tmp/changelog"; then
  ok "changelog.gz: Debian's format, version $v1, CHANGELOG.md's entry for it"
else
  bad "changelog.gz: not a Debian changelog of scx-soryu $v1 holding CHANGELOG.md's entry for $v1"
  show "$tmp/changelog"
fi
homepage=$(sed -n '/^\[package\]/,/^\[/s/^homepage *= *"\(.*\)"/\1/p' Cargo.toml)
[ -n "$homepage" ] || homepage=$(sed -n '/^\[package\]/,/^\[/s/^repository *= *"\(.*\)"/\1/p' Cargo.toml)
check "control: Homepage: is Cargo.toml's homepage (or repository; none: no field): '${homepage}'" \
  [ "$(dpkg-deb -f "$deb1" Homepage)" = "$homepage" ]

# lintian: no error and no warning beyond the package's own overrides,
# each of which says why (pkg/deb/lintian-overrides). Informational tags
# are not judged.
# lintian_clean DEB: exit 0 when lintian finds nothing of E: or W:.
lintian_clean() {
  local out
  out=$(lintian --no-tag-display-limit "$1" 2>&1) || true
  if grep -qE '^[EW]: ' <<<"$out" || ! lintian --version >/dev/null 2>&1; then
    grep -E '^[EW]: ' <<<"$out" | sed 's/^/     | /'
    return 1
  fi
}
check "lintian: no error, no warning but the overrides' ($(grep -c '^scx-soryu:' pkg/deb/lintian-overrides) justified in pkg/deb/lintian-overrides)" \
  lintian_clean "$deb1"
# ... and it does see one: the same package with the binary unstripped.
unstripped="$tmp/unstripped"
dpkg-deb -R "$deb1" "$unstripped"
cp "$bin" "$unstripped/usr/bin/scx_soryu"
sed -i "s|^[0-9a-f]*  usr/bin/scx_soryu$|$(cd "$unstripped" && md5sum usr/bin/scx_soryu)|" "$unstripped/DEBIAN/md5sums"
dpkg-deb --root-owner-group --build "$unstripped" "$tmp/unstripped.deb" >/dev/null
if lintian_clean "$tmp/unstripped.deb" >/dev/null; then
  bad "the lintian check passes a package with an unstripped binary"
else
  ok "the lintian check fails the same package with the binary unstripped"
fi
check "unit: Conflicts= and After= scx.service scx_loader.service, ConditionPathIsDirectory=/sys/kernel/sched_ext" \
  bash -c 'for l in "Conflicts=scx.service scx_loader.service" "After=scx.service scx_loader.service" \
             "ConditionPathIsDirectory=/sys/kernel/sched_ext"; do grep -qxF "$l" "$1" || exit 1; done' \
  _ "$x/usr/lib/systemd/system/scx_soryu.service"

# Depends: exactly the packages holding the libraries the binary links
# (NEEDED) on this host, each with a minimum version.
depends=$(dpkg-deb -f "$deb1" Depends)
echo "     Depends: $depends"
# owner_of SONAME: the package holding the library the binary resolves
# SONAME to, as ldd prints it ("soname => path", or the loader's own
# path), tried on both sides of a merged /usr.
owner_of() {
  local p c
  p=$(ldd "$bin" | awk -v s="$1" '$1 == s && $2 == "=>" {print $3; exit}
                                  $1 ~ "/" s "$" {print $1; exit}')
  [ -n "$p" ] || return 1
  for c in "$p" "${p#/usr}" "/usr$p"; do
    if dpkg-query -S "$c" >/dev/null 2>&1; then
      dpkg-query -S "$c" | head -n1 | cut -d: -f1
      return 0
    fi
  done
  return 1
}
needed=$(objdump -p "$bin" | awk '$1 == "NEEDED" {print $2}')
owners=()
for so in $needed; do
  if o=$(owner_of "$so"); then owners+=("$o"); else owners+=("?$so"); fi
done
owners_sorted=$(printf '%s\n' "${owners[@]}" | LC_ALL=C sort -u | oneline)
dep_names=$(sed 's/ *([^)]*)//g; s/, */\n/g' <<<"$depends" | LC_ALL=C sort -u | oneline)
if [ -z "$needed" ]; then
  bad "no NEEDED library in $bin: not a dynamically linked ELF?"
elif [ "$owners_sorted" = "$dep_names" ]; then
  ok "Depends names exactly the packages of the libraries linked ($(oneline <<<"$needed")): $dep_names"
else
  bad "Depends names $dep_names; the libraries linked ($(oneline <<<"$needed")) are in: $owners_sorted"
fi
check "every Depends entry has a minimum version (>= ...)" \
  bash -c '! sed "s/, */\n/g" <<<"$1" | grep -vqE "^[a-z0-9][a-z0-9.+-]* \(>= [^)]+\)$"' _ "$depends"
if [ "$real_bin" = 1 ]; then
  check "Depends names libc6, libelf1 and zlib1g (libbpf's libraries)" \
    bash -c 'for p in libc6 libelf1 zlib1g; do grep -qE "(^|, )$p \(>= " <<<"$1" || exit 1; done' _ "$depends"
else
  echo "skip Depends names the daemon's libraries (stand-in binary)"
fi

# ---- a scratch root for dpkg --root
# make_root DIR: dash as /bin/sh, rm, /dev/null, a dpkg database with the
# host's records of the packages depended on, and recording stand-ins for
# systemctl and deb-systemd-invoke: systemd does not run in the scratch root
# (no /run/systemd/system), and neither command may be called then. What the
# scripts do with a running systemd is tested under a real one
# (tests/host/systemd.sh). deb-systemd-helper needs perl, which the scratch
# root lacks: its calls fail there, which the scripts must survive.
make_root() {
  local r=$1 t p l
  mkdir -p "$r/usr/bin" "$r/dev" "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" "$r/var/log"
  ln -s usr/bin "$r/bin"
  for t in dash rm; do
    p=$(readlink -f "$(command -v "$t")")
    cp "$p" "$r/usr/bin/$t"
    for l in $(ldd "$p" | grep -o '/[^ ]*'); do
      mkdir -p "$r$(dirname "$l")"
      cp -L "$l" "$r$l"
    done
  done
  ln -s dash "$r/usr/bin/sh"
  mknod -m 666 "$r/dev/null" c 1 3 2>/dev/null || : >"$r/dev/null"
  # Builtins only: the root has no other command.
  for t in systemctl deb-systemd-invoke; do
    printf '#!/bin/sh\necho "%s $*" >>/var/log/systemd.calls\n' "$t" >"$r/usr/bin/$t"
    chmod 755 "$r/usr/bin/$t"
  done
  : >"$r/var/lib/dpkg/status"
  : >"$r/var/lib/dpkg/available"
  for p in $(sed 's/([^)]*)//g; s/[,|]/ /g' <<<"$depends"); do
    dpkg-query -s "$p" >>"$r/var/lib/dpkg/status"
    echo >>"$r/var/lib/dpkg/status"
    : >"$r/var/lib/dpkg/info/$(dpkg-query -W -f '${binary:Package}' "$p").list"
  done
}
# tree DIR: its files, links and directories, but dpkg's database and the log.
tree() { (cd "$1" && find . ! -path './var/lib/dpkg*' ! -path './var/log/*' | LC_ALL=C sort); }

R="$tmp/root"
make_root "$R"
tree "$R" >"$tmp/tree.before"
calls="$R/var/log/systemd.calls"
# dp LOG ARGS...: dpkg on the scratch root, no terminal to answer prompts.
dp() {
  local log=$1
  shift
  : >"$calls"
  dpkg --root="$R" "$@" </dev/null >"$log" 2>&1
}
status() { dpkg-query --admindir="$R/var/lib/dpkg" -W -f '${Status} ${Version}' scx-soryu 2>/dev/null || echo "unknown"; }
no_systemd_call() {
  [ ! -s "$calls" ] && return 0
  echo "     | called: $(oneline <"$calls")"
  return 1
}
edited='SCX_FLAGS="--report-sec 5 --vtime"'

# ---- install
if dp "$tmp/install.log" -i "$deb1"; then
  ok "dpkg -i scx-soryu_$v1 into a scratch root"
else
  bad "dpkg -i scx-soryu_$v1"
  show "$tmp/install.log"
  exit 1
fi
check "status: install ok installed $v1" [ "$(status)" = "install ok installed $v1" ]
check "installed: the packed binary, the unit, the shipped /etc/default/scx_soryu" \
  bash -c 'cmp -s "$1/usr/bin/scx_soryu" "$3/usr/bin/scx_soryu" && cmp -s "$1/etc/default/scx_soryu" service/scx_soryu.default &&
           cmp -s "$1/usr/lib/systemd/system/scx_soryu.service" "$3/usr/lib/systemd/system/scx_soryu.service"' \
  _ "$R" "$bin" "$x"
check "install without a running systemd: no systemctl, no deb-systemd-invoke" no_systemd_call
check "dpkg registers /etc/default/scx_soryu as a conffile" \
  bash -c 'dpkg-query --admindir="$1/var/lib/dpkg" -W -f "\${Conffiles}" scx-soryu | grep -q "^ /etc/default/scx_soryu [0-9a-f]\{32\}"' _ "$R"
verify_out=$(dpkg --root="$R" --verify scx-soryu 2>&1) || true
check "dpkg --verify: every file matches the package's md5sums" [ -z "$verify_out" ]

# ---- upgrade to the bumped version with the flags edited
echo "$edited" >>"$R/etc/default/scx_soryu"
cp "$R/etc/default/scx_soryu" "$tmp/edited"
# kept_after_upgrade DEB: dpkg -i DEB over the edited flags keeps them
# byte for byte, and leaves no .dpkg-* copy.
kept_after_upgrade() {
  if ! dp "$tmp/upgrade.log" -i "$1"; then
    show "$tmp/upgrade.log"
    return 1
  fi
  cmp -s "$R/etc/default/scx_soryu" "$tmp/edited" && ! ls "$R"/etc/default/scx_soryu.* >/dev/null 2>&1
}
check "upgrade $v1 -> $v2 keeps the edited /etc/default/scx_soryu as it is, no prompt, no .dpkg-* copy" \
  kept_after_upgrade "$deb2"
check "status: install ok installed $v2" [ "$(status)" = "install ok installed $v2" ]
check "upgrade without a running systemd: no systemctl, no deb-systemd-invoke" no_systemd_call
verify_out=$(dpkg --root="$R" --verify scx-soryu 2>&1) || true
check "dpkg --verify after the upgrade: only the edited conffile differs" \
  bash -c '[ "$(awk "{print \$1, \$2, \$3}" <<<"$1")" = "??5?????? c /etc/default/scx_soryu" ]' _ "$verify_out"

# ---- the same check on a package whose conffiles list was dropped: dpkg
# must then overwrite the edited flags, and the check must see it
bad_dir="$tmp/noconf"
dpkg-deb -R "$deb2" "$bad_dir"
rm "$bad_dir/DEBIAN/conffiles"
sed -i "s/^Version: .*/Version: $v2+noconf/" "$bad_dir/DEBIAN/control"
dpkg-deb --root-owner-group --build "$bad_dir" "$tmp/noconf.deb" >/dev/null
R_main=$R
R="$tmp/root-noconf"
calls="$R/var/log/systemd.calls"
make_root "$R"
dp "$tmp/noconf-install.log" -i "$deb1" || true
echo "$edited" >>"$R/etc/default/scx_soryu"
if kept_after_upgrade "$tmp/noconf.deb" 2>/dev/null; then
  bad "the edited-flags check passes a package without conffiles (it cannot catch a dropped conffile)"
else
  ok "the edited-flags check fails a package without conffiles (dpkg then overwrites the flags)"
fi
R=$R_main
calls="$R/var/log/systemd.calls"

# ---- remove: conffile kept
if dp "$tmp/remove.log" -r scx-soryu; then ok "dpkg -r scx-soryu"; else bad "dpkg -r scx-soryu"; show "$tmp/remove.log"; fi
check "remove without a running systemd: no systemctl, no deb-systemd-invoke" no_systemd_call
check "remove: binary, unit and doc gone; edited /etc/default/scx_soryu kept" \
  bash -c '[ ! -e "$1/usr/bin/scx_soryu" ] && [ ! -e "$1/usr/lib/systemd/system/scx_soryu.service" ] &&
           [ ! -e "$1/usr/share/doc/scx-soryu" ] && cmp -s "$1/etc/default/scx_soryu" "$2"' _ "$R" "$tmp/edited"
check "status: deinstall ok config-files $v2" [ "$(status)" = "deinstall ok config-files $v2" ]

# ---- purge: everything of the package gone
mkdir -p "$R/etc/default"
: >"$R/etc/default/scx_soryu.dpkg-old"
if dp "$tmp/purge.log" -P scx-soryu; then ok "dpkg -P scx-soryu"; else bad "dpkg -P scx-soryu"; show "$tmp/purge.log"; fi
check "purge: /etc/default/scx_soryu and its .dpkg-old gone" \
  bash -c '! ls "$1"/etc/default/scx_soryu* >/dev/null 2>&1' _ "$R"
check "purge: dpkg no longer knows scx-soryu" [ "$(status)" = unknown ]
check "purge without a running systemd: no systemctl, no deb-systemd-invoke" no_systemd_call
if diff "$tmp/tree.before" <(tree "$R") >"$tmp/tree.diff"; then
  ok "after purge the root is as before the install (nothing of the package left)"
else
  bad "after purge the root differs from before the install"
  show "$tmp/tree.diff"
fi

# ---- purge straight from installed
dp "$tmp/install3.log" -i "$deb2" || { bad "dpkg -i $v2 after the purge"; show "$tmp/install3.log"; }
if dp "$tmp/purge2.log" -P scx-soryu && [ "$(status)" = unknown ] &&
  ! ls "$R"/etc/default/scx_soryu* >/dev/null 2>&1; then
  ok "dpkg -P of an installed scx-soryu removes it and its conffile"
else
  bad "dpkg -P of an installed scx-soryu"
  show "$tmp/purge2.log"
fi

# ---- dpkg --force-script-chrootless (image builders): the scripts run on
# the host with DPKG_ROOT set; they must act inside DPKG_ROOT only and never
# call the host's systemctl or deb-systemd-invoke (stand-ins first on PATH
# record any call); deb-systemd-helper, the host's real one, acts under
# DPKG_ROOT by itself.
mkdir -p "$tmp/fakebin"
for t in systemctl deb-systemd-invoke; do
  printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "$t" "$tmp/host-systemctl.calls" >"$tmp/fakebin/$t"
  chmod +x "$tmp/fakebin/$t"
done
R3="$tmp/root-chrootless"
mkdir -p "$R3/var/lib/dpkg/info" "$R3/var/lib/dpkg/updates" "$R3/etc/systemd/system/multi-user.target.wants"
cp "$R/var/lib/dpkg/status" "$R/var/lib/dpkg/available" "$R3/var/lib/dpkg/"
cp "$R"/var/lib/dpkg/info/*.list "$R3/var/lib/dpkg/info/"
dsh_record="$R3/var/lib/systemd/deb-systemd-helper-enabled/scx_soryu.service.dsh-also"
if PATH="$tmp/fakebin:$PATH" dpkg --root="$R3" --force-script-chrootless -i "$deb2" </dev/null >"$tmp/cl.log" 2>&1 &&
  [ -x "$R3/usr/bin/scx_soryu" ]; then
  ok "chrootless install (dpkg --force-script-chrootless)"
else
  bad "chrootless install (dpkg --force-script-chrootless)"
  show "$tmp/cl.log"
fi
check "chrootless install: deb-systemd-helper recorded the unit's link inside the root, enabled nothing" \
  bash -c 'grep -qx /etc/systemd/system/multi-user.target.wants/scx_soryu.service "$1" &&
           [ ! -e "$2/etc/systemd/system/multi-user.target.wants/scx_soryu.service" ]' _ "$dsh_record" "$R3"
# The administrator enables it (what `systemctl enable` makes), then purges.
ln -s /usr/lib/systemd/system/scx_soryu.service "$R3/etc/systemd/system/multi-user.target.wants/"
if PATH="$tmp/fakebin:$PATH" dpkg --root="$R3" --force-script-chrootless -P scx-soryu </dev/null >>"$tmp/cl.log" 2>&1 &&
  [ ! -e "$R3/usr/bin/scx_soryu" ] && ! ls "$R3"/etc/default/scx_soryu* >/dev/null 2>&1; then
  ok "chrootless purge"
else
  bad "chrootless purge"
  show "$tmp/cl.log"
fi
check "chrootless purge: the enablement symlink and deb-systemd-helper's record gone from the root" \
  bash -c '! [ -L "$1/etc/systemd/system/multi-user.target.wants/scx_soryu.service" ] && [ ! -e "$2" ]' _ "$R3" "$dsh_record"
if [ -s "$tmp/host-systemctl.calls" ]; then
  bad "chrootless: the scripts called the host's systemctl or deb-systemd-invoke:"
  show "$tmp/host-systemctl.calls"
elif [ -d /run/systemd/system ]; then
  ok "chrootless: no systemctl or deb-systemd-invoke call on the host (whose systemd is running)"
else
  echo "skip chrootless: no systemctl call on the host (its systemd is not running: no call either way)"
fi

# ---- the host
if diff "$tmp/host.before" <(host_state) >"$tmp/host.diff"; then
  ok "the host's own system untouched (its files of the package's paths, its dpkg database)"
else
  bad "the host changed"
  show "$tmp/host.diff"
fi

checks_done
