#!/usr/bin/env bash
# The A/B benchmark (bench/run.sh), both modes.
#
# On this machine (--host), without a real scheduler: the refusals (one
# line, non-zero, nothing started) of a kernel without sched_ext, of
# another scheduler already enabled, of a user who is not root, of a perf
# that cannot run; then whole runs against a stand-in scheduler and a
# stand-in sched_ext directory (SORYU_SCX_SYSFS): one to the end, one
# stopped by SIGTERM, one by Ctrl-C (SIGINT to its process group). Each
# must leave nothing running (every process it started carries a mark in
# its environment) and the stand-in detached.
#
# In the VM, one boot: first, inside the guest where sched_ext is real
# (this script with --in-guest, through SORYU_BENCH_GUEST_CHECK), the host
# mode's refusal while a scheduler is loaded and its Ctrl-C path with soryu
# loaded; then the benchmark itself, two configurations, two rounds, and
# the compare tables and the plot must say what they should.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
# shellcheck source=tests/host/lib.sh
. "$repo/tests/host/lib.sh"

# ---------------------------------------------------------------------------
# Inside the guest (bench/guest.sh runs this first when asked to)

wait_until() { # wait_until SECS COMMAND...: poll every 0.2 s
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.2
  done
}
scx_state() { cat /sys/kernel/sched_ext/state 2>/dev/null || echo none; }
measuring() { [ "$(scx_state)" = enabled ] && pgrep -x cyclictest >/dev/null; }
# (an exited child stays a zombie until waited for: that counts as exited)
exited() { ! kill -0 "$1" 2>/dev/null || [[ $(ps -o stat= -p "$1") == Z* ]]; }

in_guest() {
  local d=$SORYU_OUT/guest-check pid rc n start=$SECONDS
  mkdir -p "$d"
  # a host-mode run, soryu first, in a process group of its own as a
  # terminal would start it
  setsid env --default-signal=INT bench/run.sh --host -o "$d/int" -r 1 -n 30 -s 2 soryu eevdf >"$d/int.log" 2>&1 &
  pid=$!
  if ! wait_until 120 measuring; then
    bad "host mode in the guest: soryu not loaded and measured within 120 s: $(tr '\n' '|' <"$d/int.log")"
    kill -TERM "$pid" 2>/dev/null || true
    wait_until 90 exited "$pid" || true
    return
  fi
  ok "host mode in the guest: soryu loaded ($(cat /sys/kernel/sched_ext/root/ops)), cyclictest measuring"
  # a second benchmark meanwhile: refused, and the first one undisturbed
  rc=0
  bench/run.sh --host -o "$d/refused" -r 1 eevdf soryu >"$d/refused.log" 2>&1 || rc=$?
  n=$(wc -l <"$d/refused.log")
  check "second host run refused: one line, status $rc: $(head -c 200 "$d/refused.log")" \
    test "$rc" != 0 -a "$n" = 1
  check "the refusal names the loaded scheduler" grep -q 'another sched_ext scheduler is enabled (soryu' "$d/refused.log"
  check "the running benchmark kept its scheduler" test "$(scx_state)" = enabled
  # Ctrl-C
  kill -INT -- "-$pid"
  if wait_until 90 exited "$pid"; then
    rc=0
    wait "$pid" || rc=$?
    check "Ctrl-C: run.sh exited non-zero ($rc)" test "$rc" != 0
  else
    bad "Ctrl-C: run.sh still running 90 s later"
  fi
  check "Ctrl-C: the run says it was interrupted and what it restored" \
    grep -q 'stopped; sched_ext disabled' "$d/int.log"
  check "Ctrl-C: sched_ext disabled (state $(scx_state))" test "$(scx_state)" = disabled
  local left
  left=$(for c in scx_soryu stress-ng cyclictest; do pgrep -a -x "$c"; done || true)
  check "Ctrl-C: nothing left running${left:+: $left}" test -z "$left"
  echo "guest checks: $((SECONDS - start)) s"
  echo "$passed passed, $failed failed"
}

if [ "${1:-}" = --in-guest ]; then
  in_guest
  exit 0
fi

# ---------------------------------------------------------------------------
# On this machine

