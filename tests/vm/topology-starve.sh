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
# which only the per-task rule serves. The levels case is too noisy on
# this emulated shape: its SCHED_IDLE probe measured 296 and 332 ms against
# a bound of 323 ms (95 ms of it lateness), while soryu's own longest
# queued wait in the same intervals was 128 ms. That was the probe's own
# figure; waits are now taken from the kernel's switch trace (pinned, one
# boot: 168 and 190 ms by the trace, 251 and 317 ms by the probes; a
# clean-clone CI run: 250 and 140 ms, 212 and 287 ms; with the pinned
# probe on its CPU's own queue, one boot: 212 and 180 ms, 324 and 346 ms).
# The levels case has not been run again with it.
set -euo pipefail
[ $# -gt 0 ] || set -- pinned
# Eight virtual CPUs on the host's two cores: a sleeper's lateness under
# the default scheduler measured 82 and 117 ms here, above starve.sh's
# 2-CPU cap of 60 ms. The cap only says when a run is too noisy to judge;
# 250 ms keeps the bound (about 240 ms plus that lateness) far below what a
# starving task waits without the guarantee (the kernel's 10 s watchdog).
export SORYU_LATE_CAP_MS=${SORYU_LATE_CAP_MS:-250}
exec bash "$(dirname "${BASH_SOURCE[0]}")/starve.sh" "$@"
