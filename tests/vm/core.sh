#!/usr/bin/env bash
# Core VM test: scx_soryu under the scheduler's CI load, for each of the 8
# combinations of --clear-bitmap, --boost-on-wake and --vtime, all in one
# boot. Run it through the VM runner:
#
#   vm/run.sh tests/vm/core.sh
#
# Per combination it asserts that:
#   - sched_ext is enabled with ops "soryu*" while the scheduler runs, for
#     at least SORYU_CORE_SECS (12) seconds of stress-ng load;
#   - the --report-json file has a header whose knobs match the flags, at
#     least one interval record, and insert_fail == 0 in every interval;
#   - the scheduler exits with status 0 after SIGTERM;
#   - sched_ext is disabled afterwards;
#   - the kernel log has no sched_ext error or stall.
# Prints PASS/FAIL per combination, then "N passed, M failed".
set -euo pipefail

# shellcheck source=tests/vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

secs=${SORYU_CORE_SECS:-12}

echo "core: $(uname -r), $(nproc) CPUs, ${secs}s of load per combination"
for cb in false true; do
  for bw in false true; do
    for vt in false true; do
      case_begin "clear_bitmap=$cb,boost_on_wake=$bw,vtime=$vt"
      if sched_start --clear-bitmap="$cb" --boost-on-wake="$bw" --vtime="$vt" --report-sec 2 &&
        sched_wait_enabled; then
        load_start "$secs"
        watch_running "$secs"
        # Stopped while the load still runs: the disable path under load is
        # part of what is tested.
        sched_stop
        load_stop
        sched_wait_disabled
      fi
      report_check clear_bitmap="$cb" boost_on_wake="$bw" vtime="$vt"
      dmesg_check
      case_end
    done
  done
done

summary
