# shellcheck shell=bash
# Guest-side helpers for the VM tests (sourced, not a test itself).
# They run inside the VM started by vm/run.sh, which sets SORYU_OUT (the
# read-write results directory), SORYU_KCONFIG and SORYU_BIN.
#
# A test is a series of cases:
#
#   case_begin NAME
#   sched_start --some-flag ...   # scx_soryu in the background, with
#                                 # --report-json $SORYU_OUT/NAME.jsonl
#                                 # and --kconfig $SORYU_KCONFIG added
#   sched_wait_enabled && {
#     load_start SECS             # stress-ng, the scheduler's CI load
#     watch_running SECS          # state/ops checked every 2 s
#   }
#   sched_stop                    # SIGTERM, expect exit status 0
#   load_stop
#   sched_wait_disabled
#   report_check                  # the JSON report
#   dmesg_check                   # kernel log of this case only
#   case_end                      # prints PASS NAME or FAIL NAME + why
#   ...
#   summary                       # prints "N passed, M failed"; status
#
# A failed check records a reason with `fail` and the case goes on, so one
# run tells everything that went wrong; case_end prints the reasons. The
# checks return 0 even when they fail (tests run under `set -e`); only
# sched_start and sched_wait_enabled return 1, to skip what cannot run.
# Per-case files in $SORYU_OUT: NAME.sched.log (scheduler output),
# NAME.jsonl (report), NAME.stress.log, NAME.dmesg.txt, NAME.trace (what
# the helpers saw, with times).

: "${SORYU_OUT:?run through vm/run.sh}"
: "${SORYU_BIN:?run through vm/run.sh}"
: "${SORYU_KCONFIG:?run through vm/run.sh}"

SCX_SYS=/sys/kernel/sched_ext
# TCG is several times slower than hardware: loading and verifying the BPF
# program, and tearing it down under load, take a while.
ENABLE_TIMEOUT=${SORYU_ENABLE_TIMEOUT:-60}
STOP_TIMEOUT=${SORYU_STOP_TIMEOUT:-30}

PASSED=0
FAILED=0
CASE=
CASE_FAILS=()
SCHED_PID=
SCHED_ARGS=()
LOAD_PID=
LOAD_ARGS=()
KMSG_MARK=

# Builtins, not date and cat: under emulation a process start takes about
# half a second, and these run in every polling loop.
now() { echo "$EPOCHSECONDS"; }
trace() { printf '[%(%T)T] %s\n' -1 "$*" >>"$SORYU_OUT/$CASE.trace"; }
fail() {
  CASE_FAILS+=("$*")
  trace "FAIL: $*"
}

scx_state() {
  local s=
  { read -r s <"$SCX_SYS/state"; } 2>/dev/null || true
  echo "${s:-?}"
}
scx_ops() {
  local s=
  { read -r s <"$SCX_SYS/root/ops"; } 2>/dev/null || true
  echo "$s"
}

# The scheduler's root ops name is "soryu", maybe with a suffix
# ("soryu_1.0.0_..." style names are common in scx schedulers).
scx_is_soryu() {
  [ "$(scx_state)" = enabled ] && [[ "$(scx_ops)" == soryu* ]]
}

