#!/usr/bin/env bash
# Where a fixed job spends its time (docs/performance.md): one VM boot,
# the same job under each configuration, rounds with the order reversed
# (bench/profile-guest.py), then one table per figure: the job's time,
# where the CPUs' time went (user, system, idle), context switches and
# migrations per job (perf stat -a), BPF calls and time per job per
# callback (bpf_stats), sched_ext's events, and soryu's own counters.
#
#   bench/profile.sh [CONFIG...]      (default: eevdf soryu bpfland)
#
# Settings: SORYU_PROFILE_JOB (hackbench: `hackbench -g 4 -l 50`, the
# default; hackbench-threads: the same with --threads --pipe;
# compile: one clean `make -j` of Lua 5.4, bench/source.sh),
# SORYU_PROFILE_ROUNDS (2), SORYU_PROFILE_JOBS (2 per run), SORYU_VM_CPUS
# (2), SORYU_PROFILE_WAKER (1: the benchmark's cyclictest waker beside each
# job; 0, the default: the job alone); peers are built by bench/peers.sh.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
if [ "${1:-}" = --in-guest ]; then
  shift
  exec python3 bench/profile-guest.py "$SORYU_OUT" "$@"
fi
[ $# -gt 0 ] || set -- eevdf soryu bpfland
export SORYU_PROFILE_JOB=${SORYU_PROFILE_JOB:-hackbench}
case $SORYU_PROFILE_JOB in
  hackbench | hackbench-threads) ;;
  compile)
    # a copy inside this tree, where the guest can read it
    src=$(bench/source.sh "$repo/target/bench-src") || exit 1
    export SORYU_COMPILE_SRC=$src ;;
  *) echo "bench/profile.sh: SORYU_PROFILE_JOB=$SORYU_PROFILE_JOB is not a job; use hackbench, hackbench-threads or compile" >&2; exit 2 ;;
esac
peers=()
for c in "$@"; do case $c in eevdf | soryu) ;; soryu-base)
  # another build (bench/run.sh): absolute, as the guest runs it from another directory
  [ -x "${SORYU_BASE_BIN:-}" ] || { echo "bench/profile.sh: soryu-base needs SORYU_BASE_BIN, the path of the other build's scx_soryu" >&2; exit 2; }
  case $SORYU_BASE_BIN in /*) ;; *) SORYU_BASE_BIN=$repo/$SORYU_BASE_BIN ;; esac
  export SORYU_BASE_BIN ;;
  *) peers+=("$c") ;; esac; done
[ ${#peers[@]} -eq 0 ] || bench/peers.sh "${peers[@]}"
rounds=${SORYU_PROFILE_ROUNDS:-2} jobs=${SORYU_PROFILE_JOBS:-2}
case ${SORYU_PROFILE_WAKER:=0} in
  0 | 1) ;;
  *) echo "bench/profile.sh: SORYU_PROFILE_WAKER=$SORYU_PROFILE_WAKER is neither 0 nor 1; use 1 for the waker beside each job, 0 for the job alone" >&2; exit 2 ;;
esac
export SORYU_PROFILE_WAKER
name=profile-$SORYU_PROFILE_JOB-${SORYU_VM_CPUS:-2}cpu$([ "$SORYU_PROFILE_WAKER" = 0 ] || echo -waker)
SORYU_PEERS=$repo/target/peers vm/run.sh --name "$name" bench/profile.sh --in-guest "$rounds" "$jobs" "$@"
python3 - "${SORYU_VM_RESULTS:-target/vm-results}/$name" <<'PY'
import collections, glob, json, os, statistics, sys
d = sys.argv[1]
runs = collections.defaultdict(list)
for f in sorted(glob.glob(os.path.join(d, "profile-*-r*.json"))):
    r = json.load(open(f))
    runs[r["config"]].append(r)
cfgs = list(runs)
med = lambda xs: statistics.median(xs) if xs else float("nan")
print(f"results: {d}; {runs[cfgs[0]][0]['job']}, {runs[cfgs[0]][0]['jobs']} jobs per run, "
      f"{len(runs[cfgs[0]])} rounds; medians over rounds, per job\n")
print("| figure | " + " | ".join(cfgs) + " |")
print("|---|" + "---|" * len(cfgs))
def row(name, f, fmt="{:.0f}"):
    print(f"| {name} | " + " | ".join(fmt.format(med([f(r) for r in runs[c]])) for c in cfgs) + " |")
row("job time (s)", lambda r: statistics.mean(r["job_s"]), "{:.2f}")
# CPU time per job, in CPU-seconds, from /proc/stat over the whole run
def cpu(r, *fields):
    return sum(r["cpu_ticks"][f] for f in fields) / r["user_hz"] / r["jobs"]
row("CPU user (s)", lambda r: cpu(r, "user", "nice"), "{:.2f}")
row("CPU system (s)", lambda r: cpu(r, "system"), "{:.2f}")
row("CPU irq + softirq (s)", lambda r: cpu(r, "irq", "softirq"), "{:.2f}")
row("CPU idle + iowait (s)", lambda r: cpu(r, "idle", "iowait"), "{:.2f}")
row("context switches", lambda r: r["context_switches"] / r["jobs"])
row("CPU migrations", lambda r: r["migrations"] / r["jobs"])
waker = lambda r, k: statistics.median(w[k] for w in r["waker"]) if r.get("waker") else float("nan")
if any(r.get("waker") for rs in runs.values() for r in rs):
    row("waker p50 (us)", lambda r: waker(r, "ext_wake_p50_us"))
    row("waker p99 (us)", lambda r: waker(r, "ext_wake_p99_us"))
    row("waker over 1 ms (%)", lambda r: waker(r, "ext_wake_over_1ms_pct"), "{:.2f}")
row("BPF calls, all callbacks", lambda r: sum(v["calls"] for v in r["bpf"].values()) / r["jobs"])
row("BPF time, all callbacks (ms)", lambda r: sum(v["ns"] for v in r["bpf"].values()) / r["jobs"] / 1e6, "{:.1f}")
print()
for c in cfgs:
    progs = sorted({p for r in runs[c] for p in r["bpf"]})
    if not progs:
        continue
    print(f"{c}: per callback, per job (median over rounds)\n")
    print("| callback | calls | ns per call | ms |")
    print("|---|---|---|---|")
    for p in progs:
        calls = med([r["bpf"].get(p, {}).get("calls", 0) / r["jobs"] for r in runs[c]])
        ns = med([r["bpf"][p]["ns"] / max(r["bpf"][p]["calls"], 1) for r in runs[c] if p in r["bpf"]])
        if calls:
            print(f"| {p} | {calls:.0f} | {ns:.0f} | {calls * ns / 1e6:.1f} |")
    print()
    evs = sorted({k for r in runs[c] for k in r["events"]})
    if evs:
        print(f"{c}: sched_ext events per job: " + ", ".join(
            f"{k.removeprefix('SCX_EV_')} {med([r['events'].get(k, 0) / r['jobs'] for r in runs[c]]):.0f}" for k in evs) + "\n")
for c in ("soryu", "soryu-base"):
    if c not in runs:
        continue
    s = runs[c]
    print(f"{c}'s counters per job (its whole run, median over rounds):\n")
    keys = list(s[0]["soryu"])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    print("| " + " | ".join(f"{med([r['soryu'][k] / r['jobs'] for r in s]):.0f}" for k in keys) + " |")
PY
