#!/usr/bin/env bash
# Where soryu's callbacks spend their time, section by section
# (docs/performance.md): builds scx_soryu with -DSORYU_SECTIONS into
# target/sections (src/bpf/sections.bpf.c times the sections of intf.h's
# enum soryu_section), boots one VM, runs hackbench beside the
# benchmark's cyclictest waker under it, and prints each section's calls,
# time and time per call, beside each callback's from bpf_stats.
#
#   bench/sections.sh
#
# Settings: SORYU_SECTIONS_JOB (hackbench, the default: `hackbench -g 4
# -l 50`; compile: a clean `make -j` of Lua 5.4, bench/source.sh, after
# one untimed build under the default scheduler), SORYU_SECTIONS_JOBS (3
# runs of the job), SORYU_VM_CPUS (2). The build is separate from
# target/release; the first one takes as long as a release build.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
if [ "${1:-}" = --in-guest ]; then
  . tests/vm/lib.sh
  sysctl -qw kernel.bpf_stats_enabled=1
  if [ "$SORYU_SECTIONS_JOB" = compile ]; then
    # bench/workloads.py's tree and make command, as bench/profile.sh builds
    tree=$(python3 -c 'import sys; sys.path.insert(0, "bench"); from workloads import compile_tree; print(compile_tree("/tmp/sections"))') || exit 1
    mapfile -t job < <(python3 -c 'import sys; sys.path.insert(0, "bench"); from workloads import COMPILE_MAKE; print("\n".join(COMPILE_MAKE))')
    # untimed, under the default scheduler: the first build reads from disk
    (cd "$tree" && "${job[@]}" >/dev/null && make -s clean) || { echo "bench/sections.sh: the untimed build failed" >&2; exit 1; }
    run_job() {
      local TIMEFORMAT="Time: %R s"
      time (cd "$tree" && "${job[@]}" >/dev/null) && (cd "$tree" && make -s clean)
    }
  else
    hb=$(command -v hackbench) || { echo "bench/sections.sh: no hackbench in the guest (scripts/install-deps.sh installs rt-tests)" >&2; exit 1; }
    run_job() { "$hb" -g 4 -l 50 | grep Time; }
  fi
  case_begin sections
  if sched_start --report-sec 2 && sched_wait_enabled; then
    # the benchmark's own waker, as bench/workloads.py defines it
    mapfile -t waker_cmd < <(python3 -c 'import sys; sys.path.insert(0, "bench"); from workloads import cyclictest_cmd
print("\n".join(cyclictest_cmd(0, sys.argv[1])))' "$SORYU_OUT/cyclictest.json")
    if [ "${#waker_cmd[@]}" -gt 1 ]; then
      "${waker_cmd[@]}" >/dev/null &
      waker=$!
      for _ in $(seq "$SORYU_SECTIONS_JOBS"); do run_job || fail "the job failed"; done
      kill -INT "$waker"; wait "$waker" || true
    else
      fail "bench/workloads.py gave no cyclictest command"
    fi
    bpftool -j map dump name sections > "$SORYU_OUT/sections.json" || fail "bpftool could not read the sections map"
    bpftool -j prog show > "$SORYU_OUT/progs.json" || fail "bpftool could not list the programs"
    sched_stop; sched_wait_disabled
  fi
  case_end
  summary
  exit
fi
case ${SORYU_SECTIONS_JOBS:=3} in
  '' | *[!0-9]* | 0) echo "bench/sections.sh: SORYU_SECTIONS_JOBS=$SORYU_SECTIONS_JOBS is not a positive count of runs of the job" >&2; exit 2 ;;
esac
case ${SORYU_SECTIONS_JOB:=hackbench} in
  hackbench) ;;
  compile)
    # a copy inside this tree, where the guest can read it
    src=$(bench/source.sh "$repo/target/bench-src") || exit 1
    export SORYU_COMPILE_SRC=$src ;;
  *) echo "bench/sections.sh: SORYU_SECTIONS_JOB=$SORYU_SECTIONS_JOB is not a job; use hackbench or compile" >&2; exit 2 ;;
esac
export SORYU_SECTIONS_JOBS SORYU_SECTIONS_JOB
echo "bench/sections.sh: building with -DSORYU_SECTIONS into target/sections" >&2
BPF_EXTRA_CFLAGS_POST_INCL=-DSORYU_SECTIONS cargo build --release --quiet --target-dir target/sections
SORYU_BIN=$repo/target/sections/release/scx_soryu vm/run.sh --name sections bench/sections.sh --in-guest
python3 - "${SORYU_VM_RESULTS:-target/vm-results}/sections" src/bpf/intf.h <<'PY'
import json, os, re, sys
out, intf = sys.argv[1], open(sys.argv[2]).read()
# the section names, from the one definition in intf.h
body = intf[intf.index("enum soryu_section {"):]
names = re.findall(r"^\s*SORYU_SEC_(\w+),", body[:body.index("};")], re.M)

def num(x):
    """bpftool -j prints a value as a number, or as hex byte strings."""
    return x if isinstance(x, int) else int.from_bytes(bytes(int(b, 16) for b in x), "little")

vals = {num(e["key"]): num(e["value"]) for e in json.load(open(os.path.join(out, "sections.json")))}
n = len(names)
job = {"compile": "a clean make -j of Lua"}.get(os.environ.get("SORYU_SECTIONS_JOB"), "hackbench -g 4 -l 50")
print(f"results: {out}; {os.environ.get('SORYU_SECTIONS_JOBS')} runs of {job} beside the waker\n")
print("| section | calls | ms | ns per call |\n|---|---|---|---|")
for i, name in enumerate(names):
    c, ns = vals.get(i + n, 0), vals.get(i, 0)
    print(f"| {name.lower()} | {c} | {ns / 1e6:.1f} | {ns // c if c else '-'} |")
print("\n| callback (bpf_stats) | calls | ms | ns per call |\n|---|---|---|---|")
for p in json.load(open(os.path.join(out, "progs.json"))):
    if p.get("name", "").startswith("soryu_") and p.get("run_cnt"):
        print(f"| {p['name']} | {p['run_cnt']} | {p['run_time_ns'] / 1e6:.1f} | {p['run_time_ns'] // p['run_cnt']} |")
PY
