#!/usr/bin/env bash
# The --prometheus file, checked with Prometheus' own tools on the host
# (no scheduler needed): the daemon's hidden --prometheus-sample PATH writes
# the file through the real writer from three intervals of synthetic
# figures, and then
#   - promtool check metrics (Debian: prometheus) parses it with the Go
#     text-format parser that node_exporter's textfile collector uses, and
#     lints it (HELP on every family, _total on counters, base units...);
#   - prometheus_client's parser (Debian: python3-prometheus-client) reads
#     it back for what promtool does not check: the run_id is a label of
#     scx_soryu_info and of no other series, each histogram is cumulative
#     with +Inf = _count and a _sum,
#     the families and their types are the documented ones, no series twice.
#   - node_exporter (Debian: prometheus-node-exporter) reads the file with
#     its textfile collector, as on a machine, and must serve exactly its
#     series with node_textfile_scrape_error 0.
# Deliberately broken copies must fail those same checks, so that they
# cannot pass vacuously. Counters that keep counting across intervals and
# reloads, the atomic replace and the failure paths are unit tests
# (src/prometheus.rs, src/report.rs).
#
#   tests/host/prometheus.sh [BIN]     (default target/release/scx_soryu)
#
# One line per check, then "N passed, M failed"; non-zero exit on a failure.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
bin=${1:-$repo/target/release/scx_soryu}

# shellcheck source=tests/host/lib.sh
. "$repo/tests/host/lib.sh"
show() { sed 's/^/     | /' "$1"; }

ne_pid=
stop_node_exporter() {
  if [ -n "$ne_pid" ]; then kill "$ne_pid" 2>/dev/null || true; wait "$ne_pid" 2>/dev/null || true; fi
}
CLEANUP=stop_node_exporter
checks_begin

[ -x "$bin" ] || { bad "no binary $bin: build it first (cargo build --release)"; exit 1; }

# The tools. A missing one is a failure, not a skip: without them nothing
# here is checked.
# scripts/install-deps.sh unpacks promtool and node_exporter from Debian's
# packages into a cache rather than installing them (their packages would
# enable a Prometheus server and an exporter on the machine).
tools=${SORYU_TOOLS_CACHE:-/var/cache/scx_soryu/tools}
promtool=${PROMTOOL:-$(command -v promtool || command -v "$tools/promtool" || true)}
if [ -z "$promtool" ] || ! "$promtool" --version >/dev/null 2>&1; then
  bad "promtool is missing (run scripts/install-deps.sh)"
  promtool=
else
  echo "using $("$promtool" --version 2>&1 | head -n1)"
fi
# Debian's module is on /usr/bin/python3's path; a python3 first on PATH
# (a pyenv or venv one) may not see it.
py=
for p in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import prometheus_client' 2>/dev/null; then
    py=$p
    break
  fi
done
if [ -z "$py" ]; then
  bad "no python3 with prometheus_client (Debian: apt-get install python3-prometheus-client)"
else
  echo "using $py, prometheus_client $("$py" -c 'import importlib.metadata as m; print(m.version("prometheus_client"))' 2>/dev/null || echo '?')"
fi

ne=${NODE_EXPORTER:-$(command -v prometheus-node-exporter || command -v node_exporter ||
  command -v "$tools/prometheus-node-exporter" || true)}
if [ -z "$ne" ] || ! "$ne" --version >/dev/null 2>&1; then
  bad "node_exporter is missing (run scripts/install-deps.sh)"
  ne=
else
  echo "using $("$ne" --version 2>&1 | head -n1)"
fi

# What promtool does not check, read back with prometheus_client's parser.
# check.py FILE RUN_ID HIST(1|0): one line on stdout, exit 1 on the first
# problem.
cat >"$tmp/check.py" <<'PY'
import math
import sys

from prometheus_client.parser import text_string_to_metric_families

path, run_id, hist = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
text = open(path, encoding="utf-8").read()


def fail(msg):
    print(msg)
    sys.exit(1)


try:
    families = list(text_string_to_metric_families(text))
except Exception as e:  # the parser's own refusal
    fail(f"prometheus_client cannot parse it: {e!r}")

