#!/usr/bin/env python3
"""Checks the figures of a --report-json file for internal consistency.

    check_report.py FILE.jsonl [--min-wakeups N]

Every line parses; the header names the bucket bounds; in every interval
record, for both latency classes: bucket counts sum to the wakeup count,
p50 <= p99 <= p99.9 <= max, the tail shares are nested
(>1 ms >= >4.2 ms >= >16.8 ms) and agree with the buckets, and the counts
of the probe, boost and level histograms agree with the counters. Prints
one line per problem and exits 1 if there was any.
"""
import json
import sys


def main():
    path = sys.argv[1]
    min_wakeups = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--min-wakeups" else 1
    problems = []
    lines = open(path).read().splitlines()
    recs = []
    for n, line in enumerate(lines, 1):
        try:
            recs.append(json.loads(line))
        except ValueError as e:
            problems.append(f"line {n}: not JSON: {e}")
    if not recs or recs[0].get("type") != "header":
        problems.append("first record is not a header")
        return report(problems)
    bounds = recs[0]["lat_bucket_lower_ns"]
    slack = 2 * recs[0]["nr_cpus"]
    close = lambda a, b: abs(a - b) <= slack
    intervals = [r for r in recs if r.get("type") == "interval"]
    if not intervals:
        problems.append("no interval records")
    wakeups = 0
    for r in intervals:
        i = r["index"]
        for cls, key in (("int", "lat_interactive"), ("oth", "lat_other")):
            h = r["hist"][key]
            n = r[f"{cls}_count"]
            wakeups += n
            if len(h) != len(bounds):
                problems.append(f"#{i} {key}: {len(h)} buckets, header has {len(bounds)} bounds")
            if sum(h) != n:
                problems.append(f"#{i} {key}: buckets sum to {sum(h)}, count is {n}")
            if n == 0:
                continue
            p50, p99, p999, mx = (r[f"{cls}_{k}"] for k in ("p50_us", "p99_us", "p999_us", "max_us"))
            if not (p50 <= p99 <= p999 <= mx):
                problems.append(f"#{i} {cls}: percentiles out of order p50 {p50} p99 {p99} p99.9 {p999} max {mx}")
            t1, t4, t16 = (r[f"{cls}_over_{k}_pct"] for k in ("1ms", "4ms", "16ms"))
            if not (100 >= t1 >= t4 >= t16 >= 0):
                problems.append(f"#{i} {cls}: tails not nested >1ms {t1} >4.2ms {t4} >16.8ms {t16}")
            for edge, got in ((1 << 20, t1), (1 << 22, t4), (1 << 24, t16)):
                want = 100.0 * sum(c for c, b in zip(h, bounds) if b >= edge) / n
                if abs(want - got) > 1e-9:
                    problems.append(f"#{i} {cls}: share >= {edge} ns is {got}, buckets say {want}")
        hsum = sum(r["hist"]["lat_interactive"]) + sum(r["hist"]["lat_other"])
        if not close(hsum, r["wakeups"]):
            problems.append(f"#{i}: latency buckets hold {hsum} wakeups, the wakeup counter {r['wakeups']}")
        calls = r["dispatch"] + r["dispatch_empty"] + r["dispatch_keep"]
        if not close(sum(r["hist"]["probes"]), calls):
            problems.append(f"#{i}: probe histogram holds {sum(r['hist']['probes'])} calls, counters {calls}")
        probes = sum(k * c for k, c in enumerate(r["hist"]["probes"]))
        # a dispatch call counts its probes one by one, its histogram entry
        # at the end: up to max_probes in flight per call; the last entry
        # counts calls of that many probes or more (more than one LLC), so
        # with it non-zero the histogram's sum is only a lower bound
        top = len(r["hist"]["probes"]) - 1
        low = probes - slack * top
        if r["probes"] < low or (not r["hist"]["probes"][top] and r["probes"] > probes + slack * top):
            problems.append(f"#{i}: probe histogram sums to {probes} probes, counter {r['probes']}")
        for key in ("boost", "levels"):
            if not close(sum(r["hist"][key]), r["enqueue"]):
                problems.append(f"#{i}: {key} histogram holds {sum(r['hist'][key])}, enqueue is {r['enqueue']}")
        if r["insert_fail"] != 0:
            problems.append(f"#{i}: insert_fail {r['insert_fail']}")
    if wakeups < min_wakeups:
        problems.append(f"only {wakeups} wakeups recorded, expected at least {min_wakeups}")
    return report(problems, len(intervals), wakeups)


def report(problems, nint=0, wakeups=0):
    for p in problems:
        print(p)
    if not problems:
        print(f"report consistent: {nint} intervals, {wakeups} wakeups")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