# Every process a benchmark of this test starts inherits this mark.
mark=bench-test-$$-$RANDOM
bench() { SORYU_BENCH_TEST_MARK=$mark bench/run.sh "$@"; }
tmp=$(mktemp -d)
cleanup() {
  local p
  for p in $(marked); do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
marked() {
  grep -lsx -z "SORYU_BENCH_TEST_MARK=$mark" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true
}
left_running() { # left_running WHAT: nothing of this test runs any more
  local left
  sleep 0.3
  left=$(for p in $(marked); do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null && echo; done)
  check "$1: nothing left running${left:+: $(echo "$left" | tr '\n' '|')}" test -z "$left"
}
one_line() { # one_line WHAT LOG STATUS PATTERN
  local n
  n=$(wc -l <"$2")
  if [ "$3" != 0 ] && [ "$n" = 1 ] && grep -q -- "$4" "$2"; then
    ok "$1: one line, status $3: $(cat "$2")"
  else
    bad "$1: want one line matching '$4' and a non-zero status; got status $3, $n line(s): $(head -c 400 "$2" | tr '\n' '|')"
  fi
}

# 1. no sched_ext: this machine's own kernel when it has none
if [ -d /sys/kernel/sched_ext ]; then
  echo "note: this kernel has sched_ext; its absence is simulated"
  nosysfs=$tmp/no-sched-ext
else
  nosysfs=/sys/kernel/sched_ext
fi
rc=0
SORYU_SCX_SYSFS=$nosysfs bench --host -r 1 eevdf soryu >"$tmp/nosysfs.log" 2>&1 || rc=$?
one_line "no sched_ext refused" "$tmp/nosysfs.log" "$rc" "has no sched_ext"
left_running "no sched_ext"

# 2. not root
if [ "$(id -u)" = 0 ]; then
  as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
else
  as_user=()
fi
if ${as_user[@]+"${as_user[@]}"} test -x bench/run.sh 2>/dev/null; then
  rc=0
  SORYU_SCX_SYSFS=$tmp SORYU_BENCH_TEST_MARK=$mark ${as_user[@]+"${as_user[@]}"} \
    bench/run.sh --host -r 1 eevdf soryu >"$tmp/user.log" 2>&1 || rc=$?
  one_line "not root refused" "$tmp/user.log" "$rc" "run as root"
else
  echo "note: the refusal of a user who is not root not tried: user nobody cannot reach $repo"
fi

# 2b. a second build named without its binary: refused before anything runs
rc=0
SORYU_BASE_BIN= bench -o "$tmp/nobase" -r 1 eevdf soryu-base >"$tmp/nobase.log" 2>&1 || rc=$?
one_line "soryu-base without SORYU_BASE_BIN refused" "$tmp/nobase.log" "$rc" "soryu-base needs SORYU_BASE_BIN"
check "soryu-base without SORYU_BASE_BIN: nothing written" test ! -e "$tmp/nobase"

# 2b'. a knob set by a configuration's name: a value scx_soryu refuses is
# refused before anything runs, in scx_soryu's words; so is a name that is none
rc=0
bench -o "$tmp/badknob" -r 1 eevdf soryu-slice-0 >"$tmp/badknob.log" 2>&1 || rc=$?
one_line "soryu-slice-0 refused" "$tmp/badknob.log" "$rc" "bench: soryu-slice-0: --slice-us must be at least 1"
check "soryu-slice-0: nothing written" test ! -e "$tmp/badknob"
rc=0
bench -o "$tmp/badname" -r 1 eevdf soryu-slice-04 >"$tmp/badname.log" 2>&1 || rc=$?
one_line "soryu-slice-04 refused" "$tmp/badname.log" "$rc" "unknown soryu configuration 'soryu-slice-04'"

# 2c. the profile (bench/profile.sh): its settings refused before a VM boots
rc=0
SORYU_BASE_BIN= SORYU_VM_RESULTS=$tmp/pvm bench/profile.sh eevdf soryu-base >"$tmp/pbase.log" 2>&1 || rc=$?
one_line "profile: soryu-base without SORYU_BASE_BIN refused" "$tmp/pbase.log" "$rc" "soryu-base needs SORYU_BASE_BIN"
rc=0
SORYU_PROFILE_WAKER=yes SORYU_VM_RESULTS=$tmp/pvm bench/profile.sh eevdf soryu >"$tmp/pwaker.log" 2>&1 || rc=$?
one_line "profile: SORYU_PROFILE_WAKER=yes refused" "$tmp/pwaker.log" "$rc" "SORYU_PROFILE_WAKER=yes is neither 0 nor 1"
check "profile: nothing booted" test ! -e "$tmp/pvm"

# 2d. the section timing (bench/sections.sh): a bad run count or job refused before it builds or boots
rc=0
SORYU_SECTIONS_JOBS=0 SORYU_VM_RESULTS=$tmp/svm bench/sections.sh >"$tmp/sjobs.log" 2>&1 || rc=$?
one_line "sections: SORYU_SECTIONS_JOBS=0 refused" "$tmp/sjobs.log" "$rc" "SORYU_SECTIONS_JOBS=0 is not a positive count"
rc=0
SORYU_SECTIONS_JOB=make SORYU_VM_RESULTS=$tmp/svm bench/sections.sh >"$tmp/sjob.log" 2>&1 || rc=$?
one_line "sections: SORYU_SECTIONS_JOB=make refused" "$tmp/sjob.log" "$rc" "SORYU_SECTIONS_JOB=make is not a job"
check "sections: nothing booted" test ! -e "$tmp/svm"

# 2e. the host's load beside a VM run (bench/hostload.sh): a spinner named
# as qemu counts as the VM's, a plain one as other work, each about one
# CPU of the two-second interval (half of it is the bar: the other side
# of the test only adds to "other")
rc=0
bench/hostload.sh 0 >"$tmp/hl0.log" 2>&1 || rc=$?
one_line "hostload: an interval of 0 refused" "$tmp/hl0.log" "$rc" "'0' is not a whole number of seconds"
(exec -a qemu-system-soryu-test sh -c 'while :; do :; done') &
hl_q=$!
(exec -a soryu-hostload-spin sh -c 'while :; do :; done') &
hl_o=$!
timeout 5 bench/hostload.sh 2 >"$tmp/hl.log" 2>&1 || true
kill "$hl_q" "$hl_o" 2>/dev/null || true
wait "$hl_q" "$hl_o" 2>/dev/null || true
hl=$(awk '{ split($3, q, "="); split($4, o, "="); if (q[2] != "?" && q[2] + 0 >= 1.0 && o[2] + 0 >= 1.0) n++ } END { print n + 0 }' "$tmp/hl.log")
check "hostload: the qemu spinner and the other one told apart ($(head -n 1 "$tmp/hl.log"))" test "$hl" -ge 1

if [ "$(id -u)" = 0 ]; then
  # a stand-in sched_ext directory and scheduler: "enabled" until SIGINT
  sys=$tmp/sys
  mkdir -p "$sys/root"
  echo disabled >"$sys/state"
  : >"$sys/root/ops"
  stub=$tmp/stand-in-scheduler
  {
    echo '#!/usr/bin/env bash'
    printf 'case ${1:-} in --lat-buckets | --report-header* | compare | plot | --version) exec %q "$@" ;; esac\n' \
      "$repo/target/release/scx_soryu"
    printf 'trap %q INT TERM\n' "echo disabled >$sys/state; : >$sys/root/ops; exit 0"
    echo "echo soryu_stand_in >$sys/root/ops"
    echo "echo enabled >$sys/state"
    echo 'echo "stand-in scheduler: enabled"'
    echo 'while :; do sleep 0.1; done'
  } >"$stub"
  chmod +x "$stub"
  export SORYU_SCX_SYSFS=$sys SORYU_BIN=$stub

  # 3. another scheduler enabled
  echo enabled >"$sys/state"
  echo bpfland_1.1.4 >"$sys/root/ops"
  rc=0
  bench --host -r 1 eevdf soryu >"$tmp/busy.log" 2>&1 || rc=$?
  one_line "another scheduler enabled refused" "$tmp/busy.log" "$rc" "another sched_ext scheduler is enabled (bpfland_1.1.4)"
  check "the other scheduler left alone" test "$(cat "$sys/root/ops")" = bpfland_1.1.4
  left_running "another scheduler"
  echo disabled >"$sys/state"
  : >"$sys/root/ops"

  # 4. a perf that cannot run `perf bench` (another kernel's wrapper)
  mkdir -p "$tmp/bin"
  printf '#!/bin/sh\necho "perf not found for kernel 0.0" >&2\nexit 2\n' >"$tmp/bin/perf"
  chmod +x "$tmp/bin/perf"
  rc=0
  PATH=$tmp/bin:$PATH bench --host -w pipe -r 1 eevdf soryu >"$tmp/perf.log" 2>&1 || rc=$?
  one_line "unusable perf refused" "$tmp/perf.log" "$rc" "'perf bench' does not run here (perf not found for kernel 0.0)"

  # 4b. the compile's source cannot be fetched
  rc=0
  SORYU_SRC_CACHE=$tmp/no-src SORYU_DEBIAN_URI=http://127.0.0.1:9/debian \
    bench --host -w compile -o "$tmp/nosrc" -r 1 eevdf soryu >"$tmp/nosrc.log" 2>&1 || rc=$?
  one_line "compile without its source refused" "$tmp/nosrc.log" "$rc" "cannot read bookworm's source index from http://127.0.0.1:9/debian"
  check "compile without its source: nothing written" test ! -e "$tmp/nosrc"

  # 5. a whole host run against the stand-in
  rc=0
  bench --host -o "$tmp/full" -r 2 -n 4 -s 1 soryu eevdf >"$tmp/full.log" 2>&1 || rc=$?
  if [ "$rc" = 0 ] && grep -q "^bench: results in $tmp/full " "$tmp/full.log"; then
    ok "host run with a stand-in scheduler: 2 rounds, compare, plot"
  else
    bad "host run with a stand-in scheduler: status $rc: $(tail -n 5 "$tmp/full.log" | tr '\n' '|')"
  fi
  check "host run: the header says where, what ran, in which order" \
    test "$(head -n1 "$tmp/full/soryu-r2.jsonl" | jq -c '[.where, .sched_ext_ops, .order]')" = '["host","soryu_stand_in",["eevdf","soryu"]]'
  check "host run: the stand-in detached at the end" test "$(cat "$sys/state")" = disabled
  left_running "host run"

  # 5b. the compile workload: a real make -j of the fetched source here
  rc=0
  bench --host -w compile -o "$tmp/compile" -r 1 -n 8 -s 2 soryu eevdf >"$tmp/compile.log" 2>&1 || rc=$?
  check "compile run: status $rc: $(tail -n 3 "$tmp/compile.log" | tr '\n' '|')" \
    grep -q "^bench: results in $tmp/compile " "$tmp/compile.log"
  # Each interval files the mean time of the builds that finished in it
  # (null when none did): read in order, the builds log's times cut into
  # consecutive runs must give every interval's figure, and only a build
  # that finished after the last interval may be left over.
  cat >"$tmp/filed.py" <<'PY'
import json, sys
times = [float(l.split()[1]) for l in open(sys.argv[1]) if l.startswith("Time: ")]
means = [r["ext_compile_s"] for r in map(json.loads, open(sys.argv[2]))
         if r.get("type") == "interval" and r.get("ext_compile_s") is not None]
p = 0
for i, m in enumerate(means):
    k = next((k for k in range(1, len(times) - p + 1) if abs(sum(times[p:p + k]) / k - m) < 1e-6), None)
    if k is None:
        print(f"interval figure {i} ({m}) is no mean of the next builds {times[p:]}")
        sys.exit(1)
    p += k
if not means or len(times) - p > 1:
    print(f"{len(times)} builds finished, {p} of them filed in {len(means)} intervals")
    sys.exit(1)
print(f"{len(times)} builds finished, {p} filed in {len(means)} intervals, each interval the mean of its own")
PY
  for c in soryu eevdf; do
    out=$(python3 "$tmp/filed.py" "$tmp/compile/$c-r1.builds.log" "$tmp/compile/$c-r1.jsonl" 2>&1) && rc=0 || rc=$?
    check "compile run, $c: $out" test "$rc" = 0
  done
  check "compile run: its build tree removed" test -z "$(find /tmp -maxdepth 1 -name 'soryu-bench-*' -newer "$tmp/compile.log" 2>/dev/null)"
  left_running "compile run"

  # 5b''. the worker pool: built here, every interval files the pool's own
  # figures, its build removed at the end
  rc=0
  bench --host -w workerpool -o "$tmp/pool" -r 1 -n 7 -s 1 soryu eevdf >"$tmp/pool.log" 2>&1 || rc=$?
  check "workerpool run: status $rc: $(tail -n 3 "$tmp/pool.log" | tr '\n' '|')" \
    grep -q "^bench: results in $tmp/pool " "$tmp/pool.log"
  for c in soryu eevdf; do
    check "workerpool run, $c: 7 intervals, each with requests/s > 0 and wakeup p50 <= p99 <= request p99" \
      test "$(jq -s '[.[] | select(.type == "interval") | select(.ext_pool_requests_per_s > 0 and
        .ext_pool_wake_p50_us <= .ext_pool_wake_p99_us and .ext_pool_wake_p99_us <= .ext_pool_request_p99_us)] | length' "$tmp/pool/$c-r1.jsonl")" = 7
  done
  check "workerpool run: its build removed" test -z "$(find /tmp -maxdepth 1 -name 'soryu-bench-*' -newer "$tmp/pool.log" 2>/dev/null)"
  left_running "workerpool run"

  # 5b'. the source copied where a guest can read it (bench/profile.sh and
  # bench/sections.sh): the path printed is the copy, the same bytes
  cached=$(bench/source.sh 2>/dev/null || true)
  copy=$(bench/source.sh "$tmp/src-copy/sub" 2>"$tmp/srccopy.log" || true)
  check "source copied into a directory: $copy" \
    test -n "$cached" -a "$copy" = "$tmp/src-copy/sub/${cached##*/}" -a -s "$copy"
  check "source copy: the same bytes as the cache" cmp -s "$cached" "$copy"
  rc=0
  bench/source.sh /proc/soryu-no-such-dir >"$tmp/srcbad.log" 2>&1 || rc=$?
  one_line "source copy to an unwritable directory refused" "$tmp/srcbad.log" "$rc" "cannot copy .* into /proc/soryu-no-such-dir"

  # 5c. the build workload: one clean build per interval, the probe
  # stopped when the build ends; every interval carries its own build time
  # and the probe's figures from the whole build
  rc=0
  bench --host -w build -o "$tmp/build" -r 2 -n 4 -m 5 soryu eevdf >"$tmp/build.log" 2>&1 || rc=$?
  check "build run: status $rc: $(tail -n 3 "$tmp/build.log" | tr '\n' '|')" \
    grep -q "^bench: results in $tmp/build " "$tmp/build.log"
  check "build run: compare tested the 5% margin" grep -q "B within margin" "$tmp/build/compare-eevdf.md"
  for c in soryu-r1 soryu-r2 eevdf-r1 eevdf-r2; do
    # cyclictest wakes every 1 ms: a probe that ran through a build of
    # t seconds counts about 1000 t wakeups, at least half of them here
    v=$(jq -s -c '[.[] | select(.type == "interval")
           | select(.ext_compile_s > 0 and (.hist.lat_interactive | add) >= 500 * .ext_compile_s)] | length' \
      "$tmp/build/$c.jsonl" 2>/dev/null || echo 0)
    check "build run, $c: 4 intervals, each one build with the probe through it ($v)" test "$v" = 4
  done
  left_running "build run"

  # 5c'. interleaved (-i): the configurations take turns every interval,
  # the turn's order reversed every interval, each loaded for its interval
  # only; both runs still carry all their intervals for compare to pair
  rc=0
  bench --host -i -w build -o "$tmp/ibuild" -r 2 -n 4 soryu eevdf >"$tmp/ibuild.log" 2>&1 || rc=$?
  check "interleaved build run: status $rc: $(tail -n 3 "$tmp/ibuild.log" | tr '\n' '|')" \
    grep -q "^bench: results in $tmp/ibuild " "$tmp/ibuild.log"
  turns=$(sed -n 's/^round \([12]\), interval \([0-9]\): \([a-z]*\) done (build [0-9.]* s)$/\1.\2\3/p' "$tmp/ibuild.log" | tr '\n' ' ')
  want="1.0soryu 1.0eevdf 1.1eevdf 1.1soryu 1.2soryu 1.2eevdf 1.3eevdf 1.3soryu "
  want+="2.0eevdf 2.0soryu 2.1soryu 2.1eevdf 2.2eevdf 2.2soryu 2.3soryu 2.3eevdf "
  check "interleaved build run: turns taken in the order of each round, reversed every interval ($turns)" \
    test "$turns" = "$want"
  for c in soryu-r1 eevdf-r1 soryu-r2 eevdf-r2; do
    v=$(jq -s -c '[.[] | select(.type == "interval" and .ext_compile_s > 0)] | length' "$tmp/ibuild/$c.jsonl" 2>/dev/null || echo 0)
    check "interleaved build run, $c: 4 intervals with their build time ($v)" test "$v" = 4
  done
  check "interleaved build run: the header says so" \
    test "$(head -n1 "$tmp/ibuild/soryu-r1.jsonl" | jq -c '.interleaved')" = true
  # the stand-in was loaded once per interval: its log holds 4 starts
  v=$(grep -c "stand-in scheduler: enabled" "$tmp/ibuild/soryu-r1.log" 2>/dev/null || echo 0)
  check "interleaved build run: soryu loaded for each of its 4 intervals ($v starts)" test "$v" = 4
  rc=0
  bench --host -i -w compile -o "$tmp/icompile" -r 1 soryu eevdf >"$tmp/icompile.log" 2>&1 || rc=$?
  one_line "interleaved compile refused" "$tmp/icompile.log" "$rc" "-i does not apply to compile"
  left_running "interleaved build run"

  # 5d. a build that fails (bash's `time` still prints a time for it):
  # the run stops and says so, and no build time is filed
  mkdir -p "$tmp/badsrc/lua-9.9" "$tmp/badcache"
  printf 'linux:\n\t@echo broken on purpose >&2; exit 2\nclean:\n\t@:\n' >"$tmp/badsrc/lua-9.9/Makefile"
  tar -czf "$tmp/badcache/lua5.4_9.9.orig.tar.gz" -C "$tmp/badsrc" lua-9.9
  rc=0
  SORYU_SRC_CACHE=$tmp/badcache bench --host -w build -o "$tmp/badbuild" -r 1 -n 2 soryu eevdf >"$tmp/badbuild.log" 2>&1 || rc=$?
  check "a failing build stops the run, status $rc: $(grep -m1 '^bench: soryu' "$tmp/badbuild.log")" \
    grep -q "^bench: soryu: the build failed in interval 0 (make exited with status 2)" "$tmp/badbuild.log"
  n=$(jq -s '[.[] | select(.ext_compile_s != null)] | length' "$tmp/badbuild/soryu-r1.jsonl" 2>/dev/null || echo missing)
  check "a failing build: no build time filed ($n)" test "$n" = 0
  left_running "failing build"

  # 6, 7. stopped by SIGTERM (to run.sh alone, as systemd or timeout send
  # it) and by Ctrl-C (SIGINT to the process group, as a terminal sends it)
  measuring_stub() { [ "$(cat "$sys/state")" = enabled ] && [ -s "$tmp/$1/soryu-r1.jsonl" ]; }
  for how in TERM INT; do
    setsid env --default-signal=INT SORYU_BENCH_TEST_MARK="$mark" \
      bench/run.sh --host -o "$tmp/$how" -r 1 -n 30 -s 1 soryu eevdf >"$tmp/$how.log" 2>&1 &
    pid=$!
    wait_until 60 measuring_stub "$how" || bad "SIG$how: the run did not start within 60 s: $(tr '\n' '|' <"$tmp/$how.log")"
    if [ "$how" = TERM ]; then kill -TERM "$pid"; else kill -INT -- "-$pid"; fi
    if wait_until 60 exited "$pid"; then
      rc=0
      wait "$pid" || rc=$?
      check "SIG$how: run.sh exited non-zero ($rc)" test "$rc" != 0
    else
      bad "SIG$how: run.sh still running 60 s later"
    fi
    check "SIG$how: it says it stopped and sched_ext is disabled" \
      grep -q '^bench: stopped; sched_ext disabled' "$tmp/$how.log"
    check "SIG$how: the stand-in detached (state $(cat "$sys/state"))" test "$(cat "$sys/state")" = disabled
    left_running "SIG$how"
  done
  unset SORYU_SCX_SYSFS SORYU_BIN
