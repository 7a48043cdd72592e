#!/usr/bin/env bash
# vm-shape: cpus=8 smp=sockets=2,cores=2,threads=2
# Topology VM test: scx_soryu on a machine wider than the host, 8 CPUs in
# 2 sockets of 2 cores of 2 SMT threads (the line above: vm/run.sh boots
# that shape for this script). The 8 virtual CPUs share the host's cores,
# so this is about correctness, not speed.
#
#   vm/run.sh tests/vm/topology.sh [shape default all-knobs victim spread near strict]
#
# Cases:
#   shape      the guest really has that shape: 8 online CPUs, 2 packages,
#              2 threads per core (the kernel's own topology files); the
#              caches the guest reports are written to the trace;
#   default, all-knobs
#              soryu (default knobs; all three knobs on) under the
#              scheduler's CI load with one worker of each stressor per
#              CPU for SORYU_TOPOLOGY_SECS (15): enabled throughout, the
#              report's checks, exit 0, disabled after, a clean kernel
#              log; and, judged by the kernel's /proc/stat, every one of
#              the 8 CPUs spent at least half of its time in the window
#              running tasks, which under sched_ext only soryu could have
#              put there.
#   victim     the per-LLC summary the preemption victim search reads
#              (src/bpf/llc.bpf.c). The LLCs are the kernel's (each CPU's
#              last cache level in sysfs, two here), and the daemon's report
#              header must list the same. Under the CI load (one worker of
#              each stressor per CPU) for SORYU_TOPOLOGY_SECS: searches
#              happened (preempt_scans > 0); then, the load stopped, the
#              loaded program's summary (bpftool) counts every CPU once, in
#              its own LLC, with the bit of every counted level set.
#   spread     one busy task per SMT core (src/bpf/smt.bpf.c): one busy
#              loop per core (4) that never sleeps (tests/vm/spread_probe.py)
#              for SORYU_TOPOLOGY_SECS under soryu. Judged by the kernel
#              (each loop's last CPU in /proc/PID/stat, every 10 ms): at
#              most a quarter of the samples show two loops on one core's two
#              threads. Placed blind to SMT, 77% would; soryu before
#              smt.bpf.c showed 71-85%. The default scheduler's figure under
#              the same probe, before soryu starts, goes to the trace.
#   near       a task leaving a shared core takes a whole idle core in its
#              own LLC: two busy loops pinned to the two threads of one core,
#              then allowed every CPU (tests/vm/near_probe.py,
#              SORYU_NEAR_TRIALS (50) trials, the first core of each LLC in
#              turn). At least half the trials must see them move to two
#              cores, and at least 75% of those moves stay in the LLC they
#              started in. Its LLC has one whole idle core, the other LLC
#              two. Measured, 20 trials, the probe free to run anywhere:
#              the default scheduler 7 to 13 of 20; soryu with the claim
#              only kicking the CPU it chose, the task left on a shared
#              level, 11-12 of 20; with both threads free to leave, 15 of
#              20; as built (straight onto the claimed CPU, one thread
#              leaves) 19, 16 and 13 (after the other cases) of 20. With
#              the probe on a CPU of the other LLC, as now: 17 of 20, and
#              27 of 30 after the other cases (the default scheduler 15).
#              With the level queues per LLC, 23, 27 and 27 of 30: over all
#              runs of this build, 121 of 140 moves stayed (86%), so 80% of
#              30 trials failed about one run in ten by chance alone (the
#              binomial tail). 75% of 50 fails such a build about one run
#              in seventy; a search blind to distance (a third near)
#              passes it about once in a billion, a placement near 60% of
#              the time (the default scheduler's 15-18 of 30) about one
#              run in seventy-five. It no longer tells apart the variant
#              whose both threads may leave (15 of 20, 75%).
#   strict     strict priority between the level queues of two LLCs
#              (src/bpf/levels.bpf.c): two nice 19 busy loops per CPU of
#              the second LLC, allowed only those CPUs, and one nice 0 loop
#              per CPU, allowed the first LLC's CPUs and, once they queue
#              there, every CPU (tests/vm/llc_probe.py). For
#              SORYU_TOPOLOGY_SECS, by the kernel's CPU times: the nice 0
#              loops get at least 80% of what all the loops got (the
#              second LLC's CPUs must take them off the first LLC's queues
#              before their own worse level), and every nice 19 loop ran
#              (its LLC's starvation serves). CPUs that only took their own
#              LLC's queues would give each group about half. The default
#              scheduler's figures go to the trace.
# Prints PASS/FAIL per case, then "N passed, M failed".
set -euo pipefail

