#!/usr/bin/env python3
"""The platform's lateness inside a window, from the scheduler tick.

    tick_gaps.py TRACE HZ FROM TO

TRACE is the text of /sys/kernel/tracing/trace with the events
timer:hrtimer_expire_entry and power:cpu_idle, on trace_clock mono. Prints
one JSON object: {"late_ms", "cpu", "at_s", "ticks"}: the largest gap
between two consecutive scheduler ticks (tick_nohz_handler) of one CPU,
less one tick period, over the gaps that overlap the window FROM..TO
(seconds on the trace's clock), with the CPU and the time the gap ended.

Why the tick: a busy CPU takes its tick every 1/HZ s whatever runs on it.
A tick late by tens of ms means the virtual CPU did not run at all (the
host descheduled it) or ran with interrupts off that long. The first is
the platform; for the second, soryu's callbacks run with interrupts off
but are bounded loops that cost tens to a few hundred microseconds a call
under emulation (docs/measuring.md, "What measuring costs"; 178 us a
dispatch at 8 CPUs in docs/performance.md), so a gap of tens of ms is not
theirs. It is the same lateness the SCHED_FIFO sleepers measure before the
cases (starve_probe.py sleeper), taken in the case's own window without
adding a task that preempts the ones under test.

An idle CPU stops its tick (NO_HZ), so a gap with the CPU idle in it
(cpu_idle entered before it ended) is idle time, not lateness, and is
left out: a scheduler that left a CPU idle while a task waited must not
have the wait excused by the idle gap.

Fails (exit 1, one line) when the trace lost events or holds no tick in
the window.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from switch_waits import events  # noqa: E402

# the running task's pid, the CPU, the time, the event and its fields
EVENT = re.compile(r"-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+\.\d+): (hrtimer_expire_entry|cpu_idle): (.*)")
TICK = "function=tick_nohz_handler"
IDLE_EXIT = "4294967295"


def gaps(lines, hz):
    """Every gap between two consecutive ticks of one CPU with the CPU not
    idle in it: [(from_s, to_s, cpu, late_ms)], late_ms the gap less one
    tick period (0 or less for a tick on time)."""
    tick = 1.0 / hz
    last = {}  # cpu -> time of its last tick
    idled = {}  # cpu -> went idle since its last tick
    found = []
    for m in events(lines, EVENT):
        cpu, ts, ev, rest = int(m[2]), float(m[3]), m[4], m[5]
        if ev == "cpu_idle":
            if f"state={IDLE_EXIT}" not in rest:
                idled[cpu] = True
            continue
        if TICK not in rest:
            continue
        prev = last.get(cpu)
        if prev is not None and not idled.get(cpu):
            found.append((prev, ts, cpu, round((ts - prev - tick) * 1000, 3)))
        last[cpu] = ts
        idled[cpu] = False
    return found


def lateness(found, lo, hi):
    """The latest tick among the gaps of gaps() that overlap lo..hi."""
    best = {"late_ms": 0.0, "cpu": None, "at_s": None, "ticks": 0}
    for prev, ts, cpu, late in found:
        if ts > lo and prev < hi:
            best["ticks"] += 1
            if late > best["late_ms"]:
                best.update(late_ms=late, cpu=cpu, at_s=ts)
    if best["ticks"] == 0:
        raise ValueError(f"no scheduler tick between {lo} and {hi} s in the trace")
    return best


def ticked(lines, windows, hz):
    """Each PID's CPU time by the tick, inside its window (windows: pid ->
    (from_s, to_s)): one tick period for each scheduler tick that found it
    on a CPU, as the kernel's tick-based accounting counts. Under
    emulation the host stops virtual CPUs, and the guest's clock charges
    the task on a stopped CPU for all that time; a stopped CPU takes no
    tick (one late tick when it runs again), so the tick counts what the
    task ran, not how long its CPU was away."""
    n = {pid: 0 for pid in windows}
    for m in events(lines, EVENT):
        pid, ts = int(m[1]), float(m[3])
        if pid in n and TICK in m[5] and windows[pid][0] <= ts <= windows[pid][1]:
            n[pid] += 1
    return {pid: c / hz for pid, c in n.items()}


def main():
    if len(sys.argv) != 5:
        print("usage: tick_gaps.py TRACE HZ FROM TO", file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1]) as f:
            out = lateness(gaps(f.readlines(), float(sys.argv[2])), float(sys.argv[3]), float(sys.argv[4]))
    except (OSError, ValueError) as e:
        print(f"tick_gaps.py: {e}", file=sys.stderr)
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
