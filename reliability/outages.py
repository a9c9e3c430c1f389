"""Outages of what a run depends on: a PostgreSQL server that stops answering, and a crawling trace collector.

Each fault runs a real ``workbench run`` (cart/remove-expensive on ``scripted:paced``: several seconds of
events) in its own process and counts what happened to it:

- the server frozen mid-run (SIGSTOP to the postmaster and every backend: sockets open, the kernel still
  acknowledging TCP, no answer) and resumed within ``store_busy_timeout_s``: the run completes and is stored
  whole, no fallback file;
- the server frozen for good, past a short wait: the run ends with exit 3 and one line, what the server had
  not taken is in the fallback file, and after the server's return ``workbench import`` gives a session equal
  to the run's own JSON;
- SIGTERM to the run during the freeze (the wait far from over): exit 143 within ``SIGTERM_GOAL_S``, the
  session saved as cancelled through the fallback file;
- Ctrl+C twice (the second while the first one saves): the process ends at once (exit 130), the session
  still kept through the fallback file;
- a collector that answers one byte a second: ``run --otel`` exits within ``COLLECTOR_GOAL_S`` of the run's
  end, with one warning.

The same server faults under queue workers (a restart, a stalled worker, SIGTERM during a freeze, a server
gone for good) are :mod:`reliability.worker_outages`'s. A run still going ``HUNG_AFTER_S`` after its fault
is counted as hung (and killed). The server is always
resumed, whatever happens. ``python -m reliability --only outages`` prints the figures; the tests in
``tests/test_store_outage.py`` run the same checks.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reliability import ROOT, child_env
from reliability.crash import descendants, workbench_command

if TYPE_CHECKING:
    from tests.support.postgres_cluster import PostgresCluster

TASK = "cart/remove-expensive"
ITEMS = 150
MODEL = "scripted:paced"
SHORT_WAIT_S = 3.0
"""The ``store_busy_timeout_s`` a freeze for good outlasts."""
LONG_WAIT_S = 60.0
"""The ``store_busy_timeout_s`` a short freeze (and a SIGTERM during one) stays within."""
FROZEN_FOR_S = 4.0
"""How long the freeze that ends within the wait lasts."""
STORED_BEFORE = 20
"""Events the run has stored before the server is frozen."""
HUNG_AFTER_S = 120.0
"""A run still going this long after its fault is hung (a bound for a busy machine, not an expected time)."""
SIGTERM_GOAL_S = 5.0
SECOND_SIGNAL_GOAL_S = 1.0
COLLECTOR_GOAL_S = 10.0


@dataclass
class OutageReport:
    fault: str
    tried: bool = False
    exit_code: int | None = None
    exit_s: float | None = None
    """The fault (or the signal, or the run's end for the collector) to the process's exit."""
    goal_s: float | None = None
    """What ``exit_s`` should stay under (None: no timing goal)."""
    hung: bool = False
    stored_directly: bool | None = None
    """Whether the session went straight into the database (False: through the fallback file)."""
    lost: int = 0
    """Sessions lost: 1 when the run's session (or any of its events) is not in the database at the end."""
    recorded_twice: int = 0
    """Sessions (or events) stored more than once for the one run."""
    note: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def held(self) -> bool:
        return self.tried and not self.problems and not self.hung and not self.lost and not self.recorded_twice

    @property
    def over_goal(self) -> list[str]:
        if self.goal_s is None or self.exit_s is None or self.exit_s <= self.goal_s:
            return []
        return [f"exit {self.exit_s:.2f} s after the fault (goal {self.goal_s:g} s)"]


# -- the faults ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def frozen(cluster: PostgresCluster) -> Iterator[Callable[[], None]]:
    """The cluster's postmaster and every backend stopped (SIGSTOP) until ``resume()`` or the block's end."""
    postmaster = int((cluster.data / "postmaster.pid").read_text().split()[0])
    processes = [postmaster, *descendants(postmaster)]
    stopped: list[int] = []
    resumed = False

    def resume() -> None:
        nonlocal resumed
        if not resumed:
            resumed = True
            for pid in stopped:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)

    try:
        for pid in processes:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
        yield resume
    finally:
        resume()


