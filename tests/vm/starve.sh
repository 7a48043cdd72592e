#!/usr/bin/env bash
# The starvation matrix: no task starves, whatever the queue depth or its
# CPU mask. Each case saturates the CPUs with better-level work and runs
# probes (tests/vm/starve_probe.py: a spinning task that records its CPU
# time, and its own view of its longest wait) where soryu's strict
# priority would starve them. Each probe's waits are taken from the
# kernel's sched_switch trace (tests/vm/switch_waits.py): from a
# preemption to the next stint on a CPU of at least STINT_MIN_US. Each
# case runs once with the default knobs and once with all three knobs on
# (edges: see there):
#
#   levels   nice 0, nice 10, nice 19 and SCHED_IDLE probes, several
#            starving levels at once, under a nice -20 hog on every CPU
#   deep     200 nice 19 hogs on one level with two nice 19 probes among
#            them, under a nice -20 hog on every CPU
#   pinned   a nice 19 probe pinned to the last CPU, where a pinned nice
#            -20 hog runs, while more nice 19 hogs keep its level served on
#            the other CPUs
#   cpuset   the same inside a cpuset cgroup of that one CPU
#   rt       a SCHED_FIFO hog on the last CPU, nice -20 hogs, and nice 19
#            and SCHED_IDLE probes (by default only on a kernel with the
#            sched_ext deadline server: see below)
#   rtcut    the levels case's hogs, nice 19 and SCHED_IDLE probes, and a
#            SCHED_FIFO ticker on every CPU (cyclictest, every 1.5 ms) that
#            cuts most served stints short: a task robbed of its serve by
#            a higher class must not wait a whole round again
#   edges    the levels case at --starve-ms 2 (the lowest the default slice
#            allows), --starve-ms 2000 (the highest) and --slice-us 99999
#            (the longest the default threshold allows), each once: the
#            first and last with the default knobs, the middle one with all
#            three on (SORYU_EDGES_FLIP=1 swaps the knob sets)
#
#   vm/run.sh tests/vm/starve.sh [CASE...]
#
# Judged from outside: every probe got CPU time, the kernel traced its
# waits, and its longest wait is
# within the bound of docs/design-starvation.md ("The bound"),
#   9/4 starve_ms + (ceil(k / n) + 2) x (slice + 1 tick),
# k = the tasks that may starve with it and may use its CPUs, itself and
# the better-level hogs included,
# n = the CPUs soryu holds that it may use, plus the platform's lateness L:
# under emulation the host deschedules virtual CPUs and every wait in the
# guest grows by that much, whatever the scheduler does. L is measured first,
# under the default scheduler, in the same boot, with the same hogs, by a
# SCHED_FIFO sleeper pinned to each CPU (1 ms sleeps, longest oversleep);
# above LATE_CAP_MS (60) the run is too noisy to judge and fails. Only
# this L enters a bound: nothing measured in the case being judged does
# (starve_judge.py says why). Each case also traces the scheduler tick;
# a wait past its bound names a tick late during it, for the reader (the
# host may have stopped the guest mid-case). In the
# cases with few starving tasks, the price is judged too: the probes
# together got at most the share of CPU that starvation service may take,
# (k + levels) x (slice + 1 tick) per starve_ms per CPU, plus L. And in
# every case: soryu attached at the end, exit 0 on SIGTERM, insert_fail 0,
# no stall or error in the kernel log, and the better-level hogs ran.
# Writes starve-<case>.json (the probes' lines with the trace's waits
# (max_wait_ms; the probe's own figure as probe_max_wait_ms), k, n and
# the bound) and <case>.switches (the trace).
set -euo pipefail

# shellcheck source=tests/vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
secs=${SORYU_STARVE_SECS:-12}
ncpu=$(nproc)
last=$((ncpu - 1))
LATE_CAP_MS=${SORYU_LATE_CAP_MS:-60}
ALL_ON=(--clear-bitmap --boost-on-wake --vtime)
CG=/sys/fs/cgroup
STARVE_MS=100
SLICE_US=1000
# A stint on a CPU shorter than this does not end a probe's wait
# (switch_waits.py): a probe switched in and out again that soon was not
# served. Half the default slice, the dozen readings a probe takes in it
# under emulation (about 41 us each, measured: its cpu_s / readings), and
# above the 183-496 us stints that a served task got when the grant was
# taken out, which the bound then caught (327.9 ms against 240.5 ms). A
# stint that the host stalled under the probe is longer, whatever the
# probe did in it: that is the case its own clock cannot tell apart.
STINT_MIN_US=500

