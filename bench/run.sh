#!/usr/bin/env bash
# A/B benchmark in the VM: one workload under several configurations, back
# to back in one boot, N rounds, the order of the configurations reversed
# every round; then `scx_soryu compare` of every configuration against the
# first one, and `scx_soryu plot` of them all.
#
#   bench/run.sh [-w WORKLOAD] [-r ROUNDS] [-n INTERVALS] [-s SECS] CONFIG...
#
#   WORKLOAD   saturate  (a CPU hog per CPU; the figure is the latency of an
#                         interactive probe, cyclictest)  [default]
#              forkexec  (stress-ng fork+exec; + stress-ng ops/s)
#              hackbench (message passing; + mean hackbench time)
#   CONFIG     eevdf (no sched_ext scheduler: the kernel's default),
#              soryu, soryu-clear-bitmap, soryu-boost-on-wake, soryu-vtime,
#              or a peer: bpfland, lavd (built by bench/peers.sh, pinned)
#   -r 2 rounds, -n 8 intervals per run, -s 5 seconds per interval.
#
# Results: target/bench/<workload>-<time>/ (per-run JSON lines and logs,
# compare-<config>.md, plot.svg). Figures are cyclictest's and stress-ng's
# or hackbench's, so every configuration is measured the same way.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
export PATH="$PATH:${HOME:-/root}/.cargo/bin"

workload=saturate rounds=2 intervals=8 secs=5
while getopts "w:r:n:s:" o; do
  case $o in
    w) workload=$OPTARG ;;
    r) rounds=$OPTARG ;;
    n) intervals=$OPTARG ;;
    s) secs=$OPTARG ;;
    *) sed -n '2,22p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "bench/run.sh: name at least two configurations (e.g. eevdf soryu)" >&2; exit 2; }
configs=("$@")

bin=target/release/scx_soryu
[ -x "$bin" ] || { echo "bench/run.sh: build first: cargo build --release" >&2; exit 1; }
peers=()
for c in "${configs[@]}"; do
  case $c in eevdf | soryu | soryu-*) ;; *) peers+=("$c") ;; esac
done
[ ${#peers[@]} -eq 0 ] || bench/peers.sh "${peers[@]}"

name=bench-$workload-$(date +%Y%m%d-%H%M%S)
out=target/bench/${name#bench-}
mkdir -p "$out"
echo "bench: $workload, ${rounds} rounds of ${configs[*]} (reversed every round), $intervals x ${secs}s each"
SORYU_PEERS=$repo/target/peers SORYU_VM_TIMEOUT=$((600 + rounds * ${#configs[@]} * intervals * (secs + 10))) \
  vm/run.sh --name "$name" bench/guest.sh "$workload" "$intervals" "$secs" "$rounds" "${configs[@]}"
cp target/vm-results/"$name"/*.jsonl target/vm-results/"$name"/*.log "$out"/ 2>/dev/null || true
[ -f target/vm-results/"$name"/bench.done ] || { echo "bench: the runs did not complete (logs: target/vm-results/$name)" >&2; exit 1; }

base=${configs[0]}
for c in "${configs[@]:1}"; do
  args=()
  for r in $(seq "$rounds"); do args+=(-a "$out/$base-r$r.jsonl" -b "$out/$c-r$r.jsonl"); done
  "$bin" compare --format markdown "${args[@]}" >"$out/compare-$c.md"
  echo
  echo "== A = $base, B = $c =="
  "$bin" compare "${args[@]}"
done
files=()
for c in "${configs[@]}"; do for r in $(seq "$rounds"); do files+=("$out/$c-r$r.jsonl"); done; done
"$bin" plot -o "$out/plot.svg" "${files[@]}"
echo
echo "bench: results in $out (compare-*.md, plot.svg)"
