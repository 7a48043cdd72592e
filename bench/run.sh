#!/usr/bin/env bash
# A/B benchmark: one workload under several configurations, back to back,
# N rounds, the order of the configurations reversed every round; then
# `scx_soryu compare` of every configuration against the first one, and
# `scx_soryu plot` of them all. In the VM (default: one boot of vm/run.sh),
# or on this machine with --host (a kernel with sched_ext, as root).
#
#   bench/run.sh [--host] [-w WORKLOAD] [-r ROUNDS] [-n INTERVALS] [-s SECS]
#                [-m PCT] [-i] [-o DIR] CONFIG...
#
#   --host     run here, not in the VM. Refuses (one line, nothing started)
#              a kernel without sched_ext, a user who is not root, another
#              sched_ext scheduler already enabled, a missing tool. At the
#              end, on an error, on Ctrl-C or SIGTERM: the load is stopped,
#              the scheduler detached, the kernel back on its default one.
#   WORKLOAD   saturate  (a CPU hog per CPU; the figure is the latency of an
#                         interactive probe, cyclictest)  [default]
#              forkexec  (stress-ng fork+exec; + stress-ng ops/s)
#              hackbench (message passing; + mean hackbench time)
#              hackbench-threads (the same with threads over pipes)
#              messaging (perf bench sched messaging; + mean time)
#              pipe      (perf bench sched pipe; + mean round trip)
#              compile   (make -j of Lua 5.4, bench/source.sh; + mean build
#                         time; the probe is the interactive waker)
#              build     (the same build, one per interval: an interval
#                         lasts one clean build, -s is not used, and the
#                         builds pair one to one; + its build time)
#              workerpool (message threads waking worker threads,
#                         bench/workerpool.c; + the workers' wakeup p50
#                         and p99, request p99, requests/s)
#   CONFIG     eevdf (no sched_ext scheduler: the kernel's default),
#              soryu, soryu-clear-bitmap, soryu-boost-on-wake, soryu-vtime,
#              soryu-slice-N, soryu-starve-N, soryu-gran-N (one knob:
#              --slice-us, --starve-ms or --wakeup-gran-us N; a value
#              scx_soryu refuses is refused before anything runs),
#              soryu-base (default flags, the build SORYU_BASE_BIN names:
#              two builds side by side in one boot),
#              or a peer: bpfland, lavd (bench/peers.sh, pinned)
#   -r 2 rounds, -n 8 intervals per run, -s 5 seconds per interval.
#   -m PCT     also test whether each configuration stays within PCT% of
#              the first one (compare --margin: a one-sided sign test)
#   -i         interleave: the configurations take turns every interval
#              (the order of a turn reversed every interval), each loaded
#              for its interval and unloaded after it, rather than one
#              whole run after another; the two intervals of a pair then
#              run minutes apart, not a run apart (for build, whose
#              intervals are long; not for compile, whose builds run
#              across intervals)
#   -o DIR     results here (default target/bench/[host-]<workload>-<time>)
#
# Results: per-run JSON lines and logs, compare-<config>.md, plot.svg.
# Figures are cyclictest's and stress-ng's, hackbench's or perf's, so every
# configuration is measured the same way (bench/guest.py, both modes).
# Settings: SORYU_BIN (default target/release/scx_soryu); SORYU_POOL_ARGS
# (the worker pool's -m, -w, -l, when not bench/workerpool.c's defaults);
# VM: see vm/run.sh.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
export PATH="$PATH:${HOME:-/root}/.cargo/bin"

usage() { sed -n '8,49s/^# \{0,1\}//p' "$0" >&2; exit 2; }
host=0 args=()
for a in "$@"; do
  if [ "$a" = --host ]; then host=1; else args+=("$a"); fi
done
set -- ${args[@]+"${args[@]}"}
workload=saturate rounds=2 intervals=8 secs=5 out= margin=() interleave=()
while getopts "w:r:n:s:m:io:h" o; do
  case $o in
    w) workload=$OPTARG ;;
    r) rounds=$OPTARG ;;
    n) intervals=$OPTARG ;;
    s) secs=$OPTARG ;;
    m) margin=(--margin "$OPTARG") ;;
    i) interleave=(--interleave) ;;
    o) out=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