# probe LABEL K N [nice V | idle] [@CPU | %CGROUP]: a probe, judged with
# k = K and n = N; @CPU pins it, %CGROUP starts it inside that cgroup.
PROBES=()
HOGS=()
# placed @CPU | %CGROUP | "": sets the caller's `pre`, the command prefix
# that pins a task to CPU or starts it inside CGROUP.
placed() {
  case $1 in
    @*) pre=(taskset -c "${1#@}") ;;
    %*) pre=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG/${1#%}") ;;
  esac
}
probe() {
  local label=$1 k=$2 n=$3 pre=() args=()
  shift 3
  while [ $# -gt 0 ]; do
    case $1 in
      [@%]*) placed "$1" ;;
      *) args+=("$1") ;;
    esac
    shift
  done
  # (taskset and the cgroup's sh exec the probe: $! is its pid)
  GATE=$SORYU_OUT/$CASE.gate "${pre[@]}" python3 "$here/starve_probe.py" "$secs" "$label" "${args[@]}" \
    >"$SORYU_OUT/$CASE.probe.$label" &
  PROBES+=($!)
  echo "$label $k $n $!" >>"$SORYU_OUT/$CASE.expect"
}

# hogs NAME NICE COUNT [@CPU | %CGROUP]: stress-ng CPU hogs at that nice,
# started by run_window once the probes are past their start-up (a Python
# start beside hogs at nice -20 takes minutes under emulation).
HOG_SPECS=()
hogs() { HOG_SPECS+=("$*"); }
hogs_start() {
  local name=$1 nice=$2 count=$3 pre=()
  placed "${4:-}"
  # (chrt -o: not the harness's SCHED_FIFO, see run_window)
  "${pre[@]}" chrt -o 0 nice -n "$nice" stress-ng --cpu "$count" --timeout "$((secs + 60))s" --temp-path "$SORYU_OUT" \
    --metrics-brief >"$SORYU_OUT/$CASE.$name.log" 2>&1 &
  HOGS+=("$!:$name")
}

# The kernel's record of the probes' context switches (sched_switch, on
# one clock for all CPUs), from which judge() takes each wait exactly
# (tests/vm/switch_waits.py): switches_arm PID... before the hogs start,
# switches_start (one write) as the window opens, switches_stop as it
# closes, and switches_save once the hogs are gone (reading the trace is
# slow under emulation): it writes $CASE.switches. Not for the lateness
# window (SWITCHES unset).
TRACEFS=/sys/kernel/tracing
SWITCHES=
switches_arm() {
  local filter="" p
  [ -n "$SWITCHES" ] || return 0
  [ -d $TRACEFS/events ] || mount -t tracefs nodev $TRACEFS
  for p in "$@"; do filter+="${filter:+ || }prev_pid == $p || next_pid == $p"; done
  echo 0 >$TRACEFS/tracing_on
  echo mono >$TRACEFS/trace_clock
  echo 8192 >$TRACEFS/buffer_size_kb
  echo "$filter" >$TRACEFS/events/sched/sched_switch/filter
  echo 1 >$TRACEFS/events/sched/sched_switch/enable
  # the tick and the CPUs' idle periods: the platform's lateness in the
  # window (tests/vm/tick_gaps.py); only the tick's timer is kept, where
  # the kernel can filter on a function pointer
  echo 'function.function == tick_nohz_handler' >$TRACEFS/events/timer/hrtimer_expire_entry/filter 2>/dev/null ||
    echo 0 >$TRACEFS/events/timer/hrtimer_expire_entry/filter
  echo 1 >$TRACEFS/events/timer/hrtimer_expire_entry/enable
  echo 1 >$TRACEFS/events/power/cpu_idle/enable
  : >$TRACEFS/trace
}
switches_start() {
  [ -z "$SWITCHES" ] || echo 1 >$TRACEFS/tracing_on
}
switches_stop() {
  [ -n "$SWITCHES" ] || return 0
  echo 0 >$TRACEFS/tracing_on
}
switches_save() {
  [ -n "$SWITCHES" ] || return 0
  echo 0 >$TRACEFS/events/sched/sched_switch/enable
  echo 0 >$TRACEFS/events/timer/hrtimer_expire_entry/enable
  echo 0 >$TRACEFS/events/power/cpu_idle/enable
  cat $TRACEFS/trace >"$SORYU_OUT/$CASE.switches"
  echo 0 >$TRACEFS/events/sched/sched_switch/filter
  echo 0 >$TRACEFS/events/timer/hrtimer_expire_entry/filter
  : >$TRACEFS/trace
}

