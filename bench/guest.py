#!/usr/bin/env python3
"""Guest side of bench/run.sh: one workload under several scheduler
configurations, back to back in one boot, for several rounds, reversing the
order of the configurations every round.

    guest.py OUTDIR WORKLOAD INTERVALS INTERVAL_S ROUNDS CONFIG...

Every run is measured from outside the scheduler, with tools nobody here
wrote, so that the kernel's default scheduler and peer schedulers are
measured exactly like soryu:

- wakeup latency of an interactive probe: cyclictest (rt-tests) with a
  SCHED_OTHER measurement thread waking every millisecond, its histogram
  read after each interval;
- throughput: stress-ng's bogo ops per second (cpu, fork), or the mean
  time of fixed hackbench (rt-tests) runs.

Each run becomes OUTDIR/<config>-r<round>.jsonl in the shape of soryu's
--report-json (a header, then one record per interval, figures named ext_*)
so that `scx_soryu compare` pairs them. soryu runs also keep soryu's own
report in OUTDIR/<config>-r<round>.soryu.jsonl.
"""
import bisect
import json
import os
import signal
import subprocess
import sys
import time

SORYU = os.environ["SORYU_BIN"]
KCONFIG = os.environ["SORYU_KCONFIG"]
PEERS = os.environ.get("SORYU_PEERS", "")

# config name -> (scheduler, command line or None for the kernel's default)
SORYU_CONFIGS = {
    "soryu": [],
    "soryu-clear-bitmap": ["--clear-bitmap"],
    "soryu-boost-on-wake": ["--boost-on-wake"],
    "soryu-vtime": ["--vtime"],
}
NCPU = os.cpu_count()
# soryu's histogram layout, from soryu itself (policy.h is its one definition)
BOUNDS = json.loads(subprocess.run([SORYU, "--lat-buckets"], check=True, capture_output=True, text=True).stdout)


def scheduler_cmd(config, out_prefix):
    if config == "eevdf":
        return "eevdf", None, {}
    if config in SORYU_CONFIGS:
        flags = SORYU_CONFIGS[config]
        knobs = {k: f"--{k.replace('_', '-')}" in flags for k in ("clear_bitmap", "boost_on_wake", "vtime")}
        cmd = [SORYU, "--kconfig", KCONFIG, "--report-sec", "5", "--report-json", out_prefix + ".soryu.jsonl"] + flags
        return "scx_soryu", cmd, knobs
    peer = os.path.join(PEERS, "bin", "scx_" + config)
    if os.access(peer, os.X_OK):
        boot_config()
        return "scx_" + config, [peer, "--kconfig", KCONFIG], {}
    sys.exit(f"unknown configuration '{config}' (eevdf, {', '.join(SORYU_CONFIGS)}, or a peer built by bench/peers.sh)")


def boot_config():
    """Not every peer honours --kconfig (scx_lavd 1.1.4 still looks for the
    system's config): give the guest a /boot/config-<release>, on a tmpfs
    over the read-only /boot it shares with the host."""
    path = f"/boot/config-{os.uname().release}"
    if os.path.exists(path):
        return
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/boot"], check=True)
    subprocess.run(["cp", KCONFIG, path], check=True)


def scx_state():
    try:
        return open("/sys/kernel/sched_ext/state").read().strip()
    except OSError:
        return "?"


def wait_state(want, secs=60):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if scx_state() == want:
            return True
        time.sleep(0.25)
    return False


def start_scheduler(cmd, log):
    if cmd is None:
        return None
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    if not wait_state("enabled"):
        p.kill()
        sys.exit(f"{cmd[0]} did not enable sched_ext within 60 s (see its log)")
    return p


def stop_scheduler(p):
    if p is None:
        return
    p.send_signal(signal.SIGINT)
    try:
        rc = p.wait(60)
    except subprocess.TimeoutExpired:
        p.kill()
        sys.exit("scheduler did not stop within 60 s of SIGINT")
    if not wait_state("disabled"):
        sys.exit("sched_ext still enabled after the scheduler exited")
    if rc != 0:
        sys.exit(f"scheduler exited with status {rc}")