# A case that hangs (a wait that never returns, a write to sysfs that
# blocks) must not eat the whole test's deadline with nothing to show for
# it. Each case has a deadline (CASE_DEADLINE seconds, a test may lower
# it); when it passes, a watchdog writes what the guest looks like to
# CASE.hang.txt (tasks in D state and their kernel stacks, the blocked-task
# dump of sysrq-w, sched_ext's state) and sends SIGUSR1 to the test shell.
# Its trap fails the case and kills the case's processes (WORK_PIDS, PIDS,
# the load and the scheduler): a `wait` returns
# at once when a trapped signal arrives, so the shell goes on to case_end
# (a foreground command it is blocked in is not interrupted, only waited
# for).
CASE_DEADLINE=${SORYU_CASE_DEADLINE:-${CASE_DEADLINE:-400}}
CASE_WATCHDOG=
CASE_HUNG=0
hang_dump() {
  local p
  echo "case $CASE passed its ${CASE_DEADLINE}s deadline at $(date +%T)"
  echo "sched_ext: state '$(scx_state)', ops '$(scx_ops)'"
  echo "---- last trace lines ----"
  tail -n 5 "$SORYU_OUT/$CASE.trace" 2>/dev/null
  echo "---- processes (state, wait channel) ----"
  # (reading a task's cmdline can block on its mm: everything under timeout)
  timeout 20 ps -eo pid,ppid,stat,cls,ni,wchan:24,etimes,args --sort=stat 2>/dev/null | cut -c1-200
  echo "---- kernel stacks of the test's processes and of tasks in D state ----"
  for p in $(timeout 20 ps -eo pid=,stat= | awk '$2 ~ /^D/ { print $1 }') "$1" $(pgrep -P "$1"); do
    echo "pid $p: $(timeout 5 cat "/proc/$p/comm" 2>/dev/null)"
    timeout 5 cat "/proc/$p/stack" 2>/dev/null | head -n 20
  done
  echo w >/proc/sysrq-trigger 2>/dev/null || true
  sleep 1
  echo "---- kernel log, last lines (sysrq-w: blocked tasks) ----"
  dmesg 2>/dev/null | tail -n 80
}
case_hang() {
  [ "$CASE_HUNG" = 0 ] || return 0
  CASE_HUNG=1
  fail "the case hung past its ${CASE_DEADLINE}s deadline; its processes were killed (what the guest looked like: $CASE.hang.txt)"
  local p
  for p in "${WORK_PIDS[@]:-}" "${PIDS[@]:-}" "$LOAD_PID" "$SCHED_PID"; do
    [ -z "$p" ] || kill -KILL "$p" 2>/dev/null || true
  done
}
trap case_hang USR1
case_watchdog_start() {
  local shell=$$ case=$CASE
  CASE_HUNG=0
  (
    # Above every RT task a test starts, so that the watchdog runs even
    # when soryu's tasks do not (a wedged scheduler under RT hogs: then
    # even the kernel cannot eject soryu, its helper thread is FIFO 50).
    chrt -f -p 99 "$BASHPID" >/dev/null 2>&1 || true
    sleep "$CASE_DEADLINE" || exit 0
    : >"$SORYU_OUT/$case.hung"
    hang_dump "$shell" >"$SORYU_OUT/$case.hang.txt" 2>&1
    echo "HANG $case: past its ${CASE_DEADLINE}s deadline (see $case.hang.txt)"
    # The test's own RT tasks go first: while they hold the CPUs neither
    # the test shell nor the kernel's sched_ext helper may get to run.
    ps -eo pid=,ppid=,cls= | awk -v me="$BASHPID" '($3 == "FF" || $3 == "RR") && $2 != 2 && $1 != 2 && $1 != me && $2 != me { print $1 }' |
      xargs -r kill -KILL 2>/dev/null
    kill -USR1 "$shell"
  ) 2>/dev/null & # (not "Terminated" in the log when case_end stops its timer)
  CASE_WATCHDOG=$!
}
case_watchdog_stop() {
  [ -n "$CASE_WATCHDOG" ] || return 0
  pkill -P "$CASE_WATCHDOG" sleep 2>/dev/null || true # its timer
  kill "$CASE_WATCHDOG" 2>/dev/null || true
  wait "$CASE_WATCHDOG" 2>/dev/null || true
  CASE_WATCHDOG=
  # Ended on its own while the watchdog was writing its dump: still a
  # case that took longer than its deadline.
  if [ -e "$SORYU_OUT/$CASE.hung" ]; then case_hang; fi
}

case_begin() {
  CASE=$1
  CASE_FAILS=()
  rm -f "$SORYU_OUT/$CASE.hung"
  case_watchdog_start
  SCHED_PID=
  LOAD_PID=
  : >"$SORYU_OUT/$CASE.trace"
  # Mark the kernel log so that dmesg_check reads only this case's lines.
  KMSG_MARK="soryu-test: begin case $CASE $(now)"
  echo "$KMSG_MARK" >/dev/kmsg
  trace "begin; sched_ext state $(scx_state)"
  # (CASE_BEGIN_STATE empty: a test whose scheduler runs across its cases)
  if [ -n "${CASE_BEGIN_STATE-disabled}" ] && [ "$(scx_state)" != "${CASE_BEGIN_STATE-disabled}" ]; then
    fail "sched_ext state is '$(scx_state)' before the case started (ops '$(scx_ops)')"
  fi
}

