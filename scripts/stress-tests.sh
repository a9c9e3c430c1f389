#!/usr/bin/env bash
# The whole test suite N times in a row (default 5) with two CPU-burning processes beside it, as on a busy
# 2-core CI machine. Stops at the first red run; the burners are stopped however the script ends.
#   scripts/stress-tests.sh [RUNS] [extra pytest arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
shift || true
burners=()
stop_burners() { for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_burners EXIT
for _ in 1 2; do
    python3 -c 'while True: pass' &
    burners+=("$!")
done
for run in $(seq 1 "$runs"); do
    echo "== run $run of $runs (burners: ${burners[*]})"
    started=$(date +%s)
    .venv/bin/pytest -q -p no:cacheprovider "$@"
    echo "== run $run passed in $(( $(date +%s) - started )) s"
done
echo "== $runs runs in a row passed beside two CPU burners"
