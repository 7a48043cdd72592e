#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Two processes playing ping-pong over a pair of pipes, for policy.sh sync.

    pingpong.py SECONDS NICE

Each side sets its nice value, then the parent writes one byte, the child
reads it and writes one back, for SECONDS. A pipe write that wakes the
reader is a sync wakeup (the writer is about to sleep in its own read).
Each side asks the kernel which CPU it is on (sched_getcpu()) after every
read and counts the changes. Prints one JSON line: round trips, moves of
both sides together, and the CPU time both sides used playing (s).
"""
import ctypes
import json
import os
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)


def cpu():
    return libc.sched_getcpu()


def play(rd, wr, first, deadline):
    """Ping-pong until the deadline (the parent decides), counting moves."""
    n = moves = 0
    t0 = time.process_time()  # after setpriority: the pair's own CPU time
    last = cpu()
    if first:
        os.write(wr, b"x")
    while True:
        b = os.read(rd, 1)
        if not b or b == b"q":
            break
        here = cpu()
        moves += here != last
        last = here
        n += 1
        if first and time.monotonic() >= deadline:
            os.write(wr, b"q")
            break
        os.write(wr, b"x")
    return n, moves, time.process_time() - t0


def main():
    secs, nice = float(sys.argv[1]), int(sys.argv[2])
    a_rd, a_wr = os.pipe()  # parent -> child
    b_rd, b_wr = os.pipe()  # child -> parent
    res_rd, res_wr = os.pipe()
    deadline = time.monotonic() + secs
    pid = os.fork()
    os.setpriority(os.PRIO_PROCESS, 0, nice)
    if pid == 0:
        _, moves, used = play(a_rd, b_wr, False, deadline)
        os.write(res_wr, json.dumps([moves, used]).encode())
        os._exit(0)
    n, moves, used = play(b_rd, a_wr, True, deadline)
    os.close(res_wr)
    child_moves, child_cpu = json.loads(os.read(res_rd, 4096))
    os.waitpid(pid, 0)
    print(json.dumps({"round_trips": n, "moves": moves + child_moves,
                      "cpu_s": round(used + child_cpu, 3)}))


if __name__ == "__main__":
    main()
