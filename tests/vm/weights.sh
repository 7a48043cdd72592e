#!/usr/bin/env bash
# cgroup cpu.weight VM test: soryu adds a task's cgroup weight to its nice,
# as the nice the kernel itself shows in cpu.weight.nice, summed over nested
# cgroups (docs/design.md). Judged from outside: CPU time from
# /proc/PID/schedstat, the kernel's own cpu.weight.nice, and the offset and
# queued level the loaded program holds (scx_soryu inspect).
#
#   share    a CPU hog per CPU in each of two cgroups, cpu.weight 400
#            (cpu.weight.nice -6) and 100 (0), all at nice 0, CPUs
#            saturated. The light cgroup's hogs sit three levels worse:
#            strict priority lets them run only on starvation grants
#            (docs/design-starvation.md: at most one tick per --starve-ms
#            for the machine), so their share must be <= 8% and > 0. Then
#            the heavy cgroup's weight is set to 100 live: both sides on one
#            level, each gets 50% +- 15%. With --cgroup-weight=false the
#            same 400/100 pair splits 50% +- 15% too.
#   mapping  a hog in a cgroup whose cpu.weight goes through 1, 50, 100,
#            200 and 10000 live: after each write the program's offset for
#            the hog equals the kernel's cpu.weight.nice. Nested: a child
#            cgroup of weight 50 under it (+3) and then 10000 (-20): the
#            offset is the sum along the path (clamped to -39..39), and the
#            level is nice + offset (clamped to -20..19) on the formula.
#   move     a hog among a hog per CPU in the light cgroup, moved to the
#            heavy one (weight 400): at the first look after the move the
#            program holds its new offset (-6, level 20), and from then on it
#            holds a CPU of its own (>= 90% of one, where it had
#            ncpu/(ncpu+1)); with --cgroup-weight=false the offset stays 0
#            and its share stays <= 85%.
#
#   vm/run.sh tests/vm/weights.sh [CASE...]
set -euo pipefail

# shellcheck source=tests/vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ncpu=$(nproc)
CG=/sys/fs/cgroup
T=$CG/soryu-w

HOG=
hog() { # hog CGROUP: a nice 0 busy loop in CGROUP; its pid in HOG (and PIDS)
  sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &
  HOG=$!
  PIDS+=("$HOG")
  echo "$HOG" >"$1/cgroup.procs"
}
sum_cputime() { local p s=0; for p in "$@"; do s=$((s + $(cputime "$p"))); done; echo "$s"; }
# inspect PID FIELD: a field of scx_soryu inspect --json
inspect() {
  local out
  out=$("$SORYU_BIN" inspect --json "$1" 2>&1) || { trace "inspect $1 failed: $out"; echo null; return 0; }
  jq -r ".$2" <<<"$out"
}

cg_setup() {
  [ -f $CG/cgroup.procs ] || mount -t cgroup2 none $CG
  # sched_ext's cgroup callbacks only run for the cpu controller's cgroups
  echo +cpu >$CG/cgroup.subtree_control
  mkdir -p "$T"
  echo +cpu >"$T/cgroup.subtree_control"
  mkdir -p "$T/heavy" "$T/light"
  echo 100 >"$T/light/cpu.weight"
}
cg_teardown() {
  local d p
  kill_all
  for d in "$T/heavy/sub" "$T/heavy" "$T/light" "$T"; do
    [ -d "$d" ] || continue
    for p in $(cat "$d/cgroup.procs" 2>/dev/null); do echo "$p" >$CG/cgroup.procs 2>/dev/null || true; done
    rmdir "$d" 2>/dev/null || true
  done
}

# share HEAVY_WEIGHT SECS: a hog per CPU in each cgroup; SHARE is the light
# side's share of their CPU time.
SHARE=
share() {
  local secs=$2 h=() l=() h0 l0 h1 l1
  echo "$1" >"$T/heavy/cpu.weight"
  for _ in $(seq "$ncpu"); do
    hog "$T/heavy"
    h+=("$HOG")
    hog "$T/light"
    l+=("$HOG")
  done
  sleep 3 # every hog climbs to the boost ceiling
  h0=$(sum_cputime "${h[@]}") l0=$(sum_cputime "${l[@]}")
  sleep "$secs"
  h1=$(sum_cputime "${h[@]}") l1=$(sum_cputime "${l[@]}")
  kill_all
  echo "  share: cpu.weight $1 vs 100: heavy ran $(((h1 - h0) / 1000000)) ms, light $(((l1 - l0) / 1000000)) ms of ${secs}s x $ncpu CPUs"
  check "the hogs had the CPUs" "((h1 - h0) + (l1 - l0)) / 1e9 >= 0.7 * $secs * $ncpu" h0="$h0" h1="$h1" l0="$l0" l1="$l1"
  SHARE=$(awk -v h="$((h1 - h0))" -v l="$((l1 - l0))" 'BEGIN { printf "%.4f", l / (h + l) }')
}

c_share() {
  if [ "$1" = on ]; then
    share 400 10
    check "weight 400 vs 100: the light cgroup runs on starvation grants only (share)" "s <= 0.08" s="$SHARE"
    check "weight 400 vs 100: the light cgroup still runs" "s > 0" s="$SHARE"
    share 100 8
    check "weights set equal live: an even split" "s >= 0.35 && s <= 0.65" s="$SHARE"
  else
    share 400 8
    check "--cgroup-weight=false: weight 400 vs 100 splits evenly" "s >= 0.35 && s <= 0.65" s="$SHARE"
  fi
}