else
  echo "note: not root: the runs against a stand-in scheduler not tried"
fi

echo "host part: $SECONDS s"

# ---------------------------------------------------------------------------
# In the VM

log=$(mktemp)
start=$SECONDS
if SORYU_BENCH_GUEST_CHECK=$repo/tests/host/bench.sh bench/run.sh -r 2 -n 4 -s 2 soryu soryu-vtime >"$log" 2>&1; then
  ok "bench/run.sh -r 2 -n 4 -s 2 soryu soryu-vtime (in the VM, $((SECONDS - start)) s)"
else
  bad "bench/run.sh failed: $(tail -n 5 "$log" | tr '\n' '|')"
fi
out=$(sed -n 's/^bench: results in \(.*\) (compare.*/\1/p' "$log" | tail -n1)
vmres=$(sed -n 's/.*logs: \(target\/vm-results\/[^)]*\)).*/\1/p' "$log" | tail -n1)
# the host's load beside the VM: sampled while qemu ran, summed, stopped
hl=$(grep -E '^bench: the host outside the VM: [0-9.]+ CPU-s \([0-9.]+% of its busy time\) in [1-9]' "$log" || true)
check "host load summed: ${hl:-no summary line}" test -n "$hl"
# a sample with qemu's share known and above 0; the message shows the first
sampled=$(awk '{ split($3, q, "=") } q[2] != "?" && q[2] + 0 > 0' "${out:-.}/hostload.log" 2>/dev/null || true)
check "host load sampled while the VM ran: ${sampled%%$'\n'*}" test -n "$sampled"
check "host load sampler stopped with the run" test -z "$(pgrep -f bench/hostload.sh || true)"
rm -f "$log"
gc=${out:-${vmres:-.}}/guest-check.log
if [ -f "$gc" ]; then
  while IFS= read -r line; do
    case $line in
      "ok   "*) ok "guest: ${line#ok   }" ;;
      "FAIL "*) bad "guest: ${line#FAIL }" ;;
    esac
  done <"$gc"
  grep -qE '^[0-9]+ passed, 0 failed$' "$gc" || bad "guest checks did not finish: $(tail -n 3 "$gc" | tr '\n' '|')"
  grep '^guest checks: ' "$gc" || true