# Starts the probes' common window once every probe is past Python's
# start-up and the hogs run; waits for the probes; stops the hogs.
run_window() {
  local gate=$SORYU_OUT/$CASE.gate t=0 p rc h
  rm -f "$gate" "$gate".*
  # (-maxdepth 1: after an emulator crash, vm/run.sh keeps the first
  # attempt's files, ready files included, in a subdirectory; counted, they
  # opened the rerun's gates before its probes were ready, and the
  # lateness measured was the probes' start-up under the hogs)
  while [ "$(find "$SORYU_OUT" -maxdepth 1 -name "$CASE.gate.*.ready" | wc -l)" -lt "${#PROBES[@]}" ]; do
    sleep 0.5
    t=$((t + 1))
    [ "$t" -lt 240 ] || { fail "probes not ready after 120 s"; break; }
  done
  trace "probes ready"
  # From here to the hogs' end the harness is SCHED_FIFO, above soryu and
  # the default scheduler alike: as a nice 0 task under the hogs, each of
  # its steps waited for a starvation serve, and at --starve-ms 2000 the
  # window opened 28-67 s after the hogs started (measured), so late that
  # the hogs' own timeout ended them inside it. Its children go back to
  # SCHED_OTHER (hogs_start); it blocks while the window runs.
  chrt -f -p 50 $$
  switches_arm "${PROBES[@]}"
  trace "switch trace armed"
  for h in "${HOG_SPECS[@]}"; do
    # shellcheck disable=SC2086 # a spec is words
    hogs_start $h
  done
  HOG_SPECS=()
  trace "hogs started"
  sleep 2
  switches_start
  touch "$gate"
  trace "window open"
  for p in "${PROBES[@]}"; do
    rc=0
    wait "$p" || rc=$?
    [ "$rc" = 0 ] || fail "a starvation probe (pid $p) exited $rc"
  done
  switches_stop
  for h in "${HOGS[@]}"; do
    p=${h%%:*}
    kill -0 "$p" 2>/dev/null || fail "hogs ${h#*:} ended before the probes' window did"
    kill -INT "$p" 2>/dev/null || true
    rc=0
    wait "$p" || rc=$?
    # (200 workers at nice 19 do not all reach stress-ng's exit handshake
    # in time, and it then calls the run unsuccessful: for the crowd only
    # its progress is judged)
    [ "$rc" = 0 ] || [ "${h#*:}" = crowd ] || fail "hogs ${h#*:} (stress-ng) exited $rc"
    [ "$(stress_ops "$SORYU_OUT/$CASE.${h#*:}.log" cpu)" -gt 0 ] 2>/dev/null ||
      fail "hogs ${h#*:} made no progress"
  done
  switches_save
  chrt -o -p 0 $$
  PROBES=()
  HOGS=()
}

cpuset_make() { # a cpuset cgroup of the last CPU
  [ -f $CG/cgroup.procs ] || mount -t cgroup2 none $CG
  grep -qw cpuset $CG/cgroup.subtree_control 2>/dev/null || echo +cpuset >$CG/cgroup.subtree_control
  mkdir -p $CG/soryu-one
  echo "$last" >$CG/soryu-one/cpuset.cpus
}
cpuset_remove() {
  local p
  for p in $(cat $CG/soryu-one/cgroup.procs 2>/dev/null); do echo "$p" >$CG/cgroup.procs 2>/dev/null || true; done
  rmdir $CG/soryu-one 2>/dev/null || true
}

# The cases. Each starts its hogs and probes; LEVELS is how many starving
# levels it has, PRICE whether the share of starvation service is judged.
w_levels() {
  LEVELS=4 PRICE=1
  hogs better -20 "$ncpu"
  # k: the four probes and the hogs, which starve too when the threshold
  # is near the slice
  local k=$((4 + ncpu))
  probe nice0 "$k" "$ncpu" nice 0
  probe nice10 "$k" "$ncpu" nice 10
  probe nice19 "$k" "$ncpu" nice 19
  probe idle "$k" "$ncpu" idle
}
w_deep() {
  LEVELS=1 PRICE=0
  hogs better -20 "$ncpu"
  hogs crowd 19 200
  probe deep1 $((202 + ncpu)) "$ncpu" nice 19
  probe deep2 $((202 + ncpu)) "$ncpu" nice 19
}
w_pinned() {
  LEVELS=1 PRICE=0
  hogs better -20 1 "@$last"
  hogs crowd 19 "$ncpu"
  # the crowd (which may use every CPU), the pinned hog and itself, on one CPU
  probe pinned $((ncpu + 2)) 1 nice 19 "@$last"
}
w_cpuset() {
  LEVELS=1 PRICE=0
  cpuset_make
  hogs better -20 1 %soryu-one
  hogs crowd 19 "$ncpu"
  probe cpuset $((ncpu + 2)) 1 nice 19 %soryu-one
}
w_rt() {
  LEVELS=2 PRICE=0
  taskset -c "$last" chrt -f 40 sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &
  RT_PID=$!
  hogs better -20 "$ncpu"
  # soryu holds ncpu - 1 CPUs: the RT hog owns the last one
  probe rt_nice19 $((2 + ncpu)) $((ncpu - 1)) nice 19
  probe rt_idle $((2 + ncpu)) $((ncpu - 1)) idle
}

w_rtcut() {
  LEVELS=2 PRICE=1
  # one thread per CPU, each pinned there (-a), above the harness's 50
  cyclictest -q -m -a -t "$ncpu" -p 60 -i 1500 -D "$((secs + 90))" </dev/null >/dev/null 2>&1 &
  RT_PID=$!
  hogs better -20 "$ncpu"
  local k=$((2 + ncpu))
  probe cut_nice19 "$k" "$ncpu" nice 19
  probe cut_idle "$k" "$ncpu" idle
}

# The verdicts on each probe (tests/vm/starve_judge.py, which holds the
# bound's formula): its CPU time, its waits in the switch trace, and its
# longest wait within the bound for its k and n. Writes starve-$CASE.json.
judge() {
  local v msg total=0 window=0 out rc=0
  out=$(python3 "$here/starve_judge.py" "$SORYU_OUT" "$CASE" "$STINT_MIN_US" "$STARVE_MS" "$SLICE_US" \
    "$HZ" "$LATE" 2>&1) || rc=$?
  [ "$rc" = 0 ] || fail "starve_judge.py exited $rc: $(tail -n1 <<<"$out")"
  while IFS=$'\t' read -r v msg; do
    case $v in
      ok) trace "ok: $msg" ;;
      fail) fail "$msg" ;;
      total) total=$msg ;;
      window) window=$msg ;;
    esac
  done <<<"$out"
  if [ "$PRICE" = 1 ]; then
    # what starvation service may take: each starving task one slice (to
    # the next tick) per starve_ms, each starving level one more. The
    # probes' CPU (total) is counted by the tick (starve_judge.py): a
    # stopped virtual CPU takes none. Serves
    # of one task are starve_ms apart at least, so a window of w seconds
    # holds at most int(w / starve_ms) + 1 of them; w is the longest
    # probe's window, which can pass $secs by one wait (with --starve-ms
    # 2000 a window of 13.8 s for 12: counted as 12 s, with 6 rounds of
    # serves in place of 7, the check failed a run whose probes got 0.289
    # CPU-s against 0.283).
    local k
    k=$(wc -l <"$SORYU_OUT/$CASE.expect")
    check "the starving probes' CPU within the price of the guarantee" \
      'w > 0 && c <= (k + lv) * (sl / 1000 + 1000 / hz) / 1000 * (int(w * 1000 / s) + 1) + l / 1000 * k' \
      c="$total" k="$k" lv="$LEVELS" sl="$SLICE_US" hz="$HZ" s="$STARVE_MS" w="$window" l="$LATE"
  fi
}

