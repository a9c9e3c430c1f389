"""``bench --suite bfcl --resume``: a BFCL sweep stopped by a real Ctrl+C (SIGINT to the real command) keeps the
entries it finished, and the same command with ``--resume`` runs only the missing ones, reusing the others'
sessions; a second resume runs nothing.

Skipped where bfcl-eval is not installed, unless REQUIRE_BFCL is set (``.ci/run`` installs it).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli_process import WORKBENCH, workbench
from workbench.suites import bfcl

if not bfcl.status().installed:
    if os.environ.get("REQUIRE_BFCL"):
        pytest.fail(f"bfcl-eval is required (REQUIRE_BFCL is set): {'; '.join(bfcl.status().missing)}", pytrace=False)
    pytestmark = pytest.mark.skip(reason="bfcl-eval is not installed (workbench suites install bfcl)")

SELECTION = ("bench", "--suite", "bfcl", "--entries", "0-5", "--arms", "tool,code", "--concurrency", "1",
             "--model", "scripted:paced", "--chart", "none")  # fmt: skip
"""Six multi_turn_base entries one at a time at a real model's pace, so a Ctrl+C lands with some left."""
WAIT_S = 600.0


def finished_runs(db: Path) -> list[tuple[str, str]]:
    """(task, session id) of every run any sweep recorded in ``db``, read straight from its tables."""
    if not db.exists():
        return []
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as connection:
            return connection.execute("SELECT task, session_id FROM bench_runs ORDER BY position").fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []


def test_an_interrupted_bfcl_sweep_resumes_with_only_the_missing_entries(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    environment = {**os.environ, "WORKBENCH_DB": str(db)}
    first = subprocess.Popen([WORKBENCH, *SELECTION], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=environment)  # fmt: skip
    try:
        deadline = time.monotonic() + WAIT_S
        while len(finished_runs(db)) < 2 and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        first.send_signal(signal.SIGINT)
        _, err = first.communicate(timeout=WAIT_S)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 130, err
    assert "run the same command with --resume" in err and "Traceback" not in err, err
    kept = dict(finished_runs(db))
    assert 2 <= len(kept) < 6, f"the Ctrl+C should land mid-sweep: {kept}"
    sessions_before = {info["session_id"] for info in json.loads(workbench("sessions", "--bench", "--json", db=db))}

    resumed = json.loads(workbench(*SELECTION, "--resume", "--json", db=db))
    assert resumed["status"] == "completed" and resumed["finished"] == resumed["planned"] == 6
    runs = {run["task"]: run for run in resumed["runs"]}
    assert sorted(runs) == [f"bfcl/multi_turn_base_{number}" for number in range(6)]
    for task, run in runs.items():
        if task in kept:  # finished before the Ctrl+C: reused, not run again
            assert run["reused"] and run["session_id"] == kept[task], task
        else:
            assert not run["reused"] and run["session_id"] not in sessions_before, task
    sessions_after = {info["session_id"] for info in json.loads(workbench("sessions", "--bench", "--json", db=db))}
    new_sessions = sessions_after - sessions_before
    assert new_sessions == {run["session_id"] for run in runs.values() if not run["reused"]}
    assert len(new_sessions) == 6 - len(kept), "only the missing entries ran"
    assert all(arm["success_rate"] == 1.0 for tier in resumed["tiers"] for arm in tier["arms"].values())

    again = json.loads(workbench(*SELECTION, "--resume", "--json", db=db))
    assert all(run["reused"] for run in again["runs"]), "a finished entry is never run twice"
    assert {info["session_id"] for info in json.loads(workbench("sessions", "--bench", "--json", db=db))} == (
        sessions_after
    )
