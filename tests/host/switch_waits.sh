#!/usr/bin/env bash
# tests/vm/switch_waits.py, the starvation matrix's measure of a probe's
# waits, on hand-made sched_switch traces in the kernel's own text format:
# a wait runs from a preemption to the next stint of at least SHORT_US; a
# shorter stint joins two waits; a long stint (the host stalling a virtual
# CPU under the probe) keeps them apart; a sleep starts no wait; waits
# cross CPUs; only waits that start in a window count, when one is
# given; a trace that lost events is refused with one line. And
# tests/vm/tick_gaps.py, the platform's lateness in a case's window: the
# largest gap between one CPU's ticks, less a tick, idle gaps left out;
# and starve_judge.py's CPU time for the price, counted by the tick.
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

# tests/vm/tick_gaps.py, the platform's lateness in a window from the tick
# (HZ 250: a tick every 4 ms). tk TS CPU: a tick; ci TS CPU STATE: cpu_idle.
tk() {
  printf '  stress-ng-cpu-1     [%03d] d.h.. %12s: hrtimer_expire_entry: hrtimer=00000000296533d6 function=tick_nohz_handler now=1\n' "$2" "$1"
}
hk() {
  printf '  stress-ng-cpu-1     [%03d] d.h.. %12s: hrtimer_expire_entry: hrtimer=00000000fa1509d5 function=hrtick now=1\n' "$2" "$1"
}
ci() {
  printf '          <idle>-0       [%03d] d..1. %12s: cpu_idle: state=%s cpu_id=%s\n' "$2" "$1" "$3" "$2"
}
# CPU 0 ticks every 4 ms, then one tick 104 ms late (a stalled virtual
# CPU: 100 ms of lateness) ending at 5.120; CPU 1 ticks every 4 ms, goes
# idle for 300 ms (its tick stopped: idle, not lateness) and another
# timer fires in the gap; CPU 2 is late by 200 ms after 6.0.
{
  echo "# tracer: nop"
  tk 5.000000 0; tk 5.004000 0; tk 5.008000 0; tk 5.012000 0; tk 5.016000 0; tk 5.120000 0; tk 5.124000 0
  tk 5.000000 1; tk 5.004000 1; ci 5.005000 1 1; hk 5.100000 1; ci 5.304000 1 4294967295; tk 5.306000 1; tk 5.310000 1
  tk 6.000000 2; tk 6.204000 2
} >"$tmp/ticks"
tick_field() { jq -r ".$1" <<<"$out"; }
out=$(python3 tests/vm/tick_gaps.py "$tmp/ticks" 250 4.9 5.5)
check "a tick 104 ms after the last is 100 ms late (late_ms $(tick_field late_ms))" test "$(tick_field late_ms)" = 100
check "on the CPU and at the time it came (cpu $(tick_field cpu), at $(tick_field at_s))" \
  test "$(tick_field cpu):$(tick_field at_s)" = 0:5.12
check "a gap with the CPU idle in it is not lateness, nor is another timer a tick" \
  bash -c 'python3 tests/vm/tick_gaps.py "$1" 250 5.2 5.5 | jq -e ".late_ms == 0" >/dev/null' _ "$tmp/ticks"
check "a gap outside the window does not count" \
  bash -c 'python3 tests/vm/tick_gaps.py "$1" 250 4.9 5.5 | jq -e ".late_ms < 200" >/dev/null' _ "$tmp/ticks"
check "a gap overlapping the window's end counts" \
  bash -c 'python3 tests/vm/tick_gaps.py "$1" 250 5.9 6.1 | jq -e ".late_ms == 200" >/dev/null' _ "$tmp/ticks"
rc=0
python3 tests/vm/tick_gaps.py "$tmp/ticks" 250 7 8 >/dev/null 2>"$tmp/none.err" || rc=$?
check "no tick in the window: exit 1, one line" \
  bash -c '[ "$1" = 1 ] && [ "$(wc -l <"$2")" = 1 ] && grep -q "no scheduler tick" "$2"' _ "$rc" "$tmp/none.err"
echo "CPU:1 [LOST 3 EVENTS]" >>"$tmp/ticks"
rc=0
python3 tests/vm/tick_gaps.py "$tmp/ticks" 250 4.9 5.5 >/dev/null 2>"$tmp/lost.err" || rc=$?
check "a tick trace that lost events: exit 1, one line" \
  bash -c '[ "$1" = 1 ] && [ "$(wc -l <"$2")" = 1 ] && grep -q "lost events" "$2"' _ "$rc" "$tmp/lost.err"

