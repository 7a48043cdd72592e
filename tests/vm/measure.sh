#!/usr/bin/env bash
# Measurement VM test: soryu's own figures under CPU hogs plus interactive
# wakers (pipe and futex ping-pong beside a hog per CPU).
#
#   vm/run.sh tests/vm/measure.sh
#
# Asserts that:
#   - the --report-json lines parse and are consistent (check_report.py:
#     bucket counts vs the wakeup counter, p50 <= p99 <= p99.9 <= max,
#     nested tails, histograms vs counters), with real wakeups recorded;
#   - `scx_soryu --monitor`, a second process, reads the running instance
#     over scx_stats and prints its figures;
#   - BPF callback costs appear when kernel.bpf_stats_enabled is on;
#   - the daemon's own loop is not held up: its main thread waits for a
#     CPU at most 0.5 s of any 2 s (run_delay, sampled by heartbeat.py);
#   - what the daemon does not make true by construction: intervals last
#     --report-sec (unless a SCHED_FIFO heartbeat, heartbeat.py, saw the
#     whole guest stop for long enough to explain a late one), dispatches
#     per interval fall once the load stops (per interval, not running
#     totals), the interactive class is not empty, and every stressor made
#     progress;
#   - the usual: enabled while running, exit 0, disabled after, clean dmesg.
#
# Then the daemon's other outputs, under the CI load:
#   stats       --stats 1 (with --report-sec 0, so only the stats thread
#               prints): a report line a second, numbered 0, 1, 2..., about
#               a second long, with dispatches;
#   prometheus  --prometheus FILE: while the daemon runs the file parses
#               (prometheus_client), carries the run's --run-id, and its
#               counters are the sums of the JSON report's intervals up to
#               the one it counts (reports, wakeups); it is removed at exit,
#               with no temporary file left;
#   compare     `scx_soryu compare` on the measure case's report: exit 0 on
#               like runs, a one-line refusal and a non-zero exit when one
#               header says another CPU count, exit 0 again with
#               --allow-mismatch cpus, which names the difference, and still
#               a refusal with --allow-mismatch kernel.
set -euo pipefail

# shellcheck source=tests/vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
secs=${SORYU_MEASURE_SECS:-20}

case_begin measure
sysctl -qw kernel.bpf_stats_enabled=1
if sched_start --report-sec 2 && sched_wait_enabled; then
  # The outside clock the interval lengths are judged against (below).
  chrt -f 10 python3 "$here/heartbeat.py" "$SCHED_PID" >"$SORYU_OUT/$CASE.heartbeat" 2>&1 &
  stress-ng --cpu "$(nproc)" --pipe 2 --futex 2 --timeout "$((secs + 30))s" --metrics-brief \
    --temp-path "$SORYU_OUT" >"$SORYU_OUT/$CASE.stress.log" 2>&1 &
  LOAD_PID=$!
  sleep 4
  # A second process reads the running instance; it loads nothing.
  timeout -s INT 8 "$SORYU_BIN" --monitor 2 >"$SORYU_OUT/$CASE.monitor.log" 2>&1 || true
  if ! grep -q '^\[soryu\] #' "$SORYU_OUT/$CASE.monitor.log"; then
    fail "--monitor printed no report: $(head -c 300 "$SORYU_OUT/$CASE.monitor.log" | tr '\n' '|')"
  fi
  grep -q 'wake->run interactive' "$SORYU_OUT/$CASE.monitor.log" ||
    fail "--monitor output lacks the wake->run lines"
  watch_running $((secs - 12))
  load_stop
  # Idle for three more intervals: per-interval figures must fall back,
  # where totals since start would not. The beat after the stop can come
  # up to 2 s later and still hold load, so three whole idle intervals
  # need 8 s; 9 leaves a margin for a late beat.
  sleep 9
  sched_stop
  sched_wait_disabled
