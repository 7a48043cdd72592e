#!/usr/bin/env bash
# A kernel soryu cannot load into (docs/kernels.md names them, with the
# reason): the daemon must say so in one line and exit non-zero, leaving
# sched_ext disabled and the kernel log without an alarm.
#
#   SORYU_VM_KERNEL=7.2 vm/run.sh tests/vm/unsupported.sh
#
# Cases:
#   refuse   default knobs: exit status not 0 within 60 s, sched_ext
#            never enabled, one line of output (besides scx_utils' INFO
#            line), and that line says
#            "kernel <release> is not supported" and names the kfunc
#   knobs    the same with every knob on (another program, the same
#            refusal)
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

refuse() {
  local rc=0 log=$SORYU_OUT/$CASE.sched.log lines
  [ -x "$SORYU_BIN" ] || { fail "scheduler binary $SORYU_BIN missing"; return 0; }
  trace "start: $SORYU_BIN $*"
  timeout -s INT 60 "$SORYU_BIN" "$@" --kconfig "$SORYU_KCONFIG" >"$log" 2>&1 || rc=$?
  trace "exit status $rc; sched_ext state $(scx_state)"
  [ "$rc" != 0 ] || fail "the daemon exited 0 on a kernel it cannot load into"
  [ "$rc" != 124 ] || fail "the daemon did not exit within 60 s"
  [ "$(scx_state)" = disabled ] || fail "sched_ext state is '$(scx_state)' after the refusal"
  # (scx_utils' own INFO line on the kernel's features comes first, as at
  # every start)
  lines=$(grep -cv '^INFO ' "$log" || true)
  [ "$lines" = 1 ] || fail "$lines lines of output besides INFO, not one: $(grep -v '^INFO ' "$log" | head -n 3 | cut -c 1-200 | tr '\n' '|')"
  grep -q "kernel $(uname -r) is not supported: .*kfunc scx_bpf_" "$log" ||
    fail "the line does not say 'kernel $(uname -r) is not supported' and name the kfunc: $(head -n1 "$log" | cut -c 1-300)"
  ! grep -qiE 'panicked|backtrace' "$log" || fail "the daemon panicked"
  trace "said: $(head -n1 "$log")"
}

[ $# -gt 0 ] || set -- refuse knobs
for c in "$@"; do
  case_begin "$c"
  case $c in
    refuse) refuse ;;
    knobs) refuse --clear-bitmap --boost-on-wake --vtime ;;
    *) fail "no such case: $c" ;;
  esac
  dmesg_check
  case_end
done
summary
