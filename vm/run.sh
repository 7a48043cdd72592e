#!/usr/bin/env bash
# Boots a sched_ext-capable guest kernel (vm/kernel.sh) under qemu software
# emulation with virtme-ng and runs one guest script in it, as root.
#
#   vm/run.sh [--name NAME] GUEST_SCRIPT [ARGS...]
#
# The guest sees the host's root filesystem read-only (so host binaries run
# unchanged) plus one read-write results directory, on the host
# target/vm-results/NAME/ (NAME defaults to GUEST_SCRIPT's name without .sh).
# The guest script runs with, in its environment:
#   SORYU_OUT      the results directory (write everything there: the rest
#                  of the guest filesystem is a throw-away tmpfs overlay)
#   SORYU_KCONFIG  the guest kernel's config; pass it to scx_soryu as
#                  --kconfig (the guest has no /boot/config-* nor
#                  /proc/config.gz, and libbpf needs it for Kconfig externs)
#   SORYU_BIN      the scheduler binary, absolute
#   SORYU_KVER, SORYU_REPO, SORYU_TEST_NAME, and every SORYU_* variable of
#   the caller's environment
#
# Exit status: the guest script's; 1 when the VM failed to boot twice, or
# the run timed out, or the guest died before the script finished, or the
# guest's kernel log holds a kernel alarm (vm/kernel-alarms: a WARN, BUG,
# Oops, RCU stall, hung task, lockup, lockdep report...) although the script
# passed. On the emulator's known crash (below) the runner runs the test
# once more, loudly, and leaves a file `emulator-reruns` in the results
# directory; 75 when the rerun died of it too, or when no rerun is left
# (SORYU_VM_RERUNS_LEFT=0: scripts/test.sh allows one per suite).
#
# A VM that does not boot (no `booted` marker) is retried once, loudly. A
# test that fails inside a booted VM is never retried here.
#
# The emulator's known crash: qemu's multi-threaded TCG may run stale code
# while the guest live-patches a static branch (text_poke_bp() puts an int3
# on the site first), so the guest traps on an int3 that the patching code
# does not own: "Oops: int3" and a panic. qemu 7.2 (Debian 12) did it about
# once per 30 sched_ext switches; qemu >= 10.0 (bookworm-backports, which
# scripts/install-deps.sh installs) has not been seen to (docs/testing.md).
# The runner refuses an older qemu unless SORYU_VM_OLD_QEMU=1. Only that
# exact signature is rerun (emulator_crash below): the first alarm of the
# guest's log is the int3 Oops, its RIP is at one of KNOWN_INT3_SITES (the
# static-branch call sites seen to trap), its header shows sched_ext loaded
# or switching ("Sched_ext: NAME (enabling)" and the like), and a panic
# follows. Any other int3 Oops, at any other site, is a failure.
#
# Settings (environment):
#   SORYU_BIN              default <repo>/target/release/scx_soryu
#   SORYU_VM_RESULTS       default <repo>/target/vm-results
#   SORYU_VM_TIMEOUT       seconds for the whole run, boot included (1500)
#   SORYU_VM_BOOT_TIMEOUT  seconds for the guest to reach the script (300)
#   SORYU_VM_CPUS          vCPUs (2);  SORYU_VM_MEMORY  guest RAM (2G)
#   SORYU_VM_SMP           topology after the CPU count in qemu's -smp, e.g.
#                          sockets=2,cores=2,threads=2 (default: the guest
#                          script's `# vm-shape:` line, else qemu's own;
#                          qemu gives each socket one LLC)
#   SORYU_VM_NUMA          NUMA nodes, CPUs and memory split evenly in CPU
#                          order (default: the `# vm-shape:` line's numa=,
#                          else none)
#   SORYU_VM_VERBOSE=1     stream the guest console (kernel log and all)
#   SORYU_VM_STREAM=1      stream the guest script's output as it runs
#                          (instead of printing it when the VM is done)
#   SORYU_VM_KERNEL        which pinned guest kernel to boot, by its name in
#                          vm/kernel.pin (default: its first line, 7.3);
#                          see vm/kernel.sh
#   SORYU_VM_CACHE         kernel cache, see vm/kernel.sh
#   SORYU_VM_QEMU          another qemu-system-x86_64 (e.g. to compare
#                          emulators; with SORYU_VM_OLD_QEMU=1 for one < 10)
#   SORYU_VM_RERUNS_LEFT   reruns after the emulator's known crash (1)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() { echo "vm/run.sh: $*" >&2; exit 1; }
say() { echo "vm/run.sh: $*"; }