# The documented families (docs/operations.md), by exposed name.
want = {
    "scx_soryu_info": "gauge",
    "scx_soryu_start_time_seconds": "gauge",
    "scx_soryu_reports_total": "counter",
    "scx_soryu_wakeups_total": "counter",
    "scx_soryu_enqueues_total": "counter",
    "scx_soryu_pinned_enqueues_total": "counter",
    "scx_soryu_smt_moves_total": "counter",
    "scx_soryu_direct_dispatches_total": "counter",
    "scx_soryu_sync_local_wakeups_total": "counter",
    "scx_soryu_preempt_local_wakeups_total": "counter",
    "scx_soryu_cache_hot_dispatches_total": "counter",
    "scx_soryu_dispatch_calls_total": "counter",
    "scx_soryu_dispatch_probes_total": "counter",
    "scx_soryu_dispatch_remote_reads_total": "counter",
    "scx_soryu_starve_serves_total": "counter",
    "scx_soryu_preempt_attempts_total": "counter",
    "scx_soryu_preempt_scans_total": "counter",
    "scx_soryu_preempt_fallbacks_total": "counter",
    "scx_soryu_victim_reads_total": "counter",
    "scx_soryu_insert_failures_total": "counter",
    "scx_soryu_bitmap_clears_total": "counter",
    "scx_soryu_bitmap_repairs_total": "counter",
    "scx_soryu_stale_kicks_total": "counter",
    "scx_soryu_tasks_running": "gauge",
    "scx_soryu_wake_to_run_max_seconds": "gauge",
    "scx_soryu_queued_wait_max_seconds": "gauge",
    "scx_soryu_starve_bound_seconds": "gauge",
    "scx_soryu_kernel_events_total": "counter",
    "scx_soryu_bpf_calls_total": "counter",
    "scx_soryu_bpf_run_seconds_total": "counter",
}
hists = {
    "scx_soryu_wake_to_run_seconds": "histogram",
    "scx_soryu_dispatch_probes_per_call": "histogram",
    "scx_soryu_enqueues_by_level_total": "counter",
    "scx_soryu_enqueues_by_boost_total": "counter",
}
if hist:
    want.update(hists)

got = {}
seen = set()
for f in families:
    if not f.samples:
        fail(f"family {f.name} has no sample")
    if not f.documentation:
        fail(f"family {f.name} has no HELP")
    # prometheus_client names a counter family without its _total
    name = f.name + "_total" if f.type == "counter" else f.name
    if name in got:
        fail(f"family {name} appears twice")
    got[name] = f.type
    for s in f.samples:
        want_id = run_id if f.name == "scx_soryu_info" else None
        if s.labels.get("run_id") != want_id:
            fail(f"{s.name}{s.labels}: run_id is {s.labels.get('run_id')!r}, not {want_id!r}")
        key = (s.name, tuple(sorted(s.labels.items())))
        if key in seen:
            fail(f"series {s.name}{s.labels} twice")
        seen.add(key)
        if f.type == "counter" and not (s.value >= 0 and math.isfinite(s.value)):
            fail(f"counter {s.name}{s.labels} = {s.value}")
    if f.type == "histogram":
        series = {}
        for s in f.samples:
            rest = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
            series.setdefault(rest, {"buckets": [], "sum": None, "count": None})
            if s.name == f.name + "_bucket":
                series[rest]["buckets"].append((float(s.labels["le"]), s.value))
            elif s.name == f.name + "_sum":
                series[rest]["sum"] = s.value
            elif s.name == f.name + "_count":
                series[rest]["count"] = s.value
        for rest, h in series.items():
            b = h["buckets"]
            where = f"{f.name}{dict(rest)}"
            if not b or b[-1][0] != math.inf:
                fail(f"{where}: no +Inf bucket last")
            if any(x[0] >= y[0] for x, y in zip(b, b[1:])):
                fail(f"{where}: le not strictly increasing")
            if any(x[1] > y[1] for x, y in zip(b, b[1:])):
                fail(f"{where}: bucket counts not cumulative")
            if h["count"] is None or h["count"] != b[-1][1]:
                fail(f"{where}: _count {h['count']} is not the +Inf bucket {b[-1][1]}")
            if h["sum"] is None or not h["sum"] >= 0:
                fail(f"{where}: _sum missing or negative")

