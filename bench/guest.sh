#!/usr/bin/env bash
# VM side of bench/run.sh (run through vm/run.sh): hands over to guest.py.
set -euo pipefail
exec python3 "$(dirname "${BASH_SOURCE[0]}")/guest.py" "$SORYU_OUT" "$@"