for v in "$rounds" "$intervals" "$secs"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench/run.sh: -r, -n and -s take a whole number of at least 1 (got '$v')" >&2; exit 2; }
done
[ $# -ge 2 ] || { echo "bench/run.sh: name at least two configurations (e.g. eevdf soryu)" >&2; exit 2; }
[ ${#margin[@]} = 0 ] || awk -v m="${margin[1]}" 'BEGIN { exit !(m ~ /^[0-9]+(\.[0-9]+)?$/ && m > 0 && m < 100) }' ||
  { echo "bench/run.sh: -m takes a percentage above 0 and below 100, e.g. -m 5 (got '${margin[1]}')" >&2; exit 2; }
[ ${#interleave[@]} = 0 ] || [ "$workload" != compile ] ||
  { echo "bench/run.sh: -i does not apply to compile, whose builds run across intervals: use -w build" >&2; exit 2; }
configs=("$@")
if [ "$host" = 1 ]; then
  # the names, then the guard's refusals, before anything is built or started
  python3 bench/guest.py preflight "$workload" "${configs[@]}" || exit
else
  python3 bench/guest.py check "$workload" "${configs[@]}" || exit
fi

bin=${SORYU_BIN:-target/release/scx_soryu}
case $bin in /*) ;; *) bin=$repo/$bin ;; esac
if [ -n "${SORYU_BASE_BIN:-}" ]; then
  # absolute, as the guest runs it from another directory
  case $SORYU_BASE_BIN in /*) ;; *) SORYU_BASE_BIN=$repo/$SORYU_BASE_BIN ;; esac
  export SORYU_BASE_BIN
fi
[ -x "$bin" ] || { echo "bench/run.sh: build first: cargo build --release (no $bin)" >&2; exit 1; }
peers=()
for c in "${configs[@]}"; do
  case $c in eevdf | soryu | soryu-*) ;; *) peers+=("$c") ;; esac
done
[ ${#peers[@]} -eq 0 ] || bench/peers.sh "${peers[@]}"

# the compile's source, fetched once (bench/source.sh says why not, in one line)
src=
case $workload in compile | build) src=$(bench/source.sh) || exit 1 ;; esac

stamp=$workload-$(date +%Y%m%d-%H%M%S)
if [ -z "$out" ]; then
  if [ "$host" = 1 ]; then out=target/bench/host-$stamp; else out=target/bench/$stamp; fi
fi
if compgen -G "$out/*.jsonl" >/dev/null; then
  echo "bench/run.sh: $out already holds results; give a new directory" >&2
  exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -n "$src" ]; then
  # beside the results: the VM sees this tree, not the host's /var/cache
  cp "$src" "$out/" && export SORYU_COMPILE_SRC=$out/${src##*/}
fi

# Runs "$@" in the background and waits for it, passing a SIGINT, SIGTERM
# or SIGHUP of this script on to it as SIGTERM (both the driver and
# vm/run.sh stop what they started on it). A terminal's Ctrl-C reaches the
# driver directly as well; it acts on the first signal only.
child=
pass_on() { if [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null || true; fi; }
trap pass_on INT TERM HUP
run_child() {
  local rc
  "$@" &
  child=$!
  while :; do
    rc=0
    wait "$child" || rc=$?
    kill -0 "$child" 2>/dev/null || break # else a signal interrupted the wait
  done
  child=
  return "$rc"
}

# the VM's time limit: an interval of `build` is one build, which takes up
# to a few minutes under the emulator
per_interval=$((secs + 10))
[ "$workload" != build ] || per_interval=600
where=VM
[ "$host" = 0 ] || where="this machine ($(uname -r), $(nproc) CPUs)"
each="$intervals x ${secs}s each"
[ "$workload" != build ] || each="$intervals builds each"
[ ${#interleave[@]} = 0 ] || each="$each, taking turns every interval"
echo "bench: $workload on $where, ${rounds} round(s) of ${configs[*]} (reversed every round), $each"
rc=0
if [ "$host" = 1 ]; then
  SORYU_BIN=$bin SORYU_PEERS=$repo/target/peers \
    run_child python3 bench/guest.py run ${interleave[@]+"${interleave[@]}"} "$out" "$workload" "$intervals" "$secs" "$rounds" "${configs[@]}" || rc=$?
  [ "$rc" = 0 ] && [ -f "$out/bench.done" ] || { echo "bench: the runs did not complete (logs: $out)" >&2; exit "$((rc ? rc : 1))"; }
else
  name=bench-$stamp
  # The host's own load beside the VM (bench/hostload.sh): time the host
  # gives to other work counts in the guest as the configuration then
  # running, so it is kept with the results and summed at the end.
  every=10
  bench/hostload.sh "$every" >"$out/hostload.log" 2>&1 &
  hostload=$!
  trap 'kill "$hostload" 2>/dev/null || true' EXIT
  SORYU_BIN=$bin SORYU_PEERS=$repo/target/peers \
    SORYU_VM_TIMEOUT=$((600 + rounds * ${#configs[@]} * intervals * per_interval)) \
    run_child vm/run.sh --name "$name" bench/guest.sh ${interleave[@]+"${interleave[@]}"} "$workload" "$intervals" "$secs" "$rounds" "${configs[@]}" || rc=$?
  kill "$hostload" 2>/dev/null || true
  wait "$hostload" 2>/dev/null || true
  awk -v every="$every" '{ split($2, b, "="); split($4, o, "=") } o[2] == "?" { u++; next }
       { s += o[2]; t += b[2]; if (o[2] > m) m = o[2]; n++ }
       END { printf "bench: the host outside the VM: %.1f CPU-s (%.1f%% of its busy time) in %d samples of %d s, at most %.1f in one; %d sample(s) with a qemu exiting not split (hostload.log)\n", s, (t > 0 ? 100 * s / t : 0), n, every, m, u }' \
    "$out/hostload.log" || true
  cp target/vm-results/"$name"/*.jsonl target/vm-results/"$name"/*.log "$out"/ 2>/dev/null || true
  [ "$rc" = 0 ] && [ -f target/vm-results/"$name"/bench.done ] ||
    { echo "bench: the runs did not complete (logs: target/vm-results/$name)" >&2; exit "$((rc ? rc : 1))"; }
fi

base=${configs[0]}
for c in "${configs[@]:1}"; do
  args=()
  for r in $(seq "$rounds"); do args+=(-a "$out/$base-r$r.jsonl" -b "$out/$c-r$r.jsonl"); done
  "$bin" compare --format markdown ${margin[@]+"${margin[@]}"} "${args[@]}" >"$out/compare-$c.md"
  echo
  echo "== A = $base, B = $c =="
  "$bin" compare ${margin[@]+"${margin[@]}"} "${args[@]}"
done
files=()
for c in "${configs[@]}"; do for r in $(seq "$rounds"); do files+=("$out/$c-r$r.jsonl"); done; done
"$bin" plot -o "$out/plot.svg" "${files[@]}"
echo
echo "bench: results in $out (compare-*.md, plot.svg)"
