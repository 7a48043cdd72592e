#!/usr/bin/env python3
"""The starvation matrix's verdicts on one case, in one process.

    starve_judge.py DIR CASE SHORT_US STARVE_MS SLICE_US HZ LATE_MS CAP_MS

Reads DIR/CASE.expect (one probe a line: LABEL K N PID), each probe's JSON
line (DIR/CASE.probe.LABEL) and the kernel's switch trace of the probes
(DIR/CASE.switches, see switch_waits.py, with the scheduler tick and the
CPUs' idle periods in it, see tick_gaps.py). Writes DIR/starve-CASE.json:
each probe's line with the trace's waits (max_wait_ms; the probe's own
figure kept as probe_max_wait_ms), k, n, the lateness taken and its bound.
Prints one verdict a line, tab-separated, for starve.sh to trace:
"ok<TAB>WHAT (VARS)" or "fail<TAB>WHAT", then "total<TAB>CPU_S", the
probes' CPU time summed, and "window<TAB>S", the longest probe's window:
a probe measures for its seconds and then to the end of the wait it is
in, so its window can run past them by one wait, up to STARVE_MS.

The bound of docs/design-starvation.md ("The bound"), for k tasks that
may starve together on n CPUs, plus the platform's lateness L:

    9/4 starve_ms + (ceil(k / n) + 2) x (slice + 1 tick) + L

L is LATE_MS (the SCHED_FIFO sleepers' figure, measured under the default
scheduler before the cases), or for a wait that some CPU's scheduler tick
was late in, by more, that tick's lateness (tick_gaps.py): the host can
stop a virtual CPU for 100 ms in the middle of a run as well as at its
start (measured: 6 of 15 cases of one run had such a stall in their
window). Each wait is judged against its own bound, so a stall excuses
only the waits it overlapped. A wait past the bound without the stall,
across a tick late by more than CAP_MS, is too noisy to judge, and fails
so; a stall that no wait needed fails nothing (the 8-CPU pinned case
measured a tick 318 ms late in a window whose longest wait, 162 ms, was
far inside the bound of 340 ms without it).

One process instead of a dozen jq and awk calls per probe: under
emulation each of those took about half a second, six seconds a probe.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switch_waits import waits  # noqa: E402
from tick_gaps import gaps, lateness  # noqa: E402


def bound_ms(k, n, starve_ms, slice_us, hz, late_ms):
    rounds = (k + n - 1) // n + 2
    return round(starve_ms * 9 / 4 + rounds * (slice_us / 1000 + 1000 / hz) + late_ms, 1)


def num(v):
    """A figure as the verdicts show it: 0.645, 176, 243.1."""
    return str(v)


def main():
    if len(sys.argv) != 9:
        print("fail\tusage: starve_judge.py DIR CASE SHORT_US STARVE_MS SLICE_US HZ LATE_MS CAP_MS")
        return 2
    d, case = sys.argv[1], sys.argv[2]
    short_us, starve_ms, slice_us, hz, late_before_ms, cap_ms = map(float, sys.argv[3:9])
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
    if windows:
        lo = min(w[0] for w in windows.values())
        hi = max(w[1] for w in windows.values())
        try:
            found = gaps(lines, hz)
            late_ticks = [g for g in found if g[3] > 0]
            t = lateness(found, lo, hi)
            window_late_ms = t["late_ms"]
            print(f"ok\tthe tick's lateness in the window: {window_late_ms} ms (CPU {t['cpu']} "
                  f"at {t['at_s']} s, {t['ticks']} ticks), before the cases {num(late_before_ms)} ms")
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
            # the wait with the least room under its own bound (without a
            # trace, the probe's own longest wait, against the bound with
            # the lateness measured before the cases)
            wait_ms, late_ms = trace.get("max_wait_ms", rec["max_wait_ms"]), late_before_ms
            b = b0 = bound_ms(k, n, starve_ms, slice_us, hz, late_ms)
            room = None
            for s, e in spans:
                lw = max([late_before_ms] + [g[3] for g in late_ticks if g[0] < e and g[1] > s])
                bw = bound_ms(k, n, starve_ms, slice_us, hz, lw)
                ww = round((e - s) * 1000, 3)
                if lw > cap_ms and ww > b0:
                    # only a stall past the cap could excuse this wait
                    print(f"fail\t{label} waited {ww} ms across a tick {lw} ms late (cap {num(cap_ms)} ms): "
                          "too noisy to judge a bound; rerun on a quieter host")
                if room is None or bw - ww < room:
                    room, wait_ms, late_ms, b = bw - ww, ww, lw, bw
            rec = {**rec, "probe_max_wait_ms": rec.get("max_wait_ms"), **trace,
                   "pid": pid, "k": k, "n": n, "late_before_ms": late_before_ms,
                   "window_late_ms": window_late_ms, "judged_wait_ms": wait_ms,
                   "judged_late_ms": late_ms, "bound_ms": b}
            out.write(json.dumps(rec, separators=(",", ":")) + "\n")
            cpu, w = rec["cpu_s"], rec.get("waits", 0)
            total += cpu
            for ok, what, cond, vs in (
                (cpu > 0, f"{label} got CPU time", "c > 0", f"c={num(cpu)}"),
                # every probe here is preempted again and again: no wait
                # seen means the trace missed it, not that it never waited
                (w > 0, f"{label}'s waits seen in the switch trace", "w > 0", f"w={num(w)}"),
                # the wait closest to (or furthest past) its own bound
                (wait_ms <= b, f"{label}'s waits within the bound (k {k}, n {n}, lateness {num(late_ms)} ms)",
                 "w <= b", f"w={num(wait_ms)} b={num(b)}"),
            ):
                print(f"ok\t{what} ({vs})" if ok else f"fail\t{what}: {cond} does not hold for {vs}")
    print(f"total\t{round(total, 3)}")
    spans = [w[1] - w[0] for w in windows.values()]
    print(f"window\t{round(max(spans), 3) if spans else 0}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
