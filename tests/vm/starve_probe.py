#!/usr/bin/env python3
"""A CPU hog that measures how long it is kept off the CPU.

    starve_probe.py SECONDS LABEL [nice N | idle | sleeper]

Sets its own nice value (or SCHED_IDLE), then spins for SECONDS of wall
time reading the monotonic clock and the kernel's run_delay for itself
(/proc/self/schedstat: the time it spent runnable but not running). A gap
between two consecutive readings is time the task was not running; the
run_delay that grew across it is the part the kernel counts as waiting on
a run queue, which leaves out a virtual CPU the host stopped while the task
was on it. Prints one JSON object: the label, the CPU time it got in that
window, its longest wait (max_wait_ms: the largest, over pairs of
consecutive readings, of the smaller of the gap and the run_delay growth),
its longest gap by its own clock (max_gap_ms) and how many gaps
exceeded 10 ms.

With GATE set in the environment, the probe first creates GATE.LABEL.ready
and waits for the file GATE to appear, so that a harness can start the
competing load only once every probe is past its (slow) start-up, and
start every probe's window together.

`sleeper` measures the platform instead: it sleeps 1 ms at a time as a
SCHED_FIFO task and reports the longest oversleep, the timer and wake-up
lateness that any waiting task also suffers (large under emulation, when
the host deschedules a virtual CPU), and which no scheduler of normal tasks
can add to.
"""
import json
import os
import resource
import sys
import time


def wait_for_gate(label):
    gate = os.environ.get("GATE")
    if not gate:
        return
    open(f"{gate}.{label}.ready", "w").close()
    while not os.path.exists(gate):
        time.sleep(0.01)


def main():
    secs, label = float(sys.argv[1]), sys.argv[2]
    if len(sys.argv) > 4 and sys.argv[3] == "nice":
        os.setpriority(os.PRIO_PROCESS, 0, int(sys.argv[4]))
    elif len(sys.argv) > 3 and sys.argv[3] == "idle":
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    elif len(sys.argv) > 3 and sys.argv[3] == "sleeper":
        wait_for_gate(label)
        return sleeper(secs, label)
    wait_for_gate(label)
    clock = time.monotonic
    fd = os.open("/proc/self/schedstat", os.O_RDONLY)

    def run_delay():
        # "<on cpu ns> <run_delay ns> <timeslices>"
        return int(os.pread(fd, 128, 0).split()[1])

    cpu0 = time.process_time()
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    start = last = clock()
    delay_last = run_delay()
    longest_gap = longest_wait = 0.0
    waits = readings = 0
    while last - start < secs:
        readings += 1
        now = clock()
        delay = run_delay()
        gap = now - last
        longest_gap = max(longest_gap, gap)
        # Both clocks only ever overstate a wait: the gap by a virtual CPU
        # the host stopped under the task, run_delay (measured) sometimes
        # by a stint already counted. The wait is at most the smaller.
        longest_wait = max(longest_wait, min(gap, (delay - delay_last) / 1e9))
        if gap > 0.010:
            waits += 1
        last, delay_last = now, delay
    print(json.dumps({
        "label": label,
        "cpu_s": round(time.process_time() - cpu0, 3),
        "max_wait_ms": round(longest_wait * 1000, 1),
        "max_gap_ms": round(longest_gap * 1000, 1),
        "waits_over_10ms": waits,
        # readings taken: with cpu_s, what one costs
        "readings": readings,
        # the window on CLOCK_MONOTONIC, the clock of the switch trace
        "window_mono_s": [round(start, 6), round(last, 6)],
        # times it blocked (a spinning task should not) and was preempted
        "nvcsw": resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw - ru0.ru_nvcsw,
        "nivcsw": resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw - ru0.ru_nivcsw,
    }))


def sleeper(secs, label):
    # SCHED_FIFO: above both the default scheduler's class and sched_ext, so
    # that its oversleep is the platform's (timers, virtual CPUs the host
    # did not run), whichever scheduler runs the normal tasks.
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
    clock = time.monotonic
    start = clock()
    late = 0.0
    while clock() - start < secs:
        t = clock()
        time.sleep(0.001)
        late = max(late, clock() - t - 0.001)
    print(json.dumps({"label": label, "max_late_ms": round(late * 1000, 1)}))


if __name__ == "__main__":
    main()
