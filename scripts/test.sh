#!/usr/bin/env bash
# Runs the whole test suite of scx_soryu:
#   1. dependencies (scripts/install-deps.sh as root, else only a check)
#   2. cargo fmt --check
#   3. cargo test                                  (unit tests)
#   4. cargo build --release         (BPF_CLANG=clang-19 for all cargo steps)
#   4b. every tests/host/*.sh test (service install, bad input)
#   5. every tests/vm/*.sh test (tests/vm/lib.sh is their library) in a
#      guest kernel with sched_ext, through vm/run.sh
# Every step runs even when an earlier one failed (the VM tests need the
# build, though), then a summary; the exit status is non-zero when anything
# failed. The last line counts unit tests and VM cases, plus one per
# step that has no count of its own (fmt, build) or that failed before
# counting: "N passed, M failed".
#
#   scripts/test.sh              everything
#   scripts/test.sh --vm-only    only step 5, with the binary already built
#   scripts/test.sh [--vm-only] core ...   only the named VM runs
#   scripts/test.sh --matrix     the VM runs on the kernels CI does not
#                                boot (7.2, 6.12 with kernel debugging)
#
# A VM run is named TEST[@KERNEL][:SHAPE]: tests/vm/TEST.sh booted on the
# kernel KERNEL of vm/kernel.pin (default: its first line, 7.3), in the
# machine shape SHAPE (below; default: the script's own `# vm-shape:`),
# e.g. core@6.12 or bigtopo:32. Every tests/vm/*.sh runs on 7.3 (but
# those only --matrix runs, below); the runs
# listed in ci_runs below are added, and --matrix runs matrix_runs. The
# guest kernels a list needs are fetched or built first, in a step of
# their own (a cold 6.12 build takes 10-20 minutes).
#
# Logs of VM tests: target/vm-results/<test>/. Settings: see vm/run.sh.
#
# Deadlines: each VM test gets about three times its usual time (the table
# below; SORYU_VM_TIMEOUT overrides all of them), and the whole run
# SORYU_SUITE_DEADLINE seconds (4800): a test that would start past it is
# recorded as failed, not run, and a running one is cut at it, so a hang ends
# in a summary rather than a killed CI job. A VM test whose guest died of the
# emulator's known crash is run once more by vm/run.sh; the summary counts
# those reruns ("emulator crash, rerun: N"); after one, that crash fails
# its test. Nothing else is ever rerun.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
# rustup's cargo, when the caller's PATH lacks it.
export PATH="$PATH:${HOME:-/root}/.cargo/bin"
# The BPF compiler for every cargo step, unit tests included: scx_utils'
# build script runs $BPF_CLANG (default: plain `clang`, which Debian 12's
# clang-19 package does not provide).
export BPF_CLANG=${BPF_CLANG:-clang-19}

suite_deadline=${SORYU_SUITE_DEADLINE:-4800}
# Usual seconds (qemu 10, 2 vCPUs, this project's machine) x 3, boot included.
declare -A vm_deadline=([core]=900 [cycles]=1500 [errors]=600 [hostile]=1800
  [hotplug]=600 [measure]=300 [policy]=1200 [starve]=1200 [topology]=900 [topology-starve]=600
  [weights]=600 [holes]=600 [bigtopo]=1500 [verifier]=600 [report-edges]=600 [unsupported]=300)
emulator_reruns=0

# Machine shapes a run may ask for (TEST:SHAPE), as vm/run.sh settings.
# ci: bigtopo's own shape (16 vCPUs, 4 LLCs, 2 NUMA nodes), the cases CI
# has time for.
declare -A vm_shape=(
  [ci]="SORYU_BIGTOPO_CASES=shape,strict,hotplug,cpuset"
  [32]="SORYU_VM_CPUS=32 SORYU_VM_SMP=sockets=8,cores=2,threads=2 SORYU_VM_NUMA=2 SORYU_VM_MEMORY=4G SORYU_BIGTOPO_CASES=shape,load,strict"
  [1llc]="SORYU_VM_CPUS=16 SORYU_VM_SMP=sockets=1,cores=8,threads=2 SORYU_VM_NUMA=1 SORYU_BIGTOPO_CASES=shape,load,cpuset"
)
# Runs beside every tests/vm/*.sh on the default kernel (bigtopo only as
# bigtopo:ci): three cases at 16 vCPUs, and soryu loaded and exercised on
# 6.12 LTS, the oldest kernel it supports (its own compat paths:
# tests/vm/verifier.sh).
ci_runs=(bigtopo:ci core@6.12 verifier@6.12)
# What CI has no time for, for scripts/test.sh --matrix: the rest of 6.12,
# the 6.12 debug build, the refusal on Debian's 7.2 (docs/kernels.md), and
# the other machine shapes.
matrix_runs=(policy@6.12 starve@6.12 holes@6.12 unsupported@7.2
  core@6.12-debug policy@6.12-debug starve@6.12-debug holes@6.12-debug verifier@6.12-debug
  bigtopo bigtopo:32 bigtopo:1llc topology-starve)