name=
if [ "${1:-}" = --name ]; then
  [ $# -ge 2 ] || die "--name needs a value"
  name=$2
  shift 2
fi
[ $# -ge 1 ] || die "usage: vm/run.sh [--name NAME] GUEST_SCRIPT [ARGS...]"
script=$1
shift
[ -f "$script" ] || die "no such guest script: $script"
script=$(cd "$(dirname "$script")" && pwd)/$(basename "$script")
[ -n "$name" ] || name=$(basename "$script" .sh)

command -v vng >/dev/null || die "vng (virtme-ng) not found: run scripts/install-deps.sh"
qemu_min=10.0
qemu_bin=${SORYU_VM_QEMU:-qemu-system-x86_64}
qemu_ver=$("$qemu_bin" --version 2>/dev/null | sed -n 's/^QEMU emulator version \([0-9.]*\).*/\1/p')
[ -n "$qemu_ver" ] || die "$qemu_bin not found: run scripts/install-deps.sh"
if ! printf '%s\n%s\n' "$qemu_min" "$qemu_ver" | sort -C -V && [ "${SORYU_VM_OLD_QEMU:-0}" != 1 ]; then
  die "qemu $qemu_ver crashes sched_ext guests now and then (docs/testing.md); run scripts/install-deps.sh for qemu >= $qemu_min, or set SORYU_VM_OLD_QEMU=1"
fi

export SORYU_BIN=${SORYU_BIN:-$repo/target/release/scx_soryu}
case $SORYU_BIN in /*) ;; *) SORYU_BIN=$PWD/$SORYU_BIN ;; esac
[ -x "$SORYU_BIN" ] || say "warning: scheduler binary $SORYU_BIN does not exist (yet)"

timeout_s=${SORYU_VM_TIMEOUT:-1500}
boot_timeout_s=${SORYU_VM_BOOT_TIMEOUT:-300}
# A guest script may ask for its machine's shape in a comment line of its
# own, e.g. `# vm-shape: cpus=8 smp=sockets=2,cores=2,threads=2` (2 LLCs of
# SMT pairs); SORYU_VM_CPUS and SORYU_VM_SMP still override it.
shape=$(sed -n 's/^# vm-shape: //p' "$script" 2>/dev/null | head -n 1)
shape_of() { tr ' ' '\n' <<<"$shape" | sed -n "s/^$1=//p" | head -n 1; }
cpus=${SORYU_VM_CPUS:-$(shape_of cpus)}
cpus=${cpus:-2}
smp=${SORYU_VM_SMP:-$(shape_of smp)}
numa=${SORYU_VM_NUMA:-$(shape_of numa)}
memory=${SORYU_VM_MEMORY:-$(shape_of memory)}
memory=${memory:-2G}

eval "$("$repo/vm/kernel.sh")"
export SORYU_KVER SORYU_KCONFIG SORYU_REPO=$repo SORYU_TEST=$script SORYU_TEST_NAME=$name

results=${SORYU_VM_RESULTS:-$repo/target/vm-results}
out=$results/$name
mkdir -p "$results"
# Two runs of one test would wipe each other's results: one at a time.
exec 9>"$results/.$name.lock"
flock -n 9 || die "another run of $name is in progress (lock $results/.$name.lock)"
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
export SORYU_OUT=$out

# The guest kernel's config travels in the results directory: the kernel
# cache may sit where the guest cannot see it (virtme-ng mounts empty
# tmpfs over /var/cache, /var/tmp, /var/log in the guest).
cp "$SORYU_KCONFIG" "$out/kconfig"
SORYU_KCONFIG=$out/kconfig

# The shape booted, for guest scripts that check it.
export SORYU_VM_SHAPE="cpus=$cpus${smp:+ smp=$smp}${numa:+ numa=$numa} memory=$memory"

# The guest gets no environment from the host: hand it one as a file.
{
  while IFS= read -r var; do
    printf 'export %s=%q\n' "$var" "${!var}"
  done < <(compgen -v SORYU_ | grep -vx 'SORYU_TEST_ARGS')
  printf 'SORYU_TEST_ARGS=('
  if [ $# -gt 0 ]; then printf '%q ' "$@"; fi
  printf ')\n'
} >"$out/.env"

# Flags, and why:
#   --disable-kvm   KVM guests hang on this kind of host; TCG always works.
#   --force-9p      share the host root over 9p rather than virtiofs: no
#                   virtiofsd needed (Debian 12 has none), same on every host.
#   --user root     loading a BPF scheduler needs root.
#   --rwdir         the only guest path that reaches the host.
#   -v              the guest console (kernel log + script output) on
#                   stderr: without udev in the guest, vng's script I/O
#                   channel is absent and this is the only place it shows.
qemu_opt=()
[ -z "${SORYU_VM_QEMU:-}" ] || qemu_opt=(--qemu "$SORYU_VM_QEMU")
# (one argument with '=': vng would take a separate value for a flag)
# NUMA: the CPUs and the memory split evenly over $numa nodes, in CPU
# order (qemu's -numa needs each node's memory as a backend of its own).
numa_opts=
if [ -n "$numa" ] && [ "$numa" -gt 1 ]; then
  mem_mb=$(numfmt --from=iec "${memory}" | awk '{ print int($1 / 1048576) }')
  [ $((cpus % numa)) = 0 ] && [ $((mem_mb % numa)) = 0 ] ||
    die "numa=$numa must divide both the $cpus vCPUs and the ${mem_mb} MiB"
  for ((n = 0; n < numa; n++)); do
    numa_opts+=" -object memory-backend-ram,id=m$n,size=$((mem_mb / numa))M"
    numa_opts+=" -numa node,nodeid=$n,cpus=$((n * cpus / numa))-$(((n + 1) * cpus / numa - 1)),memdev=m$n"
  done
fi
if [ -n "$smp$numa_opts" ]; then
  qemu_opt+=("--qemu-opts=${smp:+-smp $cpus,$smp}$numa_opts")
fi
vng_cmd=(vng --disable-kvm --force-9p -v "${qemu_opt[@]}"
  -r "$SORYU_VMLINUZ" --cpus "$cpus" --memory "$memory"
  --user root --rwdir "$out"
  -e "bash $(printf %q "$repo/vm/guest-init.sh") $(printf %q "$out")")

vm_pid=
kill_vm() {
  # vng runs in its own session (setsid): end it and its qemu together.
  if [ -n "$vm_pid" ] && kill -0 "$vm_pid" 2>/dev/null; then
    kill -TERM -- "-$vm_pid" 2>/dev/null || true
    sleep 2
    kill -KILL -- "-$vm_pid" 2>/dev/null || true
  fi
}
tailer_pid=
cleanup() {
  kill_vm
  if [ -n "$tailer_pid" ]; then kill "$tailer_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Runs the VM once. Returns 0 when the guest booted (whatever the test
# did), 1 when it did not.
boot_once() {
  rm -f "$out/booted" "$out/exit-status" "$out/guest.log" "$out/dmesg.txt" "$out/guest-info"
  local start now status=running
  start=$(date +%s)
  # Run from the repo top: vng makes the guest's working directory the same.
  (cd "$repo" && exec setsid "${vng_cmd[@]}" </dev/null >"$out/console.log" 2>&1) &
  vm_pid=$!
  if [ "${SORYU_VM_VERBOSE:-0}" = 1 ]; then
    tail -n +1 -f "$out/console.log" &
    tailer_pid=$!
  elif [ "${SORYU_VM_STREAM:-0}" = 1 ]; then
    # guest.log appears once the guest runs the script (-F: retry).
    tail -n +1 -F "$out/guest.log" 2>/dev/null &
    tailer_pid=$!
  fi
  while kill -0 "$vm_pid" 2>/dev/null; do
    now=$(date +%s)
    if [ ! -e "$out/booted" ] && [ $((now - start)) -ge "$boot_timeout_s" ]; then
      say "no boot marker after ${boot_timeout_s}s, stopping the VM"
      status=boot-timeout
      kill_vm
      break
    fi
    if [ $((now - start)) -ge "$timeout_s" ]; then
      say "TIMEOUT: the VM ran for ${timeout_s}s (SORYU_VM_TIMEOUT), stopping it"
      status=timeout
      kill_vm
      break
    fi
    sleep 2
  done
  wait "$vm_pid" 2>/dev/null || true # vng exits 255 even when all went well
  vm_pid=
  if [ -n "$tailer_pid" ]; then
    sleep 1 # let tail print the last lines
    kill "$tailer_pid" 2>/dev/null || true
    wait "$tailer_pid" 2>/dev/null || true
    tailer_pid=
  fi
  say "VM ran $(($(date +%s) - start))s"
  [ "$status" != timeout ] || echo timeout >"$out/.timed-out"
  [ -e "$out/booted" ]
}

# boot_test: boot (once more if the VM did not boot), run the test; 1 when
# the VM failed to boot twice.
boot_test() {
  say "booting $SORYU_KVER (${cpus} vCPUs${smp:+ as $smp}${numa_opts:+ in $numa NUMA nodes}, ${memory}, qemu $qemu_ver TCG) for $name; results in $out"
  boot_once && return 0
  mv "$out/console.log" "$out/console.attempt1.log"
  echo "################################################################" >&2
  echo "vm/run.sh: VM failed to boot, retrying (console: $out/console.attempt1.log)" >&2
  tail -n 15 "$out/console.attempt1.log" >&2 || true
  echo "################################################################" >&2
  boot_once && return 0
  echo "vm/run.sh: FAIL: VM failed to boot twice; last console lines:" >&2
  tail -n 30 "$out/console.log" >&2 || true
  return 1
}

# sched_ext lines and kernel trouble, for the reader of a failure.
show_kernel_log() {
  local f=$out/dmesg.txt
  [ -s "$f" ] || f=$out/console.log
  echo "---- sched_ext and error lines of the guest kernel log ($f) ----"
  { grep -E 'sched_ext|(^|[^a-z])stall' "$f" | grep -v 'ommand line'; kernel_alarms "$f"; } |
    awk '!seen[$0]++' | tail -n 40 || true
}

# kernel_alarms FILE: the lines of FILE that vm/kernel-alarms names.
kernel_alarms() { grep -E -f <(grep -v -e '^#' -e '^$' "$repo/vm/kernel-alarms") "$1" || true; }

# The int3 sites the emulator's crash has been seen at: functions whose
# static branches sched_ext patches when it switches on or off
# (sched_tick: its scx_tick() branch, seen as soryu was disabling after a
# SIGKILL of the daemon, tests/vm/errors.sh sigkill).
KNOWN_INT3_SITES='__schedule|scx_allow_ttwu_queue|sched_tick'

# emulator_crash LOG: the guest died (no exit status, no timeout) of the
# emulator's known crash, and nothing else (see the head of this file).
emulator_crash() {
  local log=$1 first n block
  [ ! -e "$out/exit-status" ] && [ ! -e "$out/.timed-out" ] || return 1
  first=$(kernel_alarms "$log" | head -n1)
  [[ $first == *"Oops: int3"* ]] || return 1
  n=$(grep -n -m1 -F -- "$first" "$log" | cut -d: -f1)
  block=$(sed -n "$n,$((n + 40))p" "$log")
  grep -qE "RIP: [0-9a-f]+:($KNOWN_INT3_SITES)\+0x" <<<"$block" &&
    grep -qE 'Sched_ext: [^ ]+ \((enabling|enabled|disabling)' <<<"$block" &&
    sed -n "$n,\$p" "$log" | grep -q 'Kernel panic'
}

boot_test || exit 1
if emulator_crash "$out/console.log"; then
  if [ "${SORYU_VM_RERUNS_LEFT:-1}" -le 0 ]; then
    echo "vm/run.sh: FAIL: the guest died of the emulator's known crash (Oops: int3 at a live-patched site, then a panic), and no rerun is left in this suite (SORYU_VM_RERUNS_LEFT=0)" >&2
    grep -m1 -A12 'Oops: int3' "$out/console.log" >&2 || true
    echo 1 >"$out/emulator-crash-not-rerun"
    exit 75
  fi
  # Once, loudly; the first attempt's files are kept for the record, and
  # `emulator-reruns` tells scripts/test.sh to count it in its summary.
  # The rerun's guest sees that subdirectory: a guest script looks only at
  # the top of SORYU_OUT (tests/vm/starve.sh once counted the first
  # attempt's gate files there, and its rerun failed).
  keep=$out/emulator-crash-1
  mkdir -p "$keep"
  find "$out" -mindepth 1 -maxdepth 1 ! -name .env ! -name kconfig ! -name "$(basename "$keep")" \
    -exec mv {} "$keep/" \;
  echo 1 >"$out/emulator-reruns"
  echo "################################################################" >&2
  echo "vm/run.sh: EMULATOR CRASH (Oops: int3 at a live-patched site, then a panic): running $name once more" >&2
  grep -m1 -A12 'Oops: int3' "$keep/console.log" >&2 || true
  echo "vm/run.sh: first attempt's logs: $keep" >&2
  echo "################################################################" >&2
  boot_test || exit 1
fi

if [ ! -e "$out/exit-status" ]; then
  crash=1
  if [ -e "$out/.timed-out" ]; then
    echo "vm/run.sh: FAIL: $name did not finish within ${timeout_s}s" >&2
  elif emulator_crash "$out/console.log"; then
    echo "vm/run.sh: FAIL: the guest died of the emulator's known crash again (Oops: int3, then a panic)" >&2
    crash=75
  else
    echo "vm/run.sh: FAIL: the guest stopped before $name finished (crash or panic?)" >&2
  fi
  echo "---- guest console, last lines ($out/console.log) ----"
  tail -n 40 "$out/console.log" || true
  show_kernel_log
  exit "$crash"
fi

rc=$(cat "$out/exit-status")
if [ "${SORYU_VM_VERBOSE:-0}" != 1 ] && [ "${SORYU_VM_STREAM:-0}" != 1 ]; then
  echo "---- $name (guest output) ----"
  cat "$out/guest.log" 2>/dev/null || true
  echo "---- end of $name ----"
fi
# The whole boot's kernel log, between cases and before the first too: a
# kernel alarm anywhere fails the run, whatever the script said.
alarms=$(kernel_alarms "$out/dmesg.txt")
if [ -n "$alarms" ]; then
  echo "vm/run.sh: FAIL: kernel alarm(s) in the guest's kernel log ($out/dmesg.txt):" >&2
  echo "$alarms" >"$out/kernel-alarms.txt"
  head -n 10 <<<"$alarms" >&2
  [ "$rc" != 0 ] || rc=1
fi
[ -s "$out/dmesg.txt" ] || { echo "vm/run.sh: FAIL: the guest wrote no kernel log (dmesg.txt)" >&2; [ "$rc" != 0 ] || rc=1; }
if [ "$rc" != 0 ]; then
  show_kernel_log
  say "FAIL: $name exited $rc (logs: $out)"
  case $rc in '' | *[!0-9]*) exit 1 ;; *) exit "$rc" ;; esac
fi
say "ok: $name (logs: $out)"
