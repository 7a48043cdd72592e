#!/usr/bin/env bash
# VM side of bench/run.sh (run through vm/run.sh): hands over to guest.py,
# the same driver bench/run.sh --host runs on the host.
#
# SORYU_BENCH_GUEST_CHECK=SCRIPT (tests only): first run `bash SCRIPT
# --in-guest` here, where sched_ext is real, its output into
# $SORYU_OUT/guest-check.log; the benchmark runs whatever it says.
set -euo pipefail
out=${SORYU_OUT:?run through vm/run.sh}
if [ -n "${SORYU_BENCH_GUEST_CHECK:-}" ]; then
  bash "$SORYU_BENCH_GUEST_CHECK" --in-guest >"$out/guest-check.log" 2>&1 || true
fi
exec python3 "$(dirname "${BASH_SOURCE[0]}")/guest.py" run --vm "$out" "$@"
