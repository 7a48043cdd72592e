#!/usr/bin/env bash
# The A/B benchmark end to end: two configurations, two rounds, a short run
# in the VM (bench/run.sh), then the compare tables and the plot must be
# there and say what they should. Boots the VM once (about a minute).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

log=$(mktemp)
if bench/run.sh -r 2 -n 4 -s 3 soryu soryu-vtime >"$log" 2>&1; then
  ok "bench/run.sh -r 2 -n 4 -s 3 soryu soryu-vtime"
else
  bad "bench/run.sh failed: $(tail -n 5 "$log" | tr '\n' '|')"
fi
out=$(sed -n 's/^bench: results in \(.*\) (compare.*/\1/p' "$log" | tail -n1)
rm -f "$log"
if [ -z "$out" ] || [ ! -d "$out" ]; then
  bad "no results directory reported"
else
  for c in soryu soryu-vtime; do
    for r in 1 2; do
      f=$out/$c-r$r.jsonl
      if [ "$(head -n1 "$f" | jq -r .config)" = "$c" ] && [ "$(grep -c '"type": "interval"' "$f")" = 4 ]; then
        ok "$c round $r: header and 4 intervals"
      else
        bad "$f: missing, wrong header, or not 4 intervals"
      fi
    done
  done
  # round 2 ran in the reverse order of round 1
  o1=$(head -n1 "$out/soryu-r1.jsonl" | jq -c .order)
  o2=$(head -n1 "$out/soryu-r2.jsonl" | jq -c .order)
  [ "$o1" = '["soryu","soryu-vtime"]' ] && [ "$o2" = '["soryu-vtime","soryu"]' ] &&
    ok "order reversed between rounds: $o1 then $o2" || bad "orders $o1, $o2"
  md=$out/compare-soryu-vtime.md
  if grep -q '^| ext_wake_p99_us | pooled |' "$md" && grep -q '^| ext_wake_p99_us | 2 |' "$md"; then
    ok "compare table: per-round and pooled rows"
  else
    bad "compare table lacks per-round or pooled rows: $(head -c 300 "$md" 2>/dev/null | tr '\n' '|')"
  fi
  svg=$out/plot.svg
  if [ -s "$svg" ] && head -c 200 "$svg" | grep -q '<svg' && grep -q 'soryu-vtime' "$svg" && grep -qE '<path|<polyline' "$svg"; then
    ok "plot.svg drawn, names the configurations"
  else
    bad "plot.svg missing or empty"
  fi
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
