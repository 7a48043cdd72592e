#!/usr/bin/env bash
# The VM tests' own judgements, on hand-made input, without a VM:
#   - check() (tests/vm/lib.sh) fails when a value is not a number (empty,
#     null, a word), instead of comparing it as a string;
#   - report_sum() gives no number when a field is missing or renamed, so
#     a check on it fails;
#   - vm/kernel-alarms catches every kind of kernel alarm in sample reports
#     (WARN, BUG, Oops, panic, RCU stalls, hung tasks, lockups, lockdep,
#     sleeping in atomic context, the verifier and BTF) and none of the
#     kernel's ordinary lines a test produces;
#   - a Rust panic in the daemon's log is found;
#   - hostile.sh's check of a report across restarts refuses intervals
#     numbered again, a missing exit record and a second header;
#   - dump_check.py reads every task head the kernel's dump prints (any
#     state letter, a comm with spaces, with or without a scheduler id)
#     and fails a task with two soryu lines or a stalled task's wrong wait;
#   - vm/run.sh, with a stand-in for virtme-ng that replays a console:
#     the emulator's known crash (an int3 Oops at a known site while
#     sched_ext switches, then a panic) is rerun once, and no more once the
#     suite has used its rerun; an int3 Oops anywhere else, or without
#     sched_ext in its header, is a failure; a kernel alarm in the log of a
#     guest whose script passed fails the run.
#
#   tests/host/harness.sh
#
# One line per check, then "N passed, M failed"; non-zero exit on a failure.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
# shellcheck source=tests/host/lib.sh
. "$repo/tests/host/lib.sh"
checks_begin

