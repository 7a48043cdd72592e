#!/usr/bin/env bash
# What soryu's instrumentation costs: boots the VM, runs soryu with the
# histograms on and with --no-hist (bench/cost-guest.sh), with the kernel's
# per-program run-time accounting on (kernel.bpf_stats_enabled=1), and prints
# the mean ns per call of every BPF callback as a markdown table.
#
#   bench/cost.sh            (SORYU_COST_SECS=20 SORYU_COST_ROUNDS=2)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
vm/run.sh --name cost bench/cost-guest.sh
python3 - target/vm-results/cost <<'PY'
import collections, glob, json, os, sys
d = sys.argv[1]
# (config, callback) -> [calls, ns]
acc = collections.defaultdict(lambda: [0, 0.0])
for f in sorted(glob.glob(os.path.join(d, "cost-*.jsonl"))):
    cfg = "off (--no-hist)" if "nohist" in f else "on (default)"
    recs = [json.loads(l) for l in open(f)]
    for r in recs[2:]:          # skip the header and the warm-up interval
        for prog, c in r.get("bpf_cost", {}).items():
            a = acc[(cfg, prog)]
            a[0] += c["calls"]
            a[1] += c["calls"] * c["ns_per_call"]
if not acc:
    sys.exit("no bpf_cost figures: was kernel.bpf_stats_enabled set?")
cfgs = sorted({c for c, _ in acc}, reverse=True)
progs = sorted({p for _, p in acc})
print("| callback | " + " | ".join(f"histograms {c}: ns/call" for c in cfgs) + " | calls (on) |")
print("|---|" + "---|" * (len(cfgs) + 1))
for p in progs:
    cells = []
    for c in cfgs:
        calls, ns = acc.get((c, p), (0, 0))
        cells.append(f"{ns / calls:.0f}" if calls else "-")
    print(f"| {p.removeprefix('soryu_')} | " + " | ".join(cells) + f" | {acc[(cfgs[0], p)][0]} |")
PY
