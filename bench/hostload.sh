#!/usr/bin/env bash
# How quiet the host is while a VM benchmark runs. Under the emulator a
# guest cannot tell time stolen by other host work from its own: a compile
# or a make on the host during a run shows up as a slower build of
# whichever configuration ran then, which order reversal does not cancel.
# Run this beside bench/run.sh (or any VM run) and keep its output:
#
#   bench/hostload.sh [SECS] > hostload.log &     # one line every SECS (10)
#
# Each line: the time, the host's busy CPU seconds over the last SECS (all
# CPUs, from /proc/stat), the part of it the VM's qemu processes used, and
# the rest, other work on the host. A quiet host keeps "other" near 0. In
# the interval a qemu exits in, the split is not known: "qemu=? other=?".
set -euo pipefail
secs=${1:-10}
case $secs in '' | *[!0-9]* | 0) echo "bench/hostload.sh: '$secs' is not a whole number of seconds above 0" >&2; exit 2 ;; esac
[ -r /proc/stat ] || { echo "bench/hostload.sh: /proc/stat is not readable; run it on the Linux host that runs the VM" >&2; exit 1; }
hz=$(getconf CLK_TCK)

# user + nice + system + irq + softirq, in clock ticks, all CPUs
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
# CPU ticks the VM's qemu processes used since the last call: utime +
# stime of each (all its threads) less what it had then. A qemu that exited
# in between took its last ticks with it (gone=1): that interval's split is
# not known, and is printed as "?".
declare -A prev=()
qemu_since() {
  local p t s=0
  declare -A now=()
  gone=0
  for p in $(pgrep -f '^[^ ]*qemu-system' || true); do
    # the fields after the command name, which may hold spaces
    t=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | awk '{ print $12 + $13 }') || continue
    [ -n "$t" ] || continue
    now[$p]=$t
    s=$((s + t - ${prev[$p]:-0}))
  done
  for p in "${!prev[@]}"; do [ -n "${now[$p]:-}" ] || gone=1; done
  prev=()
  for p in "${!now[@]}"; do prev[$p]=${now[$p]}; done
  dq=$s
}
secs_of() { awk -v t="$1" -v hz="$hz" 'BEGIN { printf "%.1f", t / hz }'; }

dq=0
b0=$(busy)
qemu_since
while sleep "$secs"; do
  b1=$(busy)
  qemu_since
  db=$((b1 - b0))
  # A qemu started in between used all its ticks within this interval, so
  # they count whole; the two files are not read at one instant, and qemu's
  # share is held to the host's busy time so that "other" is never below 0.
  [ "$dq" -le "$db" ] || dq=$db
  if [ "$gone" = 1 ]; then
    echo "$(date +%T) busy=$(secs_of "$db") qemu=? other=?"
  else
    echo "$(date +%T) busy=$(secs_of "$db") qemu=$(secs_of "$dq") other=$(secs_of $((db - dq)))"
  fi
  b0=$b1
done