if got != want:
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    typed = sorted(n for n in set(want) & set(got) if want[n] != got[n])
    fail(f"families differ: missing {missing}, unexpected {extra}, wrong type {typed}")
classes = {
    s.labels.get("class")
    for f in families
    if f.name == "scx_soryu_wake_to_run_seconds"
    for s in f.samples
}
if hist and classes != {"interactive", "other"}:
    fail(f"wake-to-run classes are {classes}")
print(f"{len(families)} families, {len(seen)} series")
PY

# promtool_clean FILE: promtool parses and lints it without a word.
promtool_clean() {
  local out rc=0
  out=$("$promtool" check metrics <"$1" 2>&1) || rc=$?
  if [ "$rc" = 0 ] && [ -z "$out" ]; then return 0; fi
  echo "     | promtool exit status $rc"
  [ -z "$out" ] || sed 's/^/     | /' <<<"$out" | head -n 5
  return 1
}
# pyclean FILE RUN_ID HIST
pyclean() {
  local out rc=0
  out=$("$py" "$tmp/check.py" "$@" 2>&1) || rc=$?
  echo "     | $out" | head -n 3
  return "$rc"
}

# ---- the sample, as the daemon writes it
d="$tmp/textfile"
mkdir -p "$d"
f="$d/scx_soryu.prom"
if "$bin" --prometheus-sample "$f" --run-id host-test >"$tmp/sample.log" 2>&1 && [ -s "$f" ]; then
  ok "--prometheus-sample writes $(wc -l <"$f") lines"
else
  bad "--prometheus-sample failed"
  show "$tmp/sample.log"
  exit 1
fi
if [ "$(ls -A "$d")" = scx_soryu.prom ]; then
  ok "nothing but the file is left in its directory (the temporary file was renamed)"
else
  bad "left in the directory: $(ls -A "$d" | tr '\n' ' ')"
fi
if [ "$(stat -c %a "$f")" = 644 ]; then
  ok "mode 644: node_exporter (user prometheus) can read it"
else
  bad "mode $(stat -c %a "$f"), node_exporter may not read it"
fi

if [ -n "$promtool" ]; then
  if promtool_clean "$f"; then
    ok "promtool check metrics: parsed and linted, no problem"
  else
    bad "promtool check metrics refuses the file"
  fi
fi
if [ -n "$py" ]; then
  if pyclean "$f" host-test 1; then
    ok "prometheus_client: documented families and types, run_id on scx_soryu_info only, histograms cumulative with +Inf = _count and _sum"
  else
    bad "prometheus_client checks"
  fi
fi

# ---- a reader beside the writer: every read is a whole file
# The file is replaced after every interval while node_exporter may be
# reading it. A reader opens and reads it as fast as it can while sample
# runs (three intervals each) replace it 900 times: each read must be a
# whole file (as many lines as the sample has, the last one ended). A
# plain in-place write (open with truncation, then write) shows a reader
# an empty or partial file (tried: see docs/testing.md).
cat >"$tmp/reader.py" <<'PY'
import os
import sys

path, stop, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
reads = torn = 0
example = "-"
while not os.path.exists(stop):
    with open(path, "rb") as f:
        data = f.read()
    reads += 1
    lines = data.count(b"\n")
    if not (data.endswith(b"\n") and lines == want):
        torn += 1
        example = f"{len(data)}_bytes_{lines}_lines"
print(reads, torn, example)
PY
want=$(wc -l <"$f")
python3 "$tmp/reader.py" "$f" "$tmp/stop-reader" "$want" >"$tmp/reader.out" &
reader=$!
sleep 0.2
for i in $(seq 300); do "$bin" --prometheus-sample "$f" --run-id host-test >/dev/null 2>&1 || true; done
touch "$tmp/stop-reader"
wait "$reader" || true
read -r reads torn example <"$tmp/reader.out" || true
if [ "${reads:-0}" -ge 1000 ] && [ "$torn" = 0 ]; then
  ok "a reader beside 900 replacements: $reads reads, every one a whole file of $want lines"
else
  bad "a reader beside 900 replacements: ${reads:-no} reads, ${torn:-?} of them not a whole file of $want lines (e.g. ${example:-?})"
fi