fi
sysctl -qw kernel.bpf_stats_enabled=0
report_check
if [ -s "$SORYU_OUT/$CASE.jsonl" ]; then
  if ! python3 "$here/check_report.py" "$SORYU_OUT/$CASE.jsonl" --min-wakeups 200 >"$SORYU_OUT/$CASE.check.log" 2>&1; then
    fail "report figures inconsistent: $(head -n5 "$SORYU_OUT/$CASE.check.log" | tr '\n' '|')"
  fi
  jq -s -e 'map(select(.type == "interval") | .bpf_cost.soryu_enqueue.calls // 0) | add > 0' "$SORYU_OUT/$CASE.jsonl" >/dev/null ||
    fail "no bpf_cost figures although kernel.bpf_stats_enabled was 1"
  # Not true by construction: each record covers its own interval, the
  # first one too (the beat starts at the attach; it once started before
  # the load, and a CI run's slow load left the first two 0.15 and 0.43 s).
  # The SCHED_FIFO heartbeat (heartbeat.py) tells a daemon held up by
  # soryu (its main thread's run_delay grows) from a guest that stopped as
  # a whole (a gap in the heartbeat's own lines; CI saw one interval of
  # 4.06 s once, with nothing else to explain it). Only a stop long enough
  # to make up the whole lateness excuses an interval; it is then named.
  hb=$(awk 'NR > 1 && $1 - t > gap { gap = $1 - t }
            $3 ~ /^[0-9]+$/ { n++; at[n] = $1; d[n] = $3
                              while (at[n] - at[k + 1] > 2) k++
                              if (k && d[n] - d[k] > w) w = d[n] - d[k] }
            { t = $1 }
            END { printf "%.3f %.3f %d\n", gap - 0.2, w / 1e9, NR }' "$SORYU_OUT/$CASE.heartbeat" 2>/dev/null)
  read -r stop held beats <<<"${hb:-0 0 0}"
  # The daemon's threads hold the floor boost (soryu_init_task()): its loop
  # waits for a CPU 0.07 to 0.10 s of any 2 s under this load (four runs);
  # without the floor 1.4 to 2.3 s (five runs), and the reports came late.
  if [ "$beats" -gt 10 ]; then
    awk -v h="$held" 'BEGIN { exit !(h <= 0.5) }' ||
      echo "the daemon's main thread waited $held s for a CPU within 2 s (run_delay; at most 0.5 s: it holds the floor boost)" >>"$SORYU_OUT/$CASE.problems"
  else
    echo "the heartbeat recorded $beats beats: $(head -c 200 "$SORYU_OUT/$CASE.heartbeat" | tr '\n' '|')" >>"$SORYU_OUT/$CASE.problems"
  fi
  # (the interval the daemon stopped in is short by design: not judged)
  jq -s -r 'map(select(.type == "interval" and .final != true)) | "\(length) \(map(.duration_s) | min) \(map(.duration_s) | max)"' \
    "$SORYU_OUT/$CASE.jsonl" | {
    read -r n dmin dmax
    echo "$n intervals, $dmin..$dmax s; heartbeat: $beats beats, the guest's longest stop $stop s, the daemon's longest wait for a CPU within 2 s $held s" >>"$SORYU_OUT/$CASE.trace"
    if awk -v a="$dmin" -v b="$dmax" 'BEGIN { exit !(a >= 1.5 && b <= 3.0) }'; then
      :
    elif [ "$beats" -gt 10 ] && awk -v a="$dmin" -v b="$dmax" -v s="$stop" 'BEGIN { exit !(a >= 1.5 && s >= b - 2.5) }'; then
      echo "NOTE: an interval of $dmax s not judged: the whole guest stopped for $stop s (SCHED_FIFO heartbeat)" | tee -a "$SORYU_OUT/$CASE.trace"
    else
      echo "interval lengths $dmin..$dmax s, --report-sec 2 asks for 2 s (the guest's longest stop $stop s; the daemon waited for a CPU up to $held s within 2 s)" >>"$SORYU_OUT/$CASE.problems"
    fi
  }
  # Loaded intervals (all but the last four) against the idle ones at the
  # end (the last three full ones): dispatches per interval must drop, as
  # per-interval figures do and running totals cannot.
  busy=$(jq -s 'map(select(.type == "interval" and .final != true)) | .[1:-4] | map(.dispatch) | sort | .[length / 2 | floor]' "$SORYU_OUT/$CASE.jsonl")
  idle=$(jq -s 'map(select(.type == "interval" and .final != true)) | .[-3:] | map(.dispatch) | max' "$SORYU_OUT/$CASE.jsonl")
  check "dispatches per interval fall once the load stops (median under load, most idle): per-interval figures" \
    "b > 0 && i < 0.2 * b" b="$busy" i="$idle"
  check "the interactive class is not empty (pipe and futex wakers ran)" "n > 0" n="$(report_sum int_count)"
  [ ! -s "$SORYU_OUT/$CASE.problems" ] || fail "$(cat "$SORYU_OUT/$CASE.problems")"
  # stress-ng ran every stressor
  for st in cpu pipe futex; do stress_ran "$SORYU_OUT/$CASE.stress.log" "$st"; done
fi
grep -q 'bpf ns/call' "$SORYU_OUT/$CASE.sched.log" || fail "the text report has no 'bpf ns/call' line"
dmesg_check
case_end

case_begin stats
# (no --report-json: --report-sec 0 turns the reports off, which it needs)
"$SORYU_BIN" --stats 1 --report-sec 0 --kconfig "$SORYU_KCONFIG" >"$SORYU_OUT/$CASE.sched.log" 2>&1 &
SCHED_PID=$!
if sched_wait_enabled; then
  load_start 10
  watch_running 10
  sched_stop
  load_stop
  sched_wait_disabled
  # "[soryu] #N  L s | dispatch D ...": N counts from 0, L about 1 s
  lines=$(grep -E '^\[soryu\] #' "$SORYU_OUT/$CASE.sched.log" || true)
  trace "$(wc -l <<<"$lines") stats lines; first: $(head -n1 <<<"$lines")"
  check "stats lines in 10 s of --stats 1" "n >= 5" n="$(grep -c . <<<"$lines")"
  idx=$(sed -n 's/^\[soryu\] #\([0-9]*\) .*/\1/p' <<<"$lines" | tr '\n' ' ')
  [ "$idx" = "$(seq -s ' ' 0 $(($(grep -c . <<<"$lines") - 1))) " ] || fail "stats lines not numbered 0, 1, 2...: $idx"
  # the middle lines (the first starts at the monitor's first reading)
  awk '{ for (i = 1; i <= NF; i++) if ($i == "s" && $(i + 1) == "|") len = $(i - 1); for (i = 1; i <= NF; i++) if ($i == "dispatch") d = $(i + 1)
         if (NR > 1) { n++; if (len < 0.5 || len > 3 || d <= 0) bad = bad " #" NR - 1 " (" len " s, dispatch " d ")" } }
       END { if (!n) print "too few lines"; else if (bad) print bad }' <<<"$lines" >"$SORYU_OUT/$CASE.bad"
  [ ! -s "$SORYU_OUT/$CASE.bad" ] || fail "stats lines not a second long with dispatches: $(cat "$SORYU_OUT/$CASE.bad")"
