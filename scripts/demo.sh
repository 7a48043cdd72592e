#!/usr/bin/env bash
# Shows scx_soryu at work: a report every 2 s for SORYU_DEMO_SECS (30)
# seconds under a load of one busy loop per CPU beside a task that wakes
# every 10 ms.
#   - On a kernel with sched_ext (/sys/kernel/sched_ext exists): installs
#     only what the build needs (scripts/install-deps.sh --build), builds
#     the release binary and runs it here.
#   - Otherwise: installs what the VM needs too (Debian 12 and 13), builds,
#     boots a sched_ext kernel in a VM (vm/run.sh), streams the scheduler's
#     output, and says where its JSON report is.
# Needs root (apt, BPF).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
export PATH="$PATH:${HOME:-/root}/.cargo/bin"
secs=${SORYU_DEMO_SECS:-30}
export SORYU_DEMO_SECS=$secs
case "$secs" in '' | *[!0-9]* | 0) echo "demo: SORYU_DEMO_SECS must be a whole number of seconds above 0 (got '$secs')" >&2; exit 2 ;; esac

[ "$(id -u)" = 0 ] || { echo "demo: run as root (installs packages, loads a BPF scheduler)" >&2; exit 1; }

if [ -d /sys/kernel/sched_ext ]; then
  state=$(cat /sys/kernel/sched_ext/state 2>/dev/null || echo unknown)
  if [ "$state" != disabled ]; then
    echo "demo: a sched_ext scheduler is loaded already ($(cat /sys/kernel/sched_ext/root/ops 2>/dev/null || echo "state $state")): stop it first (e.g. systemctl stop scx scx_soryu)" >&2
    exit 1
  fi
  bash scripts/install-deps.sh --build
  make -s build
  bin=$repo/target/release/scx_soryu
  echo "demo: this kernel ($(uname -r)) has sched_ext; running scx_soryu here for ${secs}s"
  # The load: a busy loop per CPU, and one task waking every 10 ms (its
  # wakeups are the report's interactive class). Only the shell and
  # coreutils: nothing more to install.
  pids=()
  for _ in $(seq "$(nproc)"); do
    sh -c 'while :; do :; done' &
    pids+=($!)
  done
  sh -c 'while :; do sleep 0.01; done' &
  pids+=($!)
  trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
  rc=0
  # SIGTERM after $secs: the scheduler detaches cleanly and exits 0;
  # --preserve-status hands on its status rather than timeout's 124.
  timeout --preserve-status -s TERM "$secs" "$bin" --report-sec 2 || rc=$?
  echo "demo: scx_soryu exited $rc; sched_ext is $(cat /sys/kernel/sched_ext/state), the kernel's default scheduler runs"
  exit "$rc"
fi

echo "demo: this kernel ($(uname -r)) has no sched_ext; booting one in a VM (software emulation: slow)"
bash scripts/install-deps.sh
make -s build
bin=$repo/target/release/scx_soryu
rc=0
SORYU_VM_STREAM=1 SORYU_BIN=$bin vm/run.sh --name demo vm/demo-guest.sh || rc=$?
report=target/vm-results/demo/demo.jsonl
if [ -s "$report" ]; then
  echo
  echo "demo: the same intervals as JSON lines (every figure, raw histograms): $report"
  echo "demo: e.g. the interactive p99 per interval:" \
    "$(jq -r 'select(.type == "interval") | "\(.int_p99_us)us"' "$report" | tr '\n' ' ')"
fi
exit "$rc"
