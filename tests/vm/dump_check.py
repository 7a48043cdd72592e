#!/usr/bin/env python3
"""The whole debug dump a stall ejection left in the daemon's output.

    dump_check.py LOG STARVE_MS SLICE_US NR_LLCS COMM

LOG is scx_soryu's output after the kernel's watchdog ejected it for a
task named COMM; the run's --starve-ms and --slice-us, and its LLC count.
The dump (between "DEBUG DUMP" and the closing rule) must be whole and
every line soryu adds to it (src/bpf/dump.bpf.c) one of its own:

  soryu: vtime_now=V starve_ms=S slice_us=U         once, with the run's knobs
  soryu: llc L lvl_bitmap=0x.. starving=0x.. levels_running 0x..
                                                    once per LLC, 0..NR_LLCS-1
  soryu: llc L level V queued N last_served Tms ago  after its LLC's line, N > 0,
                                                    V's bit set in lvl_bitmap
  soryu: cpu C level L grant_pid P own_queue Q      inside CPU C's section, once
  soryu: task boost B level L queued_level Q waited Tms used_us U granted G
         cpus 0x.. n N                              one per task in a CPU
                                                    section, under that task
and the stalled task's own line says it waited about as long as the kernel
says it failed to run. Prints one line per finding ("ok ..." or "fail ...")
and exits 1 on a failure.
"""
import re
import sys

NR_LEVELS = 33
KNOBS = re.compile(r"soryu: vtime_now=\d+ starve_ms=(\d+) slice_us=(\d+)$")
LLC = re.compile(r"soryu: llc (\d+) lvl_bitmap=0x([0-9a-f]+) starving=0x[0-9a-f]+ levels_running 0x[0-9a-f]+$")
LEVEL = re.compile(r"soryu: llc (\d+) level (\d+) queued (\d+) last_served \d+ms ago$")
CPU = re.compile(r"soryu: cpu (\d+) level \d+ grant_pid \d+ own_queue \d+$")
TASK = re.compile(r"soryu: task boost -?\d+ level \d+ queued_level \d+ waited (\d+)ms used_us \d+ "
                  r"granted \d+ cpus 0x[0-9a-f]+ n \d+$")
CPU_HEAD = re.compile(r"CPU (\d+) +: nr_run=")
# " %c%c %s[%d] %+ldms" (6.12), " %c%c %s[%d] %s%s %+ldms" (later): a marker
# ('*' for the CPU's current task), any state letter the kernel's
# task_state_to_char() gives (an exiting task is 'Z' or 'X', a parked
# kthread 'P'), and a comm that may hold spaces or brackets.
TASK_HEAD = re.compile(r" [ *]([A-Za-z]) (.*)\[(\d+)\](?: \S+)? [-+]\d+ms$")


def main():
    if len(sys.argv) != 6:
        print("fail usage: dump_check.py LOG STARVE_MS SLICE_US NR_LLCS COMM")
        return 2
    log, starve, slc, nllc, comm = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    text = open(log, errors="replace").read().splitlines()
    fails = []
    try:
        a = text.index("DEBUG DUMP")
        b = next(i for i in range(a + 2, len(text)) if text[i].startswith("=" * 40))
    except (ValueError, StopIteration):
        print("fail no whole DEBUG DUMP section in the daemon's output")
        return 1
    dump = text[a + 2:b]
    m = re.search(rf"failed to run for (\d+)\.(\d+)s", "\n".join(dump))
    stall_ms = int(m[1]) * 1000 + int(m[2]) if m else None
    if stall_ms is None or not any(f"{comm}[" in line and "failed to run" in line for line in dump):
        fails.append(f"the dump does not say {comm} failed to run")
    if not any(line.startswith("Event counters") for line in dump):
        fails.append("the dump has no event counters at its end: cut short?")

    knobs, llcs, levels, cpus, tasks, heads = [], {}, 0, 0, 0, 0
    cpu = None          # the CPU section we are in
    task = None         # the task entry we are under: [comm, its soryu lines]
    stalled_wait = None
    for n, raw in enumerate(dump, a + 3):
        line = raw.strip()
        h = CPU_HEAD.match(raw)
        if h:
            cpu, task = int(h[1]), None
            continue
        t = TASK_HEAD.match(raw)
        if t and cpu is not None:
            if task is not None and task[1] != 1:
                fails.append(f"line {n}: task {task[0]} has {task[1]} soryu task lines, expected one")
            task = [t[2], 0]
            heads += 1
            continue
        if not line.startswith("soryu:"):
            continue
        if m := KNOBS.match(line):
            knobs.append((m[1], m[2]))
        elif m := LLC.match(line):
            llcs[int(m[1])] = int(m[2], 16)
        elif m := LEVEL.match(line):
            lc, lv, q = int(m[1]), int(m[2]), int(m[3])
            levels += 1
            if lc not in llcs:
                fails.append(f"line {n}: level {lv} of llc {lc} before that LLC's line")
            elif not (lv < NR_LEVELS and q > 0 and llcs[lc] >> lv & 1):
                fails.append(f"line {n}: {line} (level out of range, none queued, or its bit clear)")
        elif m := CPU.match(line):
            cpus += 1
            if int(m[1]) != cpu:
                fails.append(f"line {n}: {line} inside CPU {cpu}'s section")
        elif m := TASK.match(line):
            tasks += 1
            if task is None:
                fails.append(f"line {n}: a soryu task line under no task")
            else:
                task[1] += 1
                if task[0] == comm:
                    stalled_wait = int(m[1])
        else:
            fails.append(f"line {n}: not one of soryu's dump lines: {line}")
    if task is not None and task[1] != 1:
        fails.append(f"task {task[0]} has {task[1]} soryu task lines, expected one")

    if knobs != [(starve, slc)]:
        fails.append(f"soryu's knob line: {knobs}, expected one with starve_ms={starve} slice_us={slc}")
    if sorted(llcs) != list(range(nllc)):
        fails.append(f"soryu's LLC lines: {sorted(llcs)}, expected 0..{nllc - 1}")
    if cpus == 0 or heads == 0:
        fails.append(f"{cpus} soryu CPU lines and {heads} task entries: the CPU states are missing")
    if stalled_wait is None:
        fails.append(f"no soryu line for the stalled task {comm}")
    elif stall_ms is not None and stalled_wait < 0.9 * stall_ms:
        fails.append(f"the stalled task's line says it waited {stalled_wait} ms, the kernel {stall_ms} ms")
    for f in fails:
        print(f"fail {f}")
    if not fails:
        print(f"ok the whole dump: knobs, {len(llcs)} LLC(s), {levels} queued levels, {cpus} CPUs, "
              f"{tasks} tasks each with its soryu line; {comm} waited {stalled_wait} ms "
              f"(the kernel: {stall_ms} ms)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