run_case() { # run_case WORKLOAD KNOBSET [FLAGS...]
  local w=$1 set=$2
  shift 2
  case_begin "$w-$set"
  : >"$SORYU_OUT/$CASE.expect"
  RT_PID=
  if sched_start --report-sec 4 "$@" && sched_wait_enabled; then
    "w_${w%%_*}"
    run_window
    if [ -n "$RT_PID" ]; then
      kill -0 "$RT_PID" 2>/dev/null || fail "the SCHED_FIFO task of the case ended before the probes' window did"
      kill -KILL "$RT_PID" 2>/dev/null || true
      wait "$RT_PID" 2>/dev/null || true
    fi
    if [ "$w" = rtcut ]; then
      # the case is only a test if the ticker did take CPUs from the probes
      check "the ticker preempted the probes (switches to it)" 'c > 0' \
        c="$(grep -c 'prev_state=R.* next_comm=cyclictest' "$SORYU_OUT/$CASE.switches" 2>/dev/null || true)"
    fi
    [ "$w" != cpuset ] || cpuset_remove
    scx_is_soryu || fail "soryu not enabled at the end (state '$(scx_state)')"
    trace "soryu's longest queued wait per interval (ms): $(jq -r 'select(.type == "interval") | if .queued_max_us == null then "missing" else .queued_max_us / 1000 | floor end' "$SORYU_OUT/$CASE.jsonl" 2>/dev/null | tr '\n' ' ')"
    judge
    sched_stop
    sched_wait_disabled
  fi
  report_check
  dmesg_check
  case_end
}

