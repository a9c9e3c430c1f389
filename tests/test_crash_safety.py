"""Crash safety and cancellation on real processes: SIGKILL, Ctrl+C, dead and reused pids, readers vs a writer.

The runs use ``scripted:paced`` (simulated model latency), so a comparison takes several seconds and the
signal lands mid-run. The tests check what must hold whatever the load (``report.problems``); how long a save
or a cancel took, and how old the last stored event was, are figures with goals that
``python -m reliability`` prints, not something a test on a busy machine can hold.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reliability import crash, limits
from reliability.load import reads_during_sweep
from workbench.events import ArmEvent, RequestStarted
from workbench.session import fold_comparison
from workbench.store import Store
from workbench.store.liveness import SILENT_WRITER_S

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc and signals")


def test_sigkill_of_workbench_run_leaves_an_interrupted_session_with_its_events(tmp_path: Path) -> None:
    report = crash.kill_cli_run(tmp_path)
    assert report.recovered, report.problems
    assert report.exit_code == -9
    assert report.listed_status == "interrupted" and "interrupted" in report.arm_statuses.values()
    assert report.events_stored >= report.events_at_kill > 0  # every event seen stored before the kill is kept
    assert report.lag_s is not None  # the problems include any gap in an arm's stored events
    assert report.leftover_processes == 0


def test_sigkill_loses_only_the_newest_events_of_each_arm(tmp_path: Path) -> None:
    """The events lost are those emitted after the writer's last commit: the newest of each arm, never one
    before an event that was kept (the problems say so otherwise)."""
    report = crash.kill_streaming_child(tmp_path)
    assert report.recovered, report.problems
    assert report.events_emitted is not None and report.events_emitted >= report.events_stored > 0
    assert report.events_lost == report.events_emitted - report.events_stored


@pytest.mark.parametrize("group", [False, True], ids=["process", "process-group"])
def test_ctrl_c_stops_both_arms_and_saves_the_session_as_cancelled(tmp_path: Path, group: bool) -> None:
    report = crash.interrupt_cli_run(tmp_path, group=group)
    assert report.recovered, report.problems
    assert report.exit_code == 130 and report.stderr.startswith("workbench: cancelled; session ")
    assert report.listed_status == "cancelled" and report.saved_s is not None


def _running_session(
    store: Store, session_id: str, pid: int, created: datetime, host: str | None = None, last_t: float | None = None
) -> None:
    events = [] if last_t is None else [ArmEvent("tool", 0, last_t, RequestStarted(1))]
    comparison = fold_comparison(events, session_id=session_id, app="cart", items=5, created=created, arms=["tool"])
    store.save(comparison, pid=pid, host=host)


def test_running_sessions_read_as_interrupted_once_their_writer_is_gone(db_path: Path) -> None:
    store = Store(db_path)
    now = datetime.now(UTC)
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 10
        while Path(f"/proc/{zombie.pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
            assert time.monotonic() < deadline, "the child never exited"
            time.sleep(0.01)
        _running_session(store, "alive", os.getpid(), now)
        _running_session(store, "exited", int(finished.stdout), now)
        _running_session(store, "zombie", zombie.pid, now)
        # A live process that started after the session was created is not its writer: the pid was reused.
        _running_session(store, "reused", os.getpid(), now - timedelta(days=30))
        statuses = {info.id: info.status for info in store.sessions()}
    finally:
        zombie.wait()
    assert statuses == {"alive": "running", "exited": "interrupted", "zombie": "interrupted", "reused": "interrupted"}


def test_a_session_written_under_another_host_name_is_interrupted_once_silent(db_path: Path) -> None:
    """A writer under another host name (a shared database; a container renamed on every start) cannot be
    looked up: its session counts as running until it has stored nothing for SILENT_WRITER_S."""
    store = Store(db_path)
    now = datetime.now(UTC)
    for session_id, created, last_t in (("busy", now - timedelta(minutes=30), 29 * 60.0),
                                        ("silent", now - timedelta(minutes=30), 5.0),
                                        ("new", now - timedelta(seconds=30), None)):  # fmt: skip
        _running_session(store, session_id, os.getpid(), created, "some-other-host", last_t)
    assert SILENT_WRITER_S == 600.0
    assert {info.id: info.status for info in store.sessions()} == {
        "busy": "running",
        "silent": "interrupted",
        "new": "running",
    }


def test_readers_never_block_the_writer(tmp_path: Path) -> None:
    """Every read succeeds and every session of the sweep is stored (how long the reads took is a figure of
    ``python -m reliability --only load``, not something a test on a busy machine can hold)."""
    result = reads_during_sweep(tmp_path, runs=4, stall_s=None)
    assert result.ok, result.problems
    assert result.detail["reads"] > 0


def test_a_tool_arm_that_never_stops_is_ended_by_the_request_limit() -> None:
    report = asyncio.run(limits.tool_arm_never_stops())
    assert report.held, report.problems
    assert report.statuses == {"tool": "failed"} and "request limit" in (report.errors["tool"] or "")


def test_a_code_arm_that_never_stops_is_ended_by_the_request_limit() -> None:
    report = asyncio.run(limits.code_arm_never_stops())
    assert report.held, report.problems


def test_a_code_arm_looping_in_every_snippet_is_ended_by_the_sandbox_and_its_retry_budget() -> None:
    report = asyncio.run(limits.code_arm_loops_forever())
    assert report.held, report.problems


def test_cancel_as_escape_does_stops_both_arms_and_saves_the_session_as_cancelled(tmp_path: Path) -> None:
    report = asyncio.run(limits.cancel_like_escape(tmp_path))
    assert report.held, report.problems
    assert "cancelled" in report.statuses.values() and set(report.statuses.values()) <= {"cancelled", "completed"}