def frozen_and_resumed(directory: Path, cluster: PostgresCluster) -> OutageReport:
    """Frozen for ``FROZEN_FOR_S`` within a ``LONG_WAIT_S`` wait: the run completes, stored whole."""
    report = OutageReport(f"server frozen {FROZEN_FOR_S:g} s mid-run (wait {LONG_WAIT_S:g} s)")
    url, run = _start_run(directory, cluster, LONG_WAIT_S, report)
    if run is None:
        return report
    with frozen(cluster) as resume:
        time.sleep(FROZEN_FOR_S)
        resume()
        _finish(run, report, since=time.monotonic() - FROZEN_FOR_S)
    if report.hung:
        return report
    if report.exit_code != 0:
        report.problems.append(f"exit {report.exit_code} (expected 0): {run.stderr_text.strip()[-300:]}")
    _judge(directory, url, run, report, import_first=False)
    if _fallback_files(directory):
        report.problems.append("a fallback file was written though the server came back within the wait")
    report.note = "waited out, stored whole"
    return report


def frozen_for_good(directory: Path, cluster: PostgresCluster) -> OutageReport:
    """Frozen past a ``SHORT_WAIT_S`` wait: exit 3 with one line; after the server's return, the import
    gives a session equal to the run's JSON."""
    report = OutageReport(f"server frozen for good (wait {SHORT_WAIT_S:g} s)")
    url, run = _start_run(directory, cluster, SHORT_WAIT_S, report)
    if run is None:
        return report
    with frozen(cluster):
        _finish(run, report, since=time.monotonic())
        if report.hung:
            return report
        files = _fallback_files(directory)
    if report.exit_code != 3:
        report.problems.append(f"exit {report.exit_code} (expected 3): {run.stderr_text.strip()[-300:]}")
    lines = run.stderr_text.strip().splitlines()
    if len(lines) != 1 or "did not answer" not in lines[0] or not files or str(files[0]) not in lines[0]:
        report.problems.append(f"expected one line naming the fallback file, got: {run.stderr_text.strip()[-400:]}")
    _judge(directory, url, run, report, import_first=True)
    report.note = f"exit {report.exit_code} after {report.exit_s:.2f} s; imported after the server's return"
    return report


def stopped_while_frozen(
    directory: Path, cluster: PostgresCluster, signum: int = signal.SIGTERM, *, twice: bool = False
) -> OutageReport:
    """SIGTERM or Ctrl+C (``twice``: and again at once) during a freeze whose wait is far from over: exit
    128 + the signal within the goal; after the server's return and an import, the session is there,
    cancelled."""
    shown = {signal.SIGINT: "Ctrl+C"}.get(signum, signal.Signals(signum).name)
    name = f"{shown} twice while saving" if twice else f"{shown} during the freeze"
    report = OutageReport(f"{name} (wait {LONG_WAIT_S:g} s)", goal_s=SECOND_SIGNAL_GOAL_S if twice else SIGTERM_GOAL_S)
    url, run = _start_run(directory, cluster, LONG_WAIT_S, report)
    if run is None:
        return report
    with frozen(cluster):
        time.sleep(1.0)  # the writer is now waiting on the frozen server
        run.process.send_signal(signum)
        if twice:
            time.sleep(0.3)
            run.process.send_signal(signum)
        _finish(run, report, since=time.monotonic())
    if report.hung:
        return report
    if report.exit_code != 128 + signum:
        report.problems.append(f"exit {report.exit_code} (expected {128 + signum}): {run.stderr_text.strip()[-300:]}")
    if "Traceback" in run.stderr_text:
        report.problems.append(f"a traceback: {run.stderr_text.strip()[-300:]}")
    _import(directory, url, report)
    session = _session_row(url, run.session_id)
    if session is None:
        report.lost = 1
        report.problems.append(f"session {run.session_id} is not in the database after the import")
    elif not twice and session[0] != "cancelled":
        report.problems.append(f"session {run.session_id} is {session[0]} (expected cancelled)")
    report.stored_directly = False
    report.note = f"exit {report.exit_code}; session {session[0] if session else 'missing'} after the import"
    return report


