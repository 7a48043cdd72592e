#!/usr/bin/env bash
# shellcheck disable=SC2016 # single-quoted bash -c scripts expand their own "$1"
# Host-side test of `make install` / `make uninstall` and the systemd unit
# they lay out. Needs make and systemd-analyze (Debian: systemd); root is not
# needed: everything goes into temporary DESTDIRs, and systemctl is never
# reached (a stand-in first on PATH records any call, which is a failure).
#
# It uses target/release/scx_soryu when it is built; otherwise a stand-in
# script (the layout checks do not need the real binary; the checks of the
# environment file against the daemon's flags are then skipped, and say so).
#
# On systemd-analyze verify: it refuses a unit whose ExecStart= binary does
# not exist, and the installed unit says /usr/bin/scx_soryu, which lives in
# DESTDIR only. `verify --root=DESTDIR` does not help: it then looks for
# every unit the service depends on (sysinit.target...) inside DESTDIR too
# and fails on a bare staging tree (seen with systemd 252 and 257). So it
# verifies a copy of the installed unit whose ExecStart= alone is rewritten
# to the DESTDIR binary. verify also exits 0 on an unknown directive or a bad
# value (it only warns), so a unit passes only when verify exits 0 AND says
# nothing about it; two broken copies (an unknown directive, a missing
# binary) must fail that same check, so it cannot pass vacuously.
#
#   tests/host/service.sh
#   SYSTEMD_ANALYZE=/path/to/systemd-analyze tests/host/service.sh   another build
#
# One line per check, then "N passed, M failed"; non-zero exit on a failure.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"

# shellcheck source=tests/host/lib.sh
. "$repo/tests/host/lib.sh"
checks_begin

# A systemctl that only records that it was called.
mkdir -p "$tmp/fakebin"
cat >"$tmp/fakebin/systemctl" <<EOF
#!/bin/sh
echo "systemctl \$*" >>"$tmp/systemctl.calls"
EOF
chmod +x "$tmp/fakebin/systemctl"
PATH="$tmp/fakebin:$PATH"

bin=target/release/scx_soryu
real_bin=1
if [ ! -x "$bin" ]; then
  real_bin=0
  bin="$tmp/stub/scx_soryu"
  mkdir -p "$tmp/stub"
  printf '#!/bin/sh\nexit 0\n' >"$bin"
  chmod +x "$bin"
  echo "note: target/release/scx_soryu is not built; installing a stand-in"
fi

# mk LOG ARGS...: make quietly from the repository, output into LOG.
mk() {
  local log=$1
  shift
  make -s --no-print-directory -C "$repo" "$@" >"$log" 2>&1
}
show() { sed 's/^/     | /' "$1"; }
oneline() { tr '\n' ' ' | sed 's/ *$//'; }

files_under() { (cd "$1" && find . -type f -o -type l | sed 's|^\./||' | sort); }

# ---- install without a binary: refused, with the build command, nothing laid
none="$tmp/none"
if mk "$tmp/nobin.log" install BIN="$tmp/missing/scx_soryu" DESTDIR="$none" PREFIX=/usr; then
  bad "install without a built binary is refused"
  show "$tmp/nobin.log"
elif grep -q 'cargo build --release' "$tmp/nobin.log" && [ ! -e "$none" ]; then
  ok "install without a built binary is refused, names the build command, installs nothing"
else
  bad "install without a built binary: no build command in the message, or files laid"
  show "$tmp/nobin.log"
fi

# ---- install PREFIX=/usr into a DESTDIR
d="$tmp/dest"
unit_rel=usr/lib/systemd/system/scx_soryu.service
if mk "$tmp/install.log" install BIN="$bin" DESTDIR="$d" PREFIX=/usr; then
  ok "make install DESTDIR=... PREFIX=/usr"
else
  bad "make install DESTDIR=... PREFIX=/usr"
  show "$tmp/install.log"
  exit 1