# tests/vm/starve_judge.py judges each wait against the bound with the
# platform's lateness measured before the cases (LATE_MS), and nothing
# measured in the case itself: a late tick in the case's own trace excuses
# nothing. One probe (k 2, n 1, --starve-ms 10, 1 ms slices, HZ 250, 5 ms
# of lateness before the cases: a bound of 47.5 ms) waits 60 ms from
# 10.000, with CPU 0's tick 40 ms late inside that wait or on time.
judge_case() { # judge_case DIR STALL_AT K N STARVE_MS WAIT_END: a case whose tick gap ends at STALL_AT (none: 0)
  local d=$1 at=$2 t
  mkdir -p "$d"
  echo "p $3 $4 21" >"$d/c.expect"
  echo '{"label":"p","cpu_s":1.0,"max_wait_ms":1.0,"window_mono_s":[9.9,10.5]}' >"$d/c.probe.p"
  {
    echo "# tracer: nop"
    sw 9.950000 1 R 21
    sw 10.000000 21 R 1
    sw "$6" 1 R 21
    sw 10.450000 21 X 0
    t=9.800
    while awk -v t="$t" 'BEGIN { exit !(t < 10.5) }'; do
      tk "$t" 0
      if [ "$at" != 0 ] && awk -v t="$t" -v a="$at" -v l="$7" 'BEGIN { exit !(t + 0.004 > a - l && t < a) }'; then
        t=$at
      else
        t=$(awk -v t="$t" 'BEGIN { printf "%.3f", t + 0.004 }')
      fi
    done
  } >"$d/c.switches"
  python3 tests/vm/starve_judge.py "$d" c 500 "$5" 1000 250 5
}
out=$(judge_case "$tmp/j1" 10.044 2 1 10 10.060000 0.044)
check "a 60 ms wait that a 40 ms stall of the tick overlapped: past the bound of 47.5 ms all the same" \
  grep -q "^fail.*p's waits within the bound (k 2, n 1, lateness 5.0 ms).*w=60.0 b=47.5; CPU 0's tick was 40.0 ms late" <<<"$out"
out=$(judge_case "$tmp/j2" 0 2 1 10 10.060000 0)
check "the same wait with the tick on time: past the bound, nothing said of the tick" \
  grep -qx "fail.p's waits within the bound (k 2, n 1, lateness 5.0 ms): w <= b does not hold for w=60.0 b=47.5" <<<"$out"
out=$(judge_case "$tmp/j3" 0 2 1 10 10.040000 0)
check "a 40 ms wait: within the bound" grep -q "^ok.p's waits within the bound.*w=40.0 b=47.5" <<<"$out"
# --starve-ms 2 with the levels case's k and n at 2 CPUs (k 6, n 2): a
# bound of 4.5 + 5 x 5 + 5 = 34.5 ms. A wait of 279 ms with a tick 250 ms
# late inside it passed when the tick's lateness entered the bound (up to
# 250 ms: 279.5 ms).
out=$(judge_case "$tmp/j4" 10.254 6 2 2 10.279000 0.254)
check "--starve-ms 2: a 279 ms wait across a tick 250 ms late fails" \
  grep -q "^fail.*p's waits within the bound (k 6, n 2, lateness 5.0 ms).*w=279.0 b=34.5; CPU 0's tick was 250.0 ms late" <<<"$out"
check "--starve-ms 2: the starve-CASE.json keeps the lateness taken and the bound" \
  bash -c 'jq -e ".late_ms == 5 and .bound_ms == 34.5 and .max_wait_ms == 279" "$1" >/dev/null' _ "$tmp/j4/starve-c.json"

# The price's CPU time, by the tick: one tick period (4 ms) for each tick
# that found the probe on its CPU, inside its window. The probe (pid 21)
# runs on CPU 0 from 9.950 to 10.000 (12 ticks) and from WAIT_END to
# 10.450; its own figure says 1.0 s throughout.
probe_ticks() { # probe_ticks DIR WAIT_END: the ticks in the probe's stints become its
  awk -v a="$2" '/hrtimer_expire_entry/ { t = $4 + 0; if ((t >= 9.95 && t < 10.0) || (t >= a && t < 10.45)) sub(/stress-ng-cpu-1 /, "python3-21 ") } { print }' \
    "$1/c.switches" >"$1/c.t" && mv "$1/c.t" "$1/c.switches"
  python3 tests/vm/starve_judge.py "$1" c 500 10 1000 250 5
}
judge_case "$tmp/j5" 0 2 1 10 10.040000 0 >/dev/null
out=$(probe_ticks "$tmp/j5" 10.040)
check "a probe on its CPU for 0.46 s: 115 ticks, 0.46 s of CPU, whatever it says itself" \
  bash -c 'grep -qx "total.0.46" <<<"$1" && jq -e ".tick_cpu_s == 0.46 and .cpu_s == 1.0" "$2" >/dev/null' _ "$out" "$tmp/j5/starve-c.json"
# the same with its CPU stopped by the host from 10.196 to 10.300: no tick
# came in the 26 periods, and none counts
judge_case "$tmp/j6" 10.300 2 1 10 10.040000 0.104 >/dev/null
out=$(probe_ticks "$tmp/j6" 10.040)
check "the same probe with its CPU stopped 104 ms: 90 ticks, 0.36 s of CPU" grep -qx "total.0.36" <<<"$out"

checks_done