else
  bad "no guest-check.log from the VM${vmres:+ ($vmres)}"
fi
if [ -z "$out" ] || [ ! -d "$out" ]; then
  bad "no results directory reported"
else
  for c in soryu soryu-vtime; do
    for r in 1 2; do
      f=$out/$c-r$r.jsonl
      if [ "$(head -n1 "$f" | jq -r .config)" = "$c" ] && [ "$(grep -c '"type": "interval"' "$f")" = 4 ]; then
        ok "$c round $r: header and 4 intervals"
      else
        bad "$f: missing, wrong header, or not 4 intervals"
      fi
    done
  done
  # round 2 ran in the reverse order of round 1
  o1=$(head -n1 "$out/soryu-r1.jsonl" | jq -c .order)
  o2=$(head -n1 "$out/soryu-r2.jsonl" | jq -c .order)
  [ "$o1" = '["soryu","soryu-vtime"]' ] && [ "$o2" = '["soryu-vtime","soryu"]' ] &&
    ok "order reversed between rounds: $o1 then $o2" || bad "orders $o1, $o2"
  md=$out/compare-soryu-vtime.md
  if grep -q '^| ext_wake_p99_us | pooled |' "$md" && grep -q '^| ext_wake_p99_us | 2 |' "$md"; then
    ok "compare table: per-round and pooled rows"
  else
    bad "compare table lacks per-round or pooled rows: $(head -c 300 "$md" 2>/dev/null | tr '\n' '|')"
  fi
  svg=$out/plot.svg
  if [ -s "$svg" ] && head -c 200 "$svg" | grep -q '<svg' && grep -q 'soryu-vtime' "$svg" && grep -qE '<path|<polyline' "$svg"; then
    ok "plot.svg drawn, names the configurations"
  else
    bad "plot.svg missing or empty"
  fi
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