vm_only=0 matrix=0
while [ $# -gt 0 ]; do
  case $1 in
    --vm-only) vm_only=1 ;;
    --matrix) vm_only=1 matrix=1 ;;
    *) break ;;
  esac
  shift
done
only=("$@")

passed=0
failed=0
results=()
why=()
record() { # record STEP STATUS(ok|FAIL) SECONDS [DETAIL]
  results+=("$(printf '%-4s %-28s %5ss  %s' "$2" "$1" "$3" "${4:-}")")
}
banner() { printf '\n======== %s ========\n' "$*"; }

# run_step NAME CMD...: a step without a count of its own.
run_step() {
  local name=$1 start rc=0
  shift
  banner "$name"
  start=$(date +%s)
  "$@" || rc=$?
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
    record "$name" ok $(($(date +%s) - start))
  else
    failed=$((failed + 1))
    record "$name" FAIL $(($(date +%s) - start)) "exit status $rc"
  fi
  return "$rc"
}

deps() {
  if [ "$(id -u)" = 0 ]; then
    bash scripts/install-deps.sh
  else
    local c missing=()
    for c in cargo clang-19 qemu-system-x86_64 vng busybox stress-ng jq apt-get dpkg-deb bpftool perf dpkg-shlibdeps; do
      command -v "$c" >/dev/null || missing+=("$c")
    done
    [ ${#missing[@]} -eq 0 ] || { echo "missing: ${missing[*]} (run scripts/install-deps.sh as root)" >&2; return 1; }
  fi
}

unit_tests() {
  banner "cargo test"
  local start rc=0 log p f
  start=$(date +%s)
  log=$(mktemp)
  cargo test 2>&1 | tee "$log" || rc=$?
  # Sum "test result: ok. N passed; M failed; ..." over all test binaries.
  p=$(sed -n 's/^test result: .* \([0-9]*\) passed; \([0-9]*\) failed.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
  f=$(sed -n 's/^test result: .* \([0-9]*\) passed; \([0-9]*\) failed.*/\2/p' "$log" | awk '{s+=$1} END {print s+0}')
  rm -f "$log"
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi # did not build, or crashed
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$rc" = 0 ]; then
    record "cargo test" ok $(($(date +%s) - start)) "$p passed"
  else
    record "cargo test" FAIL $(($(date +%s) - start)) "$p passed, $f failed (exit status $rc)"
  fi
}

# tally LABEL RC START LOG [HINT]: adds LOG's "N passed, M failed" line to
# the totals (a non-zero RC with no failure counted counts as one: no boot,
# a timeout, a crash) and records the step.
tally() {
  local label=$1 rc=$2 start=$3 line p=0 f=0
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$4" 2>/dev/null | tail -n1 || true)
  if [ -n "$line" ]; then
    p=${line%% passed*}
    f=${line#*passed, }
    f=${f%% failed*}
  fi
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
  # a test that judged nothing passed nothing (a script that died before
  # its first case, or in it, while its exit trap still said 0)
  if [[ $label == vm:* ]] && [ "$rc" = 0 ] && [ "$p" = 0 ] && [ "$f" = 0 ]; then rc=1 f=1 line="${line:-no count}: no case passed"; fi
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$rc" = 0 ]; then
    record "$label" ok $(($(date +%s) - start)) "${line:-no count}"
  else
    record "$label" FAIL $(($(date +%s) - start)) "${line:-no count} (exit status $rc${5:+; $5})"
    fail_why "$label" "$4"
  fi
}

# fail_why LABEL LOG: keeps each failed case of LOG with its first reasons
# (the "FAIL case" line and the "  - why" lines under it, cut to 240
# characters) for the end of the output: a CI log may keep only its head
# and tail, and the summary alone does not say which case failed, or why.
# A log that names no failed case (a test that stopped before its summary,
# a guest that died) gives its last lines instead.
fail_why() {
  local out
  out=$(awk '/^FAIL / { print; n = 3; next }
             n > 0 && /^ +- / { print substr($0, 1, 240); n--; next }
             { n = 0 }' "$2" 2>/dev/null | head -n 12 || true)
  if [ -z "$out" ]; then
    out=$(grep -v '^[[:space:]]*$' "$2" 2>/dev/null | tail -n 4 | cut -c 1-240 | sed 's/^/  | /' || true)
    out="  (no failed case named; the log's last lines:)"$'\n'"${out:-  | (the log is empty or missing)}"
  fi
  why+=("$1:" "$out")
}

# run_test RUN: the test of a run name TEST[@KERNEL][:SHAPE]
run_test() { local t=${1%%:*}; echo "${t%%@*}"; }
run_kernel() { local k=${1%%:*}; [[ $k == *@* ]] && echo "${k#*@}" || true; }
run_shape() { [[ $1 == *:* ]] && echo "${1#*:}" || true; }

# vm_test RUN: tests/vm/TEST.sh in the VM on its kernel and shape, counted
# from the guest's log; its results in target/vm-results/RUN/, with + for
# @ and :.
vm_test() {
  local name=$1 dir test kernel shape start rc=0 left limit hint hung env=()
  test=$(run_test "$name") kernel=$(run_kernel "$name") shape=$(run_shape "$name")
  # the guest mounts it: no @ or : in its name (vng refuses them)
  dir=${name//[@:]/+}
  [ -z "$kernel" ] || env+=("SORYU_VM_KERNEL=$kernel")
  # shellcheck disable=SC2206 # the shape's settings are words
  [ -z "$shape" ] || env+=(${vm_shape[$shape]})
  hint="logs in target/vm-results/$dir/"
  banner "VM test $name"
  start=$(date +%s)
  left=$((suite_start + suite_deadline - start))
  limit=${SORYU_VM_TIMEOUT:-${vm_deadline[$test]:-900}}
  [ "$limit" -le "$left" ] || limit=$left
  if [ "$test" = errors ] && [ -z "${SORYU_PEER_BIN:-}" ]; then
    # its busy-peer case runs another sched_ext scheduler: built once, cached
    bash bench/peers.sh bpfland || echo "peers: no scx_bpfland; errors' busy-peer case will fail"
  fi
  env "${env[@]}" SORYU_VM_TIMEOUT="$limit" vm/run.sh --name "$dir" "tests/vm/$test.sh" || rc=$?
  # The summary is what a CI log keeps: name hung cases, and the case a
  # test cut by its deadline was in (the newest trace file). (Under
  # `set -e -o pipefail`: nothing below may fail when there is no match.)
  hung=$(find "target/vm-results/$dir" -maxdepth 1 -name '*.hung' -printf '%f\n' 2>/dev/null |
    sed 's/\.hung$//' | sort | tr '\n' ' ' || true)
  [ -z "$hung" ] || hint="hung cases: ${hung% } (CASE.hang.txt); $hint"
  if [ -e "target/vm-results/$dir/.timed-out" ]; then
    local last
    last=$(find "target/vm-results/$dir" -maxdepth 1 -name '*.trace' -printf '%T@ %p\n' 2>/dev/null |
      sort -n | tail -n1 | cut -d' ' -f2- || true)
    hint="TIMEOUT after ${limit}s${last:+ in case $(basename "$last" .trace) ($(tail -n1 "$last" || true))}; $hint"
  fi
  if [ -e "target/vm-results/$dir/emulator-reruns" ]; then
    emulator_reruns=$((emulator_reruns + 1))
    hint="$hint; EMULATOR CRASH, RERUN"
  fi
  # one rerun per suite: a second crash of that kind fails its test
  [ "$emulator_reruns" = 0 ] || export SORYU_VM_RERUNS_LEFT=0
  [ ! -e "target/vm-results/$dir/emulator-crash-not-rerun" ] ||
    hint="$hint; EMULATOR CRASH AGAIN IN THIS SUITE, NOT RERUN"
  tally "vm: $name" "$rc" "$start" "target/vm-results/$dir/guest.log" "$hint"
  if [ -s "target/vm-results/$dir/kernel-alarms.txt" ]; then
    why+=("  kernel alarms in the guest's log:" "$(head -n 3 "target/vm-results/$dir/kernel-alarms.txt" | cut -c 1-240 | sed 's/^/  | /')")
  fi
  if [ "$rc" != 0 ] && [ ! -e "target/vm-results/$dir/exit-status" ]; then
    # The guest never finished: what its kernel said last is the reason.
    local klines
    klines=$(grep -E 'Oops|BUG:|Kernel panic|WARNING:|invalid opcode|general protection' \
      "target/vm-results/$dir/console.log" 2>/dev/null | tail -n 3 | cut -c 1-240 | sed 's/^/  | /' || true)
    [ -z "$klines" ] || why+=("  kernel, last error lines:" "$klines")
  fi
  if [ "$rc" = 0 ] && [[ $hint == *RERUN ]]; then results[-1]+="  (EMULATOR CRASH, RERUN)"; fi
}

# host_test PATH: a host-side test script.
host_test() {
  local t=$1 name start rc=0 log
  name=$(basename "$t" .sh)
  banner "host test $name"
  start=$(date +%s)
  log=$(mktemp)
  bash "$t" 2>&1 | tee "$log" || rc=$?
  tally "host: $name" "$rc" "$start" "$log"
  rm -f "$log"
}

suite_start=$(date +%s)
built=1
if [ "$vm_only" = 0 ]; then
  run_step "dependencies" deps || true
  run_step "cargo fmt --check" cargo fmt --check || true
  unit_tests
  run_step "cargo build --release" cargo build --release || built=0
  if [ "$built" = 1 ]; then
    for t in tests/host/*.sh; do
      [ "$(basename "$t")" = lib.sh ] || host_test "$t"
    done
  fi
fi

vm_tests=()
if [ ${#only[@]} -gt 0 ]; then
  vm_tests=("${only[@]}")
elif [ "$matrix" = 1 ]; then
  vm_tests=("${matrix_runs[@]}")
else
  for t in tests/vm/*.sh; do
    case $(basename "$t" .sh) in
      # unsupported: only on a kernel soryu refuses; bigtopo: as bigtopo:ci;
      # topology-starve: --matrix (CI's time)
      lib | unsupported | bigtopo | topology-starve) ;;
      *) vm_tests+=("$(basename "$t" .sh)") ;;
    esac
  done
  vm_tests+=("${ci_runs[@]}")
fi

# The guest kernels of these runs, fetched or built before any test starts
# (a build must not eat a test's deadline).
guest_kernels() {
  local k ok=0
  for k in "$@"; do
    echo "guest kernel $k:"
    SORYU_VM_KERNEL=$k vm/kernel.sh || ok=1
  done
  return "$ok"
}
kernels=()
for name in "${vm_tests[@]}"; do
  k=$(run_kernel "$name")
  k=${k:-$(vm/kernel.sh --list | head -n1)}
  [[ " ${kernels[*]} " == *" $k "* ]] || kernels+=("$k")
done
kernels_ok=1
if [ "$built" = 1 ]; then
  run_step "guest kernels (${kernels[*]})" guest_kernels "${kernels[@]}" || kernels_ok=0
fi

for name in "${vm_tests[@]}"; do
  test=$(run_test "$name") shape=$(run_shape "$name")
  if [ ! -f "tests/vm/$test.sh" ]; then
    failed=$((failed + 1))
    record "vm: $name" FAIL 0 "no such test tests/vm/$test.sh"
  elif [ -n "$shape" ] && [ -z "${vm_shape[$shape]:-}" ]; then
    failed=$((failed + 1))
    record "vm: $name" FAIL 0 "no such machine shape '$shape' (scripts/test.sh: vm_shape)"
  elif [ "$kernels_ok" = 0 ]; then
    failed=$((failed + 1))
    record "vm: $name" FAIL 0 "not run: a guest kernel could not be fetched or built"
  elif [ "$built" = 0 ]; then
    failed=$((failed + 1))
    record "vm: $name" FAIL 0 "not run: the release build failed"
  elif [ $(($(date +%s) - suite_start)) -ge $((suite_deadline - 120)) ]; then
    failed=$((failed + 1))
    record "vm: $name" FAIL 0 "not run: the suite's deadline (SORYU_SUITE_DEADLINE=${suite_deadline}s) is reached"
  else
    vm_test "$name"
  fi
done

banner "summary ($(($(date +%s) - suite_start))s)"
printf '%s\n' "${results[@]}"
if [ ${#why[@]} -gt 0 ]; then
  echo "-- failed cases, and why --"
  printf '%s\n' "${why[@]}"
fi
echo "emulator crash, rerun: $emulator_reruns"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
