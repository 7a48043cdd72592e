#!/usr/bin/env bash
# Bad input on the host, where no scheduler can load: every refusal is one
# line on stderr naming the problem, a non-zero exit, no panic or backtrace.
# And what must not end in one: a closed stderr, a --report-json file with
# a torn line or without its header (compare reads the rest, with a note).
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
refuses "--kconfig of a missing file" "cannot read the --kconfig file /nonexistent/config" "$bin" --kconfig /nonexistent/config
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

# A closed stderr (`scx_soryu ... 2>&1 | head -3` once head has exited):
# the daemon's one-line error is dropped, and it still exits 1, without a
# panic (eprintln! panicked: status 101). The daemon's log lines take the
# same way (tests/vm/report-edges.sh: a CPU hotplug restart after it).
rc=$(python3 -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
print(subprocess.run(sys.argv[1:], stderr=w, stdout=subprocess.DEVNULL).returncode)
' "$bin" --report-sec 1)
check "a closed stderr: exit status $rc (1: the error, not 101: a panic)" test "$rc" = 1

# --report-header (hidden, for the benchmark): the header --report-json
# writes, as one line, for soryu's flags or for an outside scheduler
h=$("$bin" --report-header --vtime --report-sec 5)
check "--report-header: soryu's header with the flags' knobs: $(head -c 120 <<<"$h")" \
  test "$(jq -c '[.type, .scheduler, .knobs.vtime, .report_sec, (.format | type), (.lat_bucket_lower_ns | length > 10)]' <<<"$h")" = '["header","scx_soryu",true,5,"number",true]'
h=$("$bin" --report-header=eevdf --report-sec 5)
check "--report-header=eevdf: no knobs, no soryu build" \
  test "$(jq -c '[.scheduler, .knobs, .version, .nr_cpus > 0]' <<<"$h")" = '["eevdf",{},null,true]'
refuses "--report-header with a bad flag" "slice-us must be at least 1" "$bin" --report-header --slice-us 0

# compare reads what it can of a damaged file, and says what it skipped
cdir=$(mktemp -d)
trap 'rm -rf "$cdir"' EXIT
for side in a b; do
  {
    "$bin" --report-header --report-sec 5
    for i in 0 1 2 3 4 5 6 7 8; do
      v=$([ $side = a ] && echo $((i + 1)) || echo $((i + 2)))
      echo "{\"type\":\"interval\",\"index\":$i,\"duration_s\":5,\"int_p99_us\":$v}"
      [ $i != 4 ] || echo '{"type":"interval","index":'
    done
  } >"$cdir/$side.jsonl"
done
out=$("$bin" compare --figure int_p99_us "$cdir/a.jsonl" "$cdir/b.jsonl" 2>&1) && rc=0 || rc=$?
if [ "$rc" = 0 ] && grep -q 'a.jsonl: 1 of 11 lines skipped, torn or invalid: line 7 (not valid JSON' <<<"$out" &&
  grep -qE '^int_p99_us +1 +8 +8 ' <<<"$out"; then
  ok "compare skips a torn line, says so, compares the rest"
else
  bad "compare of a file with a torn line: status $rc: $(head -c 400 <<<"$out")"
fi
# logrotate's copytruncate: the records after the cut have no header
tail -n +4 "$cdir/a.jsonl" >"$cdir/cut.jsonl"
out=$("$bin" compare --figure int_p99_us --min-pairs 1 "$cdir/cut.jsonl" "$cdir/b.jsonl" 2>&1) && rc=0 || rc=$?
if [ "$rc" = 0 ] && grep -q 'cut.jsonl starts without a header' <<<"$out"; then
  ok "compare reads a file without a header, with a note"
else
  bad "compare of a file without a header: status $rc: $(head -c 400 <<<"$out")"
fi
refuses "compare --allow-mismatch without a check" "a value is required for '--allow-mismatch" \
  "$bin" compare "$cdir/a.jsonl" "$cdir/b.jsonl" --allow-mismatch
refuses "compare --allow-mismatch of no such check" "invalid value 'everything'" \
  "$bin" compare --allow-mismatch everything "$cdir/a.jsonl" "$cdir/b.jsonl"

out=$("$bin" --version) && [[ "$out" == "scx_soryu "* ]] && ok "--version: $out" || bad "--version: $out"
out=$("$bin" --help-stats) && grep -q int_p99_us <<<"$out" && ok "--help-stats describes the figures" || bad "--help-stats"
out=$("$bin" --help) && grep -q -- '--boost-on-wake' <<<"$out" && ok "--help lists the knobs" || bad "--help"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