# wait_offset PID WANT: polls inspect (up to 5 s) until the program's
# offset for PID is WANT; prints what it last saw.
wait_offset() {
  local t=0 got
  while :; do
    got=$(inspect "$1" cgroup_nice)
    [ "$got" != "$2" ] && [ "$t" -lt 10 ] || break
    sleep 0.5
    t=$((t + 1))
  done
  echo "$got"
}

c_mapping() {
  local w got kn sub want lvl
  hog "$T/heavy"
  for w in 1 50 100 200 10000; do
    echo "$w" >"$T/heavy/cpu.weight"
    kn=$(cat "$T/heavy/cpu.weight.nice")
    got=$(wait_offset "$HOG" "$kn")
    echo "  mapping: cpu.weight $w: kernel cpu.weight.nice $kn, soryu offset $got"
    [ "$got" = "$kn" ] || fail "cpu.weight $w: soryu's offset is $got, the kernel's cpu.weight.nice $kn"
  done
  kill_all
  echo 200 >"$T/heavy/cpu.weight"
  echo +cpu >"$T/heavy/cgroup.subtree_control"
  mkdir -p "$T/heavy/sub"
  hog "$T/heavy/sub"
  for w in 50 10000; do
    echo "$w" >"$T/heavy/sub/cpu.weight"
    sub=$(cat "$T/heavy/sub/cpu.weight.nice")
    want=$(($(cat "$T/heavy/cpu.weight.nice") + sub))
    [ "$want" -ge -39 ] || want=-39
    got=$(wait_offset "$HOG" "$want")
    echo "  mapping: nested 200/$w: kernel cpu.weight.nice $(cat "$T/heavy/cpu.weight.nice") + $sub, soryu offset $got"
    [ "$got" = "$want" ] || fail "nested weights 200/$w: soryu's offset is $got, expected the sum $want"
  done
  # nice -3 - 20 clamps to nice -20; a hog sits at the boost ceiling: level
  # 1 + (-20 + 20 + 12 + 12) / 2 = 13
  lvl=$(inspect "$HOG" level)
  [ "$lvl" = 13 ] || fail "a hog at offset $got is at level $lvl, expected 13 (nice clamped to -20, boost +12)"
  kill_all
  echo 100 >"$T/heavy/sub/cpu.weight"
}

# A hog among a hog per CPU in the light cgroup gets ncpu/(ncpu+1) of a
# CPU; moved to the heavy cgroup (offset -6, three levels better) it holds a
# CPU of its own: at least 90% of one.
c_move() {
  local x off lvl t0 t1 secs=4
  echo 400 >"$T/heavy/cpu.weight"
  for _ in $(seq "$ncpu"); do hog "$T/light"; done
  hog "$T/light"
  x=$HOG
  sleep 2 # at the ceiling
  echo "$x" >"$T/heavy/cgroup.procs"
  off=$(inspect "$x" cgroup_nice)
  lvl=$(inspect "$x" level)
  t0=$(cputime "$x")
  sleep "$secs"
  t1=$(cputime "$x")
  echo "  move: at the first look after the move: offset $off, level $lvl; then $(((t1 - t0) / 1000000)) ms on a CPU in ${secs}s"
  if [ "$1" = on ]; then
    # nice 0 - 6 at the ceiling: 1 + (14 + 24) / 2 = 20 (light: 23)
    [ "$off" = -6 ] && [ "$lvl" = 20 ] || fail "after the move to weight 400: offset $off, level $lvl; expected -6 and 20"
    check "moved to the heavy cgroup, it holds a CPU" "(t1 - t0) / 1e9 >= 0.9 * $secs" t0="$t0" t1="$t1"
  else
    [ "$off" = 0 ] && [ "$lvl" = 23 ] || fail "--cgroup-weight=false: after the move: offset $off, level $lvl; expected 0 and 23"
    check "--cgroup-weight=false: the move changes nothing (its share of a CPU)" "(t1 - t0) / 1e9 <= 0.85 * $secs" t0="$t0" t1="$t1"
  fi
  kill_all
}

cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(share mapping move)
echo "weights: $(uname -r), $ncpu CPUs: ${cases[*]}"
for c in "${cases[@]}"; do
  for weights in on off; do
    [ "$c" != mapping ] || [ "$weights" = on ] || continue
    case_begin "$c-$weights"
    if cg_setup; then
      flags=(--report-sec 2)
      [ "$weights" = on ] || flags+=(--cgroup-weight=false)
      if sched_start "${flags[@]}" && sched_wait_enabled; then
        "c_$c" "$weights"
        kill_all
        scx_is_soryu || fail "soryu not enabled at the end (state '$(scx_state)')"
        sched_stop
        sched_wait_disabled
      fi
    else
      fail "cannot set up the test cgroups with the cpu controller"
    fi
    cg_teardown
    report_check "cgroup_weight=$([ "$weights" = on ] && echo true || echo false)"
    dmesg_check
    case_end
  done
done
summary
