#!/bin/bash
# Runs inside the VM (started by vm/run.sh through `vng -e`), as root.
#
#   vm/guest-init.sh OUT_DIR
#
# OUT_DIR is the directory shared read-write with the host; vm/run.sh left
# in it a file `.env` with the test to run, its arguments and the SORYU_*
# variables. Files this writes there, which the host judges (vng's own exit
# code says nothing: it is 255 whatever the guest did):
#   booted        first thing, proves the VM booted and OUT_DIR is writable
#   guest-info    kernel, CPUs, memory, sched_ext state at boot
#   guest.log     the test's stdout and stderr
#   dmesg.txt     the guest kernel log once the test is over
#   exit-status   the test's exit status, written last
#
# No `set -e`: whatever the test does, dmesg and exit-status must be written.
set -uo pipefail

out=$1
echo booted >"$out/booted"

# shellcheck source=/dev/null
. "$out/.env"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
cd "$out" || exit 1

{
  echo "kernel: $(uname -r)"
  echo "cpus: $(nproc)"
  grep -E '^(MemTotal|MemAvailable):' /proc/meminfo
  echo "sched_ext state: $(cat /sys/kernel/sched_ext/state 2>&1)"
  echo "kconfig: $SORYU_KCONFIG"
  echo "scheduler: $SORYU_BIN"
  echo "test: $SORYU_TEST ${SORYU_TEST_ARGS[*]}"
} >"$out/guest-info" 2>&1

# The test's output goes to guest.log and to the console (the host sees it
# live in console.log; vng has no working stdout channel without udev).
bash "$SORYU_TEST" "${SORYU_TEST_ARGS[@]}" 2>&1 | tee "$out/guest.log"
rc=${PIPESTATUS[0]}

dmesg >"$out/dmesg.txt" 2>&1
sync
echo "$rc" >"$out/exit-status"
sync
exit "$rc"