# sched_start ARGS...: scx_soryu ARGS --report-json OUT/CASE.jsonl
# --kconfig SORYU_KCONFIG, in the background.
sched_start() {
  if [ ! -x "$SORYU_BIN" ]; then
    fail "scheduler binary $SORYU_BIN missing (build it: cargo build --release)"
    return 1
  fi
  local args=("$@" --report-json "$SORYU_OUT/$CASE.jsonl" --kconfig "$SORYU_KCONFIG")
  trace "start: $SORYU_BIN ${args[*]}"
  "$SORYU_BIN" "${args[@]}" >"$SORYU_OUT/$CASE.sched.log" 2>&1 &
  SCHED_PID=$!
  SCHED_ARGS=("$@")
}

# After the first failure to load in a run, load once more with -v, for
# libbpf's and the verifier's full messages (CASE.verbose.log).
VERBOSE_DONE=0
sched_verbose_retry() {
  [ "$VERBOSE_DONE" = 0 ] || return 0
  VERBOSE_DONE=1
  local f=$SORYU_OUT/$CASE.verbose.log
  trace "loading again with -v for the verifier's messages: $f"
  timeout -s INT "$ENABLE_TIMEOUT" "$SORYU_BIN" -v "${SCHED_ARGS[@]}" \
    --report-json "$SORYU_OUT/$CASE.verbose.jsonl" --kconfig "$SORYU_KCONFIG" >"$f" 2>&1 || true
  fail "loading failed; full libbpf/verifier output of a second try with -v: $(basename "$f")"
}

# Waits until sched_ext is enabled with our ops. Fails the case when the
# scheduler exits first or it takes longer than ENABLE_TIMEOUT.
sched_wait_enabled() {
  [ -n "$SCHED_PID" ] || return 1
  local start
  start=$(now)
  while ! scx_is_soryu; do
    if ! kill -0 "$SCHED_PID" 2>/dev/null; then
      local rc=0
      wait "$SCHED_PID" || rc=$?
      SCHED_PID=
      fail "scheduler exited with status $rc before sched_ext was enabled"
      sched_verbose_retry
      return 1
    fi
    if [ $(($(now) - start)) -ge "$ENABLE_TIMEOUT" ]; then
      fail "sched_ext not enabled with ops soryu after ${ENABLE_TIMEOUT}s (state '$(scx_state)', ops '$(scx_ops)')"
      return 1
    fi
    sleep 0.5
  done
  trace "enabled after $(($(now) - start))s; ops '$(scx_ops)'"
}

# load_start SECS: the scheduler's CI load, for SECS plus a margin (the
# scheduler is stopped while it still runs; load_stop ends it).
# Every option below exists in Debian 12's stress-ng 0.15.
load_start() {
  local secs=$1 n=${SORYU_LOAD_N:-2}
  local args=(--aggressive -M -c "$n" -f "$n" --affinity 1 --affinity-delay 1 --affinity-pin
    --temp-path "$SORYU_OUT" --timeout "$((secs + 60))s")
  LOAD_ARGS=("${args[@]}")
  trace "load: stress-ng ${args[*]}"
  stress-ng "${args[@]}" >"$SORYU_OUT/$CASE.stress.log" 2>&1 &
  LOAD_PID=$!
}

# Stops the load with SIGINT (stress-ng then still prints its metrics and
# exits 0); any other exit status fails the case, and so does a stressor
# of the CI load that made no progress.
load_stop() {
  [ -n "$LOAD_PID" ] || return 0
  kill -INT "$LOAD_PID" 2>/dev/null || true
  local rc=0 s
  wait "$LOAD_PID" || rc=$?
  trace "load stopped (stress-ng status $rc)"
  LOAD_PID=
  [ "$rc" = 0 ] || fail "the load (stress-ng) exited $rc ($CASE.stress.log)"
  if grep -q -- '--affinity-pin' <<<"${LOAD_ARGS[*]:-}"; then
    for s in cpu fork affinity; do stress_ran "$SORYU_OUT/$CASE.stress.log" "$s"; done
  fi
}