fi
dmesg_check
case_end

case_begin prometheus
prom=$SORYU_OUT/$CASE.prom
if sched_start --report-sec 2 --prometheus "$prom" --run-id vm-prom && sched_wait_enabled; then
  load_start 12
  report_wait_past 2 || true
  sleep 1
  # a copy of the file as it stood, and the report records written by then
  cp "$prom" "$SORYU_OUT/$CASE.read.prom" 2>/dev/null || fail "no --prometheus file while the daemon runs"
  mode=$(stat -c %a "$prom" 2>/dev/null || true)
  [ "$mode" = 644 ] || fail "the --prometheus file's mode is '$mode', not 644 (node_exporter reads it as another user)"
  watch_running 4
  sched_stop
  load_stop
  sched_wait_disabled
  [ ! -e "$prom" ] || fail "the --prometheus file is still there after the daemon exited"
  left=$(find "$SORYU_OUT" -maxdepth 1 -name ".$CASE.prom.*" | head -n 3)
  [ -z "$left" ] || fail "temporary files left: $left"
  if [ -s "$SORYU_OUT/$CASE.read.prom" ]; then
    out=$(python3 - "$SORYU_OUT/$CASE.read.prom" "$SORYU_OUT/$CASE.jsonl" <<'PY' 2>&1
import json, sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
s = {}
info = False
for f in text_string_to_metric_families(text):
    for x in f.samples:
        # the run is named once, on the info metric: a run_id on every
        # series would make a new series per restart
        if x.name == "scx_soryu_info":
            info = True
            if x.labels.get("run_id") != "vm-prom":
                print(f"{x.name}{x.labels}: run_id is not vm-prom"); sys.exit(1)
        elif "run_id" in x.labels:
            print(f"{x.name}{x.labels}: a run_id beside the info metric's"); sys.exit(1)
        if not x.labels:
            s[x.name] = x.value
if not info:
    print("no scx_soryu_info sample"); sys.exit(1)
recs = [json.loads(l) for l in open(sys.argv[2])]
hdr, ivs = recs[0], [r for r in recs if r.get("type") == "interval"]
n = int(s["scx_soryu_reports_total"])
if hdr.get("run_id") != "vm-prom":
    print(f"the JSON header's run_id is {hdr.get('run_id')!r}"); sys.exit(1)
if not 2 <= n <= len(ivs):
    print(f"reports_total {n} with {len(ivs)} interval records"); sys.exit(1)
w = sum(r["wakeups"] for r in ivs[:n])
if s["scx_soryu_wakeups_total"] != w or w <= 0:
    print(f"wakeups_total {s['scx_soryu_wakeups_total']}, the first {n} intervals' wakeups sum to {w}"); sys.exit(1)
print(f"{n} reports, {w:.0f} wakeups, as the JSON report's first {n} intervals")
PY
) && trace "ok: --prometheus file: $out" || fail "the --prometheus file: $out"
  fi
