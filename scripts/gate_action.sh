#!/usr/bin/env bash
# The GitHub Action's work (action.yml runs this file, and tests/test_gate_action.py runs it the same way):
# run the user's bench into a JSON report, gate it against the baseline, and post the summary.
#
# Environment (set by action.yml from its inputs):
#   WORKBENCH_BENCH_ARGS  the arguments of `workbench bench` (shell words; --out is added here)
#   WORKBENCH_BASELINE    the baseline: an exported sweep JSON in the repository, or a sweep id
#   WORKBENCH_GATE_ARGS   extra `workbench gate` arguments (--max-success-drop 5 --arm code ...)
#   WORKBENCH_SUMMARY     where the PR-comment body goes (default: $RUNNER_TEMP/workbench-gate.md)
#   WORKBENCH_COMMENT     "true": post the body as a comment on the pull request with `gh` (needs GH_TOKEN)
#   WORKBENCH_CMD         how to call the workbench (default: workbench)
# Exit code: the gate's: 0 within bounds, 1 regression, 2 incomplete (also when the bench wrote no report,
# and never 0 when the bench itself failed).
set -uo pipefail

: "${WORKBENCH_BENCH_ARGS:?set bench-args: the arguments of workbench bench}"
: "${WORKBENCH_BASELINE:?set baseline: an exported sweep JSON file or a sweep id}"

words() { python3 -c 'import shlex, sys; print("\n".join(shlex.split(sys.argv[1])))' "$1"; }
read -r -a workbench <<< "${WORKBENCH_CMD:-workbench}"
bench_args=(); gate_args=()
while IFS= read -r word; do [ -n "$word" ] && bench_args+=("$word"); done < <(words "$WORKBENCH_BENCH_ARGS")
while IFS= read -r word; do [ -n "$word" ] && gate_args+=("$word"); done < <(words "${WORKBENCH_GATE_ARGS:-}")

out_dir="${RUNNER_TEMP:-$(mktemp -d)}"
candidate="$out_dir/workbench-candidate.json"
summary="${WORKBENCH_SUMMARY:-$out_dir/workbench-gate.md}"
rm -f "$candidate"

"${workbench[@]}" bench "${bench_args[@]}" --chart none --out "$candidate"
bench_rc=$?

if [ ! -s "$candidate" ]; then
    printf '## ⚠️ Gate: incomplete, no decision: the bench wrote no report (exit %s)\n' "$bench_rc" > "$summary"
    [ -n "${GITHUB_STEP_SUMMARY:-}" ] && cat "$summary" >> "$GITHUB_STEP_SUMMARY"
    rc=2
else
    "${workbench[@]}" gate --baseline "$WORKBENCH_BASELINE" --candidate "$candidate" --summary "$summary" \
        --reproduce "workbench bench $WORKBENCH_BENCH_ARGS" "${gate_args[@]}"
    rc=$?
    if [ "$bench_rc" -ne 0 ] && [ "$rc" -eq 0 ]; then
        echo "workbench: the bench exited $bench_rc: no pass for a run that did not finish cleanly" >&2
        rc=2
    fi
fi

if [ -n "${GITHUB_OUTPUT:-}" ]; then
    { echo "exit-code=$rc"; echo "summary=$summary"; echo "candidate=$candidate"; } >> "$GITHUB_OUTPUT"
fi

if [ "${WORKBENCH_COMMENT:-false}" = "true" ]; then
    pr=""
    if [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ]; then
        pr=$(python3 -c 'import json, sys; print((json.load(open(sys.argv[1])).get("pull_request") or {}).get("number") or "")' "$GITHUB_EVENT_PATH")
    fi
    if [ -z "$pr" ]; then
        echo "workbench: not a pull request: the summary is in the step summary only" >&2
    elif ! command -v gh > /dev/null; then
        echo "workbench: gh is not installed: cannot comment on pull request $pr" >&2
    else
        gh pr comment "$pr" --body-file "$summary" || echo "workbench: could not comment on pull request $pr" >&2
    fi
fi

exit "$rc"
