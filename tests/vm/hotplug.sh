#!/usr/bin/env bash
# vm-shape: cpus=4
# CPU hotplug at 4 CPUs: tests/vm/hostile.sh's hotplug workload (every CPU
# but CPU 0 offline one after the other, three at once at the middle, then
# online again, under load; soryu back within its deadline after each
# change, and its report contiguous across the restarts), with the default
# knobs and with all three on.
#
#   vm/run.sh tests/vm/hotplug.sh
set -euo pipefail
export SORYU_HOSTILE_KNOBS=both
exec bash "$(dirname "${BASH_SOURCE[0]}")/hostile.sh" hotplug
