# shellcheck shell=bash
# Helpers of the host tests (sourced, not a test itself): one line per
# check, then "N passed, M failed" and a non-zero exit on a failure.
#
#   . tests/host/lib.sh
#   checks_begin            # makes $tmp; prints the count at exit, and
#                           # counts an early stop as a failure
#   ok WHAT | bad WHAT | check WHAT CMD...
#   checks_done             # last line: the test ran to its end
#
# A test that must clean up more at exit sets CLEANUP to a function.

passed=0
failed=0
finished=0
tmp=
CLEANUP=:
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
# check WHAT CMD...: one check line from CMD's exit status.
check() {
  local what=$1
  shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}

checks_summary() {
  local rc=$?
  if [ "$finished" = 0 ]; then bad "the test itself stopped early (exit status $rc)"; fi
  "$CLEANUP"
  [ -z "$tmp" ] || rm -rf "$tmp"
  echo "$passed passed, $failed failed"
  if [ "$failed" = 0 ]; then exit 0; else exit 1; fi
}

checks_begin() {
  tmp=$(mktemp -d)
  trap checks_summary EXIT
}

checks_done() { finished=1; }
