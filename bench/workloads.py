#!/usr/bin/env python3
"""What each workload of the benchmark runs and how its output becomes
figures: the load, the jobs timed per interval, the cyclictest probe and
its histogram. bench/guest.py drives the runs; bench/profile-guest.py
builds the compile's tree with compile_tree() too.
"""
import bisect
import glob
import json
import os
import shutil
import subprocess

# workload -> (what it is, the tools it needs besides cyclictest)
WORKLOADS = {
    "saturate": ("a CPU hog per CPU; the figure is the probe's latency", ["stress-ng"]),
    "forkexec": ("stress-ng fork and exec; + their ops/s", ["stress-ng", "setpriv"]),
    "hackbench": ("hackbench message passing; + mean job time", ["hackbench"]),
    "hackbench-threads": ("hackbench with threads over pipes; + mean job time", ["hackbench"]),
    "messaging": ("perf bench sched messaging; + mean job time", ["perf"]),
    "pipe": ("perf bench sched pipe, a ping-pong; + mean round trip", ["perf"]),
    "compile": ("make -j of a real C project (Lua 5.4, bench/source.sh), looped; + mean build time",
                ["make", "cc"]),
    "build": ("the same project, one clean build per interval; + its build time", ["make", "cc"]),
    "workerpool": ("message threads waking worker threads (bench/workerpool.c); + the workers' wakeup "
                   "p50/p99, request p99, requests/s", ["cc"]),
}
# Workloads whose interval is one job, as long as that job takes, not -s.
ONE_JOB = {"build"}
PACKAGE = {"make": "make", "cc": "gcc", "setpriv": "util-linux", "cyclictest": "rt-tests", "hackbench": "rt-tests", "stress-ng": "stress-ng", "perf": "linux-perf"}
# Job sizes of the looped workloads: each job is timed by the tool itself.
HACKBENCH = ["hackbench", "-g", "4", "-l", "100"]
HACKBENCH_THREADS = HACKBENCH + ["--threads", "--pipe"]
MESSAGING = ["perf", "bench", "--format", "simple", "sched", "messaging", "-g", "4", "-l", "100"]
# The worker pool's shape (bench/workerpool.c's -m, -w, -l), if not its defaults.
POOL_ARGS = os.environ.get("SORYU_POOL_ARGS", "").split()
PIPE_LOOPS = 20000
PIPE = ["perf", "bench", "--format", "simple", "sched", "pipe", "-l", str(PIPE_LOOPS)]
NCPU = os.cpu_count()
# The compile: bench/source.sh's tarball, built with make -j(2 x CPUs), the
# usual setting for a build that also waits on I/O.
COMPILE_SRC_GLOB = "/var/cache/scx_soryu/src/lua5.4_*.orig.tar.gz"
COMPILE_JOBS = 2 * NCPU
# One build of the compile's tree (bench/profile-guest.py times it alone).
COMPILE_MAKE = ["make", "-s", f"-j{COMPILE_JOBS}", "linux"]


class Failed(Exception):
    """The benchmark went wrong after it started."""


def compile_source():
    """The tarball the compile workload builds, or None."""
    path = os.environ.get("SORYU_COMPILE_SRC")
    if path:
        return path if os.path.isfile(path) else None
    found = sorted(glob.glob(COMPILE_SRC_GLOB))
    return found[-1] if found else None


def compile_tree(workdir):
    """A fresh copy of the source to build in, on the local disk (in the VM,
    /tmp is the guest's own, not the shared results directory); its path."""
    tree = os.path.join(workdir, "compile")
    shutil.rmtree(tree, ignore_errors=True)
    os.makedirs(tree)
    src = compile_source()
    p = subprocess.run(["tar", "-xf", src, "-C", tree, "--strip-components=1"], capture_output=True, text=True)
    if p.returncode != 0:
        why = (p.stderr.strip().splitlines() or [f"status {p.returncode}"])[-1]
        raise Failed(f"cannot unpack the compile's source {src}: {why} (run bench/source.sh again)")
    return tree


def timed_build(workdir):
    """One clean build of the tree, timed by bash ("Time: <wall s>")."""
    return (f"cd {workdir} && TIMEFORMAT='Time: %R' && make -s clean >/dev/null 2>&1; "
            f"{{ time {' '.join(COMPILE_MAKE)} >/dev/null 2>&1; }} 2>&1")


def background_cmd(workload, outdir, workdir):
    """The load that runs for the whole run, beside the probes."""
    if workload == "saturate":
        return ["stress-ng", "--cpu", str(NCPU), "--timeout", "0", "--temp-path", outdir]
    if workload == "compile":
        # Builds back to back, each a clean tree then make -j timed by bash
        # ("Time: <wall s>"). A build takes longer than an interval in the
        # VM, so the build runs across intervals, as a developer's does.
        return ["bash", "-c", f"while :; do ( {timed_build(workdir)} ) || exit 1; done"]
    return None


def workerpool_build(dirpath):
    """bench/workerpool.c compiled into dirpath (made if need be); dirpath."""
    os.makedirs(dirpath, exist_ok=True)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workerpool.c")
    p = subprocess.run(["cc", "-O2", "-pthread", "-o", os.path.join(dirpath, "workerpool"), src],
                       capture_output=True, text=True)
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["no output"])[-1]
        raise Failed(f"cannot build {src} (cc exited with status {p.returncode}): {last}")
    return dirpath


