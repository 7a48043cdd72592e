#!/usr/bin/env python3
"""The starvation matrix's verdicts on one case, in one process.

    starve_judge.py DIR CASE SHORT_US STARVE_MS SLICE_US HZ LATE_MS

Reads DIR/CASE.expect (one probe a line: LABEL K N PID), each probe's JSON
line (DIR/CASE.probe.LABEL) and the kernel's switch trace of the probes
(DIR/CASE.switches, see switch_waits.py, with the scheduler tick and the
CPUs' idle periods in it, see tick_gaps.py). Writes DIR/starve-CASE.json:
each probe's line with the trace's waits (max_wait_ms; the probe's own
figure kept as probe_max_wait_ms), k, n, the lateness taken and its bound.
Prints one verdict a line, tab-separated, for starve.sh to trace:
"ok<TAB>WHAT (VARS)" or "fail<TAB>WHAT", then "total<TAB>CPU_S", the
probes' CPU time by the tick summed (tick_gaps.ticked(): the probe's own
figure counts time the host had stopped its virtual CPU, over nine tenths
of it at 16 vCPUs on two host cores), and "window<TAB>S", the longest
probe's window:
a probe measures for its seconds and then to the end of the wait it is
in, so its window can run past them by one wait, up to STARVE_MS.

The bound of docs/design-starvation.md ("The bound"), for k tasks that
may starve together on n CPUs, plus the platform's lateness L:

    9/4 starve_ms + (ceil(k / n) + 2) x (slice + 1 tick) + L

L is LATE_MS, measured by SCHED_FIFO sleepers under the default scheduler
before the cases: the platform alone. Nothing measured in the run being
judged raises a bound: a scheduler that held a CPU with interrupts off
would make that CPU's tick late too, and excuse its own waits. The tick's
lateness in the case's window (tick_gaps.py) is only reported: with the
longest wait, and beside a wait past its bound when a tick was late
during it (the host may have stopped the guest: rerun on a quieter host).

One process instead of a dozen jq and awk calls per probe: under
emulation each of those took about half a second, six seconds a probe.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switch_waits import waits  # noqa: E402
from tick_gaps import gaps, lateness, ticked  # noqa: E402


def bound_ms(k, n, starve_ms, slice_us, hz, late_ms):
    rounds = (k + n - 1) // n + 2
    return round(starve_ms * 9 / 4 + rounds * (slice_us / 1000 + 1000 / hz) + late_ms, 1)


def num(v):
    """A figure as the verdicts show it: 0.645, 176, 243.1."""
    return str(v)


def main():
    if len(sys.argv) != 8:
        print("fail\tusage: starve_judge.py DIR CASE SHORT_US STARVE_MS SLICE_US HZ LATE_MS")
        return 2
    d, case = sys.argv[1], sys.argv[2]
    short_us, starve_ms, slice_us, hz, late_ms = map(float, sys.argv[3:8])
    probes = []
    with open(f"{d}/{case}.expect") as f:
        for line in f:
            label, k, n, pid = line.split()
            try:
                with open(f"{d}/{case}.probe.{label}") as pf:
                    rec = json.loads(pf.readline())
                rec["label"]  # noqa: B018 (a probe's line without it is no result)
            except (OSError, ValueError, KeyError, TypeError):
                rec = None
            probes.append((label, int(k), int(n), int(pid), rec))

    # each probe's window, on the trace's clock
    windows = {pid: tuple(r["window_mono_s"]) for _, _, _, pid, r in probes
               if r and r.get("window_mono_s")}
    by_pid = {}
    lines = []
    try:
        with open(f"{d}/{case}.switches") as f:
            lines = f.readlines()
        for s in waits(lines, [p[3] for p in probes], short_us / 1e6, windows, spans=True):
            by_pid[s.pop("pid")] = s
    except (OSError, ValueError) as e:
        print(f"fail\tno waits from the kernel's switch trace: {e}")

    # the platform's lateness in the probes' common window, by the tick
    window_late_ms = None
    late_ticks = []
    tick_cpu = {}
    if windows:
        lo = min(w[0] for w in windows.values())
        hi = max(w[1] for w in windows.values())
        try:
            found = gaps(lines, hz)
            late_ticks = [g for g in found if g[3] > 0]
            tick_cpu = ticked(lines, windows, hz)
            t = lateness(found, lo, hi)
            window_late_ms = t["late_ms"]
            print(f"ok\tthe tick's lateness in the window (reported, not counted): {window_late_ms} ms "
                  f"(CPU {t['cpu']} at {t['at_s']} s, {t['ticks']} ticks); the platform's, before the "
                  f"cases: {num(late_ms)} ms")
        except ValueError as e:
            print(f"fail\tno tick lateness from the trace: {e}")

    total = 0.0
    with open(f"{d}/starve-{case}.json", "w") as out:
        for label, k, n, pid, rec in probes:
            if rec is None:
                print(f"fail\tprobe {label} wrote no JSON")
                continue
            trace = by_pid.get(pid, {})
            spans = trace.pop("spans", [])
            # the longest wait (without a trace, the probe's own figure)
            wait_ms = trace.get("max_wait_ms", rec["max_wait_ms"])
            b = bound_ms(k, n, starve_ms, slice_us, hz, late_ms)
            # for the longest wait past the bound, the latest tick late during it
            noisy = ""
            for s, e in sorted(spans, key=lambda w: w[0] - w[1]):
                lt = [g for g in late_ticks if g[0] < e and g[1] > s]
                if (e - s) * 1000 > b and lt:
                    g = max(lt, key=lambda g: g[3])
                    noisy = (f"; CPU {g[2]}'s tick was {g[3]} ms late during a wait of "
                             f"{round((e - s) * 1000, 3)} ms (a busy host? rerun on a quieter one)")
                    break
            rec = {**rec, "probe_max_wait_ms": rec.get("max_wait_ms"), **trace,
                   "pid": pid, "k": k, "n": n, "late_ms": late_ms,
                   "tick_cpu_s": round(tick_cpu.get(pid, 0.0), 3),
                   "window_late_ms": window_late_ms, "bound_ms": b}
            out.write(json.dumps(rec, separators=(",", ":")) + "\n")
            cpu, w = rec["cpu_s"], rec.get("waits", 0)
            total += rec["tick_cpu_s"]
            for ok, what, cond, vs in (
                (cpu > 0, f"{label} got CPU time", "c > 0", f"c={num(cpu)}; by the tick: {num(rec['tick_cpu_s'])}"),
                # every probe here is preempted again and again: no wait
                # seen means the trace missed it, not that it never waited
                (w > 0, f"{label}'s waits seen in the switch trace", "w > 0", f"w={num(w)}"),
                (wait_ms <= b, f"{label}'s waits within the bound (k {k}, n {n}, lateness {num(late_ms)} ms)",
                 "w <= b", f"w={num(wait_ms)} b={num(b)}{noisy}"),
            ):
                print(f"ok\t{what} ({vs})" if ok else f"fail\t{what}: {cond} does not hold for {vs}")
    print(f"total\t{round(total, 3)}")
    spans = [w[1] - w[0] for w in windows.values()]
    print(f"window\t{round(max(spans), 3) if spans else 0}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
