#!/usr/bin/env python3
"""The benchmark of bench/run.sh: one workload under several scheduler
configurations, back to back, for several rounds, reversing the order of the
configurations every round. The same code runs in the VM (bench/guest.sh,
through vm/run.sh) and on this machine (bench/run.sh --host).

    guest.py check WORKLOAD CONFIG...       are these names known? (exit 2)
    guest.py preflight WORKLOAD CONFIG...   can this machine run it? (exit 1)
    guest.py run [--vm] [--interleave] OUTDIR WORKLOAD INTERVALS INTERVAL_S ROUNDS CONFIG...

Every run is measured from outside the scheduler, with tools nobody here
wrote, so that the kernel's default scheduler and peer schedulers are
measured exactly like soryu:

- wakeup latency of an interactive probe: cyclictest (rt-tests) with a
  SCHED_OTHER measurement thread waking every millisecond, its histogram
  read after each interval;
- throughput: stress-ng's bogo ops per second (fork, exec), the mean time
  of fixed hackbench (rt-tests) or `perf bench sched messaging` jobs, the
  mean round trip of `perf bench sched pipe` (Debian's linux-perf), or the
  wall time of a build (bash's `time`). What each workload runs and how
  its output is read is bench/workloads.py.

Each run becomes OUTDIR/<config>-r<round>.jsonl in the shape of soryu's
--report-json (src/record.rs: a header, then one interval record per
interval, figures named ext_*) so that `scx_soryu compare` pairs them.
soryu runs also keep soryu's own report in OUTDIR/<config>-r<round>.soryu.jsonl.

The guard, the same in both places: `preflight` refuses, with one line and
nothing started, a kernel without sched_ext, a caller who is not root,
another sched_ext scheduler already enabled, or a missing tool; `run` does
the same first. Every process a run starts (scheduler, load, probe) is
tracked, in a process group of its own; on the end of the run, a failure,
SIGINT (Ctrl-C), SIGTERM or SIGHUP the load is stopped, the scheduler is
sent SIGINT (it detaches) and the kernel must report sched_ext disabled,
which the last line says. A scheduler whose driver dies unannounced gets
SIGINT from the kernel (PR_SET_PDEATHSIG).

Environment: SORYU_BIN (the soryu binary), SORYU_KCONFIG (passed as
--kconfig when set: the VM's kernel has no /boot/config), SORYU_PEERS
(where bench/peers.sh installed peers), SORYU_SCX_SYSFS (tests only: read
the sched_ext state there instead of /sys/kernel/sched_ext).
"""
import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import (COMPILE_SRC_GLOB, ONE_JOB, PACKAGE, PIPE, WORKLOADS, Failed,  # noqa: E402
                       background_cmd, build_times, compile_source, compile_tree, cyclictest_cmd,
                       latency_figures, mean, parse_throughput, throughput_cmd, workerpool_build)

SYSFS = os.environ.get("SORYU_SCX_SYSFS", "/sys/kernel/sched_ext")
# bench/run.sh's default build (SORYU_BIN names another)
DEFAULT_BIN = "target/release/scx_soryu"

# config name -> soryu's flags
SORYU_CONFIGS = {
    "soryu": [],
    "soryu-clear-bitmap": ["--clear-bitmap"],
    "soryu-boost-on-wake": ["--boost-on-wake"],
    "soryu-vtime": ["--vtime"],
    # another build, default flags: the binary SORYU_BASE_BIN names
    "soryu-base": [],
}
# soryu-<name>-<N>: one numeric knob at N, every other flag at its default,
# for example soryu-slice-4000, soryu-starve-1000 (starving levels served a
# tenth as often: what an active starvation probe costs), soryu-gran-0
# (preemption kicks sent at once). The daemon checks the value.
SORYU_NUMERIC = {"slice": "--slice-us", "starve": "--starve-ms", "gran": "--wakeup-gran-us"}
SORYU_NAMES = ", ".join(list(SORYU_CONFIGS) + [f"soryu-{k}-N ({f} N)" for k, f in SORYU_NUMERIC.items()])


def soryu_flags(config):
    """soryu's flags for a configuration name, or None if it names none."""
    if config in SORYU_CONFIGS:
        return SORYU_CONFIGS[config]
    m = re.fullmatch(r"soryu-([a-z]+)-(0|[1-9][0-9]{0,8})", config)
    if not m or m[1] not in SORYU_NUMERIC:
        return None
    return [SORYU_NUMERIC[m[1]], str(int(m[2]))]


