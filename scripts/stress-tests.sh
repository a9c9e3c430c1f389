#!/usr/bin/env bash
# The whole test suite N times in a row (default 5) with two CPU-burning processes beside it, as on a busy
# 2-core CI machine. Every run goes to the end; each run's pytest summary and wall time are printed, then
# one line per run. Exits 1 if any run was red. The burners are stopped however the script ends.
#   scripts/stress-tests.sh [RUNS] [extra pytest arguments...]
set -uo pipefail
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
log="$(mktemp -d "${TMPDIR:-/tmp}/stress-tests.XXXXXX")"
summaries=()
red=0
for run in $(seq 1 "$runs"); do
    echo "== run $run of $runs (burners: ${burners[*]}; output in $log/run-$run.txt)"
    started=$(date +%s)
    .venv/bin/pytest --verbosity=-1 -p no:cacheprovider "$@" >"$log/run-$run.txt" 2>&1  # -1: the counts line too
    status=$?
    seconds=$(( $(date +%s) - started ))
    summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed)|^(=+ )?[0-9]+ (failed|error)' "$log/run-$run.txt" | tail -1 | tr -d '=')
    grep -E '^(FAILED|ERROR) ' "$log/run-$run.txt" || true
    if [ "$status" -ne 0 ]; then red=$((red + 1)); fi
    summaries+=("run $run: exit $status, ${summary:-no summary} (${seconds} s)")
    echo "== ${summaries[-1]}"
done
echo "== $runs runs beside two CPU burners, $red red:"
printf '   %s\n' "${summaries[@]}"
[ "$red" -eq 0 ]
