#!/usr/bin/env bash
# Failure paths on a real sched_ext kernel:
#   busy        another sched_ext scheduler is running: a second soryu is
#               refused with one line naming it, and the first runs on;
#   badflags    invalid flags: refused, and nothing is ever loaded;
#   loadfail    the BPF program cannot load (libbpf is given a kernel config
#               without the symbols it needs): a clear error with libbpf's
#               last lines, non-zero exit, sched_ext left disabled;
#   sigkill     the daemon killed with SIGKILL: the kernel falls back to its
#               default scheduler by itself, the machine answers, and a new
#               soryu starts and stops cleanly afterwards, appending to the
#               same --report-json file: the killed run's records stay;
#   bpferror    a BPF-side error exit (fault injected with the hidden
#               --inject-error-ms): the daemon prints the kernel's reason and
#               exits non-zero (so systemd's Restart=on-failure restarts it);
#   verifier    a program the verifier refuses: its reason shown, nothing
#               attached;
#   stall       a task stranded on purpose: the kernel's watchdog ejects
#               soryu with a runnable-task stall, the daemon prints it with
#               the debug dump (soryu's state, and the stalled task's boost,
#               level and wait) and exits non-zero, and the task runs again
#               afterwards.
#
#   vm/run.sh tests/vm/errors.sh
set -euo pipefail

# shellcheck source=tests/vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# run_refused WHAT PATTERN ARGS...: scx_soryu ARGS exits non-zero within
# 60 s with stderr matching PATTERN and no panic, and sched_ext never left
# the state it was in.
run_refused() {
  local what=$1 pat=$2 rc=0 before err
  shift 2
  before=$(scx_state)
  err=$(timeout 60 "$SORYU_BIN" "$@" --kconfig "${KCONFIG:-$SORYU_KCONFIG}" 2>&1 >/dev/null) || rc=$?
  echo "$err" >>"$SORYU_OUT/$CASE.refused.log"
  [ "$rc" != 0 ] || fail "$what: exit status 0"
  [ "$rc" != 124 ] || fail "$what: still running after 60 s"
  grep -qE -- "$pat" <<<"$err" || fail "$what: message does not match /$pat/: $(head -c 400 <<<"$err" | tr '\n' '|')"
  ! grep -qiE 'panicked|backtrace' <<<"$err" || fail "$what: panic: $(head -c 400 <<<"$err")"
  [ "$(scx_state)" = "$before" ] || fail "$what: sched_ext state went from '$before' to '$(scx_state)'"
  trace "$what refused ($rc): $(head -n1 <<<"$err")"
}

case_begin busy
if sched_start --report-sec 2 && sched_wait_enabled; then
  run_refused "second scheduler" "another sched_ext scheduler is enabled \(soryu" --report-sec 2
  sleep 3
  scx_is_soryu || fail "the first soryu is gone after the second was refused"
  sched_stop
  sched_wait_disabled
fi
report_check
dmesg_check
case_end

case_begin badflags
run_refused "zero slice" "slice-us must be at least 1" --slice-us 0
run_refused "starve below slice" "must be longer than the slice" --starve-ms 1 --slice-us 2000
run_refused "bad knob value" "invalid value" --boost-on-wake=maybe
if case_kmsg | grep -q 'sched_ext: BPF scheduler .* enabled'; then
  fail "a scheduler was enabled although every flag set above was refused"
fi
dmesg_check
case_end

case_begin loadfail
# A kernel config without the symbols the scx headers need.
printf 'CONFIG_SOMETHING_ELSE=y\n' >"$SORYU_OUT/empty.config"
KCONFIG=$SORYU_OUT/empty.config run_refused "load failure" "BPF scheduler failed to load" --report-sec 2
grep -q 'libbpf' "$SORYU_OUT/$CASE.refused.log" || fail "the load error shows no libbpf lines"
dmesg_check
case_end

# restart_report_check: the killed run's records are still in the report
# after the restart: two runs, each a header with its own run_id followed
# by its own intervals (numbered from 0); only the second, stopped by
# SIGTERM, has no error exit record, and the first has none at all.
restart_report_check() {
  local f=$SORYU_OUT/$CASE.jsonl runs
  [ -s "$f" ] || { fail "no report at $f"; return 0; }
  # one line per run: run_id, intervals, their first index, exit records
  runs=$(jq -rs 'reduce .[] as $r ([]; if $r.type == "header" then . + [{id: $r.run_id, n: 0, first: null, exits: 0}]
      elif $r.type == "interval" then .[-1].n += 1 | .[-1].first //= $r.index
      else .[-1].exits += 1 end) | .[] | "\(.id) \(.n) \(.first) \(.exits)"' "$f" 2>&1) ||
    { fail "report after the restart is not JSON lines: $(head -c 200 <<<"$runs")"; return 0; }
  trace "report runs (run_id intervals first-index exits): $(tr '\n' ';' <<<"$runs")"
  [ "$(wc -l <<<"$runs")" = 2 ] || { fail "expected 2 runs (header records) in the report after a restart, got: $(tr '\n' ';' <<<"$runs")"; return 0; }
  local id1 n1 first1 ex1 id2 n2 first2 ex2
  { read -r id1 n1 first1 ex1; read -r id2 n2 first2 ex2; } <<<"$runs"
  [ "$n1" -ge 1 ] || fail "the killed run's intervals are gone from the report"
  [ "$n2" -ge 1 ] || fail "the restarted run wrote no interval"
  [ "$id1" != null ] && [ "$id1" != "$id2" ] || fail "run ids not distinct: '$id1' and '$id2'"
  [ "$first1" = 0 ] && [ "$first2" = 0 ] || fail "each run's intervals should count from 0: first indexes $first1 and $first2"
  [ "$ex1" = 0 ] || fail "the killed run has $ex1 exit record(s): SIGKILL leaves the daemon no chance to write one"
}