class Refused(Exception):
    """This machine cannot run the benchmark; nothing was started."""


class Interrupted(Exception):
    pass


def say(msg):
    print(f"bench: {msg}", flush=True)


# ---------------------------------------------------------------------------
# Names and the machine


def check_names(workload, configs):
    """None, or why these are not a workload and configurations."""
    if workload not in WORKLOADS:
        return f"unknown workload '{workload}' (choose one of {', '.join(WORKLOADS)})"
    for c in configs:
        if c.startswith("soryu") and soryu_flags(c) is None:
            return f"unknown soryu configuration '{c}' (choose among {SORYU_NAMES})"
        if not c or not all(ch.isdigit() or "a" <= ch <= "z" or ch in "-_" for ch in c):
            return f"bad configuration name '{c}' (eevdf, {SORYU_NAMES}, or a peer: bpfland, lavd, ...)"
    if "soryu-base" in configs and not os.access(os.environ.get("SORYU_BASE_BIN", ""), os.X_OK):
        return "soryu-base needs SORYU_BASE_BIN, the path of the other build's scx_soryu"
    dup = sorted({c for c in configs if configs.count(c) > 1})
    if dup:
        return f"configuration named twice: {', '.join(dup)}"
    return None


def check_flags(configs, binary):
    """None, or why scx_soryu (@binary) would refuse a configuration's
    flags: asked before anything boots or runs (--check-flags loads nothing)."""
    for c in configs:
        flags = soryu_flags(c)
        if not flags or not os.access(binary, os.X_OK):
            continue
        r = subprocess.run([binary, *flags, "--check-flags"], capture_output=True, text=True)
        if r.returncode != 0:
            why = (r.stderr.strip().splitlines() or [f"status {r.returncode}"])[-1]
            return f"{c}: {why.removeprefix('scx_soryu: ')}"
    return None


def read(name):
    try:
        with open(os.path.join(SYSFS, name)) as f:
            return f.read().strip()
    except OSError:
        return ""


def scx_state():
    return read("state") or "?"


def scx_ops():
    return read("root/ops")


def preflight(workload):
    """Refused, with one line, when this machine cannot run the benchmark."""
    if not os.path.isdir(SYSFS):
        raise Refused(f"this kernel ({os.uname().release}) has no sched_ext ({SYSFS} is missing): "
                      "boot one built with CONFIG_SCHED_CLASS_EXT=y (Linux 6.12 or later), "
                      "or run the benchmark in the VM (bench/run.sh without --host)")
    if os.geteuid() != 0:
        raise Refused("run as root: the benchmark loads sched_ext schedulers (sudo bench/run.sh --host ...)")
    state = scx_state()
    if state != "disabled":
        raise Refused(f"another sched_ext scheduler is {state} ({scx_ops() or 'name unknown'}): "
                      "stop it first (e.g. systemctl stop scx scx_soryu); the benchmark loads each configuration itself")
    for tool in ["cyclictest"] + WORKLOADS[workload][1]:
        if shutil.which(tool) is None:
            raise Refused(f"{tool} not found: install {PACKAGE[tool]} (workload {workload} needs it)")
    if workload in ("compile", "build") and compile_source() is None:
        raise Refused(f"no source to compile ({os.environ.get('SORYU_COMPILE_SRC') or COMPILE_SRC_GLOB}): "
                      "run bench/source.sh (scripts/install-deps.sh does)")
    if "perf" in WORKLOADS[workload][1]:
        # Some distributions' perf is a wrapper that refuses to run under a
        # kernel it was not built for; `perf bench` itself works under any.
        try:
            p = subprocess.run(PIPE[:-1] + ["1"], capture_output=True, text=True, timeout=30)
            why = None if p.returncode == 0 else (p.stderr or p.stdout).strip().splitlines()[-1:]
        except subprocess.TimeoutExpired:
            why = ["timed out"]
        if why is not None:
            raise Refused(f"'perf bench' does not run here ({' '.join(why) or 'status ' + str(p.returncode)}): "
                          f"install {PACKAGE['perf']} for this kernel")


# ---------------------------------------------------------------------------
# The guard: every process a run starts, and the way back