# ---- node_exporter serves it
# same.py FILE SCRAPE: the scx_soryu series of FILE and of node_exporter's
# SCRAPE are the same (names, labels, values; order and label order aside).
cat >"$tmp/same.py" <<'PY'
import sys

from prometheus_client.parser import text_string_to_metric_families


def series(text):
    return {
        (s.name, tuple(sorted(s.labels.items())), s.value)
        for f in text_string_to_metric_families(text)
        if f.name.startswith("scx_soryu_")
        for s in f.samples
    }


a = series(open(sys.argv[1], encoding="utf-8").read())
b = series(open(sys.argv[2], encoding="utf-8").read())
if a != b or not a:
    print(f"{len(a - b)} series of the file not served, {len(b - a)} served but not in the file")
    sys.exit(1)
print(f"{len(a)} series")
PY
# scrape PORT OUT: GET /metrics into OUT.
scrape() {
  python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode())' "$1" >"$2"
}
if [ -n "$ne" ]; then
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$ne" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults --collector.textfile \
    --collector.textfile.directory="$d" >"$tmp/ne.log" 2>&1 &
  ne_pid=$!
  for _ in $(seq 50); do
    scrape "$port" "$tmp/scrape.txt" 2>/dev/null && break
    sleep 0.1
  done
  if grep -qx 'node_textfile_scrape_error 0' "$tmp/scrape.txt" 2>/dev/null; then
    ok "node_exporter's textfile collector reads it: node_textfile_scrape_error 0"
  else
    bad "node_exporter: no scrape, or a scrape error"
    show "$tmp/ne.log"
  fi
  if [ -n "$py" ]; then
    if out=$("$py" "$tmp/same.py" "$f" "$tmp/scrape.txt" 2>&1); then
      ok "node_exporter serves every series of the file as written: $out"
    else
      bad "node_exporter serves other series than the file's: $out"
    fi
  fi
  # a broken file must show as a scrape error
  sed '0,/kernel="/s/kernel="/kernel="a"b/' "$f" >"$d/broken.prom"
  if scrape "$port" "$tmp/scrape2.txt" && grep -qx 'node_textfile_scrape_error 1' "$tmp/scrape2.txt"; then
    ok "node_exporter reports a scrape error for a broken copy beside it"
  else
    bad "node_exporter accepts a broken copy (no node_textfile_scrape_error 1)"
  fi
  rm -f "$d/broken.prom"
  kill "$ne_pid" 2>/dev/null || true
  wait "$ne_pid" 2>/dev/null || true
  ne_pid=
fi

# ---- the default run id, and --no-hist
g="$tmp/default.prom"
"$bin" --prometheus-sample "$g" >/dev/null 2>&1 || true
rid=$(sed -n 's/^scx_soryu_info{run_id="\([^"]*\)".*/\1/p' "$g" 2>/dev/null || true)
if [[ "$rid" =~ ^[0-9]{13}-[0-9]+$ ]]; then
  ok "default run_id is <ms since the epoch>-<pid>: $rid"
else
  bad "default run_id '$rid' is not <ms>-<pid>"
fi
n="$tmp/nohist.prom"
if "$bin" --prometheus-sample "$n" --no-hist --run-id nohist >/dev/null 2>&1 &&
  ! grep -q '^# TYPE .* histogram$' "$n" && grep -q 'hist="false"' "$n"; then
  ok "--no-hist: no histogram family, scx_soryu_info says hist=\"false\""
else
  bad "--no-hist sample"
fi
if [ -n "$promtool" ] && [ -s "$n" ]; then
  if promtool_clean "$n"; then ok "promtool accepts the --no-hist file"; else bad "promtool refuses the --no-hist file"; fi
fi
if [ -n "$py" ] && [ -s "$n" ]; then
  if pyclean "$n" nohist 0 >/dev/null; then ok "prometheus_client checks pass on the --no-hist file"; else bad "prometheus_client checks on the --no-hist file"; fi
fi