def background(workload, outdir):
    """The load that runs for the whole run, beside the probes."""
    tmp = ["--temp-path", outdir]
    if workload == "saturate":
        return subprocess.Popen(["stress-ng", "--cpu", str(NCPU), "--timeout", "0"] + tmp,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return None


def throughput(workload, secs, outdir):
    """Runs the workload's fixed job for one interval; returns its figures."""
    tmp = ["--temp-path", outdir, "--metrics-brief"]
    if workload == "saturate":
        return {}, None  # the background hogs are the load; latency is the figure
    if workload == "forkexec":
        cmd = ["stress-ng", "--fork", str(NCPU), "--exec", str(NCPU), "--timeout", f"{secs}s"] + tmp
        return None, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if workload == "hackbench":
        # one shell loop of fixed hackbench jobs, timed by hackbench itself
        loop = f"end=$((SECONDS + {secs})); while [ $SECONDS -lt $end ]; do hackbench -g 4 -l 100 || exit 1; done"
        return None, subprocess.Popen(["bash", "-c", loop], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.exit(f"unknown workload '{workload}' (saturate, forkexec, hackbench)")


def parse_throughput(workload, out):
    if workload == "forkexec":
        ops = {}
        for line in out.splitlines():
            f = line.split()
            # "stress-ng: metrc: [pid] fork  1234  5.00  ...  ops/s(real) ops/s(usr+sys)"
            if len(f) >= 9 and f[1] == "metrc:" and f[3] in ("fork", "exec"):
                ops[f[3]] = float(f[8])
        return {f"ext_{k}_ops_per_s": v for k, v in ops.items()}
    times = [float(l.split()[1]) for l in out.splitlines() if l.startswith("Time:")]
    return {"ext_hackbench_s": sum(times) / len(times)} if times else {}


def cyclictest(secs, outdir):
    path = os.path.join(outdir, "cyclictest.json")
    cmd = ["cyclictest", "--policy=other", "-t", "1", "-i", "1000", "-D", str(secs),
           "-h", "100000", "-q", "-m", f"--json={path}"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), path


def latency_figures(path):
    """p50/p99/max and the share above 1 ms of one cyclictest run (us)."""
    t = json.load(open(path))["thread"]["0"]
    hist = sorted((int(k), v) for k, v in t["histogram"].items())
    n = sum(v for _, v in hist)
    over = t.get("num_overflows", 0) if isinstance(t.get("num_overflows"), int) else 0

    def q(p):
        need, seen = p * (n + over), 0
        for us, c in hist:
            seen += c
            if seen >= need:
                return us
        return t["max"]
    above = sum(c for us, c in hist if us >= 1000) + over
    buckets = [0] * len(BOUNDS)
    for us, c in hist:
        buckets[bisect.bisect_right(BOUNDS, us * 1000) - 1] += c
    buckets[-1] += over
    return {
        "ext_wake_p50_us": q(0.5),
        "ext_wake_p99_us": q(0.99),
        "ext_wake_max_us": t["max"],
        "ext_wake_over_1ms_pct": 100.0 * above / max(1, n + over),
        # cyclictest's wakeups filed in soryu's buckets, so `scx_soryu plot`
        # draws every configuration's distribution the same way
        "hist": {"lat_interactive": buckets},
    }


def one_run(config, rnd, order, workload, intervals, secs, outdir):
    prefix = os.path.join(outdir, f"{config}-r{rnd}")
    sched, cmd, knobs = scheduler_cmd(config, prefix)
    with open(prefix + ".log", "w") as log:
        p = start_scheduler(cmd, log)
        bg = background(workload, outdir)
        with open(prefix + ".jsonl", "w") as out:
            header = {"type": "header", "scheduler": sched, "config": config, "knobs": knobs,
                      "kernel": os.uname().release, "workload": workload, "interval_s": secs,
                      "round": rnd, "order": order, "lat_bucket_lower_ns": BOUNDS,
                      "source": "bench/guest.py: cyclictest (hist.lat_interactive), stress-ng, hackbench"}
            out.write(json.dumps(header) + "\n")
            for i in range(intervals):
                if p is not None and p.poll() is not None:
                    sys.exit(f"{config}: the scheduler exited during the run (status {p.returncode})")
                figures, job = throughput(workload, secs, outdir)
                ct, ctpath = cyclictest(secs, outdir)
                ct.wait()
                rec = {"type": "interval", "index": i}
                rec.update(latency_figures(ctpath))
                if job is not None:
                    text = job.communicate()[0]
                    rec.update(parse_throughput(workload, text))
                out.write(json.dumps(rec) + "\n")
                out.flush()
        if bg is not None:
            bg.terminate()
            bg.wait()
        stop_scheduler(p)
    print(f"round {rnd}: {config} done", flush=True)


def main():
    outdir, workload = sys.argv[1], sys.argv[2]
    intervals, secs, rounds = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    configs = sys.argv[6:]
    for rnd in range(1, rounds + 1):
        order = configs if rnd % 2 == 1 else configs[::-1]
        for config in order:
            one_run(config, rnd, order, workload, intervals, secs, outdir)
    open(os.path.join(outdir, "bench.done"), "w").close()


if __name__ == "__main__":
    main()
