"""BFCL entries on the queue: ``bench --queue --suite bfcl`` enqueues each entry by its id only, a real
``workbench worker`` builds it from its own installed BFCL and runs it, and the report equals the in-process
sweep's; ``--queue --resume`` plans the suite's entries again; a job naming no entry is refused in one line.

Skipped where bfcl-eval is not installed, unless REQUIRE_BFCL is set (``.ci/run`` installs it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.cli_process import workbench
from tests.test_queue import WAIT_S, queued_id, report_rows, workers  # noqa: F401 (workers is a fixture)
from workbench.suites import bfcl

if not bfcl.status().installed:
    if os.environ.get("REQUIRE_BFCL"):
        pytest.fail(f"bfcl-eval is required (REQUIRE_BFCL is set): {'; '.join(bfcl.status().missing)}", pytrace=False)
    pytestmark = pytest.mark.skip(reason="bfcl-eval is not installed (workbench suites install bfcl)")

SELECTION = ("--suite", "bfcl", "--category", "multi_turn_base", "--category", "multi_turn_miss_func",
             "--entries", "0,46", "--arms", "tool,code")  # fmt: skip
"""Four entries over two categories: 4 turns and 1 in multi_turn_base, a held-back function in miss_func."""


def test_a_queued_bfcl_sweep_runs_on_a_worker_and_its_report_equals_the_in_process_one(
    tmp_path: Path,
    workers,  # noqa: F811 (the fixture)
) -> None:
    db = tmp_path / "s.db"
    queued = json.loads(workbench("bench", "--queue", *SELECTION, "--json", db=db))
    sweep_id = queued["sweep_id"]
    assert (queued["planned"], queued["added"]) == (4, 4)
    again = json.loads(workbench("bench", "--queue", "--resume", sweep_id, "--json", db=db))
    assert (again["planned"], again["added"]) == (4, 0), "the suite's entries planned again, none queued twice"

    group = workers(db, {})
    proc = group.start("--exit-when-idle", "--concurrency", "2")
    assert proc.wait(timeout=WAIT_S) == 0, group.output(proc)
    out, err = group.output(proc)
    assert len(out.strip().splitlines()) == 4 and all("completed" in line for line in out.splitlines()), out
    assert "Traceback" not in err and "refused" not in err, err

    report = json.loads(workbench("export", sweep_id, "--format", "json", db=db))
    assert report["status"] == "completed" and report["finished"] == report["planned"] == 4
    assert report["options"]["suite"] == "bfcl" and report["options"]["bfcl_version"] == bfcl.PINNED_VERSION
    assert [tier["tier"] for tier in report["tiers"]] == ["multi_turn_base", "multi_turn_miss_func"]
    assert {run["task"] for run in report["runs"]} == {
        f"bfcl/{category}_{number}" for category in ("multi_turn_base", "multi_turn_miss_func") for number in (0, 46)
    }
    sessions = json.loads(workbench("sessions", "--bench", "--json", db=db))
    assert {info["app"] for info in sessions} == {f"bfcl@{bfcl.PINNED_VERSION}"}
    shown = json.loads(workbench("show", report["runs"][0]["session_id"], "--json", db=db))
    assert [len(arm["turns"]) for arm in shown["arms"]] == [4, 4], "entry 0's four turns in each arm"

    in_process = json.loads(workbench("bench", *SELECTION, "--json", db=tmp_path / "ref.db"))
    assert report_rows(report) == report_rows(in_process)
    for queued_tier, own_tier in zip(report["tiers"], in_process["tiers"], strict=True):
        for name, arm in queued_tier["arms"].items():
            assert arm["success_rate"] == own_tier["arms"][name]["success_rate"]
            assert arm["means"]["turns"] == own_tier["arms"][name]["means"]["turns"] > 1


def test_a_worker_builds_a_bfcl_job_from_its_own_installed_entries_only() -> None:
    """A job carries the entry's id, nothing of what runs: the worker's setup has the entry's turns on its own
    BFCL source; an id that names no entry (a number past the category, a category BFCL lacks, a path) is
    refused in one line before anything starts."""
    from workbench.bench import BenchCase
    from workbench.config import load_settings
    from workbench.errors import BadInput
    from workbench.queue.jobs import ComparisonJob
    from workbench.queue.runtime import Runtime
    from workbench.request import RunRequest
    from workbench.suites.bfcl_source import BfclSource

    shared = RunRequest(model="scripted", arms=("tool", "code"))
    job = ComparisonJob.of("sweep-0a1b2c3d", 0, BenchCase("multi_turn_base", "bfcl/multi_turn_base_0", 0, 0, 0),
                           shared, {})  # fmt: skip
    data = json.loads(json.dumps(job.to_dict()))
    assert data["request"] == {"task": "bfcl/multi_turn_base_0", "items": 0, "model": "scripted",
                               "arms": ["tool", "code"]}  # fmt: skip
    setup = Runtime._setup(ComparisonJob.from_dict(data), load_settings())
    entry = bfcl.load_entries("multi_turn_base")[0]
    assert setup.task is None and isinstance(setup.source, BfclSource) and setup.source.entry.id == entry.id
    assert list(setup.prompts) == [entry.user_messages(turn)[0]["content"] for turn in range(len(entry.turns))]
    for task in ("bfcl/multi_turn_base_9999", "bfcl/multi_turn_nothing_1", "bfcl/../../etc/passwd_1", "bfcl/x"):
        forged = ComparisonJob.from_dict({**data, "request": {**data["request"], "task": task}})
        with pytest.raises(BadInput) as refused:
            Runtime._setup(forged, load_settings())
        assert "\n" not in str(refused.value) and "BFCL" in str(refused.value), (task, refused.value)