# stress_ops LOG STRESSOR: bogo ops of STRESSOR in a stress-ng
# --metrics-brief log ("stress-ng: metrc: [PID] NAME OPS ..."), or nothing.
stress_ops() {
  awk -v s="$2" '{ for (i = 3; i < NF; i++) if ($i == s && $(i - 1) ~ /^\[[0-9]+\]$/) { print $(i + 1); exit } }' "$1"
}

# stress_cpu LOG STRESSOR: "REAL USR SYS" seconds of STRESSOR in a
# stress-ng --metrics-brief log (its workers' rusage), or nothing.
stress_cpu() {
  awk -v s="$2" '{ for (i = 3; i < NF; i++) if ($i == s && $(i - 1) ~ /^\[[0-9]+\]$/) { print $(i + 2), $(i + 3), $(i + 4); exit } }' "$1"
}

# stress_ran LOG STRESSOR: fails the case unless STRESSOR made progress.
stress_ran() {
  local ops
  ops=$(stress_ops "$1" "$2")
  [ "${ops:-0}" -gt 0 ] 2>/dev/null || fail "stressor $2 made no progress (bogo ops '${ops:-none}', $(basename "$1"))"
}

# watch_running SECS: for SECS seconds, every 2 s, sched_ext must be enabled
# with our ops and the scheduler process alive.
watch_running() {
  local secs=$1 start bad=0
  start=$(now)
  while [ $(($(now) - start)) -lt "$secs" ]; do
    if ! kill -0 "$SCHED_PID" 2>/dev/null; then
      fail "scheduler exited after $(($(now) - start))s of load"
      return 0
    fi
    if ! scx_is_soryu; then
      bad=$((bad + 1))
      fail "after $(($(now) - start))s of load: state '$(scx_state)', ops '$(scx_ops)'"
      [ "$bad" -lt 3 ] || return 0
    fi
    sleep 2
  done
  trace "ran ${secs}s under load"
}

# SIGTERM, then expect a clean exit (status 0) within STOP_TIMEOUT.
sched_stop() {
  [ -n "$SCHED_PID" ] || return 0
  local start rc=0
  start=$(now)
  kill -TERM "$SCHED_PID" 2>/dev/null || true
  while kill -0 "$SCHED_PID" 2>/dev/null; do
    if [ $(($(now) - start)) -ge "$STOP_TIMEOUT" ]; then
      fail "scheduler still running ${STOP_TIMEOUT}s after SIGTERM; killed"
      kill -KILL "$SCHED_PID" 2>/dev/null || true
      break
    fi
    sleep 0.5
  done
  wait "$SCHED_PID" || rc=$?
  SCHED_PID=
  trace "scheduler exited with status $rc, $(($(now) - start))s after SIGTERM"
  [ "$rc" = 0 ] || fail "scheduler exit status $rc after SIGTERM (expected 0)"
}

sched_wait_disabled() {
  local start
  start=$(now)
  while [ "$(scx_state)" != disabled ]; do
    if [ $(($(now) - start)) -ge "$STOP_TIMEOUT" ]; then
      fail "sched_ext state '$(scx_state)' ${STOP_TIMEOUT}s after the scheduler exited (expected disabled)"
      return 0
    fi
    sleep 0.5
  done
}

# report_records [FILE]: the records of a --report-json file (the case's
# by default) that the daemon has finished writing, one per line. Read
# while the daemon runs, the file can end in a torn line: a record is one
# write(), but a reader can see the part of it before a page boundary
# (the file's size grows page by page). jq then stops at a parse error,
# and under `set -e` an assignment from it ends the whole test (one CI
# run lost policy's preempt case so, exit 2). A torn line is never valid
# JSON: it is skipped here; report_check reads the whole file strictly
# once the daemon has stopped, so a line written wrong still fails.
report_records() { jq -cR 'fromjson? // empty' "${1:-$SORYU_OUT/$CASE.jsonl}"; }