_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1
STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def spawn(cmd, deathsig, register, **kw):
    """Popen in a process group of its own, `register`ed before a stop
    signal can interrupt (they are blocked meanwhile), with `deathsig` sent
    to it if the driver dies first."""
    def child():
        os.setpgid(0, 0)
        _libc.prctl(PR_SET_PDEATHSIG, int(deathsig), 0, 0, 0)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        p = subprocess.Popen(cmd, preexec_fn=child, stdin=subprocess.DEVNULL, **kw)
        register(p)
        return p
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def wait_for(cond, secs, poll=0.1):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(poll)
    return cond()


class Guard:
    """The processes of the running benchmark, each in a process group of
    its own (so a terminal's Ctrl-C reaches only the driver, which then
    stops them in order), and the one scheduler it loaded."""

    def __init__(self):
        self.loads = []
        self.sched = None
        self.sched_name = None
        self._workdir = None

    def workdir(self):
        """A scratch directory of this benchmark, removed by cleanup()."""
        if self._workdir is None:
            self._workdir = tempfile.mkdtemp(prefix="soryu-bench-")
        return self._workdir

    def load(self, cmd, **kw):
        return spawn(cmd, signal.SIGKILL, self.loads.append, **kw)

    def end(self, p):
        """Stop a load and everything it started (its process group)."""
        if p.poll() is None:
            _killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                pass
        # what the group leader left behind (workers, jobs of a shell loop)
        _killpg(p.pid, signal.SIGKILL)
        if p.poll() is None:
            p.kill()
            p.wait()
        if p in self.loads:
            self.loads.remove(p)

    def drop_workdir(self):
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def start_scheduler(self, cmd, log):
        """Load a scheduler and wait for the kernel to enable it; its ops name."""
        name = os.path.basename(cmd[0])
        self.sched_name = name
        p = spawn(cmd, signal.SIGINT, lambda p: setattr(self, "sched", p), stdout=log, stderr=subprocess.STDOUT)
        if not wait_for(lambda: scx_state() == "enabled" or p.poll() is not None, 60):
            raise Failed(f"{name} did not enable sched_ext within 60 s (see {log.name})")
        if p.poll() is not None:
            raise Failed(f"{name} exited with status {p.returncode} before sched_ext was enabled (see {log.name})")
        return scx_ops()

    def stop_scheduler(self):
        """SIGINT to the scheduler: it detaches and the kernel goes back to
        its default scheduler. Its exit status (None when it had to be killed)."""
        p, name = self.sched, self.sched_name
        if p is None:
            return 0
        rc = p.poll()
        if rc is None:
            p.send_signal(signal.SIGINT)
            try:
                rc = p.wait(60)
            except subprocess.TimeoutExpired:
                say(f"{name} did not exit within 60 s of SIGINT; killing it (the kernel unloads it)")
                p.kill()
                p.wait()
                rc = None
        _killpg(p.pid, signal.SIGKILL)
        self.sched = None
        if not wait_for(lambda: scx_state() == "disabled", 30):
            raise Failed(f"sched_ext still {scx_state()} ({scx_ops()}) 30 s after {name} exited")
        return rc

    def cleanup(self):
        """Stop everything, scheduler last; True when sched_ext is disabled."""
        for p in list(self.loads):
            self.end(p)
        self.drop_workdir()
        try:
            self.stop_scheduler()
        except Failed as e:
            say(str(e))
        return not os.path.isdir(SYSFS) or scx_state() == "disabled"


