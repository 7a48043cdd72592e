#!/usr/bin/env bash
# Guest side of scripts/demo.sh (not a test): runs scx_soryu with reports
# every 2 s under a demo load for SORYU_DEMO_SECS (30) seconds, then stops
# it with SIGTERM. The scheduler's output streams to the host (vm/run.sh
# with SORYU_VM_STREAM=1); its JSON report is left in
# $SORYU_OUT/demo.jsonl for the host to print.
set -euo pipefail

: "${SORYU_OUT:?run through vm/run.sh}"
secs=${SORYU_DEMO_SECS:-30}
scx=/sys/kernel/sched_ext

[ -x "$SORYU_BIN" ] || { echo "demo: no scheduler binary at $SORYU_BIN" >&2; exit 1; }

# Demo load: CPU hogs, fork/exit churn and context switching, so that every
# path of the scheduler has work.
stress-ng --cpu 2 --fork 1 --switch 1 --temp-path "$SORYU_OUT" \
  --timeout "$((secs + 60))s" >"$SORYU_OUT/demo.stress.log" 2>&1 &
load=$!

"$SORYU_BIN" --report-sec 2 --report-json "$SORYU_OUT/demo.jsonl" \
  --kconfig "$SORYU_KCONFIG" 2>&1 &
sched=$!

# Run for $secs once sched_ext is on (loading takes a while under TCG).
for _ in $(seq 120); do
  [ "$(cat $scx/state)" = enabled ] && break
  kill -0 "$sched" 2>/dev/null || break
  sleep 0.5
done
ops=$(cat $scx/root/ops 2>/dev/null || true)
echo "demo: sched_ext $(cat $scx/state), ops '$ops'; running ${secs}s"
if [ "$(cat $scx/state)" != enabled ] || [[ $ops != soryu* ]]; then
  echo "demo: FAIL: scx_soryu did not attach" >&2
  kill -TERM "$sched" "$load" 2>/dev/null || true
  wait "$sched" || true
  exit 1
fi
sleep "$secs"

kill -TERM "$sched" 2>/dev/null || true
rc=0
wait "$sched" || rc=$?
kill -TERM "$load" 2>/dev/null || true
wait "$load" || true
echo "demo: scx_soryu exited with status $rc; sched_ext $(cat $scx/state)"
dmesg | grep sched_ext || true
[ -s "$SORYU_OUT/demo.jsonl" ] || { echo "demo: FAIL: no JSON report" >&2; rc=1; }
exit "$rc"
