#!/usr/bin/env bash
# What loading soryu costs on this kernel, and which kernel interfaces it
# falls back from, per knob set (the default knobs, and all three on):
#
#   - per BPF program of the loaded scheduler, the instructions the
#     verifier processed (bpf_prog_info.verified_insns, what veristat
#     reports), each under a quarter of the verifier's limit of 1,000,000:
#     a change that pushes a program toward the limit fails here, long
#     before a kernel refuses it;
#   - the load and attach times the daemon logs;
#   - the compat fallbacks the daemon logs (ops.init's compat_paths) are
#     exactly the ones this kernel's version calls for: a DSQ iterator for
#     the head before 7.1, a written slice before 6.19, bpf_ktime_get_ns()
#     before 6.14, the 6.12 kfunc names before 6.13, node 0 before 6.15,
#     the runqueue's current task before 6.18.
#
# Writes verifier.md: one Markdown table row per program and knob set,
# for docs/kernels.md (scripts/kernel-table.sh gathers them).
#
#   vm/run.sh tests/vm/verifier.sh
set -euo pipefail

# shellcheck source=tests/vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LIMIT=250000
table=$SORYU_OUT/verifier.md

# The fallbacks this kernel calls for, in the daemon's order and names.
expected_compat() {
  local v maj min
  v=$(uname -r)
  maj=${v%%.*} min=${v#*.}
  min=${min%%[!0-9]*}
  local k=$((maj * 100 + min)) out=()
  [ "$k" -ge 701 ] || out+=(peek_iter)
  [ "$k" -ge 619 ] || out+=(slice_write)
  [ "$k" -ge 614 ] || out+=(ktime)
  [ "$k" -ge 613 ] || out+=(dispatch)
  [ "$k" -ge 615 ] || out+=(node0)
  [ "$k" -ge 618 ] || out+=(cpu_rq)
  [ ${#out[@]} -gt 0 ] && echo "${out[*]}" || echo none
}

: >"$table"
for knobs in default all; do
  case_begin "$knobs"
  args=(--report-sec 2)
  [ "$knobs" = default ] || args+=(--clear-bitmap --boost-on-wake --vtime)
  if sched_start "${args[@]}" && sched_wait_enabled; then
    # struct_ops programs of the attached scheduler, with their counts
    progs=$(bpftool -j prog show 2>/dev/null |
      jq -r '.[] | select(.type == "struct_ops") | "\(.name)\t\(.verified_insns // "null")"')
    [ -n "$progs" ] || fail "bpftool lists no struct_ops program"
    line=$(grep -m1 ' attached: load ' "$SORYU_OUT/$CASE.sched.log" || true)
    load_ms=$(sed -n 's/.* attached: load \([0-9]*\) ms .*/\1/p' <<<"$line")
    attach_ms=$(sed -n 's/.*), attach \([0-9]*\) ms.*/\1/p' <<<"$line")
    compat=$(sed -n 's/.*compat fallbacks in use: //p' "$SORYU_OUT/$CASE.sched.log" | head -n1)
    trace "load ${load_ms:-?} ms, attach ${attach_ms:-?} ms, compat: ${compat:-?}"
    [ "$compat" = "$(expected_compat)" ] ||
      fail "compat fallbacks in use: '${compat:-none logged}', this kernel ($(uname -r)) calls for '$(expected_compat)'"
    total=0
    while IFS=$'\t' read -r name insns; do
      check "verified instructions of $name under $LIMIT" "i > 0 && i < $LIMIT" i="$insns"
      total=$((total + ${insns//[!0-9]/}))
      printf '| %s | %s | %s | %s |\n' "$(uname -r)" "$knobs" "$name" "$insns" >>"$table"
    done <<<"$progs"
    printf '| %s | %s | **all programs** (load %s ms, attach %s ms; compat: %s) | %s |\n' \
      "$(uname -r)" "$knobs" "${load_ms:-?}" "${attach_ms:-?}" "${compat:-?}" "$total" >>"$table"
    sched_stop
    sched_wait_disabled
  fi
  report_check
  dmesg_check
  case_end
done
summary
