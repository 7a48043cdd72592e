#!/usr/bin/env bash
# Shows scx_soryu at work: installs the dependencies, builds the release
# binary, then runs the scheduler with a report every 2 s under a stress
# load for SORYU_DEMO_SECS (30) seconds:
#   - directly on this machine when its kernel has sched_ext
#     (/sys/kernel/sched_ext exists);
#   - otherwise in a VM with a sched_ext kernel (vm/run.sh), streaming the
#     scheduler's output, and says where its JSON report is.
# Needs root (BPF, apt).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
export PATH="$PATH:${HOME:-/root}/.cargo/bin"
secs=${SORYU_DEMO_SECS:-30}
export SORYU_DEMO_SECS=$secs

[ "$(id -u)" = 0 ] || { echo "demo: run as root (installs packages, loads a BPF scheduler)" >&2; exit 1; }

bash scripts/install-deps.sh
BPF_CLANG=clang-19 cargo build --release
bin=$repo/target/release/scx_soryu

if [ -d /sys/kernel/sched_ext ]; then
  echo "demo: this kernel has sched_ext; running scx_soryu here for ${secs}s"
  stress-ng --cpu "$(nproc)" --fork 1 --switch 1 --timeout "$((secs + 30))s" >/dev/null 2>&1 &
  load=$!
  trap 'kill "$load" 2>/dev/null || true' EXIT
  rc=0
  # SIGTERM after $secs: the scheduler detaches cleanly and exits 0;
  # --preserve-status hands on its status rather than timeout's 124.
  timeout --preserve-status -s TERM "$secs" "$bin" --report-sec 2 || rc=$?
  exit "$rc"
fi

echo "demo: this kernel ($(uname -r)) has no sched_ext; booting one in a VM (TCG: slow)"
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