# rss_kb PID: the task's resident memory (VmRSS, kB); nothing once it exited
rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status" 2>/dev/null || true; }

# stall_task SECS: a CPU-bound task named soryu-stall (prctl PR_SET_NAME)
# for SECS seconds, in the background, its pid in STALLER: the task that
# --inject-stall soryu-stall strands, so that the kernel's watchdog ends
# soryu.
STALLER=
stall_task() {
  python3 -c 'import ctypes, sys, time
ctypes.CDLL(None).prctl(15, b"soryu-stall")
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end: pass' "$1" &
  STALLER=$!
}

# report_sum FIELD [FILE]: FIELD summed over the interval records of a
# --report-json file (the case's by default). When an interval lacks the
# field, holds something else than a number there, or there is no interval,
# it prints a word that is no number ("missing:FIELD", "no-intervals"), which
# check() refuses: a field renamed or never written never reads as 0.
report_sum() {
  report_records "${2:-}" | jq -rs --arg f "$1" '[.[] | select(.type == "interval")] |
    if length == 0 then "no-intervals"
    elif all(.[]; .[$f] | type == "number") then map(.[$f]) | add
    else "missing:\($f)" end' 2>/dev/null || echo unreadable
}

# report_intervals [FILE]: the interval records in a --report-json file
# (the case's by default).
report_intervals() { report_records "${1:-}" 2>/dev/null | jq -c 'select(.type == "interval")' | wc -l; }

# report_wait_past N: wait up to 30 s for the case's JSON report to hold
# more than N interval records. The daemon counts from its first reading of
# the program's counters, which a saturating load started right after the
# kernel shows soryu enabled can delay by seconds (the daemon is a normal
# task, queued behind the load's better levels): a load meant to be
# counted waits for this. Fails the case on a timeout.
report_wait_past() {
  local i
  for i in $(seq 60); do
    [ "$(report_intervals)" -gt "$1" ] && return 0
    sleep 0.5
  done
  fail "the daemon wrote no interval record within 30 s"
  return 1
}

# report_check [KEY=VALUE...]: the --report-json file holds a header line
# and at least one interval record; every interval has insert_fail == 0;
# each KEY=VALUE must match the header's knobs (e.g. vtime=true).
# shellcheck disable=SC2120 # arguments are optional
report_check() {
  local f=$SORYU_OUT/$CASE.jsonl kv want= out rc=0 v msg
  if [ ! -s "$f" ]; then
    fail "no JSON report written ($f missing or empty)"
    return 0
  fi
  for kv in "$@"; do want+="${want:+,}\"${kv%%=*}\":${kv#*=}"; done
  # One jq for every check: each process start takes about half a second
  # under emulation, and this runs at the end of every case.
  out=$(jq -r -s --argjson want "{$want}" '
    .[0] as $h | [.[] | select(.type == "interval")] as $iv |
    (if $h.type == "header" then empty
     else "fail\tJSON report'"'"'s first line is not {\"type\":\"header\",...}" end),
    ($want | to_entries[] | ($h.knobs[.key]) as $got | select($got != .value) |
      "fail\treport header knobs.\(.key) is \($got | tojson), expected \(.value | tojson)"),
    (if ($iv | length) < 1 then "fail\tno interval record in the JSON report"
     else
       ([$iv[] | select(.insert_fail != 0) | {index, insert_fail} | tojson] |
         select(length > 0) | "fail\tintervals with insert_fail != 0: \(.[:5] | join(" "))"),
       "ok\treport: \($iv | length) interval records"
     end)' "$f" 2>&1) || rc=$?
  if [ "$rc" != 0 ]; then
    fail "JSON report is not valid JSON lines: $(head -n1 <<<"$out")"
    return 0
  fi
  while IFS=$'\t' read -r v msg; do
    case $v in
      ok) trace "$msg" ;;
      fail) fail "$msg" ;;
    esac
  done <<<"$out"
}

