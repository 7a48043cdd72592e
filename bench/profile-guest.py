#!/usr/bin/env python3
"""Guest side of bench/profile.sh: where a fixed job spends its time.

One boot; for every configuration (the kernel's default scheduler, soryu,
peers), rounds with the order reversed every round, the same fixed job
(SORYU_PROFILE_JOB: hackbench, message passing, the default; or compile,
one clean `make -j` of bench/source.sh's Lua 5.4), with the benchmark's
cyclictest waker beside each job if SORYU_PROFILE_WAKER=1, measured from
outside the scheduler:

- the job's own time (hackbench prints it; the build's wall time);
- where the CPUs' time went during the job: user, system, irq and
  softirq, idle (/proc/stat), which tells scheduling cost (system time)
  from lost work (idle time while the job had work to run);
- context switches and CPU migrations of the whole machine during the job
  (`perf stat -a`, software events, which the emulator counts like a real
  CPU);
- per BPF program, the calls and run time during the job
  (kernel.bpf_stats_enabled=1, `bpftool prog show`): the same figure for
  soryu and for a peer;
- the waker's wakeup latency (p50, p99, the share over 1 ms), when it ran;
- sched_ext's own event counters (root/events), and for soryu its counters
  (preemption kicks, dispatches, ...) from its --report-json.

Writes OUTDIR/profile-<config>-r<round>.json and OUTDIR/profile.done.
    profile-guest.py OUTDIR ROUNDS JOBS CONFIG...
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from guest import SYSFS, boot_config, scx_state as state  # noqa: E402  (bench/guest.py)
from workloads import COMPILE_MAKE, Failed, compile_tree, cyclictest_cmd, latency_figures  # noqa: E402  (bench/workloads.py)

JOB_KIND = os.environ.get("SORYU_PROFILE_JOB", "hackbench")
HACKBENCH = ["hackbench", "-g", "4", "-l", "50"]
# the same job with threads over pipes (bench/guest.py's hackbench-threads)
HACKBENCH_THREADS = HACKBENCH + ["--threads", "--pipe"]
# A clean build each job: the tree is unpacked once, `make clean` is not timed.
BUILD = COMPILE_MAKE
JOB = {"compile": BUILD, "hackbench-threads": HACKBENCH_THREADS}.get(JOB_KIND, HACKBENCH)
# SORYU_PROFILE_WAKER=1: the benchmark's cyclictest waker (bench/workloads.py)
# runs beside every job, as in bench/run.sh's build and latency workloads
WAKER = os.environ.get("SORYU_PROFILE_WAKER", "0") == "1"
CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq")


def cpu_ticks():
    """The whole machine's /proc/stat time by field, in USER_HZ ticks."""
    with open("/proc/stat") as f:
        words = f.readline().split()
    return dict(zip(CPU_FIELDS, map(int, words[1:1 + len(CPU_FIELDS)])))


def events():
    out = {}
    try:
        for line in open(f"{SYSFS}/root/events"):
            k, _, v = line.partition(" ")
            out[k.strip()] = int(v.strip() or 0)
    except (OSError, ValueError):
        pass
    return out


def bpf_progs():
    """name -> (run_cnt, run_time_ns) of every struct_ops program loaded."""
    p = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True, check=True)
    out = {}
    for prog in json.loads(p.stdout):
        if prog.get("type") == "struct_ops":
            name = prog.get("name", "?")
            cnt, ns = out.get(name, (0, 0))
            out[name] = (cnt + prog.get("run_cnt", 0), ns + prog.get("run_time_ns", 0))
    return out


def start(config, outdir, rnd):
    if config == "eevdf":
        return None
    if config in ("soryu", "soryu-base"):
        # soryu-base: another build, the binary SORYU_BASE_BIN names (bench/run.sh)
        binary = os.environ["SORYU_BASE_BIN" if config == "soryu-base" else "SORYU_BIN"]
        cmd = [binary, "--kconfig", os.environ["SORYU_KCONFIG"], "--report-sec", "1",
               "--report-json", f"{outdir}/profile-{config}-r{rnd}.soryu.jsonl"]
    else:
        # a peer reads the kernel's config from /boot (bench/guest.py)
        boot_config()
        cmd = [os.path.join(os.environ["SORYU_PEERS"], "bin", "scx_" + config)]
    log = open(f"{outdir}/profile-{config}-r{rnd}.log", "w")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(600):
        if state() == "enabled" or p.poll() is not None:
            break
        time.sleep(0.1)
    if state() != "enabled":
        sys.exit(f"profile: {config} did not enable sched_ext (see {log.name})")
    return p


def stop(p):
    if p is None:
        return
    p.send_signal(signal.SIGINT)
    p.wait(60)
    for _ in range(300):
        if state() == "disabled":
            return
        time.sleep(0.1)
    sys.exit("profile: sched_ext still enabled after the scheduler exited")


def perf_stat(path):
    """context switches and migrations from `perf stat -x,` output."""
    got = {}
    for line in open(path):
        f = line.strip().split(",")
        if len(f) >= 3 and f[2] in ("context-switches", "cpu-migrations"):
            got[f[2]] = int(float(f[0]))
    return got


