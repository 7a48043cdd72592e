#!/usr/bin/env bash
# Races and stale state that made a task wait for the starvation rule
# when nothing should have held it, or served it as starving when it was
# not (2 CPUs). By default `disable`, `lost` and `syncage` run: `idle`
# passes on this code and on the code before its fix alike, so it proves
# nothing about that fix (docs/testing.md says why).
#
#   idle     a task worse than everything running must not wait beside a
#            CPU that went idle while it was being queued: a SCHED_IDLE
#            probe (1 ms runs, 1 ms sleeps) beside a nice -5 hog and a
#            task that runs 1 ms every 300-600 ms, at --starve-ms 1000,
#            with ops.enqueue made to spin 200 us between its victim
#            search and the insert (--inject-enqueue-delay-us), so that
#            the other CPU goes idle in that window several times a run;
#            no wakeup of the probe may oversleep 100 ms (the code before
#            go_idle()'s kick passes too: docs/testing.md#open-holes)
#   lost     under `stress-ng --cpu N --fork 1 --switch 1` (the load in
#            which the report shows wakeups waiting exactly --starve-ms), a
#            nice 0 waker (every 10 ms, 50 us of work) is never one of them:
#            at its floor it shares level 11 with the switch pair, so it
#            waits behind at most those two, each on a slice that ends at
#            a tick (4 ms): expected p95 oversleep <= 3 ticks (measured
#            2.8-3.8 ms), and no wait on a runqueue over one sleep (the
#            kernel's run_delay) of 80 ms, where the rule would find it
#            only after 100 ms (measured 5.2-7.1 ms); and starve_serve > 0
#            (worse tasks, khugepaged at nice 19 and the deboosted hogs,
#            do wait out --starve-ms: the load is one where the rule
#            works). The longest oversleep is not judged: under emulation
#            a timer or a wakeup's IPI comes late by up to 422 ms with
#            0.1-0.2 ms on a runqueue. With level 11 left out of the
#            bitmap, so that only the starvation rule found the waker, it
#            waited 109 ms on a runqueue and failed.
#   syncage  a task only ever woken by sync wakeups starts a new wait at
#            each: a server that a client wakes every 10 ms through a pipe
#            (then holds its CPU 2 ms before it reads the reply), a nice 19
#            hog per CPU, and a SCHED_FIFO ticker per CPU (every 1 ms) that
#            takes the client's CPU while the server waits there, so that
#            ops.cpu_release hands the server back to its level's front;
#            nothing waits 100 ms, so starve_serve must stay 0 (with the
#            age stamped only on a wait on a level, the server came back
#            with the age of its first wait and was served as starving)
#   disable  a task that leaves sched_ext while queued (switched to
#            SCHED_FIFO) and comes back later starts a new wait: a nice
#            19 hog under two nice -10 hogs is switched to FIFO and
#            stopped for 3 s, then switched back and let go; the report's
#            longest queued wait (queued_max_us) must stay within the
#            starvation bound the report prints beside it, plus 500 ms
#            for a late host (before the
#            fix, this failed: the 3 s away counted as a wait)
#
#   vm/run.sh tests/vm/holes.sh [CASE...]
set -euo pipefail

