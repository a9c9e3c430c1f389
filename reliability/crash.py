"""Crash safety: kill a real run mid-flight and check what the database kept.

Each check starts a separate process writing a paced (real-latency) comparison into its own database,
waits until events are on disk, signals it, and then reads the database back through the CLI:

- SIGKILL of ``workbench run``: the session is listed as interrupted, ``show`` works, every arm's stored
  events are whole from its first (no gap), and the last stored event is at most about a second older than
  the kill.
- SIGKILL of a child that announces every event as it is emitted: exactly which events were lost (only the
  newest of each arm), and how long before the kill the oldest of them was emitted.
- SIGINT (Ctrl+C) of ``workbench run``, to the process or to its whole process group as a terminal sends
  it: exit 130, one line on stderr, the session saved as cancelled within a second.

What must hold is in a report's ``problems``; how long things took is a figure with a goal, and a goal
missed is in ``over_goal`` (the suite reports both; a test on a busy machine checks only ``problems``).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from reliability import child_command, child_env
from workbench.store.liveness import process_alive

R = TypeVar("R")

TASK = "cart/stale-to-saved"
"""A long task: its tool arm takes over a minute at ``scripted:paced`` (400 items, ~400 calls), so a signal sent
after the first 40 stored events lands mid-run however busy the machine is. On a short task a loaded machine let
the run finish before Ctrl+C arrived (exit 0, not 130)."""
MODEL = "scripted:paced"
LAG_LIMIT_S = 1.0
"""Events stored up to at most this long before a kill (the writer commits every 0.25 s)."""
SAVE_LIMIT_S = 1.0
"""A Ctrl+C must have saved the session as cancelled within this long."""


@dataclass
class KillReport:
    name: str
    signal: str
    exit_code: int | None = None
    exit_s: float | None = None
    """Signal to process exit."""
    saved_s: float | None = None
    """Signal to the session's end being recorded (cancellation only)."""
    session_id: str | None = None
    listed_status: str | None = None
    arm_statuses: dict[str, str] = field(default_factory=dict)
    events_at_kill: int = 0
    events_stored: int = 0
    lag_s: float | None = None
    """Kill time minus the time of the last stored event (both relative to the arm's start)."""
    events_emitted: int | None = None
    events_lost: int | None = None
    lost_window_s: float | None = None
    """How long before the kill the oldest lost event was emitted."""
    workers_at_kill: int = 0
    """Child processes of the run when it was signalled (Monty's sandbox workers)."""
    leftover_processes: int = 0
    stderr: str = ""
    problems: list[str] = field(default_factory=list)
    over_goal: list[str] = field(default_factory=list)
    """Timing figures past their goal (LAG_LIMIT_S, SAVE_LIMIT_S)."""

    @property
    def recovered(self) -> bool:
        return not self.problems


# -- the checks ------------------------------------------------------------------------------------


def kill_cli_run(directory: Path, *, after_events: int = 40, task: str = TASK) -> KillReport:
    """SIGKILL ``workbench run`` once ``after_events`` events are stored."""
    report = KillReport("workbench run, SIGKILL", "SIGKILL")
    db = directory / "kill-cli.db"
    process = _start(workbench_command("run", "--model", MODEL, "--task", task, "--db", str(db), "--json"))
    killed_at = _signal_when_stored(process, db, after_events, signal.SIGKILL, report)
    _finish(process, killed_at, report)
    _read_back(db, report)
    _check_lag(db, killed_at, report)
    _expect(report, report.listed_status == "interrupted", f"listed as {report.listed_status}, not interrupted")
    _expect(report, "interrupted" in report.arm_statuses.values(), f"arms {report.arm_statuses}: none interrupted")
    return report


