#!/usr/bin/env bash
# Failure paths on a real sched_ext kernel:
#   busy        another sched_ext scheduler is running: a second soryu is
#               refused with one line naming it, and the first runs on;
#   busy-peer   the same with a scheduler other than soryu running
#               (scx_bpfland from the Rust package registry, built and
#               cached by bench/peers.sh; SORYU_PEER_BIN names another);
#   inspect     `scx_soryu inspect`: refused in one line while soryu is not
#               running; with it running, the text table of a task agrees
#               with --json; a PID that is no task and a word that is no PID
#               are refused, and a good PID beside a bad one still shown;
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
#               exits non-zero (so systemd's Restart=on-failure restarts it),
#               and the --report-json file ends in the exit record with it;
#   verifier    a program the verifier refuses: its reason shown, nothing
#               attached;
#   stall       a task stranded on purpose: the kernel's watchdog ejects
#               soryu with a runnable-task stall, the daemon prints it with
#               the debug dump and exits non-zero, the --report-json file
#               ends in the exit record with the kernel's reason, and the
#               task runs again afterwards. Every line soryu adds to the
#               dump (ops.dump, ops.dump_cpu, ops.dump_task) is one of its
#               documented lines, with the run's knobs, each LLC, the CPUs
#               and the stalled task's wait.
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

# peer_wait_enabled PID: the peer enabled within 60 s (its ops name is
# not soryu's), 1 if not.
peer_wait_enabled() {
  local t=0
  until [ "$(scx_state)" = enabled ] && [ -n "$(scx_ops)" ] && [[ "$(scx_ops)" != soryu* ]]; do
    kill -0 "$1" 2>/dev/null || { fail "the peer scheduler exited before sched_ext was enabled ($CASE.peer.log)"; return 1; }
    [ "$t" -lt 120 ] || { fail "the peer scheduler not enabled after 60 s (state '$(scx_state)')"; return 1; }
    sleep 0.5
    t=$((t + 1))
  done
}

case_begin busy-peer
peer=${SORYU_PEER_BIN:-$SORYU_REPO/target/peers/bin/scx_bpfland}
if [ ! -x "$peer" ]; then
  fail "no peer scheduler at $peer (bench/peers.sh bpfland builds it; scripts/test.sh does before this test)"
else
  "$peer" --kconfig "$SORYU_KCONFIG" >"$SORYU_OUT/$CASE.peer.log" 2>&1 &
  peer_pid=$!
  if peer_wait_enabled "$peer_pid"; then
    ops=$(scx_ops)
    trace "peer enabled: ops '$ops'"
    run_refused "soryu while $ops runs" "another sched_ext scheduler is enabled \\(${ops%%_*}" --report-sec 2
    sleep 3
    [ "$(scx_state)" = enabled ] && [ "$(scx_ops)" = "$ops" ] && kill -0 "$peer_pid" 2>/dev/null ||
      fail "the peer is gone after soryu was refused (state '$(scx_state)', ops '$(scx_ops)')"
  fi
  kill -INT "$peer_pid" 2>/dev/null || true
  wait "$peer_pid" 2>/dev/null || true
  sched_wait_disabled
fi
dmesg_check
case_end

# tool_run WHAT STATUS PATTERN ARGS...: scx_soryu ARGS (a tool: no
# --kconfig) exits with STATUS (ok: 0, refused: non-zero) within 60 s, its
# stderr matches PATTERN (empty: says nothing), no panic; stdout in OUT.
OUT=
tool_run() {
  local what=$1 want=$2 pat=$3 rc=0 err
  shift 3
  OUT=$(timeout 60 "$SORYU_BIN" "$@" 2>"$SORYU_OUT/$CASE.err") || rc=$?
  err=$(cat "$SORYU_OUT/$CASE.err")
  { echo "\$ scx_soryu $*"; echo "$OUT"; echo "$err"; } >>"$SORYU_OUT/$CASE.tool.log"
  case $want in
    ok) [ "$rc" = 0 ] || fail "$what: exit status $rc: $(head -c 300 <<<"$err" | tr '\n' '|')" ;;
    refused) [ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "$what: exit status $rc, expected a refusal" ;;
  esac
  if [ -z "$pat" ]; then
    [ -z "$err" ] || fail "$what: unexpected stderr: $(head -c 300 <<<"$err" | tr '\n' '|')"
  else
    grep -qE -- "$pat" <<<"$err" || fail "$what: stderr does not match /$pat/: $(head -c 300 <<<"$err" | tr '\n' '|')"
  fi
  ! grep -qiE 'panicked|backtrace' <<<"$err" || fail "$what: panic: $(head -c 300 <<<"$err")"
  trace "$what: status $rc: $(head -n1 <<<"$err")"
}