# shellcheck source=tests/vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

secs=${SORYU_TOPOLOGY_SECS:-15}
want_cpus=8
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(shape default all-knobs victim spread near strict)

# per CPU, "cpuN busy total": jiffies running tasks (user + nice +
# system) and all jiffies the CPU accounted (idle and iowait too). A share
# of its own total, because the host runs these 8 virtual CPUs on fewer
# cores and each accounts only the ticks it was given.
busy() { awk '/^cpu[0-9]/ { t = 0; for (i = 2; i <= NF; i++) t += $i; print $1, $2 + $3 + $4, t }' /proc/stat; }

shape_case() {
  case_begin shape
  local n pkgs thr
  n=$(nproc)
  pkgs=$(cat /sys/devices/system/cpu/cpu*/topology/physical_package_id | sort -u | wc -l)
  thr=$(tr ',-' '\n\n' </sys/devices/system/cpu/cpu0/topology/thread_siblings_list | wc -l)
  trace "cpus $n, packages $pkgs, cpu0 thread siblings $(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list)"
  local c
  for c in /sys/devices/system/cpu/cpu0/cache/index*; do
    [ -e "$c/level" ] && trace "cpu0 cache L$(cat "$c/level") $(cat "$c/type"): shared with CPUs $(cat "$c/shared_cpu_list")"
  done
  check "online CPUs" "n == w" n="$n" w="$want_cpus"
  check "packages" "p == 2" p="$pkgs"
  check "SMT threads per core" "t == 2" t="$thr"
  case_end
}

load_case() { # load_case NAME KNOB_VALUE: the three knobs all off or all on
  local name=$1 v=$2 before after
  set -- --clear-bitmap="$v" --boost-on-wake="$v" --vtime="$v"
  case_begin "$name"
  if sched_start "$@" --report-sec 2 && sched_wait_enabled; then
    SORYU_LOAD_N=${SORYU_TOPOLOGY_LOAD_N:-$want_cpus} load_start "$secs"
    before=$(busy)
    watch_running "$secs"
    after=$(busy)
    sched_stop
    load_stop
    sched_wait_disabled
    # each CPU busy at least half of its window: a CPU soryu never
    # dispatched to would idle beside the saturating load
    local cpu b t a u
    while read -r cpu b t; do
      read -r a u < <(awk -v c="$cpu" '$1 == c { print $2, $3 }' <<<"$after")
      check "$cpu ran tasks under soryu" "u > t && (a - b) >= 0.5 * (u - t)" a="$a" b="$b" u="$u" t="$t"
    done <<<"$before"
    [ "$(wc -l <<<"$before")" = "$want_cpus" ] || fail "/proc/stat lists $(wc -l <<<"$before") CPUs, not $want_cpus"
  fi
  report_check clear_bitmap="$v" boost_on_wake="$v" vtime="$v"
  dmesg_check
  case_end
}

