#!/usr/bin/env bash
# Bad input on the host, where no scheduler can load: every refusal is one
# line on stderr naming the problem, a non-zero exit, no panic or backtrace.
#
#   tests/host/errors.sh [BIN]     (default target/release/scx_soryu)
#
# The kernel-side refusals (another scheduler running, a BPF load failure,
# SIGKILL, a BPF error exit) need a sched_ext kernel: tests/vm/errors.sh.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${1:-$repo/target/release/scx_soryu}
[ -x "$bin" ] || { echo "no binary $bin: build it first (cargo build --release)" >&2; exit 1; }

# shellcheck source=tests/host/lib.sh
. "$repo/tests/host/lib.sh"

# refuses WHAT PATTERN CMD...: CMD exits non-zero, stderr is one line
# matching PATTERN, and nothing looks like a panic.
refuses() {
  local what=$1 pat=$2 err rc=0
  shift 2
  err=$("$@" 2>&1 >/dev/null) || rc=$?
  if [ "$rc" = 0 ]; then
    bad "$what: exit status 0"
  elif grep -qiE 'panicked|backtrace|RUST_BACKTRACE' <<<"$err"; then
    bad "$what: panic: $err"
  elif ! grep -qE -- "$pat" <<<"$err"; then
    bad "$what: message does not match /$pat/: $err"
  elif [ "$(grep -c . <<<"$err")" -gt 1 ] && ! grep -q '^error:' <<<"$err"; then
    bad "$what: more than one line: $err"
  else
    ok "$what: $(head -n1 <<<"$err")"
  fi
}

refuses "zero slice" "slice-us must be at least 1" "$bin" --slice-us 0
refuses "negative slice" "invalid value '-5'" "$bin" --slice-us=-5
refuses "slice not a number" "invalid value 'abc'" "$bin" --slice-us abc
refuses "slice above one second" "above the limit" "$bin" --slice-us 2000000
refuses "starve threshold below the slice" "must be longer than the slice" "$bin" --starve-ms 1 --slice-us 5000
refuses "starve threshold near the watchdog" "fifth of the kernel watchdog" "$bin" --starve-ms 100000
refuses "wakeup granularity past the slice" "longer than the slice" "$bin" --wakeup-gran-us 3000 --slice-us 2000
refuses "knob with a bad value" "invalid value 'yes'" "$bin" --vtime=yes
refuses "unknown flag" "unexpected argument '--no-such-flag'" "$bin" --no-such-flag
refuses "stats interval zero" "positive number of seconds" "$bin" --stats 0
refuses "monitor with --stats" "cannot be combined" "$bin" --monitor 1 --stats 1
refuses "json with reports off" "report-sec 0 turns reports off" "$bin" --report-json x.jsonl --report-sec 0
refuses "json path in a missing directory" "directory /nonexistent/dir does not exist" \
  "$bin" --report-json /nonexistent/dir/r.jsonl
# Every numeric flag with a wrong type, a negative and a huge value.
huge=18446744073709551615
for flag in --slice-us --starve-ms --wakeup-gran-us --report-sec --exit-dump-len --inject-error-ms; do
  refuses "$flag not a number" "invalid value 'x'" "$bin" "$flag" x
  refuses "$flag negative" "invalid value '-1'" "$bin" "$flag=-1"
  refuses "$flag huge" "invalid value '1${huge}'|above|must be" "$bin" "$flag" "1$huge"
  refuses "$flag u64 max" "invalid value '$huge'|above|must be|longer than the slice" "$bin" "$flag" "$huge"
done
for flag in --stats --monitor; do
  refuses "$flag not a number" "invalid value 'x'" "$bin" "$flag" x
  refuses "$flag negative" "positive number of seconds" "$bin" "$flag=-1"
  refuses "$flag huge" "above 86400 seconds" "$bin" "$flag" 1e30
  refuses "$flag infinite" "positive number of seconds" "$bin" "$flag" inf
done
refuses "--report-sec above a day" "above 86400 seconds" "$bin" --report-sec 86401

# --check-flags: the same refusals, and for good flags status 0 and silence,
# with nothing loaded (no root, no sched_ext needed)
refuses "--check-flags, zero slice" "slice-us must be at least 1" "$bin" --slice-us 0 --check-flags
refuses "--check-flags, granularity past the slice" "longer than the slice" "$bin" --slice-us 4000 --wakeup-gran-us 5000 --check-flags
if [ "$(id -u)" = 0 ]; then as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups); else as_nobody=(); fi
rc=0
out=$(${as_nobody[@]+"${as_nobody[@]}"} "$bin" --slice-us 4000 --starve-ms 200 --check-flags 2>&1) || rc=$?
check "--check-flags accepts good flags without root or a load: status $rc, output '$out'" test "$rc" = 0 -a -z "$out"

if [ "$(id -u)" = 0 ]; then
  if [ ! -d /sys/kernel/sched_ext ]; then
    refuses "kernel without sched_ext" "CONFIG_SCHED_CLASS_EXT" "$bin"
  else
    echo "skip kernel without sched_ext: this kernel has it (tests/vm/errors.sh covers the rest)"
  fi
  refuses "not root" "must run as root" setpriv --reuid=65534 --regid=65534 --clear-groups "$bin"
else
  refuses "not root" "must run as root" "$bin"
fi
# --monitor with nothing running is not an error: it waits, and says so.
if [ ! -e /var/run/scx/root/stats ]; then
  err=$(timeout -s INT 5 "$bin" --monitor 1 2>&1 >/dev/null || true)
  grep -q "no scheduler is serving stats" <<<"$err" && ok "--monitor with nothing running says it waits" ||
    bad "--monitor with nothing running: '$err'"
fi

out=$("$bin" --version) && [[ "$out" == "scx_soryu "* ]] && ok "--version: $out" || bad "--version: $out"
out=$("$bin" --help-stats) && grep -q int_p99_us <<<"$out" && ok "--help-stats describes the figures" || bad "--help-stats"
out=$("$bin" --help) && grep -q -- '--boost-on-wake' <<<"$out" && ok "--help lists the knobs" || bad "--help"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
