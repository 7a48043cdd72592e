#!/usr/bin/env bash
# The reports when soryu stops, and the daemon with nobody reading its
# output, on a real sched_ext kernel:
#   sigterm    SIGTERM in the middle of an interval: that interval is
#              reported, short and marked "final", before the exit record;
#   stall      a task stranded on purpose (hidden --inject-stall) until the
#              kernel's watchdog ejects soryu, with --report-sec 60: the
#              interval that holds the stall is reported, final, before the
#              exit record (error_stall);
#   error      a BPF-side error (hidden --inject-error-ms): likewise
#              (error_bpf);
#   deafpipe   the daemon's stdout and stderr a pipe that `head -n 3`
#              closes, then a CPU hotplug: the kernel restarts soryu twice,
#              and the daemon, whose log lines and exit reasons now meet a
#              closed pipe, reloads each time (it died of a panic on the
#              first) and stops cleanly on SIGTERM.
#
#   vm/run.sh tests/vm/report-edges.sh
set -euo pipefail

# shellcheck source=tests/vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# final_check SECS KIND: the case's report ends its run with interval
# records, the last one "final" and shorter than SECS (the --report-sec),
# then one exit record of KIND counting them all; the text report printed
# the final one.
final_check() {
  local secs=$1 kind=$2 out
  out=$(report_records | jq -rs --argjson secs "$secs" --arg kind "$kind" '
    (map(.type) | rindex("header")) as $h | .[$h + 1:] as $run |
    [$run[] | select(.type == "interval")] as $iv |
    ($run | map(select(.type == "exit"))) as $ex |
    if ($iv | length) == 0 then "fail\tno interval record before the exit record"
    elif ($run[-1].type != "exit") then "fail\tthe run does not end with an exit record"
    elif ($run[-2].type != "interval") then "fail\tthe exit record does not follow an interval record"
    elif ($iv[-1].final != true) then "fail\tthe last interval is not marked final: \($iv[-1] | {index, duration_s})"
    elif ([$iv[:-1][] | select(.final == true)] | length) > 0 then "fail\tan interval before the last is marked final"
    elif ($iv[-1].duration_s <= 0 or $iv[-1].duration_s >= $secs) then "fail\tthe final interval lasted \($iv[-1].duration_s) s, not between 0 and \($secs)"
    elif ($ex | length) != 1 or $ex[0].kind_name != $kind then "fail\texit records \($ex | map(.kind_name)), expected one \($kind)"
    elif $ex[0].intervals != ($iv | length) then "fail\tthe exit record counts \($ex[0].intervals) intervals, the run has \($iv | length)"
    else "ok\t\($iv | length) interval(s), the final one \($iv[-1].duration_s | . * 100 | round / 100) s with \($iv[-1].dispatch) dispatches, then exit \($kind)"
    end' 2>&1) || {
    fail "the report cannot be read: $(head -c 300 <<<"$out")"
    return 0
  }
  case $out in
    ok*) trace "${out#ok$'\t'}" ;;
    *) fail "${out#fail$'\t'}" ;;
  esac
  grep -qE '^\[soryu\] #[0-9]+ +final ' "$SORYU_OUT/$CASE.sched.log" ||
    fail "the text report has no final interval line"
}

case_begin sigterm
if sched_start --report-sec 6 && sched_wait_enabled; then
  load_start 20
  report_wait_past 0 && sleep 1.5
  sched_stop
  sched_wait_disabled
  load_stop
  final_check 6 unreg
  report_check
fi
dmesg_check
case_end

case_begin stall
# Tasks named soryu-stall are never queued; stress-ng keeps both CPUs busy
# so that the staller goes through ops.enqueue; the watchdog (10 s) ends
# soryu. Before, the up to 60 s before the ejection were not reported.
if sched_start --report-sec 60 --inject-stall soryu-stall && sched_wait_enabled; then
  load_start 60
  stall_task 90
  sched_wait_exit "a stranded task (the watchdog)" || true
  sched_wait_disabled
  kill "$STALLER" 2>/dev/null || true
  wait "$STALLER" 2>/dev/null || true
  load_stop
  final_check 60 error_stall
fi
case_end

case_begin error
if sched_start --report-sec 60 --inject-error-ms 3000 && sched_wait_enabled; then
  sched_wait_exit "the injected error" || true
  sched_wait_disabled
  final_check 60 error_bpf
fi
case_end

# online N: CPU 1 online (1) or offline (0).
online() { echo "$1" >/sys/devices/system/cpu/cpu1/online; }

# restarted N: within 60 s the report holds N exit records that asked for
# a restart, and soryu is enabled again with the daemon alive.
restarted() {
  local n=$1 t=0 got=0
  while [ "$t" -lt 60 ]; do
    got=$(report_records | jq -s '[.[] | select(.type == "exit" and .restart)] | length')
    if [ "$got" -ge "$n" ] && scx_is_soryu; then
      trace "restart $n: soryu enabled again after ${t}s"
      return 0
    fi
    kill -0 "$SCHED_PID" 2>/dev/null || break
    sleep 1
    t=$((t + 1))
  done
  fail "restart $n: ${got} restart exit(s) in the report, sched_ext '$(scx_state)', daemon $(kill -0 "$SCHED_PID" 2>/dev/null && echo alive || echo gone)"
  return 1
}

case_begin deafpipe
if [ ! -w /sys/devices/system/cpu/cpu1/online ]; then
  fail "cpu1 cannot be hot-unplugged here"
else
  fifo=$SORYU_OUT/$CASE.fifo
  rm -f "$fifo"
  mkfifo "$fifo"
  head -n 3 <"$fifo" >"$SORYU_OUT/$CASE.head.txt" &
  reader=$!
  trace "start: $SORYU_BIN --report-sec 1 ... >fifo 2>&1 (head -n 3 reads it)"
  "$SORYU_BIN" --report-sec 1 --report-json "$SORYU_OUT/$CASE.jsonl" --kconfig "$SORYU_KCONFIG" >"$fifo" 2>&1 &
  SCHED_PID=$!
  if sched_wait_enabled; then
    t=0
    while kill -0 "$reader" 2>/dev/null && [ "$t" -lt 30 ]; do sleep 1; t=$((t + 1)); done
    if kill -0 "$reader" 2>/dev/null; then
      fail "head still reading after 30 s"
    else
      trace "head exited after reading: $(tr '\n' '|' <"$SORYU_OUT/$CASE.head.txt")"
    fi
    sleep 2 # reports and log lines now meet the closed pipe
    online 0 && restarted 1 && online 1 && restarted 2 && sleep 2
    kill -0 "$SCHED_PID" 2>/dev/null || fail "the daemon died"
    scx_is_soryu || fail "soryu is not enabled at the end (state '$(scx_state)')"
    sched_stop
    sched_wait_disabled
    n=$(report_records | jq -s '[.[] | select(.type == "interval" and .final)] | length')
    [ "$n" -ge 3 ] || fail "$n final interval(s) in the report: one before each of the 3 exits expected"
  fi
  online 1 2>/dev/null || true
  wait "$reader" 2>/dev/null || true
  rm -f "$fifo"
fi
dmesg_check 'disabled (unregistered from the main kernel)'
case_end

summary
