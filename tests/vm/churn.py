#!/usr/bin/env python3
"""Nice and policy churn for the hostile-workload VM test.

    churn.py SECONDS NTASKS

Starts NTASKS children that alternate short bursts of CPU with short sleeps,
and for SECONDS keeps changing each one's nice value (uniform in -20..19)
and policy (SCHED_OTHER, SCHED_BATCH, SCHED_IDLE) while they run, a few
hundred changes a second. Prints the number of changes made and exits 0 if
every change was accepted by the kernel.
"""
import os
import random
import sys
import time

POLICIES = (os.SCHED_OTHER, os.SCHED_BATCH, os.SCHED_IDLE)


def child(deadline):
    while time.monotonic() < deadline:
        end = time.monotonic() + random.uniform(0.0005, 0.005)
        while time.monotonic() < end:
            pass
        time.sleep(random.uniform(0, 0.003))
    os._exit(0)


def main():
    secs, n = float(sys.argv[1]), int(sys.argv[2])
    deadline = time.monotonic() + secs
    kids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            child(deadline + 1)
        kids.append(pid)
    changes = 0
    while time.monotonic() < deadline:
        pid = random.choice(kids)
        os.setpriority(os.PRIO_PROCESS, pid, random.randint(-20, 19))
        os.sched_setscheduler(pid, random.choice(POLICIES), os.sched_param(0))
        changes += 1
        time.sleep(0.002)
    for pid in kids:
        os.waitpid(pid, 0)
    print(f"{changes} nice/policy changes on {n} tasks")


if __name__ == "__main__":
    main()
