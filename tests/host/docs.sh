#!/usr/bin/env bash
# The links between the project's Markdown files (scripts/doclinks.py):
# every relative link in the tree resolves, to a file and to a heading;
# and the checker itself finds what it is there to find.
#
#   tests/host/docs.sh
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
# shellcheck source=tests/host/lib.sh
. tests/host/lib.sh
checks_begin

# the tree: every link of every tracked *.md
out=$(python3 scripts/doclinks.py 2>&1) && rc=0 || rc=$?
if [ "$rc" = 0 ] && grep -qE "doclinks: [1-9][0-9]* relative link\(s\) in [1-9][0-9]* file\(s\), 0 broken" <<<"$out"; then
  ok "the tree's links: $(tail -n1 <<<"$out")"
else
  bad "the tree's links (exit $rc): $out"
fi

# the checker on a small tree of its own, one link of each kind
mkdir -p "$tmp/d"
cat >"$tmp/d/b.md" <<'MD'
# B
## Reports held up: `sched_yield()`
## Twice
## Twice
MD
cat >"$tmp/d/a.md" <<'MD'
# A
[fine](b.md) [fine](b.md#reports-held-up-sched_yield) [fine](#a)
[second of two](b.md#twice-1) [outside](https://example.org/x)
```
[in a fence](nowhere.md)
```
`[as code](nowhere.md)`
[gone](c.md)
[no such heading](b.md#reports-held-up)
[third of two](b.md#twice-2)
MD
out=$(cd "$tmp/d" && python3 "$repo/scripts/doclinks.py" a.md 2>&1) && rc=0 || rc=$?
check "a broken link fails the check (exit 1)" [ "$rc" = 1 ]
check "a link to a missing file is named with its line" grep -q "^a.md:8: c.md: no file c.md" <<<"$out"
check "a link to a missing heading is named" grep -q "^a.md:9: b.md#reports-held-up: no heading" <<<"$out"
check "the third of two like headings is missing" grep -q "^a.md:10: b.md#twice-2: no heading" <<<"$out"
check "links in code, to other hosts and to headings that exist pass" \
  grep -q "doclinks: 7 relative link(s) in 1 file(s), 3 broken" <<<"$out"
out=$(python3 scripts/doclinks.py "$tmp/none.md" 2>&1) && rc=0 || rc=$?
check "a file that does not exist: one line, exit 2" [ "$rc/$(grep -c . <<<"$out")" = 2/1 ]

checks_done