# The kernel's LLCs, one CPU list per line, in order of their first CPU:
# per CPU, the shared_cpu_list of its highest cache level that is not an
# instruction cache.
kernel_llcs() {
  local d c best lvl
  for d in /sys/devices/system/cpu/cpu[0-9]*; do
    best='' lvl=0
    for c in "$d"/cache/index*; do
      [ -e "$c/level" ] && [ "$(cat "$c/type")" != Instruction ] || continue
      if [ "$(cat "$c/level")" -gt "$lvl" ]; then lvl=$(cat "$c/level"); best=$(cat "$c/shared_cpu_list"); fi
    done
    echo "${best:-none}"
  done | sort -u | sort -t- -k1,1n
}
first_cpu() { local l=${1%%,*}; echo "${l%%-*}"; }
last_cpu() { local l=${1##*,}; echo "${l##*-}"; }
expand() { local p a b; for p in ${1//,/ }; do a=${p%%-*} b=${p##*-}; seq "$a" "$b"; done; }

# The per-LLC summary of the loaded program, one "LLC running-bitmap
# count0,count1,..." line per entry below $1 (bpftool's dump of llc_ctxs).
llc_summary() {
  bpftool -j map dump name llc_ctxs 2>/dev/null |
    jq -r --argjson n "$1" '.[] | (.formatted // .) | select(.key < $n) |
      "\(.key) \(.value.running) \(.value.nr_at | map(tostring) | join(","))"'
}

# Does the summary in $1 (llc_summary) count each LLC's CPUs exactly, with
# the bit of every counted level set? Prints what is wrong, if anything.
summary_wrong() {
  local i=0 l key bits counts sum want lvl c
  while read -r l; do
    want=$(expand "$l" | wc -l)
    read -r key bits counts < <(awk -v k="$i" '$1 == k' <<<"$1")
    [ -n "${counts:-}" ] || { echo "LLC $i missing"; return; }
    sum=0 lvl=0
    for c in ${counts//,/ }; do
      sum=$((sum + c))
      if [ "$c" -gt 0 ] && [ $(((bits >> lvl) & 1)) = 0 ]; then echo "LLC $i: level $lvl counted $c with its bit clear"; fi
      lvl=$((lvl + 1))
    done
    [ "$sum" = "$want" ] || echo "LLC $i ($l): $sum CPUs counted, $want in it"
    i=$((i + 1))
  done <<<"$LLCS"
}

victim_case() {
  local out s wrong=x i f=$SORYU_OUT/victim
  case_begin victim
  LLCS=$(kernel_llcs)
  trace "the kernel's LLCs: $(tr '\n' ' ' <<<"$LLCS")"
  [ "$(wc -l <<<"$LLCS")" -ge 2 ] && ! grep -q none <<<"$LLCS" ||
    fail "the guest shows $(wc -l <<<"$LLCS") LLC(s) ($(tr '\n' ' ' <<<"$LLCS")): the case needs two or more"
  if sched_start --report-sec 2 && sched_wait_enabled; then
    SORYU_LOAD_N=$want_cpus load_start "$secs"
    watch_running "$secs"
    load_stop
    sleep 3 # the report interval that holds the load's end
    out=$(head -n1 "$SORYU_OUT/victim.jsonl" | jq -r '.llcs | join(" ")' 2>/dev/null || true)
    local want
    want=$(tr '\n' ' ' <<<"$LLCS" | sed 's/ $//')
    if [ -n "$out" ] && [ "$out" = "$want" ]; then
      trace "ok: the daemon's LLCs are the kernel's ($out)"
    else
      fail "the daemon's LLCs are '$out' (report header), the kernel's '$want'"
    fi
    check "victims were searched for through the LLC summaries" "s > 0" s="$(report_sum preempt_scans "$SORYU_OUT/victim.jsonl")"
    # At rest a CPU is counted twice only inside show_level(): one read of
    # three without that moment is enough; a lost or doubled count fails
    # all three.
    for i in 1 2 3; do
      s=$(llc_summary "$(wc -l <<<"$LLCS")")
      echo "$s" >"$f.summary.$i"
      wrong=$(summary_wrong "$s")
      [ -n "$wrong" ] || break
      sleep 0.5
    done
    [ -z "$wrong" ] || fail "the per-LLC summary is off in three reads: $(tr '\n' ';' <<<"$wrong")"
    trace "per-LLC summary: $(tr '\n' ';' <<<"$s")"
    sched_stop
    sched_wait_disabled
  fi
  report_check
  dmesg_check
  case_end
}

spread_case() {
  local probe out s d
  probe="$(dirname "${BASH_SOURCE[0]}")/spread_probe.py"
  case_begin spread
  trace "the default scheduler: $(python3 "$probe" "$secs")"
  if sched_start --report-sec 2 && sched_wait_enabled; then
    out=$(python3 "$probe" "$secs")
    trace "soryu: $out"
    read -r _ s _ d _ <<<"$out"
    check "samples of all loops runnable" "s >= 100" s="$s"
    check "samples with two loops on one core (of $s)" "d <= 0.25 * s" d="$d" s="$s"
    sched_stop
    sched_wait_disabled
    trace "soryu moved tasks off shared cores $(report_sum smt_moves "$SORYU_OUT/spread.jsonl") times"
  fi
  report_check
  dmesg_check
  case_end
}

near_case() {
  local probe out t m k
  probe="$(dirname "${BASH_SOURCE[0]}")/near_probe.py"
  t=${SORYU_NEAR_TRIALS:-50}
  case_begin near
  trace "the default scheduler: $(python3 "$probe" "$t")"
  if sched_start --report-sec 2 && sched_wait_enabled; then
    out=$(python3 "$probe" "$t")
    trace "soryu: $out"
    read -r _ _ _ m _ k <<<"$out"
    check "trials in which the loops moved to two cores (of $t)" "m >= t / 2" t="$t" m="$m"
    check "moves that stayed in their LLC (of $m)" "k >= 0.75 * m" k="$k" m="$m"
    sched_stop
    sched_wait_disabled
  fi
  report_check
  dmesg_check
  case_end
}

strict_case() {
  local probe out near far
  probe="$(dirname "${BASH_SOURCE[0]}")/llc_probe.py"
  case_begin strict
  LLCS=$(kernel_llcs)
  near=$(sed -n 1p <<<"$LLCS") far=$(sed -n 2p <<<"$LLCS")
  if [ -z "$far" ]; then
    fail "the guest shows $(wc -l <<<"$LLCS") LLC(s): the case needs two"
  else
    trace "LLCs $near and $far; the default scheduler: $(python3 "$probe" "$secs" "$near" "$far")"
    # --starve-ms 1000: the nice 19 loops starve by design, and every
    # starvation serve is one slice that the emulator stretches (about
    # 13 ms of CPU time a serve at 8 vCPUs on two host cores). At the
    # default 100 ms, 85 serves a second gave them 14-20% of the CPU time
    # and left the 80% check within noise of failing; a 1 s threshold
    # serves them a tenth as often, so the share left over measures
    # strict priority, not the starvation guarantee (its own tests).
    if sched_start --report-sec 2 --starve-ms 1000 && sched_wait_enabled; then
      out=$(python3 "$probe" "$secs" "$near" "$far")
      trace "soryu: $out"
      llc_probe_judge "$out"
      sched_stop
      sched_wait_disabled
    fi
  fi
  report_check
  dmesg_check
  case_end
}

echo "topology: $(uname -r), $(nproc) CPUs, ${secs}s of load per case"
for c in "${cases[@]}"; do
  case $c in
    shape) shape_case ;;
    default) load_case default false ;;
    all-knobs) load_case all-knobs true ;;
    victim) victim_case ;;
    spread) spread_case ;;
    near) near_case ;;
    strict) strict_case ;;
    *) echo "topology: unknown case '$c' (shape, default, all-knobs, victim, spread, near, strict)" >&2; exit 2 ;;
  esac
done
summary