def kill_streaming_child(directory: Path, *, after_events: int = 40, task: str = TASK) -> KillReport:
    """SIGKILL a run that announces each event as it is emitted; count exactly what was lost."""
    report = KillReport("announced events, SIGKILL", "SIGKILL")
    db = directory / "kill-child.db"
    process = _start(child_command("child", "stream", str(db), task, MODEL))
    announced: list[tuple[str, float]] = []
    reader = threading.Thread(target=_collect, args=(process, announced), daemon=True)
    reader.start()
    # Kill at an announced event, not right after a flush was seen, so the writer's buffer is not empty.
    target = after_events + 60
    killed_at = _signal_when_stored(process, db, 1, signal.SIGKILL, report, also=lambda: len(announced) >= target)
    _finish(process, killed_at, report)
    reader.join(timeout=5)
    _read_back(db, report)
    _check_lag(db, killed_at, report)
    emitted = {line: seen for line, seen in announced if not line.startswith("session ")}
    stored = {f"{arm} {seq}" for arm, seq, _ in _stored_events(db)}
    lost = [seen for line, seen in emitted.items() if line not in stored]
    report.events_emitted, report.events_lost = len(emitted), len(lost)
    report.lost_window_s = round(killed_at[1] - min(lost), 3) if lost else 0.0
    _expect(report, stored <= set(emitted), "the database holds events that were never emitted")
    for arm in {line.split()[0] for line in emitted}:
        order = [line for line in emitted if line.split()[0] == arm]
        kept = [line in stored for line in order]
        _expect(report, kept == sorted(kept, reverse=True), f"{arm}: an event was lost while a later one was kept")
    _goal(report, report.lost_window_s <= LAG_LIMIT_S, f"lost events from {report.lost_window_s} s before the kill")
    _expect(report, report.listed_status == "interrupted", f"listed as {report.listed_status}, not interrupted")
    return report


def interrupt_cli_run(directory: Path, *, group: bool, after_events: int = 40, task: str = TASK) -> KillReport:
    """Ctrl+C: SIGINT to ``workbench run`` (or to its whole process group, as a terminal sends it)."""
    report = KillReport(f"workbench run, Ctrl+C to the {'process group' if group else 'process'}", "SIGINT")
    db = directory / f"interrupt-{'group' if group else 'process'}.db"
    process = _start(workbench_command("run", "--model", MODEL, "--task", task, "--db", str(db), "--json"))
    killed_at = _signal_when_stored(process, db, after_events, signal.SIGINT, report, group=group)
    _finish(process, killed_at, report)
    _read_back(db, report)
    finished = _finished_at(db)
    report.saved_s = round(finished - killed_at[0], 3) if finished is not None else None
    _expect(report, report.exit_code == 130, f"exit code {report.exit_code}, not 130")
    lines = [line for line in report.stderr.splitlines() if line.strip()]
    _expect(report, len(lines) == 1 and "cancelled" in lines[0], f"stderr was {report.stderr!r}")
    _expect(report, "Traceback" not in report.stderr, "a traceback on stderr")
    _expect(report, report.listed_status == "cancelled", f"listed as {report.listed_status}, not cancelled")
    _expect(report, "cancelled" in report.arm_statuses.values(), f"arms {report.arm_statuses}: none cancelled")
    _expect(report, set(report.arm_statuses.values()) <= {"cancelled", "completed"}, f"arms {report.arm_statuses}")
    _expect(report, report.saved_s is not None, "the session has no end time")
    _goal(
        report,
        report.saved_s is not None and report.saved_s <= SAVE_LIMIT_S,
        f"saved as cancelled {report.saved_s} s after Ctrl+C",
    )
    return report


def all_checks(directory: Path, on_report: Callable[[KillReport], None] | None = None) -> list[KillReport]:
    checks: Sequence[Callable[[], KillReport]] = (
        lambda: kill_cli_run(directory),
        lambda: kill_streaming_child(directory),
        lambda: interrupt_cli_run(directory, group=False),
        lambda: interrupt_cli_run(directory, group=True),
    )
    return run_checks(checks, on_report)


def run_checks(checks: Sequence[Callable[[], R]], on_report: Callable[[R], None] | None = None) -> list[R]:
    """Run each check in turn, handing each report to ``on_report`` as soon as it is ready."""
    reports = []
    for check in checks:
        report = check()
        reports.append(report)
        if on_report is not None:
            on_report(report)
    return reports


# -- processes -------------------------------------------------------------------------------------


def workbench_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "workbench", *args]


def _start(command: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, env=child_env()
    )


def _signal_when_stored(
    process: subprocess.Popen[str],
    db: Path,
    count: int,
    signum: int,
    report: KillReport,
    *,
    group: bool = False,
    also: Callable[[], bool] = lambda: True,
) -> tuple[float, float, list[int]]:
    """Wait until ``count`` events are stored (and ``also()`` holds), then send ``signum``.

    Returns the wall and monotonic time of the signal, and the process's descendants (its sandbox workers).
    """
    deadline = time.monotonic() + 60
    stored = 0
    while stored < count or not also():
        if process.poll() is not None:
            raise RuntimeError(f"the run ended before {count} events were stored: {_stderr(process)}")
        if time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"only {stored} events were stored after 60 s")
        time.sleep(0.02)
        stored = _event_count(db)
    report.events_at_kill = stored
    workers = descendants(process.pid)
    report.workers_at_kill = len(workers)
    wall, monotonic = time.time(), time.monotonic()
    if group:
        os.killpg(process.pid, signum)
    else:
        os.kill(process.pid, signum)
    return wall, monotonic, workers