fi
# the daemon, its unit and flags file, the manual page, and the docs
# (README.md, docs/*.md, docs/img/*.svg)
expected=$(
  {
    printf '%s\n' etc/default/scx_soryu usr/bin/scx_soryu "$unit_rel" usr/share/man/man8/scx_soryu.8.gz
    (cd "$repo" && printf 'usr/share/doc/scx-soryu/%s\n' README.md && printf '%s\n' docs/*.md docs/img/*.svg |
      sed 's|^docs/|usr/share/doc/scx-soryu/|')
  } | sort
)
got=$(files_under "$d")
if [ "$got" = "$expected" ]; then
  ok "exactly the documented files: $(oneline <<<"$expected")"
else
  bad "installed files differ from the documented ones"
  diff <(echo "$expected") <(echo "$got") | sed 's/^/     | /' || true
fi
check "manual page: gzip'd roff naming every flag of scx_soryu --help" \
  bash -c 'm=$(zcat "$1" | sed "s/\\\\-/-/g") && grep -q "^\.TH scx_soryu 8" <<<"$m" &&
    for f in $("$2" --help | grep -oE -- "--[a-z][a-z-]+" | sort -u); do grep -qF -- "$f" <<<"$m" || exit 1; done' \
  _ "$d/usr/share/man/man8/scx_soryu.8.gz" "$bin"
check "binary: the built one, mode 755" \
  bash -c '[ "$(stat -c %a "$1")" = 755 ] && cmp -s "$1" "$2"' _ "$d/usr/bin/scx_soryu" "$bin"
check "unit: mode 644, no @...@ left" \
  bash -c '[ "$(stat -c %a "$1")" = 644 ] && ! grep -q "@[A-Z_]*@" "$1"' _ "$d/$unit_rel"
execs=$(grep '^ExecStart=' "$d/$unit_rel" || true)
if [ "$execs" = 'ExecStart=/usr/bin/scx_soryu $SCX_FLAGS' ]; then
  ok "unit: ExecStart=/usr/bin/scx_soryu \$SCX_FLAGS (PREFIX/bin)"
else
  bad "unit: ExecStart is '$execs', expected /usr/bin/scx_soryu \$SCX_FLAGS"
fi
check "unit: EnvironmentFile=-/etc/default/scx_soryu, Conflicts= and After= scx.service scx_loader.service, Restart=on-failure, start limit, multi-user.target" \
  bash -c 'for l in "EnvironmentFile=-/etc/default/scx_soryu" "Conflicts=scx.service scx_loader.service" \
             "After=scx.service scx_loader.service" \
             "Restart=on-failure" "ConditionPathIsDirectory=/sys/kernel/sched_ext" \
             "WantedBy=multi-user.target"; do grep -qxF "$l" "$1" || exit 1; done
           grep -q "^StartLimitBurst=[0-9]" "$1" && grep -q "^StartLimitIntervalSec=[0-9]" "$1"' _ "$d/$unit_rel"
check "env file: the shipped default, mode 644, sets SCX_FLAGS" \
  bash -c '[ "$(stat -c %a "$1")" = 644 ] && cmp -s "$1" service/scx_soryu.default && grep -q "^SCX_FLAGS=" "$1"' \
  _ "$d/etc/default/scx_soryu"

if [ "$real_bin" = 1 ]; then
  # systemd reads SCX_FLAGS="..." with the quotes removed, like sh; the
  # daemon parses its flags before --version, so bad flags fail here.
  flags=$(sed -n 's/^SCX_FLAGS=//p' service/scx_soryu.default | tail -n1)
  flags=${flags#\"}
  flags=${flags%\"}
  # shellcheck disable=SC2086 # split like systemd splits $SCX_FLAGS
  check "the default SCX_FLAGS ($flags) are accepted by the daemon" \
    bash -c '"$@" --check-flags >/dev/null 2>&1' _ "$bin" $flags
  # Every flag of the daemon's --help (not libbpf's) is listed in the file.
  missing=()
  while read -r f; do
    case "$f" in --help | --version | --help-stats) continue ;; esac
    grep -qe "$f" service/scx_soryu.default || missing+=("$f")
  done < <("$bin" --help | sed '/^Libbpf Options:/,$d' | grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+')
  if [ ${#missing[@]} -eq 0 ]; then
    ok "env file comments list every flag of scx_soryu --help"
  else
    bad "env file comments lack: ${missing[*]}"
  fi
else
  echo "skip the default SCX_FLAGS against the daemon (not built)"
fi

# ---- systemd-analyze verify
sa=${SYSTEMD_ANALYZE:-$(command -v systemd-analyze || true)}
# verify_clean UNIT: exit 0 and not a word about this unit (other units'
# warnings, e.g. host units from a newer systemd, are not ours to judge).
verify_clean() {
  local out rc=0
  out=$("$sa" verify "$1" 2>&1) || rc=$?
  out=$(grep -F 'scx_soryu' <<<"$out" || true)
  if [ "$rc" = 0 ] && [ -z "$out" ]; then return 0; fi
  echo "     | exit status $rc"
  [ -z "$out" ] || while IFS= read -r l; do echo "     | $l"; done <<<"$out"
  return 1
}
if [ -z "$sa" ] || ! "$sa" --version >/dev/null 2>&1; then
  bad "systemd-analyze is missing (Debian: apt-get install systemd): unit not verified"
else
  echo "using $("$sa" --version | head -n1)"
  for v in good unknown-key no-binary; do mkdir -p "$tmp/verify/$v"; done
  sed "s|^ExecStart=/usr/bin/scx_soryu|ExecStart=$d/usr/bin/scx_soryu|" \
    "$d/$unit_rel" >"$tmp/verify/good/scx_soryu.service"
  sed 's/^Restart=on-failure/Restart=on-failure\nRestartOnFailure=yes/' \
    "$tmp/verify/good/scx_soryu.service" >"$tmp/verify/unknown-key/scx_soryu.service"
  sed "s|^ExecStart=[^ ]*|ExecStart=$d/usr/bin/no-such-binary|" \
    "$tmp/verify/good/scx_soryu.service" >"$tmp/verify/no-binary/scx_soryu.service"
  check "systemd-analyze verify accepts the installed unit (ExecStart rewritten into DESTDIR)" \
    verify_clean "$tmp/verify/good/scx_soryu.service"
  if verify_clean "$tmp/verify/unknown-key/scx_soryu.service" >/dev/null; then
    bad "systemd-analyze verify check accepts a unit with an unknown directive"
  else
    ok "systemd-analyze verify check rejects a copy with an unknown directive"
  fi
  if verify_clean "$tmp/verify/no-binary/scx_soryu.service" >/dev/null; then
    bad "systemd-analyze verify check accepts a unit whose ExecStart binary is missing"
  else
    ok "systemd-analyze verify check rejects a copy whose ExecStart binary is missing"
  fi
fi

# ---- a second install keeps an edited env file
echo 'SCX_FLAGS="--report-sec 5 --vtime"' >>"$d/etc/default/scx_soryu"
cp "$d/etc/default/scx_soryu" "$tmp/edited"
if mk "$tmp/reinstall.log" install BIN="$bin" DESTDIR="$d" PREFIX=/usr &&
  cmp -s "$d/etc/default/scx_soryu" "$tmp/edited" && grep -q '^kept ' "$tmp/reinstall.log"; then
  ok "second install keeps an edited env file (and says so)"
else
  bad "second install: edited env file not kept, or not said"
  show "$tmp/reinstall.log"
fi

# ---- uninstall: binary and unit go, the edited env file stays
if mk "$tmp/uninstall.log" uninstall DESTDIR="$d" PREFIX=/usr; then
  ok "make uninstall DESTDIR=... PREFIX=/usr"
else
  bad "make uninstall DESTDIR=... PREFIX=/usr"
  show "$tmp/uninstall.log"
fi
got=$(files_under "$d")
if [ "$got" = etc/default/scx_soryu ] && cmp -s "$d/etc/default/scx_soryu" "$tmp/edited"; then
  ok "uninstall removed binary and unit, kept the edited env file"
else
  bad "after uninstall: left $(oneline <<<"$got")"
fi

# ---- uninstall of an untouched install leaves no file at all
d2="$tmp/dest2"
if mk "$tmp/i2.log" install BIN="$bin" DESTDIR="$d2" PREFIX=/usr &&
  mk "$tmp/u2.log" uninstall DESTDIR="$d2" PREFIX=/usr && [ -z "$(files_under "$d2")" ]; then
  ok "install then uninstall with the env file untouched leaves no file"
else
  bad "install then uninstall with the env file untouched left: $(files_under "$d2" | oneline)"
fi

# ---- where the unit goes for other prefixes (directories systemd reads)
# unit_for LABEL EXPECTED_UNIT EXPECTED_BIN MAKEARGS...
n_prefix=0
unit_for() {
  local label=$1 unit=$2 binpath=$3 dd
  shift 3
  n_prefix=$((n_prefix + 1))
  dd="$tmp/prefix-$n_prefix"
  if mk "$tmp/prefix-$n_prefix.log" install BIN="$bin" DESTDIR="$dd" "$@" &&
    [ -f "$dd/$unit" ] && [ -x "$dd/$binpath" ] &&
    grep -qxF "ExecStart=/$binpath \$SCX_FLAGS" "$dd/$unit"; then
    ok "$label: unit in /${unit%/*}, ExecStart=/$binpath"
  else
    bad "$label: expected /$unit running /$binpath; got: $(files_under "$dd" | oneline)"
  fi
}
unit_for "default PREFIX (/usr/local)" usr/local/lib/systemd/system/scx_soryu.service usr/local/bin/scx_soryu
unit_for "PREFIX=/opt/soryu" etc/systemd/system/scx_soryu.service opt/soryu/bin/scx_soryu PREFIX=/opt/soryu

if [ -s "$tmp/systemctl.calls" ]; then
  bad "systemctl was called although DESTDIR was set:"
  show "$tmp/systemctl.calls"
else
  ok "no systemctl call with DESTDIR set"
fi

checks_done
