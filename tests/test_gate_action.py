"""The GitHub Action: action.yml runs scripts/gate_action.sh, and so does this test, with the environment the
action gives it (a real bench on the scripted model, the real gate; `gh` is a recording stand-in, as GitHub's
API cannot be reached here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from workbench.cli import cli

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "gate_action.sh"
# remove-expensive needs 5 requests in the tool arm, prune-saved 3: a limit of 4 breaks only the first
BENCH = "--task cart/remove-expensive --task cart/prune-saved --arms code,tool --concurrency 2"


def test_the_action_runs_the_script_after_installing_the_workbench() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    assert steps[0]["uses"].startswith("actions/setup-python@")
    assert "pip install" in steps[1]["run"]
    assert steps[2]["run"] == 'bash "${{ github.action_path }}/scripts/gate_action.sh"'
    assert set(steps[2]["env"]) >= {"WORKBENCH_BENCH_ARGS", "WORKBENCH_BASELINE", "WORKBENCH_GATE_ARGS"}
    assert {"bench-args", "baseline"} <= {name for name, spec in action["inputs"].items() if spec.get("required")}


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("action")
    out = root / "baseline.json"
    args = ["bench", *BENCH.split(), "--chart", "none", "--db", str(root / "b.db"), "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return out


def _run(tmp_path: Path, baseline: Path, bench_args: str, *, comment: bool = True) -> tuple[int, Path, Path]:
    fake = tmp_path / "bin"
    fake.mkdir()
    calls = tmp_path / "gh-calls"
    (fake / "gh").write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    (fake / "gh").chmod(0o755)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 17}}))
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    env = {
        **os.environ,
        "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}",
        "WORKBENCH_CMD": f"{sys.executable} -m workbench",
        "WORKBENCH_BENCH_ARGS": f"{bench_args} --db {tmp_path / 'c.db'}",
        "WORKBENCH_BASELINE": str(baseline),
        "WORKBENCH_GATE_ARGS": "--max-success-drop 5",
        "WORKBENCH_COMMENT": "true" if comment else "false",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step.md"),
        "RUNNER_TEMP": str(runner_temp),
    }
    done = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=600, check=False)
    return done.returncode, runner_temp / "workbench-gate.md", calls


def test_a_worse_candidate_fails_the_job_and_the_comment_names_the_case(tmp_path: Path, baseline: Path) -> None:
    code, summary, calls = _run(tmp_path, baseline, f"{BENCH} --request-limit 4")
    assert code == 1
    body = summary.read_text()
    assert "Gate: regression" in body and "cart/remove-expensive" in body
    regressed = body.split("### Regressed cases")[1].split("###")[0]
    assert "cart/prune-saved" not in regressed
    assert "workbench bench --task cart/remove-expensive" in body, "how to reproduce"
    assert (tmp_path / "step.md").read_text().strip() == body.strip()
    outputs = dict(line.split("=", 1) for line in (tmp_path / "output").read_text().splitlines())
    assert outputs["exit-code"] == "1" and outputs["summary"] == str(summary)
    assert calls.read_text().split() == ["pr", "comment", "17", "--body-file", str(summary)]


def test_the_same_bench_passes_and_a_bench_that_writes_nothing_is_incomplete(tmp_path: Path, baseline: Path) -> None:
    (tmp_path / "same").mkdir()
    code, summary, _ = _run(tmp_path / "same", baseline, BENCH, comment=False)
    assert code == 0, summary.read_text()
    assert "Gate: pass" in summary.read_text()
    (tmp_path / "broken").mkdir()
    code, summary, _ = _run(tmp_path / "broken", baseline, "--task no/such-task", comment=False)
    assert code == 2
    assert "the bench wrote no report" in summary.read_text()
