#!/usr/bin/env python3
"""The starvation matrix's verdicts on one case, in one process.

    starve_judge.py DIR CASE SHORT_US STARVE_MS SLICE_US HZ LATE_MS

Reads DIR/CASE.expect (one probe a line: LABEL K N PID), each probe's JSON
line (DIR/CASE.probe.LABEL) and the kernel's switch trace of the probes
(DIR/CASE.switches, see switch_waits.py). Writes DIR/starve-CASE.json: each
probe's line with the trace's waits (max_wait_ms; the probe's own figure
kept as probe_max_wait_ms), k, n and its bound. Prints one verdict a line,
tab-separated, for starve.sh to trace: "ok<TAB>WHAT (VARS)" or
"fail<TAB>WHAT", then "total<TAB>CPU_S", the probes' CPU time summed.

The bound of docs/design.md ("The starvation bound"), for k tasks that may
starve together on n CPUs, plus the platform's lateness L:

    9/4 starve_ms + (ceil(k / n) + 2) x (slice + 1 tick) + L

One process instead of a dozen jq and awk calls per probe: under
emulation each of those took about half a second, six seconds a probe.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switch_waits import waits  # noqa: E402


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
    try:
        with open(f"{d}/{case}.switches") as f:
            for s in waits(f.readlines(), [p[3] for p in probes], short_us / 1e6, windows):
                by_pid[s.pop("pid")] = s
    except (OSError, ValueError) as e:
        print(f"fail\tno waits from the kernel's switch trace: {e}")

    total = 0.0
    with open(f"{d}/starve-{case}.json", "w") as out:
        for label, k, n, pid, rec in probes:
            if rec is None:
                print(f"fail\tprobe {label} wrote no JSON")
                continue
            b = bound_ms(k, n, starve_ms, slice_us, hz, late_ms)
            rec = {**rec, "probe_max_wait_ms": rec.get("max_wait_ms"), **by_pid.get(pid, {}),
                   "pid": pid, "k": k, "n": n, "bound_ms": b}
            out.write(json.dumps(rec, separators=(",", ":")) + "\n")
            cpu, w, wait_ms = rec["cpu_s"], rec.get("waits", 0), rec["max_wait_ms"]
            total += cpu
            for ok, what, cond, vs in (
                (cpu > 0, f"{label} got CPU time", "c > 0", f"c={num(cpu)}"),
                # every probe here is preempted again and again: no wait
                # seen means the trace missed it, not that it never waited
                (w > 0, f"{label}'s waits seen in the switch trace", "w > 0", f"w={num(w)}"),
                (wait_ms <= b, f"{label}'s longest wait within the bound (k {k}, n {n})", "w <= b",
                 f"w={num(wait_ms)} b={num(b)}"),
            ):
                print(f"ok\t{what} ({vs})" if ok else f"fail\t{what}: {cond} does not hold for {vs}")
    print(f"total\t{round(total, 3)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
