#!/usr/bin/env python3
"""Strict priority between the level queues of two LLCs.

    llc_probe.py SECS NEAR FAR

NEAR and FAR are two LLCs' CPU lists (e.g. 0-3 and 4-7). Starts two
nice 19 busy loops per CPU of FAR, allowed FAR's CPUs only, and one nice 0
busy loop per CPU of both, allowed NEAR's CPUs only. After a second, when
the nice 0 loops wait on NEAR's queues (twice as many loops as CPUs
there), each is allowed every CPU of both. None of them ever sleeps, so
only the scheduler moves one: a CPU of FAR must take a nice 0 loop off
NEAR's queues, a better level than the nice 19 loops of its own. After
another second, for SECS, each loop's CPU time is read from
/proc/PID/stat (utime + stime, the kernel's word). Prints one line:

    good G low L low_min M

G and L: the CPU seconds the nice 0 and the nice 19 loops got in the
window; M: the least any one nice 19 loop got. A scheduler that keeps
strict priority across LLCs gives the nice 0 loops nearly all of both
LLCs, the nice 19 loops only their starvation serves; one whose CPUs only
take their own LLC's queues gives each group one LLC, about half.
"""
import os
import signal
import sys
import time


def cpus(spec):
    out = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def spawn(nice, allowed):
    pid = os.fork()
    if pid == 0:
        os.sched_setaffinity(0, allowed)
        os.nice(nice)
        while True:
            pass
    return pid


def cpu_secs(pid):
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    # fields 14 and 15 (utime, stime) are rest[11] and rest[12]
    return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")


def main():
    secs = float(sys.argv[1])
    near, far = cpus(sys.argv[2]), cpus(sys.argv[3])
    low = [spawn(19, far) for _ in range(2 * len(far))]
    good = [spawn(0, near) for _ in range(len(near) + len(far))]
    try:
        time.sleep(1)
        for pid in good:
            os.sched_setaffinity(pid, near + far)
        time.sleep(1)
        before = {pid: cpu_secs(pid) for pid in good + low}
        time.sleep(secs)
        used = {pid: cpu_secs(pid) - before[pid] for pid in good + low}
    finally:
        for pid in good + low:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    g = sum(used[p] for p in good)
    lo = sum(used[p] for p in low)
    print(f"good {g:.2f} low {lo:.2f} low_min {min(used[p] for p in low):.2f}")


if __name__ == "__main__":
    main()
