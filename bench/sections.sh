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
# Settings: SORYU_SECTIONS_JOBS (3 runs of `hackbench -g 4 -l 50`),
# SORYU_VM_CPUS (2). The build is separate from target/release; the first
# one takes as long as a release build.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
if [ "${1:-}" = --in-guest ]; then
  . tests/vm/lib.sh
  sysctl -qw kernel.bpf_stats_enabled=1
  hb=$(command -v hackbench) || { echo "bench/sections.sh: no hackbench in the guest (scripts/install-deps.sh installs rt-tests)" >&2; exit 1; }
  case_begin sections
  if sched_start --report-sec 2 && sched_wait_enabled; then
    # the benchmark's own waker, as bench/workloads.py defines it
    mapfile -t waker_cmd < <(python3 -c 'import sys; sys.path.insert(0, "bench"); from workloads import cyclictest_cmd
print("\n".join(cyclictest_cmd(0, sys.argv[1])))' "$SORYU_OUT/cyclictest.json")
    if [ "${#waker_cmd[@]}" -gt 1 ]; then
      "${waker_cmd[@]}" >/dev/null &
      waker=$!
      for _ in $(seq "${SORYU_SECTIONS_JOBS:-3}"); do "$hb" -g 4 -l 50 | grep Time; done
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
  '' | *[!0-9]* | 0) echo "bench/sections.sh: SORYU_SECTIONS_JOBS=$SORYU_SECTIONS_JOBS is not a positive count of hackbench runs" >&2; exit 2 ;;
esac
export SORYU_SECTIONS_JOBS
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
print(f"results: {out}; {os.environ.get('SORYU_SECTIONS_JOBS')} runs of hackbench -g 4 -l 50 beside the waker\n")
print("| section | calls | ms | ns per call |\n|---|---|---|---|")
for i, name in enumerate(names):
    c, ns = vals.get(i + n, 0), vals.get(i, 0)
    print(f"| {name.lower()} | {c} | {ns / 1e6:.1f} | {ns // c if c else '-'} |")
print("\n| callback (bpf_stats) | calls | ms | ns per call |\n|---|---|---|---|")
for p in json.load(open(os.path.join(out, "progs.json"))):
    if p.get("name", "").startswith("soryu_") and p.get("run_cnt"):
        print(f"| {p['name']} | {p['run_cnt']} | {p['run_time_ns'] / 1e6:.1f} | {p['run_time_ns'] // p['run_cnt']} |")
PY