case_begin inspect
tool_run "inspect without soryu" refused '^scx_soryu: scx_soryu is not running \(sched_ext state .disabled.' inspect 1
[ "$(wc -l <"$SORYU_OUT/$CASE.err")" = 1 ] || fail "inspect without soryu: more than one line"
if sched_start --report-sec 2 && sched_wait_enabled; then
  nice -n 5 sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &
  hog=$!
  sleep 3 # at the boost ceiling: 12 slices used up
  tool_run "inspect --json" ok '' inspect --json "$hog"
  json=$OUT
  tool_run "inspect, text" ok '' inspect "$hog"
  text=$OUT
  # a header, then one row with the --json line's figures; the boost of a
  # hog at its ceiling and so its level hold still between the two reads
  want=$(jq -r '"\(.pid) \(.comm) \(.policy) \(.nice) \(.cgroup_nice) \(.boost) \(.level) \(.queued_level // "-")"' <<<"$json" 2>/dev/null || true)
  got=$(sed -n 2p <<<"$text" | awk '{ print $1, $2, $3, $4, $5, $6, $7, $8 }')
  [ "$(head -n1 <<<"$text" | xargs)" = "pid comm policy nice cgnice boost level queued used_us granted" ] ||
    fail "inspect's header: '$(head -n1 <<<"$text")'"
  [ "$(wc -l <<<"$text")" = 2 ] || fail "inspect printed $(wc -l <<<"$text") lines for one task"
  if [ -n "$want" ] && [ "$got" = "$want" ]; then
    trace "ok: inspect's row agrees with --json: $got"
  else
    fail "inspect's row '$got' is not its --json figures '$want'"
  fi
  [ "$(jq -r '"\(.nice) \(.boost)"' <<<"$json" 2>/dev/null)" = "5 12" ] ||
    fail "a nice 5 hog: inspect --json says $(jq -c '{nice, boost}' <<<"$json" 2>/dev/null), expected nice 5 at the boost ceiling 12"
  nopid=$(($(cat /proc/sys/kernel/pid_max) - 1))
  tool_run "inspect a PID that is no task" refused "inspect $nopid: no task $nopid" inspect "$nopid"
  tool_run "inspect a word" refused "invalid value 'abc'" inspect abc
  tool_run "inspect a good PID beside a bad one" refused "1 of 2 tasks could not be inspected" inspect "$hog" "$nopid"
  grep -q "^ *$hog " <<<"$OUT" || fail "inspect with a bad PID beside a good one did not show the good one: $(tr '\n' '|' <<<"$OUT")"
  kill "$hog"
  wait "$hog" 2>/dev/null || true
  sched_stop
  sched_wait_disabled
  tool_run "inspect after soryu stopped" refused 'scx_soryu is not running' inspect 1
fi
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
  sched_wait_exit "$1" || return 1
  grep -q -- "$2" "$SORYU_OUT/$CASE.sched.log" ||
    fail "the kernel's exit reason is not printed: $(tail -n3 "$SORYU_OUT/$CASE.sched.log" | tr '\n' '|')"
  trace "exit reason: $(grep -m1 'EXIT' "$SORYU_OUT/$CASE.sched.log")"
}

# exit_record_check KIND TEXT: the case's --report-json file ends in an
# exit record of kind KIND (the kernel's enum scx_exit_kind, by name),
# error true, restart false, with TEXT in its reason or message.
exit_record_check() {
  local rec
  rec=$(report_records | tail -n1)
  trace "last report record: $rec"
  jq -e --arg k "$1" --arg t "$2" '.type == "exit" and .kind_name == $k and .error == true
      and .restart == false and (((.reason // "") + " " + (.msg // "")) | contains($t))' <<<"$rec" >/dev/null 2>&1 ||
    fail "the report does not end in the exit record (kind $1, error, '$2'): $(head -c 300 <<<"$rec")"
}

case_begin bpferror
if sched_start --report-sec 1 --inject-error-ms 3000 && sched_wait_enabled; then
  sched_wait_error_exit "the injected error" 'error injected by --inject-error-ms' || true
  sched_wait_disabled
  case_kmsg | grep -q 'error injected by --inject-error-ms' || fail "kernel log does not show the injected error"
  exit_record_check error_bpf 'error injected by --inject-error-ms'
fi
dmesg_check --alarms-only
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
# (the whole debug dump: 1 MiB, where the kernel keeps 32 KiB by default)
if sched_start --report-sec 1 --inject-stall soryu-stall --exit-dump-len 1048576 && sched_wait_enabled; then
  load_start 60
  stall_task 90
  if sched_wait_error_exit "a task was stranded (watchdog)" 'runnable task stall'; then
    grep -q 'soryu-stall' "$SORYU_OUT/$CASE.sched.log" ||
      fail "the daemon's output does not name the stalled task"
    # The whole debug dump: the kernel's, with soryu's lines (ops.dump,
    # ops.dump_cpu, ops.dump_task) each one of its own and complete
    # (tests/vm/dump_check.py).
    nllc=$(sed -n 's/.*topology: \([0-9]*\) LLCs\{0,1\} .*/\1/p' "$SORYU_OUT/$CASE.sched.log" | head -n1)
    out=$(python3 "$(dirname "${BASH_SOURCE[0]}")/dump_check.py" "$SORYU_OUT/$CASE.sched.log" 100 1000 "${nllc:-0}" soryu-stall 2>&1) &&
      trace "$out" || while IFS= read -r l; do fail "debug dump: ${l#fail }"; done <<<"$out"
  fi
  sched_wait_disabled
  case_kmsg | grep -q 'runnable task stall' || fail "kernel log shows no runnable task stall"
  exit_record_check error_stall 'runnable task stall'
  exit_record_check error_stall 'soryu-stall['

  # Back on the default scheduler, the stranded task runs again.
  c0=$(awk '{ print $1 }' "/proc/$STALLER/schedstat" 2>/dev/null || echo 0)
  sleep 2
  c1=$(awk '{ print $1 }' "/proc/$STALLER/schedstat" 2>/dev/null || echo 0)
  [ "$c1" -gt "$c0" ] || fail "the stranded task did not run after the ejection"
  kill "$STALLER" 2>/dev/null || true
  wait "$STALLER" 2>/dev/null || true
  load_stop
fi
dmesg_check --alarms-only
case_end

summary
