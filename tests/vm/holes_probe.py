#!/usr/bin/env python3
"""Workloads for tests/vm/holes.sh, each measuring itself with its own clock.

    holes_probe.py idle RUN_MS SLEEP_MS SECS
        A SCHED_IDLE task (the worst level there is): runs RUN_MS, sleeps
        SLEEP_MS, for SECS. Prints one JSON line: wakeups, and its
        oversleep (timer expiry to running again) at p50 and max, and how
        many oversleeps reached 20, 50 and 100 ms.

    holes_probe.py sporadic RUN_MS MIN_MS MAX_MS SECS NICE
        Runs RUN_MS, then sleeps a random time between MIN_MS and MAX_MS,
        for SECS at NICE: a CPU that goes idle and comes back at random.

    holes_probe.py spin SECS
        Spins for SECS (a hog that a test moves between policies).
"""
import json
import os
import random
import sys
import time

clock = time.monotonic


def spin(secs):
    end = clock() + secs
    while clock() < end:
        pass


def idle(run_ms, sleep_ms, secs):
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    late = []
    end = clock() + secs
    while clock() < end:
        spin(run_ms / 1000.0)
        t = clock()
        time.sleep(sleep_ms / 1000.0)
        late.append((clock() - t) * 1000.0 - sleep_ms)
    late.sort()
    print(json.dumps({
        "wakeups": len(late),
        "p50_ms": round(late[len(late) // 2], 2) if late else None,
        "max_ms": round(late[-1], 2) if late else None,
        "over_20ms": sum(1 for x in late if x >= 20),
        "over_50ms": sum(1 for x in late if x >= 50),
        "over_100ms": sum(1 for x in late if x >= 100),
    }), flush=True)


def sporadic(run_ms, min_ms, max_ms, secs, nice):
    os.setpriority(os.PRIO_PROCESS, 0, nice)
    end = clock() + secs
    while clock() < end:
        spin(run_ms / 1000.0)
        time.sleep(random.uniform(min_ms, max_ms) / 1000.0)


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "idle":
        idle(float(args[0]), float(args[1]), float(args[2]))
    elif mode == "sporadic":
        sporadic(float(args[0]), float(args[1]), float(args[2]), float(args[3]), int(args[4]))
    elif mode == "spin":
        spin(float(args[0]))
    else:
        sys.exit(f"holes_probe.py: unknown mode {mode}")


if __name__ == "__main__":
    main()
