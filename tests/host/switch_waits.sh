#!/usr/bin/env bash
# tests/vm/switch_waits.py, the starvation matrix's measure of a probe's
# waits, on hand-made sched_switch traces in the kernel's own text format:
# a wait runs from a preemption to the next stint of at least SHORT_US; a
# shorter stint joins two waits; a long stint (the host stalling a virtual
# CPU under the probe) keeps them apart; a sleep starts no wait; waits
# cross CPUs; only waits that start in a window count, when one is
# given; a trace that lost events is refused with one line.
#
#   tests/host/switch_waits.sh
#
# One line per check, then "N passed, M failed"; non-zero exit on a failure.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"

# shellcheck source=tests/host/lib.sh
. "$repo/tests/host/lib.sh"
checks_begin

# sw TS PREV STATE NEXT [CPU]: one sched_switch line.
sw() {
  printf '  %s-%s     [%03d] d..2. %12s: sched_switch: prev_comm=%s prev_pid=%s prev_prio=120 prev_state=%s ==> next_comm=%s next_pid=%s next_prio=100\n' \
    "stress-ng-cpu" "$2" "${5:-0}" "$1" "stress-ng-cpu" "$2" "$3" "python3" "$4"
}
# field PID KEY: KEY of PID's line in $out.
field() { jq -r "select(.pid == $1) | .$2" <<<"$out"; }
# expect WHAT PID KEY VALUE
expect() {
  local got
  got=$(field "$2" "$3")
  if [ "$got" = "$4" ]; then ok "$1 ($3 $got)"; else bad "$1: $3 is $got, expected $4"; fi
}

# pid 11: preempted at 10.000, back at 10.100 on the other CPU for 2 ms;
# preempted, back at 10.300 for 50 us (too short: no service), preempted,
# back at 10.400 for 5 ms (a wait of 298 ms); then it sleeps (S) and wakes, and exits.
# pid 12: preempted, back after 40 ms for 3 ms under a stalled virtual CPU
# (a stint, however little the probe did in it), preempted, back after
# 60 ms. pid 13 never appears.
{
  echo "# tracer: nop"
  sw 10.000000 11 R 1
  sw 10.100000 1 R 11 1
  sw 10.102000 11 R+ 1 1
  sw 10.300000 1 R 11
  sw 10.300050 11 R+ 1
  sw 10.400000 1 R 11
  sw 10.405000 11 S 0
  sw 10.600000 0 R 11
  sw 10.601000 11 X 0
  sw 20.000000 12 R 1
  sw 20.040000 1 R 12
  sw 20.043000 12 R 1
  sw 20.103000 1 R 12
  sw 20.105000 12 X 0
} >"$tmp/trace"

out=$(python3 tests/vm/switch_waits.py "$tmp/trace" 500 11 12 13)
expect "a wait ends at a long stint, on another CPU" 11 waits 2
expect "a 50 us stint joins the waits on either side of it" 11 max_wait_ms 298
expect "the short stint is counted" 11 short_stints 1
expect "its length is reported" 11 max_short_stint_us 50
expect "a 3 ms stint keeps two waits apart" 12 max_wait_ms 60
expect "a stint ends each wait" 12 waits 2
expect "a task that never ran waited nothing" 13 waits 0

# the same trace with a threshold below 50 us: three waits, 198 ms longest
out=$(python3 tests/vm/switch_waits.py "$tmp/trace" 10 11)
expect "with a 10 us threshold the 50 us stint is service" 11 max_wait_ms 198
expect "and three waits" 11 waits 3

# a window (the probe's own, on the trace's clock): only waits that start
# inside it count; pid 11's first wait starts at 10.000, before it
out=$(python3 tests/vm/switch_waits.py "$tmp/trace" 500 11:10.05:11)
expect "a wait that starts before the window does not count" 11 waits 1
expect "the one inside it does" 11 max_wait_ms 298

# a trace that lost events is refused: exit 1, one line
cp "$tmp/trace" "$tmp/lost"
echo "CPU:1 [LOST 12 EVENTS]" >>"$tmp/lost"
rc=0
python3 tests/vm/switch_waits.py "$tmp/lost" 500 11 >"$tmp/lost.out" 2>"$tmp/lost.err" || rc=$?
check "a trace that lost events: exit 1" test "$rc" = 1
check "a trace that lost events: one line saying so" \
  bash -c '[ "$(wc -l <"$1")" = 1 ] && grep -q "lost events" "$1" && [ ! -s "$2" ]' _ "$tmp/lost.err" "$tmp/lost.out"

# no arguments: usage, exit 2
rc=0
python3 tests/vm/switch_waits.py >/dev/null 2>&1 || rc=$?
check "no arguments: exit 2" test "$rc" = 2

checks_done