def _killpg(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _on_signal(signum, _frame):
    # The first signal interrupts the run; cleanup is bounded, so later ones
    # (a second Ctrl-C, or bench/run.sh passing the first one on) are ignored.
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    raise Interrupted(signal.Signals(signum).name)


# ---------------------------------------------------------------------------
# Configurations and workloads


def scheduler_cmd(config, out_prefix):
    """(command or None for the kernel's default, the command that prints
    the header of this configuration's runs)"""
    kconfig = os.environ.get("SORYU_KCONFIG")
    kflags = ["--kconfig", kconfig] if kconfig else []
    if config == "eevdf":
        return None, [os.environ["SORYU_BIN"], "--report-header=eevdf"]
    flags = soryu_flags(config)
    if flags is not None:
        binary = os.environ["SORYU_BASE_BIN" if config == "soryu-base" else "SORYU_BIN"]
        cmd = [binary, "--report-sec", "5", "--report-json", out_prefix + ".soryu.jsonl"]
        # the daemon's own header for these flags: its knobs, its build
        return cmd + kflags + flags, [binary, "--report-header"] + flags
    peer = os.path.join(os.environ.get("SORYU_PEERS", ""), "bin", "scx_" + config)
    if os.access(peer, os.X_OK):
        return [peer] + kflags, [os.environ["SORYU_BIN"], f"--report-header=scx_{config}"]
    raise Failed(f"no peer scheduler scx_{config} (bench/peers.sh {config} builds it)")


def report_header(header_cmd, secs):
    """The header of a run's file, as soryu's daemon writes it (the
    scheduler, its knobs and build, the machine, the record format), with
    this run's interval length. A soryu-base build older than the hidden
    --report-header gets the header of SORYU_BIN with its own version."""
    run = lambda cmd: subprocess.run(cmd + ["--report-sec", str(secs)], capture_output=True, text=True)
    out = run(header_cmd)
    if out.returncode != 0 and header_cmd[0] != os.environ["SORYU_BIN"] and "--report-header" in out.stderr:
        version = subprocess.run([header_cmd[0], "--version"], capture_output=True, text=True).stdout
        out = run([os.environ["SORYU_BIN"]] + header_cmd[1:])
        if out.returncode == 0:
            header = json.loads(out.stdout)
            header["version"] = version.strip().removeprefix("scx_soryu ")
            return header
    if out.returncode != 0:
        raise Failed(f"{' '.join(header_cmd)}: {out.stderr.strip() or f'exit status {out.returncode}'}")
    return json.loads(out.stdout)


def boot_config():
    """In the VM: not every peer honours --kconfig (scx_lavd 1.1.4 still
    looks for the system's config): give the guest a /boot/config-<release>,
    on a tmpfs over the read-only /boot it shares with the host."""
    path = f"/boot/config-{os.uname().release}"
    if os.path.exists(path):
        return
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/boot"], check=True)
    subprocess.run(["cp", os.environ["SORYU_KCONFIG"], path], check=True)



# ---------------------------------------------------------------------------
# Runs


def check_still(config, guard, ops):
    """The configuration is still what the kernel runs."""
    state = scx_state()
    if guard.sched is None:
        if state != "disabled":
            raise Failed(f"a sched_ext scheduler ({scx_ops() or 'name unknown'}) was loaded during the "
                         f"{config} run, which measures the kernel's default scheduler; stop whatever loads it")
        return
    if guard.sched.poll() is not None:
        raise Failed(f"{config}: the scheduler exited during the run (status {guard.sched.returncode})")
    if state != "enabled" or scx_ops() != ops:
        raise Failed(f"{config}: sched_ext is {state} ({scx_ops()}) instead of {ops} during the run")


class Run:
    """One configuration's run in one round: its JSON lines, its log, its
    compile tree. A run is measured in one or more stretches, each between
    start() and stop(), which load and unload its scheduler: one stretch of
    every interval, or (interleaved) one stretch per interval, the
    configurations taking turns."""

    def __init__(self, guard, where, config, rnd, order, workload, secs, outdir, bounds, interleaved):
        self.guard, self.where, self.config, self.rnd = guard, where, config, rnd
        self.order, self.workload, self.secs, self.outdir = order, workload, secs, outdir
        self.bounds, self.interleaved = bounds, interleaved
        self.prefix = os.path.join(outdir, f"{config}-r{rnd}")
        self.cmd, self.header_cmd = scheduler_cmd(config, self.prefix)
        self.log = open(self.prefix + ".log", "w")
        self.out = None
        self.ops = None
        self.bg = None
        self.workdir = None
        self.builds_log, self.builds_seen = self.prefix + ".builds.log", 0
        if workload == "compile":
            open(self.builds_log, "w").close()

    def start(self):
        """Load the scheduler (none for eevdf) and start the background load."""
        if scx_state() != "disabled":
            raise Failed(f"sched_ext is {scx_state()} ({scx_ops()}) before the {self.config} run: "
                         "something else loaded a scheduler")
        if self.cmd is not None:
            if self.where == "vm" and not self.cmd[0].endswith("scx_soryu"):
                boot_config()
            self.ops = self.guard.start_scheduler(self.cmd, self.log)
        if self.workload in ("compile", "build") and self.workdir is None:
            # the compile's tree, fresh for each run so every run builds
            # alike; one per configuration when they take turns
            self.workdir = compile_tree(os.path.join(self.guard.workdir(), self.config))
        if self.workload == "workerpool" and self.workdir is None:
            self.workdir = workerpool_build(os.path.join(self.guard.workdir(), self.config, "pool"))
        if self.out is None:
            self.out = open(self.prefix + ".jsonl", "w")
            header = report_header(self.header_cmd, self.secs)
            header.update({"config": self.config, "lat_bucket_lower_ns": self.bounds,
                           "workload": self.workload, "round": self.rnd, "order": self.order, "where": self.where,
                           "interleaved": self.interleaved, "sched_ext_ops": self.ops,
                           "source": "bench/guest.py: cyclictest (hist.lat_interactive), stress-ng, hackbench, "
                                     "perf bench, make (Lua 5.4), bench/workerpool.c"})
            self.out.write(json.dumps(header) + "\n")
        bg_cmd = background_cmd(self.workload, self.outdir, self.workdir)
        if bg_cmd:
            with open(self.builds_log if self.workload == "compile" else os.devnull, "a") as bg_out:
                self.bg = self.guard.load(bg_cmd, stdout=bg_out, stderr=subprocess.STDOUT)

    def interval(self, i):
        """Measure interval i, file its record and return it."""
        guard, config, workload, secs = self.guard, self.config, self.workload, self.secs
        check_still(config, guard, self.ops)
        tp_cmd = throughput_cmd(workload, secs, self.workdir)
        job = guard.load(tp_cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) if tp_cmd else None
        ctpath = os.path.join(self.outdir, "cyclictest.json")
        # never read the interval before's figures as this one's
        if os.path.exists(ctpath):
            os.remove(ctpath)
        one_job = workload in ONE_JOB
        ct = guard.load(cyclictest_cmd(0 if one_job else secs, ctpath),
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        text = None
        if one_job:
            # the probe watches the job from start to end
            text = job.communicate()[0]
            if job.returncode != 0:
                # before the probe's status: a build that fails at
                # once can stop it before its SIGINT handler is set.
                # And bash's `time` reports a failed build's time too.
                raise Failed(f"{config}: the build failed in interval {i} (make exited with status "
                             f"{job.returncode}); build {compile_source()} by hand (make linux) to see why")
            ct.send_signal(signal.SIGINT)
            try:
                ct.wait(30)
            except subprocess.TimeoutExpired:
                raise Failed(f"{config}: cyclictest did not stop within 30 s of SIGINT in interval {i}")
        ct.wait()
        guard.end(ct)
        if ct.returncode != 0:
            raise Failed(f"{config}: cyclictest exited with status {ct.returncode} in interval {i}")
        # No duration_s: every interval is cyclictest's fixed -D window
        # or one job (their wall times vary a lot in the VM, and
        # compare would leave such pairs out).
        rec = {"type": "interval", "index": i}
        rec.update(latency_figures(ctpath, self.bounds))
        if job is not None:
            if text is None:
                text = job.communicate()[0]
            guard.end(job)
            figures = parse_throughput(workload, text)
            if not figures:
                last = (text.strip().splitlines() or ["no output"])[-1]
                raise Failed(f"{config}: the {workload} job gave no figure in interval {i} "
                             f"(status {job.returncode}): {last}")
            rec.update(figures)
        if workload == "compile":
            if self.bg.poll() is not None:
                raise Failed(f"{config}: the build failed in interval {i} "
                             f"(status {self.bg.returncode}, see {self.builds_log})")
            # builds that finished in this interval; none: unknown
            times = build_times(self.builds_log)
            rec["ext_compile_s"] = mean(times[self.builds_seen:])
            self.builds_seen = len(times)
        self.out.write(json.dumps(rec) + "\n")
        self.out.flush()
        return rec

    def stop(self):
        """Stop the background load and unload the scheduler."""
        check_still(self.config, self.guard, self.ops)
        if self.bg is not None:
            self.guard.end(self.bg)
            self.bg = None
        rc = self.guard.stop_scheduler()
        if rc not in (0, None):
            raise Failed(f"{self.config}: the scheduler exited with status {rc} when stopped (see {self.log.name})")

    def close(self):
        """Close the run's files (what is written of them stays: every
        record is flushed as it is written)."""
        for f in (self.out, self.log):
            if f is not None and not f.closed:
                f.close()

    def finish(self):
        """Close the run's files and say it is done."""
        self.close()
        if self.workdir is not None:
            shutil.rmtree(os.path.dirname(self.workdir), ignore_errors=True)
        done = f"round {self.rnd}: {self.config} done"
        if self.workload == "compile":
            times = build_times(self.builds_log)
            done += f" ({len(times)} builds, mean {mean(times) or 0:.1f} s)" if times else " (no build finished)"
        print(done, flush=True)


def stretches(order, intervals, interleaved):
    """(configuration, its intervals) in the order they are measured, each
    between a load and an unload of its scheduler: every interval of one
    run after the other, or (interleaved) one interval each in turn, the
    turn's order reversed every interval, so that the two intervals of a
    pair run side by side in time and neither configuration is always
    first."""
    if not interleaved:
        return [(c, range(intervals)) for c in order]
    return [(c, [i]) for i in range(intervals) for c in (order if i % 2 == 0 else order[::-1])]


def one_round(guard, where, rnd, order, workload, intervals, secs, outdir, bounds, interleaved):
    """Every configuration's run of one round, in `order`."""
    runs = {c: Run(guard, where, c, rnd, order, workload, secs, outdir, bounds, interleaved) for c in order}
    try:
        for config, indices in stretches(order, intervals, interleaved):
            r = runs[config]
            r.start()
            for i in indices:
                rec = r.interval(i)
            r.stop()
            if interleaved:
                build = rec.get("ext_compile_s")
                print(f"round {rnd}, interval {i}: {config} done" + (f" (build {build:.1f} s)" if build else ""),
                      flush=True)
            if i == intervals - 1:
                r.finish()
    finally:
        # on a failure or a signal too (the guard stops what runs)
        for r in runs.values():
            r.close()


def run(argv):
    where = "vm" if "--vm" in argv else "host"
    interleaved = "--interleave" in argv
    argv = [a for a in argv if a not in ("--vm", "--interleave")]
    outdir, workload = argv[0], argv[1]
    intervals, secs, rounds = int(argv[2]), int(argv[3]), int(argv[4])
    configs = argv[5:]
    why = check_names(workload, configs)
    if why:
        print(f"bench: {why}", file=sys.stderr)
        return 2
    guard = Guard()
    for s in STOP_SIGNALS:
        signal.signal(s, _on_signal)
    status = 0
    try:
        preflight(workload)
        bounds = json.loads(subprocess.run([os.environ["SORYU_BIN"], "--lat-buckets"], check=True,
                                           capture_output=True, text=True).stdout)
        for rnd in range(1, rounds + 1):
            order = configs if rnd % 2 == 1 else configs[::-1]
            one_round(guard, where, rnd, order, workload, intervals, secs, outdir, bounds, interleaved)
        open(os.path.join(outdir, "bench.done"), "w").close()
    except Refused as e:
        print(f"bench: {e}", file=sys.stderr)
        return 1
    except Interrupted as e:
        print(f"bench: interrupted ({e}): stopping the load and the scheduler", file=sys.stderr, flush=True)
        status = 130 if str(e) == "SIGINT" else 143
    except Failed as e:
        print(f"bench: {e}", file=sys.stderr, flush=True)
        status = 1
    except BaseException:
        status = 1
        raise
    finally:
        for s in STOP_SIGNALS:
            signal.signal(s, signal.SIG_IGN)
        if guard.loads or guard.sched is not None or status != 0:
            if guard.cleanup():
                say(f"stopped; sched_ext {scx_state()}: the kernel's default scheduler runs")
            else:
                print(f"bench: sched_ext is still {scx_state()} ({scx_ops()}): stop that scheduler by hand",
                      file=sys.stderr)
                status = 1
        guard.drop_workdir()
    return status


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("check", "preflight", "run"):
        sys.exit(__doc__)
    cmd, argv = sys.argv[1], sys.argv[2:]
    if cmd == "run":
        try:
            return run(argv)
        except Interrupted:
            return 130  # a signal while a failure was being reported; cleaned up all the same
    if not argv:
        sys.exit(__doc__)
    why = check_names(argv[0], argv[1:]) or check_flags(argv[1:], os.environ.get("SORYU_BIN", DEFAULT_BIN))
    if why:
        print(f"bench: {why}", file=sys.stderr)
        return 2
    if cmd == "preflight":
        try:
            preflight(argv[0])
        except Refused as e:
            print(f"bench: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
