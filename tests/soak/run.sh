#!/usr/bin/env bash
# The soak test, not part of scripts/test.sh: an hour (SECS) of the
# hostile workloads in rotation, CPU hotplug, cgroup moves and policy
# switches among them, on an 8-vCPU guest, with one scx_soryu running
# throughout and reporting every 10 s (tests/soak/guest.sh says what is
# judged).
#
#   tests/soak/run.sh [SECS]        (default 3600; results in
#                                    target/vm-results/soak/)
#
# Settings: SORYU_SOAK_ROUND_SECS (60) seconds per workload round,
# SORYU_SOAK_KNOBS (default | all-on), and vm/run.sh's.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
secs=${1:-3600}
case $secs in '' | *[!0-9]*) echo "tests/soak/run.sh: SECS must be a whole number of seconds, not '$secs'" >&2; exit 2 ;; esac
[ "$secs" -ge 120 ] || { echo "tests/soak/run.sh: SECS must be at least 120 (two rounds)" >&2; exit 2; }
export SORYU_SOAK_SECS=$secs
# the guest's own deadline is the soak's length plus its last round, the
# lateness measurement and the boot
export SORYU_VM_TIMEOUT=${SORYU_VM_TIMEOUT:-$((secs + 1500))}
exec "$repo/vm/run.sh" --name soak "$repo/tests/soak/guest.sh"
