#!/usr/bin/env python3
"""Each probe's waits on a run queue, from the kernel's sched_switch trace.

    switch_waits.py TRACE SHORT_US PID[:FROM:TO]...

TRACE is the text of /sys/kernel/tracing/trace with only sched_switch
events of the probes' PIDs, taken with trace_clock mono (one clock for
every CPU: a wait often starts on one CPU and ends on another). Prints one
JSON object per PID: {"pid", "waits", "max_wait_ms", "short_stints",
"max_short_stint_us"}.

A wait starts when the probe is switched out still runnable (prev_state
R: preempted; a probe spins, it never sleeps in its window) and ends when
it is switched in for a stint of at least SHORT_US. With FROM:TO (seconds
on the trace's clock), only waits that start inside that window count:
the probe's own window, where it spins; before it, the probe polls for its
start and sleeps, and after it, it writes its result and exits. A shorter stint does
not end it: a task switched in and kicked off again before it could do
anything was not served, and its two waits are one, as the task itself
sees them. This is the probe's own "time without progress", judged by the
kernel's clock instead of the probe's readings. The difference matters
under emulation: when the host stops a virtual CPU under a probe for
longer than its slice, the probe takes no reading in that stint and its
own clock joins two waits into one, though the kernel ran it a whole
slice (counted here as a stint, not a wait).

Fails (exit 1, one line) when the trace lost events: a lost switch would
make a wait up.
"""
import json
import re
import sys

EVENT = re.compile(
    r"\s(\d+\.\d+): sched_switch: .*\bprev_pid=(\d+) .*\bprev_state=(\S+) ==> .*\bnext_pid=(\d+) "
)


def events(lines, pattern):
    """The matches of @pattern in a trace's lines, in order; a trace that
    lost events is refused (ValueError): a lost event would make a wait or
    a gap up."""
    for line in lines:
        if "LOST" in line and "EVENTS" in line:
            raise ValueError(f"the trace lost events: {line.strip()}")
        m = pattern.search(line)
        if m:
            yield m


def waits(lines, pids, short_s, windows=None, spans=False):
    """With spans, each PID's object also holds "spans": every wait counted,
    as [start, end] in seconds on the trace's clock."""
    st = {p: {"pid": p, "waits": 0, "max_wait_ms": 0.0, "short_stints": 0,
              "max_short_stint_us": 0.0, "_in": None, "_ws": None} for p in pids}
    if spans:
        for s in st.values():
            s["spans"] = []
    windows = windows or {}

    def close(s, end):
        lo, hi = windows.get(s["pid"], (float("-inf"), float("inf")))
        if lo <= s["_ws"] <= hi:
            s["waits"] += 1
            s["max_wait_ms"] = max(s["max_wait_ms"], round((end - s["_ws"]) * 1000, 3))
            if spans:
                s["spans"].append([s["_ws"], end])
        s["_ws"] = None

    for m in events(lines, EVENT):
        ts, prev, state, nxt = float(m[1]), int(m[2]), m[3], int(m[4])
        if nxt in st:
            st[nxt]["_in"] = ts
        if prev not in st:
            continue
        s = st[prev]
        if s["_in"] is not None and s["_ws"] is not None:
            stint = ts - s["_in"]
            if stint >= short_s:
                close(s, s["_in"])
            else:
                s["short_stints"] += 1
                s["max_short_stint_us"] = max(s["max_short_stint_us"], round(stint * 1e6, 1))
        if state.startswith("R"):
            if s["_ws"] is None:
                s["_ws"] = ts
        elif s["_ws"] is not None and s["_in"] is not None:
            # leaving for good (exit) or to sleep: the last stint ended it
            close(s, s["_in"])
        s["_in"] = None
    for s in st.values():
        # switched in for a last stint that the trace did not see end
        if s["_ws"] is not None and s["_in"] is not None:
            close(s, s["_in"])
    return [{k: v for k, v in s.items() if not k.startswith("_")} for s in st.values()]


def main():
    if len(sys.argv) < 4:
        print("usage: switch_waits.py TRACE SHORT_US PID[:FROM:TO]...", file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        lines = f.readlines()
    pids, windows = [], {}
    try:
        for a in sys.argv[3:]:
            pid, *win = a.split(":")
            pids.append(int(pid))
            if win:
                windows[int(pid)] = (float(win[0]), float(win[1]))
        out = waits(lines, pids, float(sys.argv[2]) / 1e6, windows)
    except ValueError as e:
        print(f"switch_waits.py: {e}", file=sys.stderr)
        return 1
    for s in out:
        print(json.dumps(s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