# case_kmsg: the kernel log since case_begin's mark. A mark that is no
# longer in the log (the ring buffer wrapped) fails the case: what happened
# in between is unknown, not clean.
case_kmsg() {
  local log
  log=$(dmesg)
  if ! grep -qF "$KMSG_MARK" <<<"$log"; then
    fail "kernel log: the case's mark has scrolled out of the ring buffer; its lines are lost"
    return 1
  fi
  awk -v m="$KMSG_MARK" 'found { print } index($0, m) { found = 1 }' <<<"$log"
}

# Kernel alarms: lines of a kernel log that match vm/kernel-alarms (one
# extended regular expression a line), whatever the case or the scheduler
# does: a WARN anywhere, BUG, Oops, panic, RCU stalls, hung tasks, soft,
# hard and workqueue lockups, lockdep's reports, sleeping in atomic
# context, the verifier's and BPF's own complaints.
# kernel_alarms FILE: prints FILE's alarm lines.
ALARMS_FILE=${SORYU_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/vm/kernel-alarms
kernel_alarms() {
  grep -E -f <(grep -v -e '^#' -e '^$' "$ALARMS_FILE") "$1" || true
}

# dmesg_check [--alarms-only] [ALLOW...]: this case's part of the kernel
# log (after case_begin's mark) must hold no kernel alarm (kernel_alarms)
# and no sched_ext error or stall. A normal unregister prints
#   sched_ext: BPF scheduler "soryu" disabled (unregistered from user space)
# which is fine; an error exit prints "disabled (runtime error)",
# "(scx_bpf_error)" or "(runnable task stall)" and then
#   sched_ext: soryu: <message>.
#
# Each ALLOW is one more fixed string to allow among the sched_ext lines
# (never among the alarms), e.g.
#   dmesg_check 'disabled (unregistered from the main kernel)'   # hotplug
# --alarms-only: the sched_ext lines are the case's to judge (a case that
# makes the kernel end the scheduler on purpose); the alarms still fail.
# shellcheck disable=SC2120 # arguments are optional
dmesg_check() {
  local f=$SORYU_OUT/$CASE.dmesg.txt bad a scx=1
  if [ "${1:-}" = --alarms-only ]; then scx=0; shift; fi
  local allow=(-e 'disabled (unregistered from user space)')
  for a in "$@"; do allow+=(-e "$a"); done
  case_kmsg >"$f" || return 0
  grep -E 'sched_ext' "$f" >>"$SORYU_OUT/$CASE.trace" || true
  bad=$(kernel_alarms "$f")
  if [ -n "$bad" ]; then
    fail "kernel alarm: $(echo "$bad" | head -n5 | sed 's/^\[ *[0-9.]*\] //' | tr '\n' '|')"
  fi
  [ "$scx" = 1 ] || return 0
  bad=$(grep -E \
    -e 'sched_ext: BPF scheduler .* disabled \(' \
    -e 'runnable task stall|scx_bpf_error|runtime error|failed to run for' \
    -e 'sched_ext: .*(error|stall|fail)' "$f" |
    grep -v -F "${allow[@]}" || true)
  if [ -n "$bad" ]; then
    fail "kernel log: $(echo "$bad" | head -n5 | sed 's/^\[ *[0-9.]*\] //' | tr '\n' '|')"
    return 0
  fi
}

# sched_wait_exit WHAT: the daemon must end by itself within 60 s (the
# kernel ended the scheduler: WHAT) with a non-zero status. Returns 1 if it
# did not end.
sched_wait_exit() {
  local t=0 rc=0
  while kill -0 "$SCHED_PID" 2>/dev/null && [ "$t" -lt 60 ]; do sleep 1; t=$((t + 1)); done
  if kill -0 "$SCHED_PID" 2>/dev/null; then
    fail "scx_soryu still running 60 s after $1"
    return 1
  fi
  wait "$SCHED_PID" || rc=$?
  SCHED_PID=
  trace "ended ${t}s after $1, exit $rc"
  [ "$rc" != 0 ] || fail "exit status 0 after $1 (systemd would not restart it)"
}

# llc_probe_judge OUT: llc_probe.py's verdict on strict priority across
# LLCs ("nice0 G nice19 L min19 M", CPU seconds): the nice 0 loops got 90%
# of the CPU time, and every nice 19 loop ran.
llc_probe_judge() {
  local g l m
  read -r _ g _ l _ m <<<"$1"
  check "CPU share of the nice 0 loops (of $g + $l s)" "g >= 0.9 * (g + l)" g="${g:-null}" l="${l:-null}"
  check "CPU seconds of the least served nice 19 loop" "m > 0" m="${m:-null}"
}

# daemon_panics LOG: a Rust panic in any of the daemon's threads. A thread
# other than the main one dies alone (the stats monitor, the stats server),
# and the main thread may still exit 0: its output is the only trace.
daemon_panics() { grep -E "panicked at|thread '.*' panicked" "$1" 2>/dev/null | head -n 3 || true; }

# Ends the case: stops whatever still runs, prints PASS/FAIL.
case_end() {
  if [ -n "$SCHED_PID" ]; then sched_stop; fi
  load_stop
  case_watchdog_stop
  local p
  p=$(daemon_panics "$SORYU_OUT/$CASE.sched.log")
  [ -z "$p" ] || fail "the daemon panicked ($CASE.sched.log): $(tr '\n' '|' <<<"$p")"
  if [ ${#CASE_FAILS[@]} -eq 0 ]; then
    PASSED=$((PASSED + 1))
    echo "PASS $CASE"
  else
    FAILED=$((FAILED + 1))
    echo "FAIL $CASE"
    local r
    for r in "${CASE_FAILS[@]}"; do echo "    - $r"; done
    if [ -s "$SORYU_OUT/$CASE.sched.log" ]; then
      echo "    scheduler output, last lines ($CASE.sched.log):"
      tail -n 15 "$SORYU_OUT/$CASE.sched.log" | sed 's/^/      /'
    fi
  fi
  trace "end: ${#CASE_FAILS[@]} failure(s)"
}

# For tests that judge CPU time from outside. Background processes a test
# starts go in PIDS; kill_all ends them all.
PIDS=()
kill_all() {
  local p
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  PIDS=()
}
cputime() { awk '{ print $1 }' "/proc/$1/schedstat" 2>/dev/null || echo "gone:$1"; } # ns on the CPU
# check DESCRIPTION AWK-CONDITION VAR=VALUE...: fail unless the condition
# holds. Every VALUE must be a number: an empty one (a figure never read),
# null (a field jq did not find) or any other word fails the check. (awk
# would compare such a value as a string: with mawk, "null" >= 100 holds.)
check() {
  local what=$1 cond=$2
  shift 2
  local vars=() kv v prog=
  for kv in "$@"; do
    v=${kv#*=}
    if ! is_number "$v"; then
      fail "$what: ${kv%%=*} is not a number ('$v'), so $cond cannot be judged"
      return 0
    fi
    vars+=(-v "$kv")
    prog+="${kv%%=*} += 0; "
  done
  if awk "${vars[@]}" "BEGIN { $prog exit !($cond) }"; then
    trace "ok: $what ($*)"
  else
    fail "$what: $cond does not hold for $*"
  fi
}
# is_number VALUE: a decimal number (sign, fraction and exponent allowed).
is_number() { [[ $1 =~ ^[-+]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][-+]?[0-9]+)?$ ]]; }

# Prints the closing line, "N passed, M failed", and returns non-zero when
# a case failed.
summary() {
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}

# Never leave a scheduler or load behind, whatever happened.
lib_cleanup() {
  # (its timer too: a sleep left behind kept the VM up to its end)
  if [ -n "$CASE_WATCHDOG" ]; then
    pkill -P "$CASE_WATCHDOG" sleep 2>/dev/null || true
    kill "$CASE_WATCHDOG" 2>/dev/null || true
  fi
  if [ -n "$SCHED_PID" ]; then kill -KILL "$SCHED_PID" 2>/dev/null || true; fi
  if [ -n "$LOAD_PID" ]; then kill -KILL "$LOAD_PID" 2>/dev/null || true; fi
}
trap lib_cleanup EXIT
