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

    holes_probe.py reqrep PERIOD_MS HOLD_MS SECS
        A client and a server over two pipes, for SECS: every PERIOD_MS
        (a timer sleep) the client writes a request, which wakes the
        server with a sync wakeup, then spins HOLD_MS before it reads the
        reply, so the server waits that long on the client's CPU; the
        server answers at once. So the server is only ever woken by sync
        wakeups. Prints one JSON line: requests answered.

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


def reqrep(period_ms, hold_ms, secs):
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    server = os.fork()
    if server == 0:
        os.close(req_w)
        os.close(rep_r)
        while os.read(req_r, 1) == b"r":
            os.write(rep_w, b"a")
        os._exit(0)
    os.close(req_r)
    os.close(rep_w)
    n = 0
    end = clock() + secs
    while clock() < end:
        time.sleep(period_ms / 1000.0)
        os.write(req_w, b"r")
        spin(hold_ms / 1000.0)
        if os.read(rep_r, 1) == b"a":
            n += 1
    os.write(req_w, b"q")
    os.waitpid(server, 0)
    print(json.dumps({"requests": n}), flush=True)


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "idle":
        idle(float(args[0]), float(args[1]), float(args[2]))
    elif mode == "sporadic":
        sporadic(float(args[0]), float(args[1]), float(args[2]), float(args[3]), int(args[4]))
    elif mode == "reqrep":
        reqrep(float(args[0]), float(args[1]), float(args[2]))
    elif mode == "spin":
        spin(float(args[0]))
    else:
        sys.exit(f"holes_probe.py: unknown mode {mode}")


if __name__ == "__main__":
    main()
