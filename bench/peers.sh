#!/usr/bin/env bash
# Builds peer sched_ext schedulers for side-by-side benchmarks, from the
# Rust package registry at pinned versions, into target/peers/bin.
#
#   bench/peers.sh bpfland [lavd ...]
#
# Each takes a few minutes to build once; later calls reuse the binary.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$PATH:${HOME:-/root}/.cargo/bin"
export BPF_CLANG=${BPF_CLANG:-clang-19}
PEER_VERSION=1.1.4
root=$repo/target/peers
for name in "$@"; do
  if [ -x "$root/bin/scx_$name" ]; then
    echo "peers: scx_$name already built ($("$root/bin/scx_$name" --version 2>/dev/null | head -n1))"
    continue
  fi
  echo "peers: building scx_$name $PEER_VERSION (a few minutes)"
  cargo install --locked --quiet --root "$root" "scx_$name@$PEER_VERSION"
done
