#!/usr/bin/env python3
"""Where a busy task goes when it leaves a shared SMT core: near or far.

    near_probe.py TRIALS

Each trial starts two busy loops pinned to the two threads of one core,
lets them run 0.3 s, then allows them every CPU. Two loops on one core
while whole cores idle: the scheduler should move one to an idle core,
and the nearest one is in the same LLC (cache index 3 in sysfs). Every
5 ms for up to 2 s it reads both loops' last CPU from /proc/PID/stat; at
the first sample where they sit on two cores, the trial counts as a move,
and as near when both cores are in the LLC they started in. Trials take
the first core of each LLC in turn, so each LLC is where they start in
half of them. The probe itself runs on the last CPU of another LLC:
left free, its wakeups every 5 ms took idle CPUs, at times a thread of
the one whole idle core the loops' LLC has, and a move then rightly went
to a whole core in the other LLC. Prints one line:

    trials T moved M near K

On the topology tests' 8 CPUs (2 LLCs of 2 cores of 2 threads), the LLC
the loops start in has one whole idle core and the other has two: a
search that takes the first whole idle core found, in no order of
distance, is near in about a third of the moves.
"""
import os
import signal
import sys
import time


def topo(cpu):
    """(core, llc) of @cpu: (package, core_id) and the L3's CPU list."""
    base = f"/sys/devices/system/cpu/cpu{cpu}"
    with open(f"{base}/topology/physical_package_id") as f, open(f"{base}/topology/core_id") as g:
        core = (int(f.read()), int(g.read()))
    with open(f"{base}/cache/index3/shared_cpu_list") as f:
        llc = f.read().strip()
    return core, llc


def last_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        # after "pid (comm)": field 39 (processor) is the 37th
        return int(f.read().rsplit(")", 1)[1].split()[36])


def spin(cpu):
    os.sched_setaffinity(0, {cpu})
    while True:
        pass


def trial(pair, all_cpus, core, llc):
    pids = []
    for c in pair:
        pid = os.fork()
        if pid == 0:
            spin(c)
        pids.append(pid)
    try:
        time.sleep(0.3)
        for p in pids:
            os.sched_setaffinity(p, all_cpus)
        end = time.monotonic() + 2
        while time.monotonic() < end:
            time.sleep(0.005)
            cpus = [last_cpu(p) for p in pids]
            if core[cpus[0]] != core[cpus[1]]:
                if os.environ.get("SORYU_NEAR_VERBOSE"):
                    print(f"pair {pair} -> {cpus} after {2 - (end - time.monotonic()):.3f}s", file=sys.stderr)
                return True, all(llc[c] == llc[pair[0]] for c in cpus)
        return False, False
    finally:
        for p in pids:
            os.kill(p, signal.SIGKILL)
            os.waitpid(p, 0)


def main():
    trials = int(sys.argv[1])
    all_cpus = set(range(os.cpu_count()))
    info = [topo(c) for c in sorted(all_cpus)]
    core = [i[0] for i in info]
    llc = [i[1] for i in info]
    # the first core of each LLC, as its two threads
    starts = []
    for l in sorted(set(llc), key=lambda x: llc.index(x)):
        first = llc.index(l)
        pair = [c for c in all_cpus if core[c] == core[first]]
        if len(pair) != 2:
            print(f"near_probe.py: core of CPU {first} has {len(pair)} threads, not 2")
            return 2
        starts.append(sorted(pair))
    moved = near = 0
    for t in range(trials):
        pair = starts[t % len(starts)]
        os.sched_setaffinity(0, {max(c for c in all_cpus if llc[c] != llc[pair[0]])})
        m, n = trial(pair, all_cpus, core, llc)
        moved += m
        near += n
    print(f"trials {trials} moved {moved} near {near}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