# ---- broken copies: each must fail the check named
# broken NAME CHECKER SED-SCRIPT: a copy of the sample edited by SED-SCRIPT
# must be refused by CHECKER (promtool or python).
broken() {
  local name=$1 checker=$2 script=$3 copy="$tmp/broken.prom" rc=0
  sed -e "$script" "$f" >"$copy"
  if cmp -s "$f" "$copy"; then
    bad "broken copy '$name': the edit changed nothing (the test is stale)"
    return
  fi
  case $checker in
    promtool) [ -n "$promtool" ] || return 0; promtool_clean "$copy" >/dev/null || rc=$? ;;
    python) [ -n "$py" ] || return 0; pyclean "$copy" host-test 1 >/dev/null || rc=$? ;;
  esac
  if [ "$rc" = 0 ]; then
    bad "$checker accepts a copy with $name"
  else
    ok "$checker refuses a copy with $name"
  fi
}
broken "an unescaped quote in a label value" promtool '0,/kernel="/s/kernel="/kernel="a"b/'
broken "a counter without _total" promtool 's/scx_soryu_wakeups_total/scx_soryu_wakeups/g'
broken "a family's HELP given twice" promtool '0,/^# TYPE scx_soryu_enqueues_total/s/^# TYPE scx_soryu_enqueues_total.*/&\n# HELP scx_soryu_enqueues_total again/'
broken "an info metric of another run" python '0,/^scx_soryu_info{run_id="host-test"/s/run_id="host-test"/run_id="other"/'
broken "a series with a run_id" python 's/^scx_soryu_enqueues_total /scx_soryu_enqueues_total{run_id="host-test"} /'
broken "buckets that are not cumulative" python '/class="interactive",le="0.000262143"/s/} [0-9]*$/} 0/'
broken "a _count that is not the +Inf bucket" python '/^scx_soryu_wake_to_run_seconds_count{class="other"}/s/} [0-9]*$/} 1/'
broken "no _sum" python '/^scx_soryu_wake_to_run_seconds_sum{class="other"}/d'
broken "a family missing" python '/^scx_soryu_insert_failures_total/d;/^# [A-Z]* scx_soryu_insert_failures_total/d'
broken "a series twice" python '/^scx_soryu_tasks_running /p'

# ---- flags
help=$("$bin" --help)
if grep -q -- '--prometheus <PATH|auto>' <<<"$help" && grep -q -- '--run-id <ID>' <<<"$help" &&
  ! grep -q -- '--prometheus-sample' <<<"$help"; then
  ok "--help lists --prometheus and --run-id, hides --prometheus-sample"
else
  bad "--help: --prometheus/--run-id missing or --prometheus-sample shown"
fi
# refuses WHAT PATTERN ARGS...: one line on stderr matching PATTERN, exit != 0.
refuses() {
  local what=$1 pat=$2 err rc=0
  shift 2
  err=$("$bin" "$@" 2>&1 >/dev/null) || rc=$?
  if [ "$rc" != 0 ] && grep -qE -- "$pat" <<<"$err" && [ "$(grep -c . <<<"$err")" = 1 ]; then
    ok "refused: $what: $err"
  else
    bad "$what: exit status $rc, '$err'"
  fi
}
refuses "--prometheus in a missing directory" "directory /nonexistent/dir does not exist" \
  --prometheus /nonexistent/dir/m.prom
refuses "--prometheus naming a directory" "is a directory" --prometheus "$tmp"
refuses "--prometheus with --report-sec 0" "report-sec 0 turns reports off" --prometheus "$tmp/m.prom" --report-sec 0
refuses "--run-id with a space" "run-id takes 1 to 128 printable" --run-id "a b"
refuses "--prometheus-sample in a missing directory" "cannot write /nonexistent/dir/m.prom" \
  --prometheus-sample /nonexistent/dir/m.prom

# ---- the shipped flags file turns it on where node_exporter's directory is
flags=$(sed -n 's/^SCX_FLAGS=//p' service/scx_soryu.default | tail -n1)
flags=${flags#\"}
flags=${flags%\"}
if [[ " $flags " == *" --prometheus auto "* ]]; then
  ok "the shipped SCX_FLAGS ($flags) write the metrics where node_exporter reads them"
else
  bad "the shipped SCX_FLAGS ($flags) lack --prometheus auto"
fi
# shellcheck disable=SC2086 # split as systemd splits $SCX_FLAGS
if "$bin" $flags --prometheus-sample "$tmp/flags.prom" >/dev/null 2>&1; then
  ok "the shipped SCX_FLAGS pass the daemon's checks"
else
  bad "the daemon refuses the shipped SCX_FLAGS"
fi

checks_done