def crawling_collector(directory: Path) -> OutageReport:
    """A trace collector answering one byte a second: ``run --otel`` exits soon after the run's end, with one
    warning."""
    sys.path.insert(0, str(ROOT))
    from tests.support.otlp_receiver import SlowCollector

    report = OutageReport("trace collector answering a byte a second", goal_s=COLLECTOR_GOAL_S, tried=True)
    directory.mkdir(parents=True, exist_ok=True)
    db = directory / "sessions.db"
    with SlowCollector() as collector:
        env = {**_environment(directory, db), "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url}
        run = _Run(_popen(["run", "--task", TASK, "--items", "60", "--otel", "--json"], env))
        _finish(run, report, since=time.monotonic())
        exited = datetime.now(UTC)
    if report.hung:
        return report
    if report.exit_code != 0:
        report.problems.append(f"exit {report.exit_code} (expected 0): {run.stderr_text.strip()[-300:]}")
        return report
    session_id = json.loads(run.stdout_text)["session_id"]
    with contextlib.closing(sqlite3.connect(db)) as connection:
        (finished,) = connection.execute("SELECT finished FROM sessions WHERE id = ?", (session_id,)).fetchone()
    report.exit_s = (exited - datetime.fromisoformat(finished).replace(tzinfo=UTC)).total_seconds()
    report.stored_directly = True
    warnings = [line for line in run.stderr_text.splitlines() if "warning" in line]
    if len(warnings) != 1 or "Traceback" in run.stderr_text:
        report.problems.append(f"expected one warning, got: {run.stderr_text.strip()[-400:]}")
    if report.exit_s > COLLECTOR_GOAL_S:
        report.problems.append(f"exited {report.exit_s:.2f} s after the run's end (goal {COLLECTOR_GOAL_S:g} s)")
    report.note = f"exit {report.exit_s:.2f} s after the run's end, {len(warnings)} warning"
    return report


def all_checks(
    directory: Path, cluster: PostgresCluster | None, *, on_report: Callable[[OutageReport], None] | None = None
) -> list[OutageReport]:
    """Every fault in turn, each in its own folder (the server faults are skipped without a cluster)."""
    checks: list[tuple[str, Callable[[Path], OutageReport]]] = [("collector", crawling_collector)]
    if cluster is not None:
        checks = [
            ("resumed", lambda place: frozen_and_resumed(place, cluster)),
            ("for-good", lambda place: frozen_for_good(place, cluster)),
            ("sigterm", lambda place: stopped_while_frozen(place, cluster)),
            ("ctrl-c-twice", lambda place: stopped_while_frozen(place, cluster, signal.SIGINT, twice=True)),
            *checks,
        ]
    reports = run_checks(checks, directory, on_report)
    if cluster is not None:  # and the same server's outages under queue workers
        from reliability.worker_outages import all_checks as worker_checks

        reports.extend(worker_checks(directory / "workers", cluster, on_report=on_report))
    return reports


def run_checks(
    checks: list[tuple[str, Callable[[Path], OutageReport]]],
    directory: Path,
    on_report: Callable[[OutageReport], None] | None,
) -> list[OutageReport]:
    """Each check in its own folder, in turn, each report handed to ``on_report`` as it comes."""
    reports = []
    for name, check in checks:
        report = check(directory / name)
        reports.append(report)
        if on_report is not None:
            on_report(report)
    return reports


# -- helpers -------------------------------------------------------------------------------------------


@dataclass
class _Run:
    process: subprocess.Popen[str]
    session_id: str = ""
    stdout_text: str = ""
    stderr_text: str = ""


def _environment(directory: Path, db: Path | str, wait_s: float | None = None) -> dict[str, str]:
    env = child_env()
    env.update({"WORKBENCH_DB": str(db), "XDG_DATA_HOME": str(directory / "data")})
    env.update({"XDG_CONFIG_HOME": str(directory / "config")})
    if wait_s is not None:
        env["WORKBENCH_STORE_BUSY_TIMEOUT_S"] = str(wait_s)
    return env


def _popen(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        workbench_command(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def _start_run(
    directory: Path, cluster: PostgresCluster, wait_s: float, report: OutageReport
) -> tuple[str, _Run | None]:
    """A fresh database, and a run on it that has stored ``STORED_BEFORE`` events."""
    directory.mkdir(parents=True, exist_ok=True)
    url = cluster.database()
    _sql(url, "SELECT 1")
    subprocess.run(workbench_command("sessions", "--db", url), env=_environment(directory, url), capture_output=True)
    run = _Run(_popen(["run", "--task", TASK, "--items", str(ITEMS), "--model", MODEL, "--json"],
                      _environment(directory, url, wait_s)))  # fmt: skip
    deadline = time.monotonic() + HUNG_AFTER_S
    while time.monotonic() < deadline and run.process.poll() is None:
        rows = _sql(url, "SELECT session_id, count(*) FROM events GROUP BY session_id")
        if rows and rows[0][1] >= STORED_BEFORE:
            run.session_id = rows[0][0]
            report.tried = True
            return url, run
        time.sleep(0.05)
    run.process.kill()
    _out, err = run.process.communicate()
    report.problems.append(f"the run never stored {STORED_BEFORE} events: {err.strip()[-300:]}")
    return url, None


def _finish(run: _Run, report: OutageReport, *, since: float) -> None:
    """Wait for the run's exit (``HUNG_AFTER_S`` at most: then it is hung, and killed)."""
    try:
        run.stdout_text, run.stderr_text = run.process.communicate(timeout=HUNG_AFTER_S)
    except subprocess.TimeoutExpired:
        report.hung = True
        report.problems.append(f"still running {HUNG_AFTER_S:g} s after the fault: killed")
        run.process.kill()
        run.stdout_text, run.stderr_text = run.process.communicate()
        return
    report.exit_s = time.monotonic() - since
    report.exit_code = run.process.returncode


def _judge(directory: Path, url: str, run: _Run, report: OutageReport, *, import_first: bool) -> None:
    """The stored session (after an import of the fallback file) against the run's own JSON, and every arm's
    events there from its first to its ``run_finished``."""
    try:
        shown = json.loads(run.stdout_text)
    except ValueError:
        report.problems.append(f"the run printed no JSON: {run.stdout_text[-200:]!r}")
        report.lost = 1
        return
    session_id = shown["session_id"]
    report.stored_directly = bool(shown.get("stored"))
    if import_first:
        held = _stored_seqs(url, session_id)
        for arm, seqs in _fallback_seqs(directory).items():
            held.setdefault(arm, {}).update(seqs)
        if gaps := _gaps(held, [arm["name"] for arm in shown["arms"]]):
            report.problems.append(f"the database and the fallback file together miss events: {gaps}")
        _import(directory, url, report)
    stored = subprocess.run(
        workbench_command("show", session_id, "--json", "--db", url),
        env=_environment(directory, url), capture_output=True, text=True,
    )  # fmt: skip
    if stored.returncode != 0:
        report.lost = 1
        report.problems.append(f"`show` after the outage: {stored.stderr.strip()[-300:]}")
        return
    if gaps := _gaps(_stored_seqs(url, session_id), [arm["name"] for arm in shown["arms"]]):
        report.lost = 1
        report.problems.append(f"events missing from the stored session: {gaps}")
    if json.loads(stored.stdout) != {**shown, "stored": True, "store_error": None}:
        report.problems.append("the stored session differs from the run's JSON")
    sessions = _sql(url, "SELECT count(*) FROM sessions")[0][0]
    doubled = _sql(url, "SELECT count(*) - count(DISTINCT (arm, seq)) FROM events WHERE session_id = %s", session_id)
    report.recorded_twice = max(0, sessions - 1) + int(doubled[0][0])


def _gaps(seqs: dict[str, dict[int, str]], arms: list[str]) -> list[str]:
    """What keeps each arm's events from running 0, 1, ... to its ``run_finished`` (empty: nothing)."""
    gaps = []
    for arm in arms:
        held = seqs.get(arm, {})
        if not held or sorted(held) != list(range(len(held))):
            gaps.append(f"{arm}: {len(held)} events, not 0..{len(held) - 1}")
        elif held[len(held) - 1] != "run_finished":
            gaps.append(f"{arm}: ends with {held[len(held) - 1]}, not run_finished")
    return gaps


def _stored_seqs(url: str, session_id: str) -> dict[str, dict[int, str]]:
    seqs: dict[str, dict[int, str]] = {}
    for arm, seq, kind in _sql(url, "SELECT arm, seq, kind FROM events WHERE session_id = %s", session_id):
        seqs.setdefault(arm, {})[seq] = kind
    return seqs


def _fallback_seqs(directory: Path) -> dict[str, dict[int, str]]:
    seqs: dict[str, dict[int, str]] = {}
    for path in _fallback_files(directory):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            for arm, seq, _t, kind, _data in record.get("events", []) if record.get("record") == "events" else []:
                seqs.setdefault(arm, {})[seq] = kind
    return seqs


def _import(directory: Path, url: str, report: OutageReport) -> None:
    done = subprocess.run(
        workbench_command("import", "--db", url), env=_environment(directory, url), capture_output=True, text=True
    )
    if done.returncode != 0:
        report.problems.append(f"`workbench import` exited {done.returncode}: {done.stderr.strip()[-300:]}")
    if _fallback_files(directory):
        report.problems.append("a fallback file is still there after the import")


def _fallback_files(directory: Path) -> list[Path]:
    return sorted((directory / "data").glob("*/unsaved/*.jsonl"))


def _session_row(url: str, session_id: str) -> tuple[Any, ...] | None:
    rows = _sql(url, "SELECT status FROM sessions WHERE id = %s", session_id)
    return rows[0] if rows else None


def _sql(url: str, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, connect_timeout=10, autocommit=True) as connection:
        cursor = connection.execute(statement, params or None)
        return list(cursor.fetchall()) if cursor.description else []
