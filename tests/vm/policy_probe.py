#!/usr/bin/env python3
"""Workloads for the policy VM test, each measuring itself with its own
clock (never with the scheduler's figures).

    policy_probe.py waker PERIOD_MS SECS NICE
        Sleeps PERIOD_MS (+ up to 4 ms of jitter) at a time for SECS at
        NICE, running ~50 us per wakeup. Prints one JSON line: wakeups, and the oversleep (time from
        the timer's expiry to running again) at p50, p95 and max, in ms;
        and from the kernel's own account (run_delay in
        /proc/thread-self/schedstat: time runnable but not running) the
        longest wait on a runqueue over one sleep (max_wait_ms) and that
        over the sleep that overslept most (wait_at_max_ms). An oversleep
        without such a wait is the timer's, not the scheduler's.

    policy_probe.py gaps WARM SECS SHORT_MS
        Spins for WARM seconds, then for SECS more, noting every gap in its
        own progress longer than 0.2 ms (time it was off the CPU). Prints
        one JSON line: gaps, how many of them lasted SHORT_MS or more, and
        the longest (max_gap_ms).

    policy_probe.py duty RUN_MS SLEEP_MS SECS
        Runs RUN_MS of its own CPU time, sleeps SLEEP_MS, over and over for
        SECS: a task that wants most of a CPU and goes through wakeups all
        the time. CPU time, not the clock: a task kept waiting still wants
        its RUN_MS, so a queue of them never empties by itself.

    policy_probe.py boost KIND PIDFILE
        Writes the pid to inspect into PIDFILE, puts the task into a known
        boost state within ~2 s, then sleeps (blocked, so the state holds)
        for 60 s:
          sleeper  many short sleeps             (boost at its floor)
          hog      spins                          (boost at its ceiling)
          yield    short sleeps, sched_yield(), then the long sleep
          child    spins, then forks: the child's pid, the child sleeps
          wake     spins, sleeps 100 ms, runs briefly, then the long sleep
        The hog spins for good.
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


def duty(run_ms, sleep_ms, secs):
    end = clock() + secs
    while clock() < end:
        ran = time.thread_time() + run_ms / 1000.0
        while time.thread_time() < ran:
            pass
        time.sleep(sleep_ms / 1000.0)


def run_delay(fd):
    """This thread's time runnable but not running so far, in seconds."""
    return int(os.pread(fd, 128, 0).split()[1]) / 1e9


def waker(period_ms, secs, nice):
    os.setpriority(os.PRIO_PROCESS, 0, nice)
    period = period_ms / 1000.0
    late = []
    fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
    end = clock() + secs
    while clock() < end:
        # A jittered period: a task that wakes a fixed time after it ran
        # (which is at a tick when hogs share its CPU) would always wake at
        # the same phase of the tick and measure that phase, not the policy.
        p = period + random.uniform(0, 0.004)
        d = run_delay(fd)
        t = clock()
        time.sleep(p)
        over = clock() - t - p
        late.append((over, run_delay(fd) - d))
        spin(0.00005)
    os.close(fd)
    n = len(late)
    worst = max(late, default=(0.0, 0.0))
    late.sort()

    def q(f):
        return round(late[min(n - 1, int(f * n))][0] * 1000, 3) if n else None

    def ms(x):
        return round(x * 1000, 3) if n else None

    print(json.dumps({"wakeups": n, "p50_ms": q(0.5), "p95_ms": q(0.95), "max_ms": q(1.0),
                      "max_wait_ms": ms(max((w for _, w in late), default=0.0)),
                      "wait_at_max_ms": ms(worst[1])}))


def gaps(warm, secs, short_ms):
    n = long = 0
    worst = 0.0
    spin(warm)
    now = clock()
    end = now + secs
    while now < end:
        t = clock()
        gap = t - now
        now = t
        if gap > 0.0002:
            n += 1
            long += gap >= short_ms / 1000.0
            worst = max(worst, gap)
    print(json.dumps({"gaps": n, "long": long, "max_gap_ms": round(worst * 1000.0, 2)}))


def short_sleeps(n):
    for _ in range(n):
        spin(0.00005)
        time.sleep(0.002)


def publish(path, pid):
    with open(path + ".tmp", "w") as f:
        f.write(f"{pid}\n")
    os.rename(path + ".tmp", path)


def boost(kind, pidfile):
    # The pid goes out first: writing the file may block, and a block is a
    # sleep, which would move the boost after the sequence below.
    if kind != "child":
        publish(pidfile, os.getpid())
    if kind == "sleeper":
        short_sleeps(200)
    elif kind == "hog":
        while True:
            pass
    elif kind == "yield":
        short_sleeps(200)
        os.sched_yield()
    elif kind == "child":
        spin(1.0)
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        publish(pidfile, pid)
        os.waitpid(pid, 0)
        return
    elif kind == "wake":
        spin(1.0)
        time.sleep(0.1)
        spin(0.0002)
    else:
        sys.exit(f"unknown kind {kind}")
    time.sleep(60)


def main():
    if sys.argv[1] == "waker":
        waker(float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1] == "gaps":
        gaps(float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]))
    elif sys.argv[1] == "duty":
        duty(float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]))
    elif sys.argv[1] == "boost":
        boost(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
