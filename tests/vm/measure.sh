#!/usr/bin/env bash
# Measurement VM test: soryu's own figures under CPU hogs plus interactive
# wakers (pipe and futex ping-pong beside a hog per CPU).
#
#   vm/run.sh tests/vm/measure.sh
#
# Asserts that:
#   - the --report-json lines parse and are consistent (check_report.py:
#     bucket counts vs the wakeup counter, p50 <= p99 <= p99.9 <= max,
#     nested tails, histograms vs counters), with real wakeups recorded;
#   - `scx_soryu --monitor`, a second process, reads the running instance
#     over scx_stats and prints its figures;
#   - BPF callback costs appear when kernel.bpf_stats_enabled is on;
#   - the usual: enabled while running, exit 0, disabled after, clean dmesg.
set -euo pipefail

# shellcheck source=tests/vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
secs=${SORYU_MEASURE_SECS:-20}

case_begin measure
sysctl -qw kernel.bpf_stats_enabled=1
if sched_start --report-sec 2 && sched_wait_enabled; then
  stress-ng --cpu "$(nproc)" --pipe 2 --futex 2 --timeout "$((secs + 30))s" \
    --temp-path "$SORYU_OUT" >"$SORYU_OUT/$CASE.stress.log" 2>&1 &
  LOAD_PID=$!
  sleep 4
  # A second process reads the running instance; it loads nothing.
  timeout -s INT 8 "$SORYU_BIN" --monitor 2 >"$SORYU_OUT/$CASE.monitor.log" 2>&1 || true
  if ! grep -q '^\[soryu\] #' "$SORYU_OUT/$CASE.monitor.log"; then
    fail "--monitor printed no report: $(head -c 300 "$SORYU_OUT/$CASE.monitor.log" | tr '\n' '|')"
  fi
  grep -q 'wake->run interactive' "$SORYU_OUT/$CASE.monitor.log" ||
    fail "--monitor output lacks the wake->run lines"
  watch_running $((secs - 12))
  sched_stop
  load_stop
  sched_wait_disabled
fi
sysctl -qw kernel.bpf_stats_enabled=0
report_check
if [ -s "$SORYU_OUT/$CASE.jsonl" ]; then
  if ! python3 "$here/check_report.py" "$SORYU_OUT/$CASE.jsonl" --min-wakeups 200 >"$SORYU_OUT/$CASE.check.log" 2>&1; then
    fail "report figures inconsistent: $(head -n5 "$SORYU_OUT/$CASE.check.log" | tr '\n' '|')"
  fi
  jq -e 'select(.type == "interval") | .bpf_cost.soryu_enqueue.calls > 0' "$SORYU_OUT/$CASE.jsonl" >/dev/null ||
    fail "no bpf_cost figures although kernel.bpf_stats_enabled was 1"
fi
grep -q 'bpf ns/call' "$SORYU_OUT/$CASE.sched.log" || fail "the text report has no 'bpf ns/call' line"
dmesg_check
case_end

summary