# shellcheck source=tests/vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
here=$(dirname "${BASH_SOURCE[0]}")
probe=$here/holes_probe.py
[ $# -gt 0 ] || set -- disable lost syncage

WORK_PIDS=()
spawn() { # spawn CMD...: in the background, remembered for stop_all
  "$@" &
  WORK_PIDS+=($!)
}
# khugepaged runs at nice 19, and after a scan that used its slices up it
# is the worst level there is: behind nice 19 hogs that have not sunk yet
# it rightly waits for the starvation rule. Cases that count starvation
# serves as a fault lift it to nice 0 while they run (calm_khugepaged) and
# put it back (restore_khugepaged).
KHUGEPAGED_NICE=()
calm_khugepaged() {
  local p
  for p in $(pgrep -x khugepaged || true); do
    KHUGEPAGED_NICE+=("$p:$(ps -o ni= -p "$p" | tr -d ' ')")
    renice -n 0 -p "$p" >/dev/null || true
  done
}
restore_khugepaged() {
  local e
  for e in "${KHUGEPAGED_NICE[@]:-}"; do
    [ -z "$e" ] || renice -n "${e#*:}" -p "${e%%:*}" >/dev/null 2>&1 || true
  done
  KHUGEPAGED_NICE=()
}

stop_all() {
  local p
  for p in "${WORK_PIDS[@]:-}"; do [ -z "$p" ] || kill -KILL "$p" 2>/dev/null || true; done
  for p in "${WORK_PIDS[@]:-}"; do [ -z "$p" ] || wait "$p" 2>/dev/null || true; done
  WORK_PIDS=()
}

case_idle() {
  local secs=${SORYU_HOLES_SECS:-30} out=$SORYU_OUT/$CASE.probe.json
  sched_start --starve-ms 1000 --report-sec 2 --inject-enqueue-delay-us 200 && sched_wait_enabled || return 0
  spawn nice -n -5 python3 "$probe" spin $((secs + 5))
  spawn python3 "$probe" sporadic 1 300 600 $((secs + 5)) 0
  python3 "$probe" idle 1 1 "$secs" >"$out" || fail "the idle probe failed"
  stop_all
  trace "probe: $(cat "$out")"
  local w over max
  w=$(jq -r '.wakeups' "$out" 2>/dev/null || echo null)
  over=$(jq -r '.over_100ms' "$out" 2>/dev/null || echo null)
  max=$(jq -r '.max_ms' "$out" 2>/dev/null || echo null)
  check "the SCHED_IDLE probe woke often (wakeups)" 'w >= 1000' w="$w"
  check "no wakeup of the SCHED_IDLE probe waited 100 ms beside an idle CPU (over_100ms, max $max ms)" \
    'over == 0' over="$over"
  sched_stop
  sched_wait_disabled
}

case_lost() {
  local secs=${SORYU_HOLES_SECS:-20} out=$SORYU_OUT/$CASE.probe.json
  sched_start --report-sec 2 && sched_wait_enabled || return 0
  report_wait_past 0 || return 0
  spawn stress-ng --cpu "$(nproc)" --fork 1 --switch 1 --timeout $((secs + 5))
  sleep 2
  python3 "$here/policy_probe.py" waker 10 "$secs" 0 >"$out" || fail "the waker probe failed"
  stop_all
  sched_stop
  sched_wait_disabled
  echo "  lost: waker $(cat "$out")"
  check "the waker ran (wakeups)" 'w >= 1000' w="$(jq -r .wakeups "$out" 2>/dev/null || echo null)"
  check "the waker waited behind its level's two other tasks at most (p95 oversleep, ms)" \
    'p <= 12' p="$(jq -r .p95_ms "$out" 2>/dev/null || echo null)"
  check "no wakeup of the waker waited for the starvation rule (longest runqueue wait over one sleep, ms)" \
    'w < 80' w="$(jq -r .max_wait_ms "$out" 2>/dev/null || echo null)"
  check "worse tasks did wait for the starvation rule (starve_serve)" 's > 0' s="$(report_sum starve_serve)"
}

case_syncage() {
  local secs=${SORYU_HOLES_SECS:-20} out=$SORYU_OUT/$CASE.probe.json i
  sched_start --report-sec 2 && sched_wait_enabled || return 0
  report_wait_past 0 || return 0
  for i in $(seq 0 $(($(nproc) - 1))); do
    spawn nice -n 19 taskset -c "$i" python3 "$probe" spin $((secs + 5))
    spawn cyclictest -q -m -p 50 -a "$i" -t 1 -i 1000 -D $((secs + 5)) >/dev/null
  done
  calm_khugepaged
  sleep 1
  python3 "$probe" reqrep 10 2 "$secs" >"$out" || fail "the request-reply probe failed"
  stop_all
  restore_khugepaged
  sched_stop
  sched_wait_disabled
  echo "  syncage: $(cat "$out")"
  check "the client's requests were answered (requests)" "n >= $((secs * 25))" \
    n="$(jq -r .requests "$out" 2>/dev/null || echo null)"
  check "the server was woken onto its waker's CPU (sync_local)" "s >= $((secs * 25))" \
    s="$(report_sum sync_local)"
  check "no task was served as starving: none waited 100 ms (starve_serve)" 's == 0' \
    s="$(report_sum starve_serve)"
}

case_disable() {
  sched_start --report-sec 1 && sched_wait_enabled || return 0
  spawn nice -n -10 python3 "$probe" spin 20
  spawn nice -n -10 python3 "$probe" spin 20
  python3 "$probe" spin 20 &
  local t=$! i
  WORK_PIDS+=("$t")
  renice -n 19 -p "$t" >/dev/null
  sleep 3 # long enough to wait on its level and be served a few times
  # Out of sched_ext while queued, and stopped at once (a FIFO hog would
  # hold a CPU, and the tasks bound to that CPU would rightly wait for the
  # kernel's server time); back, still stopped, then let go.
  chrt -f -p 1 "$t" && kill -STOP "$t" || fail "could not switch the hog to SCHED_FIFO and stop it"
  trace "hog $t switched to SCHED_FIFO and stopped"
  sleep 3
  chrt -o -p 0 "$t" && kill -CONT "$t" || fail "could not switch the hog back to SCHED_OTHER"
  trace "hog $t back on SCHED_OTHER and running"
  sleep 4
  stop_all
  sched_stop
  sched_wait_disabled
  # Every interval's longest queued wait within the bound printed beside
  # it, plus 500 ms for a late host (the starvation matrix judges the bound
  # itself): the 3 s away, counted as a wait, passes that by far. An
  # interval in which nothing waited (the short final one) has no figure.
  local worst
  worst=$(report_records | jq -s -r '[.[] | select(.type == "interval") |
      select(.queued_max_us != null) |
      select(.starve_bound_us == null or .queued_max_us > .starve_bound_us + 500000) |
      "\(.index):\(.queued_max_us)/\(.starve_bound_us)"] | join(" ")')
  [ -z "$worst" ] || fail "intervals whose longest queued wait passed the starvation bound + 500 ms, or lack the bound (index:wait/bound us): $worst"
  check "the report has intervals with a queued wait" 'n >= 5' \
    n="$(report_records | jq -s '[.[] | select(.type == "interval" and .queued_max_us != null)] | length')"
}

echo "holes: $(uname -r), $(nproc) CPUs: $*"
for c in "$@"; do
  case_begin "$c"
  case $c in
    idle) case_idle ;;
    disable) case_disable ;;
    lost) case_lost ;;
    syncage) case_syncage ;;
    *) fail "no such case: $c" ;;
  esac
  stop_all
  restore_khugepaged
  [ -z "$SCHED_PID" ] || sched_stop
  report_check
  dmesg_check
  case_end
done
summary
