#!/usr/bin/env bash
# What loading soryu costs on this kernel, and which kernel interfaces it
# falls back from, per knob set (the default knobs, and all three on):
#
#   - the instructions the verifier processed (bpf_prog_info's
#     verified_insns, as the daemon logs them at attach: the sum over the
#     programs and the largest program), the largest under a quarter of
#     the verifier's limit of 1,000,000: a change that pushes a program
#     toward the limit fails here, long before a kernel refuses it (this
#     guest's bpftool does not show the per-program count);
#   - the load and attach times the daemon logs;
#   - the compat fallbacks the daemon logs (ops.init's compat_paths) are
#     exactly the ones this kernel's version calls for: a DSQ iterator for
#     the head before 7.1, a written slice before 6.19, bpf_ktime_get_ns()
#     before 6.14, the 6.12 kfunc names before 6.13, node 0 before 6.15,
#     the runqueue's current task before 6.18.
#
# Writes verifier.md: one Markdown table row per knob set, for
# docs/kernels.md.
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
    # (sched_ext shows enabled a moment before the daemon logs the attach)
    for _ in $(seq 50); do
      line=$(grep -m1 ' attached: load ' "$SORYU_OUT/$CASE.sched.log" || true)
      [ -z "$line" ] || break
      sleep 0.2
    done
    load_ms=$(sed -n 's/.* attached: load \([0-9]*\) ms .*/\1/p' <<<"$line")
    attach_ms=$(sed -n 's/.*), attach \([0-9]*\) ms.*/\1/p' <<<"$line")
    total=$(sed -n 's/.* (\([0-9]*\) instructions verified.*/\1/p' <<<"$line")
    top=$(sed -n 's/.* instructions verified, \([0-9]*\) of them \([a-z_0-9]*\)).*/\1 \2/p' <<<"$line")
    compat=$(sed -n 's/.*compat fallbacks in use: //p' "$SORYU_OUT/$CASE.sched.log" | head -n1)
    trace "load ${load_ms:-?} ms, attach ${attach_ms:-?} ms, ${total:-?} instructions, the most ${top:-?}, compat: ${compat:-?}"
    [ "$compat" = "$(expected_compat)" ] ||
      fail "compat fallbacks in use: '${compat:-none logged}', this kernel ($(uname -r)) calls for '$(expected_compat)'"
    check "verified instructions, all programs" "t > 0" t="${total:-null}"
    check "verified instructions of the largest program (${top#* }) under $LIMIT" "i > 0 && i < $LIMIT" i="${top%% *}"
    printf '| %s | %s | %s | %s ms | %s (%s) | %s |\n' "$(uname -r)" "$knobs" "${total:-?}" "${load_ms:-?}" \
      "${top%% *}" "${top#* }" "${compat:-?}" >>"$table"
    sched_stop
    sched_wait_disabled
  fi
  report_check
  dmesg_check
  case_end
done
summary