fi
report_check
dmesg_check
case_end

case_begin compare
m=$SORYU_OUT/measure.jsonl
if [ ! -s "$m" ]; then
  fail "no report of the measure case to compare"
else
  # B: the same run, its header saying one more CPU
  jq -c 'if .type == "header" then .nr_cpus += 1 else . end' "$m" >"$SORYU_OUT/$CASE.b.jsonl"
  rc=0
  "$SORYU_BIN" compare "$m" "$m" >"$SORYU_OUT/$CASE.same.txt" 2>&1 || rc=$?
  [ "$rc" = 0 ] || fail "compare of like runs: exit status $rc: $(tail -n2 "$SORYU_OUT/$CASE.same.txt" | tr '\n' '|')"
  rc=0
  err=$("$SORYU_BIN" compare "$m" "$SORYU_OUT/$CASE.b.jsonl" 2>&1 >/dev/null) || rc=$?
  trace "compare of unlike runs: status $rc: $err"
  [ "$rc" != 0 ] || fail "compare of runs with other CPU counts: exit status 0"
  [ "$(grep -c . <<<"$err")" = 1 ] && grep -q 'measured under different conditions: the CPU count differs' <<<"$err" ||
    fail "compare's refusal is not one line naming the CPU count: $(head -c 300 <<<"$err")"
  ! grep -qiE 'panicked|backtrace' <<<"$err" || fail "compare panicked: $err"
  rc=0
  "$SORYU_BIN" compare --allow-mismatch cpus "$m" "$SORYU_OUT/$CASE.b.jsonl" >"$SORYU_OUT/$CASE.allow.txt" 2>&1 || rc=$?
  [ "$rc" = 0 ] && grep -q 'MISMATCH (--allow-mismatch cpus): the CPU count differs' "$SORYU_OUT/$CASE.allow.txt" ||
    fail "compare --allow-mismatch cpus: exit status $rc, $(grep -c MISMATCH "$SORYU_OUT/$CASE.allow.txt") MISMATCH lines"
  # allowing another difference does not allow this one
  rc=0
  "$SORYU_BIN" compare --allow-mismatch kernel "$m" "$SORYU_OUT/$CASE.b.jsonl" >/dev/null 2>&1 || rc=$?
  [ "$rc" != 0 ] || fail "compare --allow-mismatch kernel compared runs with other CPU counts"
fi
case_end

summary
