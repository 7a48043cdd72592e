#!/usr/bin/env bash
# Guest side of bench/cost.sh: the cost of soryu's BPF callbacks with the
# histograms on and off (--no-hist), under CPU hogs plus interactive
# wakers, in one boot, order alternated over rounds. Runs inside the VM
# (vm/run.sh), writes one --report-json file per run into $SORYU_OUT.
set -euo pipefail
out=${SORYU_OUT:?run through vm/run.sh}
secs=${SORYU_COST_SECS:-20}
rounds=${SORYU_COST_ROUNDS:-2}

sysctl -qw kernel.bpf_stats_enabled=1
ncpu=$(nproc)

run() { # run LABEL FLAGS...
  local label=$1; shift
  "$SORYU_BIN" --kconfig "$SORYU_KCONFIG" --report-sec 5 \
    --report-json "$out/cost-$label.jsonl" "$@" >"$out/cost-$label.log" 2>&1 &
  local pid=$!
  for _ in $(seq 60); do
    [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break
    sleep 0.5
  done
  # CPU hogs on every CPU, and ping-pong wakers: the wakeup-heavy case
  # where per-wakeup bookkeeping costs most.
  stress-ng --cpu "$ncpu" --pipe 2 --futex 2 --timeout "${secs}s" \
    --temp-path "$out" >/dev/null 2>&1 || true
  kill -TERM "$pid"
  wait "$pid"
}

for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then order="on off"; else order="off on"; fi
  for m in $order; do
    if [ "$m" = on ]; then run "hist-r$r"; else run "nohist-r$r" --no-hist; fi
  done
done
echo "done" >"$out/cost.done"