HZ=$(sed -n 's/^CONFIG_HZ=//p' "$SORYU_KCONFIG")
[ -n "$HZ" ] || { echo "no CONFIG_HZ in $SORYU_KCONFIG"; exit 1; }

# The platform's lateness, under the default scheduler, with the hogs.
# Early in a boot the emulator still translates code it has not run yet
# and a virtual CPU can stop for hundreds of ms: a figure above the cap is
# measured again, up to five times, before the run is called too noisy
# (one run measured 553 ms, then 9.4 ms; a CI run once saw three in a row
# above the cap).
measure_lateness() {
  CASE=starve-lateness$1
  : >"$SORYU_OUT/$CASE.trace"
  CASE_FAILS=()
  hogs better -20 "$ncpu"
  for c in $(seq 0 "$last"); do
    GATE=$SORYU_OUT/$CASE.gate taskset -c "$c" python3 "$here/starve_probe.py" "$secs" "late$c" sleeper \
      >"$SORYU_OUT/$CASE.probe.late$c" &
    PROBES+=($!)
  done
  run_window
  LATE=$(cat "$SORYU_OUT/$CASE".probe.late* | jq -s 'map(.max_late_ms) | max // empty')
  echo "platform lateness under the default scheduler (try $1): ${LATE:-unknown} ms"
  if [ -z "$LATE" ] || [ ${#CASE_FAILS[@]} -gt 0 ]; then
    echo "cannot measure the platform's lateness: ${CASE_FAILS[*]:-no figure}"
    exit 1
  fi
  awk -v l="$LATE" -v c="$LATE_CAP_MS" 'BEGIN { exit !(l <= c) }'
}
for try in 1 2 3 4 5; do
  measure_lateness "$try" && break
  if [ "$try" = 5 ]; then
    echo "platform lateness $LATE ms is above the cap of $LATE_CAP_MS ms five times: too noisy to judge a bound; rerun on a quieter host"
    exit 1
  fi
done

SWITCHES=1
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  cases=(levels deep pinned cpuset rt rtcut edges)
  # rt needs the kernel to give sched_ext time on a CPU an RT task keeps
  # busy (its sched_ext deadline server): without one (6.12), the kernel's
  # workers bound to that CPU wait for the watchdog, whatever the BPF
  # scheduler does (docs/kernels.md). Named on the command line, it runs.
  [ -d /sys/kernel/debug/sched ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
  if [ ! -d /sys/kernel/debug/sched/ext_server ]; then
    echo "rt left out: $(uname -r) has no sched_ext deadline server (/sys/kernel/debug/sched/ext_server)"
    cases=(levels deep pinned cpuset rtcut edges)
  fi
fi
for w in "${cases[@]}"; do
  if [ "$w" = edges ]; then
    # Each edge once, the knob sets alternating (and the other way round
    # with SORYU_EDGES_FLIP=1): all six took 6.5 minutes of a slow CI day.
    # An edge is a value of the bound's own terms (starve_ms, slice), and
    # the knobs' paths through it are run by every other case.
    a=default b=all-on ka=() kb=("${ALL_ON[@]}")
    if [ "${SORYU_EDGES_FLIP:-0}" = 1 ]; then a=all-on b=default ka=("${ALL_ON[@]}") kb=(); fi
    STARVE_MS=2 run_case levels_starve2 "$a" --starve-ms 2 "${ka[@]}"
    STARVE_MS=2000 run_case levels_starve2000 "$b" --starve-ms 2000 "${kb[@]}"
    SLICE_US=99999 run_case levels_slice100ms "$a" --slice-us 99999 "${ka[@]}"
    continue
  fi
  run_case "$w" default
  run_case "$w" all-on "${ALL_ON[@]}"
done
for f in "$SORYU_OUT"/starve-*.json; do
  echo "$(basename "$f" .json):"
  sed 's/^/  /' "$f"
done
summary
