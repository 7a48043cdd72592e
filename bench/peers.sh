#!/usr/bin/env bash
# Builds peer sched_ext schedulers for side-by-side benchmarks and for
# tests/vm/errors.sh, from the Rust package registry at pinned versions,
# into target/peers/bin.
#
#   bench/peers.sh bpfland [lavd ...]
#
# Each takes a few minutes to build once. The build is kept in
# SORYU_PEERS_CACHE (default /var/cache/scx_soryu/peers, when it can be
# written; a clean clone on the same machine then copies it) and in
# target/peers/bin, where a guest can run it; later calls reuse it.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$PATH:${HOME:-/root}/.cargo/bin"
export BPF_CLANG=${BPF_CLANG:-clang-19}
PEER_VERSION=1.1.4
root=$repo/target/peers
cache=${SORYU_PEERS_CACHE:-/var/cache/scx_soryu/peers}/$PEER_VERSION
mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ] || cache=$root
for name in "$@"; do
  if [ -x "$root/bin/scx_$name" ]; then
    echo "peers: scx_$name already built ($("$root/bin/scx_$name" --version 2>/dev/null | head -n1))"
    continue
  fi
  if [ ! -x "$cache/bin/scx_$name" ]; then
    echo "peers: building scx_$name $PEER_VERSION (a few minutes)"
    cargo install --locked --quiet --root "$cache" "scx_$name@$PEER_VERSION"
  fi
  if [ "$cache" != "$root" ]; then
    mkdir -p "$root/bin"
    cp "$cache/bin/scx_$name" "$root/bin/scx_$name.new"
    mv "$root/bin/scx_$name.new" "$root/bin/scx_$name"
    echo "peers: scx_$name $PEER_VERSION from $cache"
  fi
done
