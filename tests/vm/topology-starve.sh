#!/usr/bin/env bash
# vm-shape: cpus=8 smp=sockets=2,cores=2,threads=2
# The starvation matrix (tests/vm/starve.sh, its checks and bound) on the
# topology test's machine: 8 CPUs in 2 sockets of 2 cores of 2 SMT
# threads. k and n follow the CPU count (starve.sh reads nproc), and the
# platform's lateness is measured in this boot, so the wider emulated
# machine's own delays are part of the bound, not of soryu's share.
#
#   vm/run.sh tests/vm/topology-starve.sh [CASE...]   (default: pinned)
#
# The 8 virtual CPUs share the host's cores: this is about correctness.
# Only the pinned case by default: the task pinned to one CPU of eight,
# which only the per-task rule serves. The others run when named
# (docs/testing.md has their latest results at 16 vCPUs).
set -euo pipefail
[ $# -gt 0 ] || set -- pinned
# Eight virtual CPUs on the host's two cores: a sleeper's lateness under
# the default scheduler measured 82 and 117 ms here, above starve.sh's
# 2-CPU cap of 60 ms. The cap only says when a run is too noisy to judge;
# 250 ms keeps the bound (about 240 ms plus that lateness) far below what a
# starving task waits without the guarantee (the kernel's 10 s watchdog).
export SORYU_LATE_CAP_MS=${SORYU_LATE_CAP_MS:-250}
exec bash "$(dirname "${BASH_SOURCE[0]}")/starve.sh" "$@"