case_begin sigkill
if sched_start --report-sec 2 && sched_wait_enabled; then
  load_start 10
  sleep 4
  kill -KILL "$SCHED_PID"
  wait "$SCHED_PID" 2>/dev/null || true
  SCHED_PID=
  sched_wait_disabled
  [ "$(scx_state)" = disabled ] && trace "kernel fell back to its default scheduler after SIGKILL"
  timeout 20 sh -c 'echo alive >/dev/null' || fail "machine does not answer after SIGKILL"
  load_stop
  # a new soryu starts afterwards, appending to the same report file (as
  # the service's Restart=on-failure would)
  if sched_start --report-sec 2 && sched_wait_enabled; then
    sleep 5
    sched_stop
    sched_wait_disabled
  fi
  restart_report_check
fi
dmesg_check
case_end

# sched_wait_error_exit WHAT REASON: the daemon must end by itself within
# 60 s (the kernel ended the scheduler: WHAT), with a non-zero status and
# the kernel's REASON in its output. Returns 1 if it did not end.
sched_wait_error_exit() {
  local what=$1 reason=$2 t=0 rc=0
  while kill -0 "$SCHED_PID" 2>/dev/null && [ "$t" -lt 60 ]; do sleep 1; t=$((t + 1)); done
  if kill -0 "$SCHED_PID" 2>/dev/null; then
    fail "scx_soryu still running 60 s after $what"
    return 1
  fi
  wait "$SCHED_PID" || rc=$?
  SCHED_PID=
  [ "$rc" != 0 ] || fail "exit status 0 after $what (systemd would not restart it)"
  grep -q -- "$reason" "$SORYU_OUT/$CASE.sched.log" ||
    fail "the kernel's exit reason is not printed: $(tail -n3 "$SORYU_OUT/$CASE.sched.log" | tr '\n' '|')"
  trace "ended after ${t}s, exit $rc: $(grep -m1 'EXIT' "$SORYU_OUT/$CASE.sched.log")"
}

case_begin bpferror
if sched_start --report-sec 1 --inject-error-ms 3000 && sched_wait_enabled; then
  sched_wait_error_exit "the injected error" 'error injected by --inject-error-ms' || true
  sched_wait_disabled
  case_kmsg | grep -q 'error injected by --inject-error-ms' || fail "kernel log does not show the injected error"
fi
case_end

case_begin verifier
# A program the verifier refuses (hidden --inject-verifier-reject): one
# clear error, the verifier's last lines shown without -v, nothing attached.
run_refused "verifier rejection" "BPF scheduler failed to load" --report-sec 2 --inject-verifier-reject
grep -qE 'invalid mem access|NULL check|nullable|R[0-9]+ .*(null|NULL)' "$SORYU_OUT/$CASE.refused.log" ||
  fail "the verifier's reason is not shown: $(tail -n5 "$SORYU_OUT/$CASE.refused.log" | tr '\n' '|')"
dmesg_check
case_end

case_begin stall
# The watchdog path: tasks named soryu-stall are never queued (hidden
# --inject-stall), so the kernel must eject soryu with a runnable-task
# stall (timeout 10 s), and the daemon must print the reason and exit
# non-zero. stress-ng keeps both CPUs busy so the staller's slice ends and
# it goes through ops.enqueue.
if sched_start --report-sec 1 --inject-stall soryu-stall && sched_wait_enabled; then
  load_start 60
  python3 -c 'import ctypes, time
ctypes.CDLL(None).prctl(15, b"soryu-stall")
end = time.monotonic() + 90
while time.monotonic() < end: pass' &
  staller=$!
  if sched_wait_error_exit "a task was stranded (watchdog)" 'runnable task stall'; then
    grep -q 'soryu-stall' "$SORYU_OUT/$CASE.sched.log" ||
      fail "the daemon's output does not name the stalled task"
    # The debug dump (ops.dump_task): the stalled task's line from the
    # kernel, then soryu's own line for it with its boost, level and wait.
    grep -A6 -E '[[:space:]]soryu-stall\[[0-9]+\]' "$SORYU_OUT/$CASE.sched.log" |
      grep -m1 -E 'soryu: task boost -?[0-9]+ level [0-9]+ queued_level [0-9]+ waited [0-9]{4,}ms' >"$SORYU_OUT/$CASE.dump-task" ||
      fail "the debug dump has no soryu line for the stalled task with its wait (>= 1 s)"
    grep -q 'soryu: llc 0 lvl_bitmap=' "$SORYU_OUT/$CASE.sched.log" || fail "the debug dump has no soryu state (ops.dump)"
  fi
  sched_wait_disabled
  case_kmsg | grep -q 'runnable task stall' || fail "kernel log shows no runnable task stall"
  # Back on the default scheduler, the stranded task runs again.
  c0=$(awk '{ print $1 }' "/proc/$staller/schedstat" 2>/dev/null || echo 0)
  sleep 2
  c1=$(awk '{ print $1 }' "/proc/$staller/schedstat" 2>/dev/null || echo 0)
  [ "$c1" -gt "$c0" ] || fail "the stranded task did not run after the ejection"
  kill "$staller" 2>/dev/null || true
  wait "$staller" 2>/dev/null || true
  load_stop
fi
case_end

summary