def times_in(text):
    """The "Time: <s>" figures of hackbench or of timed_build(), in order."""
    return [float(line.split()[1]) for line in text.splitlines() if line.startswith("Time:")]


def build_times(path):
    """The wall times of the builds the compile loop finished so far."""
    try:
        with open(path) as f:
            return times_in(f.read())
    except OSError:
        return []


def loop(job, secs):
    """A shell loop of fixed jobs for one interval, each timed by its tool."""
    words = " ".join(job)
    return ["bash", "-c", f"end=$((SECONDS + {secs})); while [ $SECONDS -lt $end ]; do {words} || exit 1; done"]


def throughput_cmd(workload, secs, workdir=None):
    """The workload's job for one interval (None: the background is the load)."""
    if workload == "build":
        # the interval lasts as long as this build (ONE_JOB)
        return ["bash", "-c", timed_build(workdir)]
    if workload == "forkexec":
        # stress-ng skips its exec stressor when run as root
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
        return nobody + ["stress-ng", "--fork", str(NCPU), "--exec", str(NCPU), "--timeout", f"{secs}s",
                         "--temp-path", "/tmp", "--metrics-brief"]
    if workload == "hackbench":
        return loop(HACKBENCH, secs)
    if workload == "hackbench-threads":
        return loop(HACKBENCH_THREADS, secs)
    if workload == "messaging":
        return loop(MESSAGING, secs)
    if workload == "pipe":
        return loop(PIPE, secs)
    if workload == "workerpool":
        return [os.path.join(workdir, "workerpool"), "-t", str(secs)] + POOL_ARGS
    return None


def mean(xs):
    return sum(xs) / len(xs) if xs else None


def numbers(out):
    """The lines of `perf bench --format simple` output that are one number."""
    vals = []
    for line in out.splitlines():
        try:
            vals.append(float(line.strip()))
        except ValueError:
            pass
    return vals


def parse_throughput(workload, out):
    if workload == "forkexec":
        ops = {}
        for line in out.splitlines():
            f = line.split()
            # "stress-ng: metrc: [pid] fork  1234  5.00  ...  ops/s(real) ops/s(usr+sys)"
            if len(f) >= 9 and f[1] == "metrc:" and f[3] in ("fork", "exec"):
                ops[f[3]] = float(f[8])
        return {f"ext_{k}_ops_per_s": v for k, v in ops.items()}
    if workload in ("hackbench", "hackbench-threads"):
        m = mean(times_in(out))
        return {"ext_hackbench_s": m} if m is not None else {}
    if workload == "build":
        t = times_in(out)
        return {"ext_compile_s": t[0]} if len(t) == 1 else {}
    if workload == "messaging":
        m = mean(numbers(out))
        return {"ext_messaging_s": m} if m is not None else {}
    if workload == "pipe":
        m = mean(numbers(out))  # seconds per job of PIPE_LOOPS round trips
        return {"ext_pipe_us_per_op": m * 1e6 / PIPE_LOOPS} if m is not None else {}
    if workload == "workerpool":
        try:
            r = json.loads(out.strip().splitlines()[-1])
        except (IndexError, ValueError):
            return {}
        if not r.get("requests"):
            return {}
        return {"ext_pool_wake_p50_us": r["wake_p50_us"], "ext_pool_wake_p99_us": r["wake_p99_us"],
                "ext_pool_request_p99_us": r["request_p99_us"], "ext_pool_requests_per_s": r["requests_per_s"]}
    return {}


def cyclictest_cmd(secs, path):
    """The probe for secs seconds; 0: until SIGINT, after which it still
    writes its JSON (a one-job interval stops it when the job ends)."""
    return ["cyclictest", "--policy=other", "-t", "1", "-i", "1000", "-D", str(secs),
            "-h", "100000", "-q", "-m", f"--json={path}"]


def latency_figures(path, bounds):
    """p50/p99/max and the share above 1 ms of one cyclictest run (us),
    null when it measured nothing."""
    try:
        with open(path) as f:
            t = json.load(f)["thread"]["0"]
    except (OSError, ValueError, KeyError) as e:
        raise Failed(f"cyclictest left no results to read in {path} ({e}): "
                     "stopped before it measured, or a cyclictest without --json")
    hist = sorted((int(k), v) for k, v in t["histogram"].items())
    n = sum(v for _, v in hist)
    over = t.get("num_overflows", 0) if isinstance(t.get("num_overflows"), int) else 0
    total = n + over
    if total == 0:
        return {"ext_wake_p50_us": None, "ext_wake_p99_us": None, "ext_wake_max_us": None,
                "ext_wake_over_1ms_pct": None, "hist": {"lat_interactive": [0] * len(bounds)}}

    def q(p):
        need, seen = p * total, 0
        for us, c in hist:
            seen += c
            if seen >= need:
                return us
        return t["max"]
    above = sum(c for us, c in hist if us >= 1000) + over
    buckets = [0] * len(bounds)
    for us, c in hist:
        buckets[bisect.bisect_right(bounds, us * 1000) - 1] += c
    buckets[-1] += over
    return {
        "ext_wake_p50_us": q(0.5),
        "ext_wake_p99_us": q(0.99),
        "ext_wake_max_us": t["max"],
        "ext_wake_over_1ms_pct": 100.0 * above / total,
        # cyclictest's wakeups filed in soryu's buckets, so `scx_soryu plot`
        # draws every configuration's distribution the same way
        "hist": {"lat_interactive": buckets},
    }