# guest_lib CMD...: CMD in a shell that sourced tests/vm/lib.sh (as the
# guest does), inside a case; prints the case's failures, one a line.
guest_lib() {
  (
    export SORYU_OUT=$tmp/out SORYU_BIN=/bin/true SORYU_KCONFIG=/dev/null SORYU_REPO=$repo
    mkdir -p "$SORYU_OUT"
    # shellcheck source=tests/vm/lib.sh
    . tests/vm/lib.sh
    CASE=harness
    "$@"
    [ ${#CASE_FAILS[@]} = 0 ] || printf '%s\n' "${CASE_FAILS[@]}"
  )
}

# ---- check(): numbers only
out=$(guest_lib check "a count" "n >= 100" n=250)
check "check: 250 >= 100 holds" test -z "$out"
out=$(guest_lib check "a count" "n >= 100" n=99.5)
check "check: 99.5 >= 100 fails" grep -q "does not hold for n=99.5" <<<"$out"
out=$(guest_lib check "a ratio" "a / b <= 0.08" a=1.5e3 b=-2E+4)
check "check: exponents and signs are numbers" test -z "$out"
for v in null "" missing:int_count 12abc inf; do
  out=$(guest_lib check "a figure" "n >= 100" "n=$v")
  check "check: '$v' is not a number: the check fails" grep -q "n is not a number ('$v')" <<<"$out"
done
# string comparison: "10" < "9" as strings, not as numbers
out=$(guest_lib check "numbers as numbers" "a > b" a=10 b=9)
check "check: 10 > 9 compares as numbers" test -z "$out"

# ---- report_sum(): a missing or renamed field is no number
printf '%s\n' '{"type":"header"}' '{"type":"interval","index":0,"wakeups":5,"direct":1}' \
  '{"type":"interval","index":1,"wakeups":7}' '{"type":"int' >"$tmp/r.jsonl"
sum() { guest_lib report_sum "$1" "$tmp/r.jsonl"; }
check "report_sum: wakeups summed over the intervals, a torn last line skipped ($(sum wakeups))" test "$(sum wakeups)" = 12
check "report_sum: a field one interval lacks is no number ($(sum direct))" test "$(sum direct)" = missing:direct
check "report_sum: a renamed field is no number ($(sum wakeup))" test "$(sum wakeup)" = missing:wakeup
printf '%s\n' '{"type":"header"}' >"$tmp/h.jsonl"
check "report_sum: no interval is no number" test "$(guest_lib report_sum wakeups "$tmp/h.jsonl")" = no-intervals
out=$(guest_lib check "--clear-bitmap off: no bit was ever cleared" "c == 0" "c=$(sum bitmap_clear)")
check "a renamed field fails an '== 0' check" grep -q "c is not a number ('missing:bitmap_clear')" <<<"$out"

# ---- a report across restarts (hostile.sh hotplug_report_check)
restart_report() { # restart_report FILE N: the check's failures for a report of N restarts
  (
    export SORYU_OUT=$tmp/out SORYU_BIN=/bin/true SORYU_KCONFIG=/dev/null SORYU_REPO=$repo HOSTILE_LIB=1
    # shellcheck source=tests/vm/hostile.sh
    . tests/vm/hostile.sh
    CASE=harness
    hotplug_report_check "$2" "$1"
    [ ${#CASE_FAILS[@]} = 0 ] || printf '%s\n' "${CASE_FAILS[@]}"
  )
}
iv() { echo "{\"type\":\"interval\",\"index\":$1}"; }
ex() { echo "{\"type\":\"exit\",\"kind_name\":\"$1\",\"restart\":$2,\"intervals\":$3}"; }
{ echo '{"type":"header"}'; iv 0; iv 1; ex unreg_kern true 2; iv 2; ex unreg_kern true 3; iv 3; ex unreg false 4; } >"$tmp/restarts.jsonl"
out=$(restart_report "$tmp/restarts.jsonl" 2)
check "a report across 2 restarts: one header, intervals 0-3, an exit record per restart${out:+: $out}" test -z "$out"
sed 's/"index":2/"index":0/; s/"index":3/"index":1/' "$tmp/restarts.jsonl" >"$tmp/renumbered.jsonl"
out=$(restart_report "$tmp/renumbered.jsonl" 2)
check "intervals numbered again from 0 after a restart fail" grep -q "interval indices not 0, 1, 2" <<<"$out"
grep -v '"intervals":3' "$tmp/restarts.jsonl" >"$tmp/noexit.jsonl"
out=$(restart_report "$tmp/noexit.jsonl" 2)
check "a restart without its exit record fails" grep -q "2 exit records for 2 restarts" <<<"$out"
{ echo '{"type":"header"}'; iv 0; ex unreg_kern true 1; echo '{"type":"header"}'; iv 0; ex unreg false 1; } >"$tmp/newrun.jsonl"
out=$(restart_report "$tmp/newrun.jsonl" 1)
check "a restart that starts a new run (a second header) fails" grep -q "2 headers" <<<"$out"

# ---- kernel alarms
cat >"$tmp/alarms.log" <<'EOF'
[  123.456789] WARNING: CPU: 1 PID: 123 at kernel/workqueue.c:2317 __queue_work+0x3a5/0x4a0
[  123.456789] WARNING: possible circular locking dependency detected
[  123.456789] WARNING: inconsistent lock state
[  123.456789] WARNING: suspicious RCU usage
[  123.456789] WARNING: possible recursive locking detected
[  123.456789] BUG: sleeping function called from invalid context at kernel/locking/mutex.c:283
[  123.456789] BUG: scheduling while atomic: stress-ng/1234/0x00000002
[  123.456789] BUG: workqueue lockup - pool cpus=1 node=0 flags=0x0 nice=0 stuck for 31s!
[  123.456789] watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [stress-ng-cpu:1234]
[  123.456789] watchdog: Watchdog detected hard LOCKUP on cpu 1
[  123.456789] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
[  123.456789] rcu: INFO: rcu_preempt self-detected stall on CPU
[  123.456789] rcu: rcu_preempt kthread starved for 10502 jiffies! g12345 f0x0 RCU_GP_WAIT_FQS(5) ->state=0x402 ->cpu=1
[  123.456789] INFO: rcu_tasks detected stalls on tasks:
[  123.456789] INFO: task kworker/u4:2:45 blocked for more than 122 seconds.
[  123.456789] Oops: general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] PREEMPT SMP NOPTI
[  123.456789] kernel BUG at mm/slub.c:449!
[  123.456789] Kernel panic - not syncing: Fatal exception
[  123.456789] UBSAN: array-index-out-of-bounds in kernel/sched/ext.c:1234:5
[  123.456789] DEBUG_LOCKS_WARN_ON(lock->magic != lock)
[  123.456789] possible circular locking dependency detected
[  123.456789] inconsistent lock state
[  123.456789] suspicious RCU usage
[  123.456789] verifier bug: scc exit: no visit info for call chain
[  123.456789] INFO: trying to register non-static key.
[  123.456789] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
[  123.456789] list_del corruption. prev->next should be ffff888003a1c2d8, but was ffff888003a1c2e8. (prev=ffff888003a1c2e8)
[  123.456789] refcount_t: underflow; use-after-free.
[  123.456789] BUG: KASAN: slab-use-after-free in scx_dispatch+0x12/0x40
[  123.456789] BPF: Invalid name
EOF
cat >"$tmp/clean.log" <<'EOF'
[   42.000000] soryu-test: begin case stall 1700000000
[   42.000000] sched_ext: BPF scheduler "soryu_0.1.0_gabc" enabled
[   42.000000] sched_ext: BPF scheduler "soryu_0.1.0_gabc" disabled (unregistered from user space)
[   42.000000] sched_ext: BPF scheduler "soryu_0.1.0_gabc" disabled (unregistered from the main kernel)
[   42.000000] sched: RT throttling activated
[   42.000000] smpboot: CPU 1 is now offline
[   42.000000] clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable because the skew is too large:
[   42.000000] hrtimer: interrupt took 12345678 ns
[   42.000000] perf: interrupt took too long (2503 > 2500), lowering kernel.perf_event_max_sample_rate to 79800
[   42.000000] sysrq: Show Blocked State
[   42.000000] task:kworker/0:1     state:D stack:0     pid:12    tgid:12    ppid:2      flags:0x00004000
[   42.000000] Call Trace:
[   42.000000]  <TASK>
[   42.000000]  __schedule+0x3f1/0x1170
EOF
caught=$(guest_lib kernel_alarms "$tmp/alarms.log" | wc -l)
check "every sample alarm is caught ($caught of $(wc -l <"$tmp/alarms.log"))" test "$caught" = "$(wc -l <"$tmp/alarms.log")"
missed=$(guest_lib kernel_alarms "$tmp/alarms.log" | grep -vxFf - "$tmp/alarms.log" || true)
[ -z "$missed" ] || echo "     | missed: $missed"
out=$(guest_lib kernel_alarms "$tmp/clean.log")
check "no ordinary line is taken for an alarm${out:+: $out}" test -z "$out"

# ---- a panicked daemon thread
printf '%s\n' '[soryu] #0 2.0 s | dispatch 10' \
  "thread '<unnamed>' panicked at src/main.rs:52:13:" 'boom' \
  'note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace' >"$tmp/panic.log"
check "a panic in a daemon thread is found" test -n "$(guest_lib daemon_panics "$tmp/panic.log")"
check "a log without one has none" test -z "$(guest_lib daemon_panics "$tmp/clean.log")"

# ---- dump_check.py: every task head the kernel prints, each with one soryu line
# dump HEAD...: a stall ejection's dump with one task entry per HEAD (the
# first is the stalled soryu-stall), each followed by its soryu line.
dump() {
  printf '%s\n' 'DEBUG DUMP' '=====' '' 'kworker/u8:4[772] triggered exit kind 1026 on CPU 0:' \
    '  runnable task stall (soryu-stall[908] failed to run for 12.492s)' '' \
    'soryu: vtime_now=0 starve_ms=100 slice_us=1000' \
    'soryu: llc 0 lvl_bitmap=0x4000 starving=0x0 levels_running 0x0' '' \
    'CPU 0   : nr_run=3 flags=0x1 cpu_rel=0 ksync=61421' '  soryu: cpu 0 level 33 grant_pid 0 own_queue 3'
  local h w=12494
  for h in "$@"; do
    printf '\n%s\n      scx_state/flags=4/0xb\n\n    soryu: task boost 0 level 14 queued_level 14 waited %sms used_us 0 granted 0 cpus 0x3 n 2\n' "$h" "$w"
    w=5
  done
  printf '%s\n' '' 'Event counters' '  SCX_EV_SELECT_CPU_FALLBACK: 0' "$(printf '=%.0s' {1..80})"
}
dump '  R soryu-stall[908] *root -12492ms' ' *R stress-ng-affin[920] *root -52ms' \
  '  Z stress-ng-affin[921] *root +0ms' '  P cpuhp/1[20] *root -3ms' '  R my worker [x][930] *root -1ms' \
  '  R kworker/0:1[31] -4ms' >"$tmp/dump.log"
out=$(python3 tests/vm/dump_check.py "$tmp/dump.log" 100 1000 1 soryu-stall) || true
check "dump_check: heads of exiting (Z) and parked (P) tasks, a comm with spaces and brackets, 6.12's head without a scheduler id: passes ($out)" \
  grep -q "^ok the whole dump: .* 6 tasks each with its soryu line; soryu-stall waited 12494 ms" <<<"$out"
dump '  R soryu-stall[908] *root -12492ms' '  R stress-ng-affin[920] *root -52ms' >"$tmp/dump.log"
sed -i '0,/waited 5ms/{/waited 5ms/p}' "$tmp/dump.log"
out=$(python3 tests/vm/dump_check.py "$tmp/dump.log" 100 1000 1 soryu-stall) || true
check "dump_check: a task with two soryu lines fails" grep -q "^fail task stress-ng-affin has 2 soryu task lines" <<<"$out"
dump '  R soryu-stall[908] *root -12492ms' >"$tmp/dump.log"
sed -i 's/waited 12494ms/waited 900ms/' "$tmp/dump.log"
out=$(python3 tests/vm/dump_check.py "$tmp/dump.log" 100 1000 1 soryu-stall) || true
check "dump_check: a stalled task's line that disagrees with the kernel fails" grep -q "^fail the stalled task's line says it waited 900 ms" <<<"$out"

# ---- vm/run.sh and the emulator's crash, with stand-ins for vng and qemu
fake=$tmp/fake
mkdir -p "$fake/bin"
cat >"$fake/bin/vng" <<'EOF'
#!/usr/bin/env bash
# Replays $FAKE/console.N as the Nth boot's console; with $FAKE/pass.N the
# guest script finished (exit status 0) with $FAKE/dmesg.N as its kernel log.
while [ $# -gt 0 ]; do [ "$1" != --rwdir ] || dir=$2; shift; done
n=$(($(cat "$FAKE/boots" 2>/dev/null || echo 0) + 1))
echo "$n" >"$FAKE/boots"
echo booted >"$dir/booted"
cat "$FAKE/console.$n"
if [ -e "$FAKE/pass.$n" ]; then
  echo "1 passed, 0 failed" >"$dir/guest.log"
  cp "$FAKE/dmesg.$n" "$dir/dmesg.txt"
  echo 0 >"$dir/exit-status"
fi
exit 255
EOF
printf '#!/bin/sh\necho "QEMU emulator version 10.0.2"\n' >"$fake/bin/qemu"
chmod +x "$fake/bin/vng" "$fake/bin/qemu"
printf '#!/usr/bin/env bash\ntrue\n' >"$tmp/guest.sh"
# crash SITE STATE [BEFORE]: a console that dies of an int3 Oops at SITE with
# sched_ext in STATE ("" for no Sched_ext line), BEFORE a line ahead of it.
crash() {
  echo '[   41.000000] soryu-test: begin case x 1'
  [ -z "${3:-}" ] || echo "[   42.000000] $3"
  echo '[   43.100000] Oops: int3: 0000 [#1] SMP NOPTI'
  echo '[   43.100000] CPU: 1 UID: 0 PID: 0 Comm: swapper/1 Not tainted 7.3.4+deb13-amd64 #1 PREEMPT(lazy)'
  echo '[   43.100000] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996)'
  [ -z "$2" ] || echo "[   43.100000] Sched_ext: soryu_0.1.0 ($2), task: runnable_at=-3ms"
  echo "[   43.100000] RIP: 0010:$1+0x1b4/0x1170"
  echo '[   43.100000] Call Trace:'
  echo '[   43.200000] Kernel panic - not syncing: Fatal exception in interrupt'
}
# run_vm NAME RERUNS_LEFT: vm/run.sh on the stand-in; sets rc and res
run_vm() {
  rm -f "$fake/boots"
  rc=0
  PATH=$fake/bin:$PATH FAKE=$fake SORYU_VM_QEMU=$fake/bin/qemu SORYU_VM_RESULTS=$tmp/vm SORYU_VM_BOOT_TIMEOUT=30 \
    SORYU_VM_TIMEOUT=60 SORYU_VM_RERUNS_LEFT=$2 SORYU_BIN=/bin/true \
    vm/run.sh --name "$1" "$tmp/guest.sh" >"$tmp/$1.out" 2>&1 || rc=$?
  res=$tmp/vm/$1
}
clean_dmesg='[   41.000000] sched_ext: BPF scheduler "soryu_0.1.0" enabled'
rm -f "$fake"/console.* "$fake"/pass.* "$fake"/dmesg.*
crash __schedule disabling >"$fake/console.1"
echo "$clean_dmesg" >"$fake/console.2"
echo "$clean_dmesg" >"$fake/dmesg.2"
touch "$fake/pass.2"
run_vm known 1
check "the known crash (int3 at __schedule, sched_ext disabling, panic): rerun once, then passed (status $rc, $(cat "$fake/boots") boots)" \
  test "$rc" = 0 -a "$(cat "$fake/boots")" = 2 -a -e "$res/emulator-reruns" -a -s "$res/emulator-crash-1/console.log"
crash scx_allow_ttwu_queue enabling >"$fake/console.1"
run_vm known-ttwu 1
check "the known crash at scx_allow_ttwu_queue while enabling: rerun (status $rc)" test "$rc" = 0 -a -e "$res/emulator-reruns"
crash sched_tick disabling >"$fake/console.1"
run_vm known-tick 1
check "the known crash at sched_tick while disabling: rerun (status $rc)" test "$rc" = 0 -a -e "$res/emulator-reruns"
crash __schedule disabling >"$fake/console.1"
run_vm second 0
check "the known crash with no rerun left in the suite: status 75, not rerun ($(cat "$fake/boots") boot)" \
  test "$rc" = 75 -a "$(cat "$fake/boots")" = 1 -a ! -e "$res/emulator-reruns" -a -e "$res/emulator-crash-not-rerun"
for bad in "try_to_wake_up disabling" "__schedule ''" "__schedule disabling WARNING:_CPU:_1_PID:_9_at_kernel/sched/ext.c:99_scx_enable"; do
  read -r site state before <<<"$bad"
  [ "$state" != "''" ] || state=
  crash "$site" "$state" "${before//_/ }" >"$fake/console.1"
  run_vm other 1
  what="at $site, no Sched_ext line"
  [ -z "$state" ] || what="at $site, sched_ext $state"
  [ -z "$before" ] || what+=", after a WARNING"
  check "no rerun for an int3 Oops $what: status $rc, $(cat "$fake/boots") boot" \
    test "$rc" != 0 -a "$(cat "$fake/boots")" = 1 -a ! -e "$res/emulator-reruns"
done
# a guest whose script passed, with a kernel alarm in its log
echo "$clean_dmesg" >"$fake/console.1"
printf '%s\n' "$clean_dmesg" '[   50.000000] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:' >"$fake/dmesg.1"
touch "$fake/pass.1"
run_vm alarm 1
check "a passing script with an RCU stall in the kernel log: the run fails (status $rc)" \
  test "$rc" = 1 -a -s "$res/kernel-alarms.txt"
echo "$clean_dmesg" >"$fake/dmesg.1"
run_vm quiet 1
check "the same run with a clean kernel log passes (status $rc)" test "$rc" = 0

checks_done
