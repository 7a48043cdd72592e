#!/usr/bin/env bash
# vm-shape: cpus=8 smp=sockets=2,cores=2,threads=2
# The starvation matrix (tests/vm/starve.sh, its checks and bound) on the
# topology test's machine: 8 CPUs in 2 sockets of 2 cores of 2 SMT
# threads. k and n follow the CPU count (starve.sh reads nproc), and the
# platform's lateness is measured in this boot, so the wider emulated
# machine's own delays are part of the bound, not of soryu's share.
#
#   vm/run.sh tests/vm/topology-starve.sh [CASE...]   (default: levels pinned)
#
# The 8 virtual CPUs share the host's cores: this is about correctness.
set -euo pipefail
[ $# -gt 0 ] || set -- levels pinned
exec bash "$(dirname "${BASH_SOURCE[0]}")/starve.sh" "$@"
