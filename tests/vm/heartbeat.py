#!/usr/bin/env python3
"""An outside clock for the VM tests.

    chrt -f 10 python3 tests/vm/heartbeat.py PID >FILE &

Every 0.2 s prints the time (s), then the run time and the run_delay of
PID's main thread (ns on a CPU, ns runnable but not running, from
/proc/PID/schedstat), until PID ends. Under SCHED_FIFO no sched_ext
scheduler can hold it up (sched_ext runs below the RT class), so a gap in
its lines means the whole guest stopped (the emulator or its host), not the
scheduler under test; a run_delay that grows means PID waited for a CPU.
"""
import sys
import time


def main() -> int:
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        print("usage: heartbeat.py PID", file=sys.stderr)
        return 2
    path = f"/proc/{sys.argv[1]}/schedstat"
    while True:
        try:
            with open(path) as f:
                run, delay = f.read().split()[:2]
        except (FileNotFoundError, ProcessLookupError):
            return 0  # PID ended
        print(f"{time.time():.6f} {run} {delay}", flush=True)
        time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main())
