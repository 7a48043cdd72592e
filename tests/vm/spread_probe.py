#!/usr/bin/env python3
"""Where the scheduler puts as many busy tasks as there are SMT cores.

    spread_probe.py SECS

Starts one worker per SMT core (N), each a busy loop that never sleeps:
each is placed at fork and then only moved by the scheduler's own choice.
After half a second to settle, every 10 ms it reads each worker's
state and last CPU from /proc/PID/stat (the kernel's word) and, when all
N are running or runnable, whether they sit on N different cores (a core
is a physical_package_id and core_id pair from sysfs). Prints one line:

    samples S doubled D cores C

D of the S samples had two workers on the SMT siblings of one core while
another core had none of them (with N workers on N cores, any two on one
core means that). A scheduler that fills whole idle cores first keeps D
near 0 (the default scheduler's load balancing does); one that takes idle
CPUs in any order, or never moves a task that does not sleep, doubles up
most of the time
(4 workers on 4 two-thread cores land on 4 different cores in 8*6*4*2 of
8*7*6*5 orders: 23%).
"""
import os
import signal
import sys
import time


def core_of(cpu):
    """(physical_package_id, core_id) of @cpu, from sysfs."""
    t = f"/sys/devices/system/cpu/cpu{cpu}/topology"
    with open(f"{t}/physical_package_id") as f, open(f"{t}/core_id") as g:
        return (int(f.read()), int(g.read()))


def worker():
    while True:
        pass


def state_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    # after "pid (comm)": field 3 is rest[0], field 39 (processor) is rest[36]
    return rest[0], int(rest[36])


def main():
    secs = float(sys.argv[1])
    core = [core_of(c) for c in range(os.cpu_count())]
    n = len(set(core))
    pids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            worker()
        pids.append(pid)
    samples = doubled = 0
    try:
        time.sleep(0.5)  # let them spread
        end = time.monotonic() + secs
        while time.monotonic() < end:
            time.sleep(0.01)
            seen = [state_cpu(p) for p in pids]
            if any(s != "R" for s, _ in seen):
                continue
            samples += 1
            if len({core[c] for _, c in seen}) < n:
                doubled += 1
    finally:
        for p in pids:
            os.kill(p, signal.SIGKILL)
            os.waitpid(p, 0)
    print(f"samples {samples} doubled {doubled} cores {n}")


if __name__ == "__main__":
    main()