def soryu_counters(path):
    """soryu's counters summed over its whole run (the jobs, and 2 s of
    settling before them)."""
    keys = ("enqueue", "direct", "dispatch", "dispatch_empty", "dispatch_keep", "probes", "preempt_attempts",
            "preempt_idle", "preempt_kicks", "preempt_local", "sync_local", "cache_hot", "preempt_none", "preempt_deferred", "preempt_scans", "preempt_fallbacks", "pinned", "wakeups", "stale_kicks", "starve_serve")
    tot = dict.fromkeys(keys, 0)
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return None
    for line in lines:
        r = json.loads(line)
        if r.get("type") == "interval":
            for k in keys:
                tot[k] += r.get(k) or 0
    return tot


def run_job(config, path, tree, waker_path):
    """One job under `perf stat -a`, with the waker beside it if
    waker_path is set; its time in seconds."""
    if tree:
        subprocess.run(["make", "-s", "clean"], cwd=tree, capture_output=True, check=True)
    waker = subprocess.Popen(cyclictest_cmd(0, waker_path), stdout=subprocess.DEVNULL) if waker_path else None
    t0 = time.monotonic()
    r = subprocess.run(["perf", "stat", "-a", "-x,", "-o", path, "-e", "context-switches,cpu-migrations", "--"]
                       + JOB, capture_output=True, text=True, cwd=tree)
    wall = time.monotonic() - t0
    if waker:
        waker.send_signal(signal.SIGINT)
        if waker.wait(30) != 0:
            sys.exit(f"profile: {config}: the cyclictest waker exited with status {waker.returncode}")
    if r.returncode != 0:
        sys.exit(f"profile: {config}: {JOB[0]} failed: {(r.stderr or r.stdout).strip()[-200:]}")
    if tree:
        return wall
    times = [float(l.split()[1]) for l in r.stdout.splitlines() if l.startswith("Time:")]
    if not times:
        sys.exit(f"profile: {config}: hackbench printed no time")
    return times[0]


def one(config, rnd, outdir, jobs, tree):
    p = start(config, outdir, rnd)
    time.sleep(2)  # settle
    ev0, bpf0, cpu0 = events(), bpf_progs(), cpu_ticks()
    times, stat, waker = [], {"context-switches": 0, "cpu-migrations": 0}, []
    t0 = time.monotonic()
    for j in range(jobs):
        path = f"{outdir}/perf-{config}-r{rnd}-{j}.txt"
        waker_path = f"{outdir}/cyclictest-{config}-r{rnd}-{j}.json" if WAKER else None
        times.append(run_job(config, path, tree, waker_path))
        for k, v in perf_stat(path).items():
            stat[k] += v
        if waker_path:
            try:
                # one bucket: the profile keeps the figures, not the histogram
                fig = latency_figures(waker_path, [0])
                fig.pop("hist")
                waker.append(fig)
            except Failed as e:
                sys.exit(f"profile: {config}: {e}")
    wall = time.monotonic() - t0
    ev1, bpf1, cpu1 = events(), bpf_progs(), cpu_ticks()
    stop(p)
    res = {
        "config": config, "round": rnd, "job": " ".join(JOB), "jobs": jobs, "job_s": times, "wall_s": wall,
        "cpu_ticks": {k: cpu1[k] - cpu0[k] for k in CPU_FIELDS}, "user_hz": os.sysconf("SC_CLK_TCK"),
        "context_switches": stat["context-switches"], "migrations": stat["cpu-migrations"],
        "bpf": {k: {"calls": c - bpf0.get(k, (0, 0))[0], "ns": n - bpf0.get(k, (0, 0))[1]}
                for k, (c, n) in bpf1.items()},
        "events": {k: v - ev0.get(k, 0) for k, v in ev1.items() if v - ev0.get(k, 0)},
        "waker": waker,
    }
    if config in ("soryu", "soryu-base"):
        res["soryu"] = soryu_counters(f"{outdir}/profile-{config}-r{rnd}.soryu.jsonl")
    json.dump(res, open(f"{outdir}/profile-{config}-r{rnd}.json", "w"), indent=1)
    print(f"round {rnd}: {config}: {JOB[0]} {sum(times) / len(times):.2f} s a job, "
          f"{stat['context-switches']} switches, {stat['cpu-migrations']} migrations", flush=True)


def main():
    outdir, rounds, jobs, configs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    subprocess.run(["sysctl", "-qw", "kernel.bpf_stats_enabled=1"], check=True)
    # the guest's own /tmp: the results directory is shared with the host
    try:
        tree = compile_tree("/tmp/profile") if JOB_KIND == "compile" else None
    except Failed as e:
        sys.exit(f"profile: {e}")
    if tree:
        # One untimed build first: the first build of a boot also reads the
        # compiler and the sources from disk (the first profile's first
        # build took 83 s, the same configuration's second 69 s).
        subprocess.run(BUILD, cwd=tree, capture_output=True, check=True)
    for rnd in range(1, rounds + 1):
        for config in (configs if rnd % 2 else configs[::-1]):
            one(config, rnd, outdir, jobs, tree)
    open(f"{outdir}/profile.done", "w").close()


if __name__ == "__main__":
    main()