def _stderr(process: subprocess.Popen[str]) -> str:
    return process.stderr.read()[-500:] if process.stderr else ""


def _finish(process: subprocess.Popen[str], killed_at: tuple[float, float, list[int]], report: KillReport) -> None:
    try:
        _, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
        report.problems.append("the process did not exit within 30 s of the signal")
    report.exit_s = round(time.monotonic() - killed_at[1], 3)
    report.exit_code = process.returncode
    report.stderr = stderr or ""
    deadline = time.monotonic() + 3
    alive = [pid for pid in killed_at[2] if process_alive(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [pid for pid in alive if process_alive(pid)]
    report.leftover_processes = len(alive)
    _expect(report, not alive, f"{len(alive)} child process(es) outlived the run")


def _collect(process: subprocess.Popen[str], announced: list[tuple[str, float]]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        announced.append((line.strip(), time.monotonic()))


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (Linux /proc; empty elsewhere)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rpartition(")")[2].split()[1])
    found, frontier = [], [pid]
    while frontier:
        current = frontier.pop()
        children = [child for child, parent in parents.items() if parent == current]
        found += children
        frontier += children
    return found


# -- the database, read back -----------------------------------------------------------------------


def _read_back(db: Path, report: KillReport) -> None:
    """What a user sees afterwards: ``workbench sessions --json`` and ``workbench show ID --json``."""
    listed = cli_json("sessions", "--json", "--db", str(db), report=report)
    if not listed:
        report.problems.append("the session is not listed")
        return
    session = listed[0]
    report.session_id, report.listed_status = session["session_id"], session["status"]
    shown = cli_json("show", session["session_id"], "--json", "--db", str(db), report=report)
    if shown:
        report.arm_statuses = {arm["name"]: arm["status"] for arm in shown["arms"]}
    report.events_stored = len(_stored_events(db))


def cli_json(*args: str, report: KillReport | Any) -> Any:
    """``workbench ARGS`` (in process) parsed as JSON; a non-zero exit is added to ``report.problems``."""
    from click.testing import CliRunner

    from workbench.cli import cli

    result = CliRunner().invoke(cli, list(args), prog_name="workbench")
    if result.exit_code != 0:
        report.problems.append(
            f"`workbench {' '.join(args)}` exited {result.exit_code}: {result.output.strip()[-200:]}"
        )
        return None
    return json.loads(result.stdout)


def _check_lag(db: Path, killed_at: tuple[float, float, list[int]], report: KillReport) -> None:
    started = _created_at(db)
    events = _stored_events(db)
    if started is None or not events:
        report.problems.append("no session or no events stored")
        return
    report.lag_s = round((killed_at[0] - started) - max(t for _, _, t in events), 3)
    _goal(report, report.lag_s <= LAG_LIMIT_S, f"the last stored event is {report.lag_s} s older than the kill")
    for arm in {arm for arm, _, _ in events}:
        seqs = sorted(seq for name, seq, _ in events if name == arm)
        _expect(report, seqs == list(range(len(seqs))), f"{arm}: the stored events have gaps")


def _connect(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)


def _event_count(db: Path) -> int:
    try:
        with _connect(db) as connection:
            return connection.execute("SELECT count(*) FROM events").fetchone()[0]
    except sqlite3.Error:
        return 0


def _stored_events(db: Path) -> list[tuple[str, int, float]]:
    with _connect(db) as connection:
        return connection.execute("SELECT arm, seq, t FROM events").fetchall()


def _created_at(db: Path) -> float | None:
    return _timestamp(db, "created")


def _finished_at(db: Path) -> float | None:
    return _timestamp(db, "finished")


def _timestamp(db: Path, column: str) -> float | None:
    with _connect(db) as connection:
        row = connection.execute(f"SELECT {column} FROM sessions").fetchone()
    if not row or row[0] is None:
        return None
    moment = datetime.fromisoformat(row[0])
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _expect(report: KillReport, condition: bool, problem: str) -> None:
    if not condition:
        report.problems.append(problem)


def _goal(report: KillReport, condition: bool, figure: str) -> None:
    if not condition:
        report.over_goal.append(figure)
