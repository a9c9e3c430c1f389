"""Outages under queue workers: real ``workbench worker`` processes on a queued sweep of ``scripted:paced``
(four comparisons of a provider limited to one at a time, ``[queue.providers.scripted] concurrency = 1``),
a throw-away PostgreSQL cluster holding the store and DBOS's tables, and real signals:

- the server restarted under two workers (``pg_ctl stop -m fast`` / ``-m immediate``, 6 s down, started
  again) while a comparison runs: both workers go on and exit 0, every comparison is recorded once, none ran
  twice (one session per comparison), the limit holds, DBOS says at most one line per worker;
- a worker SIGSTOPped mid-comparison until its peer takes its lease over, then SIGCONTed: it sends no model
  request after the take-over, records nothing and exits 3 with one line; the peer finishes the sweep;
- the server gone for good past a 5 s wait: the worker exits 3 with one line (``exit_s``: from the stop);
- SIGTERM to a worker while every server process is SIGSTOPped: exit 143 (``exit_s``: from the signal,
  goal ``SIGTERM_GOAL_S``).

A report's ``lost`` counts comparisons the sweep did not record, ``recorded_twice`` comparisons recorded
(or run) more than once; a broken limit is a problem. ``tests/test_queue_outages.py`` runs the same checks.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reliability.crash import workbench_command
from reliability.outages import SIGTERM_GOAL_S, OutageReport, _environment, _sql, frozen, run_checks

if TYPE_CHECKING:
    from tests.support.postgres_cluster import PostgresCluster

LEASE_S = 15.0
"""A worker silent this long is taken over; a live one renews every 0.5 s, even on a loaded machine."""
SELECTION = ("--task", "cart/cap-quantity", "--task", "cart/save-category", "--repeat", "2")
PLANNED = 4
LIMITED = "[queue]\nconcurrency = 8\n[queue.providers.scripted]\nconcurrency = 1\n"
"""One comparison of the scripted provider at a time, across every worker."""
DOWN_S = 6.0
"""How long a restarted server stays down."""
SHORT_WAIT_S = 5.0
"""The ``store_busy_timeout_s`` a server gone for good outlasts."""
LONG_WAIT_S = 600.0
"""The wait of the workers that must ride an outage out."""
HUNG_AFTER_S = 600.0
"""A worker still going this long after it should have ended is hung (a bound for a busy machine)."""


class Fleet:
    """Worker processes started here (only these are ever signalled), their output in files."""

    def __init__(self, directory: Path, env: dict[str, str]) -> None:
        self.directory, self.env = directory, env
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, *args: str) -> subprocess.Popen[str]:
        index = len(self.procs)
        proc = subprocess.Popen(
            workbench_command("worker", *args),
            stdout=(self.directory / f"worker{index}.out").open("w"),
            stderr=(self.directory / f"worker{index}.err").open("w"),
            env=self.env,
            text=True,
        )
        self.procs.append(proc)
        return proc

    def err(self, proc: subprocess.Popen[str]) -> str:
        return (self.directory / f"worker{self.procs.index(proc)}.err").read_text()

    def wait(self, proc: subprocess.Popen[str], report: OutageReport, timeout: float = HUNG_AFTER_S) -> int | None:
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            report.hung = True
            report.problems.append(f"worker {proc.pid} still running: {self.err(proc).strip()[-300:]}")
            return None

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGCONT)
                proc.kill()
            proc.wait(timeout=60)


def restarted_under_two_workers(directory: Path, cluster: PostgresCluster, mode: str) -> OutageReport:
    report = OutageReport(f"server restarted (pg_ctl stop -m {mode}, {DOWN_S:g} s down) under two workers")
    with _fleet(directory, cluster, LONG_WAIT_S, report) as (url, fleet):
        workers = [fleet.start("--exit-when-idle", "--concurrency", "2") for _ in range(2)]
        if not _under_way(url, report):
            return report
        cluster.stop_server(mode)
        time.sleep(DOWN_S)
        cluster.restart()
        codes = [fleet.wait(proc, report) for proc in workers]
        if codes != [0, 0]:
            report.problems.append(f"workers exited {codes} (expected 0, 0)")
        report.exit_code = codes[-1]
        _judge_sweep(directory, url, report)
        sessions = _sql(url, "SELECT status FROM sessions")
        if len(sessions) != PLANNED:
            report.recorded_twice += len(sessions) - PLANNED
            report.problems.append(f"{len(sessions)} sessions for {PLANNED} comparisons: one ran twice")
        for proc in workers:
            err = fleet.err(proc)
            if "Traceback" in err or sum("dbos" in line.lower() for line in err.splitlines()) > 1:
                report.problems.append(f"more than one line of DBOS's: {err.strip()[-400:]}")
        waited = [line.rpartition("after ")[2] for proc in workers for line in fleet.err(proc).splitlines()
                  if "answers again after" in line]  # fmt: skip
        report.note = f"both workers exit 0; the database answered again after {', '.join(waited) or '?'}"
    return report


def stalled_worker(directory: Path, cluster: PostgresCluster) -> OutageReport:
    report = OutageReport(f"worker SIGSTOPped past its lease ({LEASE_S:g} s), then resumed")
    with _fleet(directory, cluster, LONG_WAIT_S, report) as (url, fleet):
        stalled = fleet.start("--concurrency", "2")

        def mine() -> list[str]:
            return [sid for sid, pid in _running(url) if pid == stalled.pid]

        found = None if report.problems else _wait_for(mine, report, "the first worker to run a comparison")
        if not found:
            return report
        victim = found[0]
        peer = fleet.start("--exit-when-idle", "--concurrency", "2")
        report.tried = True
        os.kill(stalled.pid, signal.SIGSTOP)
        try:
            taken = _wait_for(lambda: "re-queued" in fleet.err(peer), report, "the peer to take the lease over")
        finally:
            os.kill(stalled.pid, signal.SIGCONT)
        if not taken:
            return report
        resumed = time.monotonic()
        report.exit_code = fleet.wait(stalled, report)
        report.exit_s = time.monotonic() - resumed
        if report.exit_code != 3:
            report.problems.append(f"the stalled worker exited {report.exit_code} (expected 3)")
        err = fleet.err(stalled)
        if "lease was taken over" not in err or "Traceback" in err:
            report.problems.append(f"the stalled worker said: {err.strip()[-400:]}")
        if fleet.wait(peer, report) != 0:
            report.problems.append(f"the peer did not finish the sweep: {fleet.err(peer).strip()[-300:]}")
        members = _judge_sweep(directory, url, report)
        if victim in members:
            report.recorded_twice += 1
            report.problems.append("the stalled attempt was recorded")
        late = _answered_after_take_over(url, victim, peer.pid)
        if late:
            report.problems.append(f"the stalled worker had {late} requests answered that it sent after the take-over")
        report.note = f"stalled worker exits {report.exit_code} {report.exit_s:.1f} s after SIGCONT; peer finishes"
    return report


def gone_for_good(directory: Path, cluster: PostgresCluster) -> OutageReport:
    report = OutageReport(f"server gone for good under a worker (wait {SHORT_WAIT_S:g} s)")
    with _fleet(directory, cluster, SHORT_WAIT_S, report) as (url, fleet):
        proc = fleet.start("--concurrency", "2")
        if not _under_way(url, report):
            return report
        cluster.stop_server("immediate")
        stopped = time.monotonic()
        report.exit_code = fleet.wait(proc, report)
        report.exit_s = time.monotonic() - stopped
        err = fleet.err(proc).strip()
        last = err.splitlines()[-1] if err else ""
        if report.exit_code != 3:
            report.problems.append(f"exit {report.exit_code} (expected 3): {err[-300:]}")
        if "Traceback" in err or len(err.splitlines()) > 5 or "stopped:" not in last:
            report.problems.append(f"expected one closing line: {err[-400:]}")
        report.note = f"exit {report.exit_code} {report.exit_s:.1f} s after the stop (wait {SHORT_WAIT_S:g} s)"
    return report


def sigterm_while_frozen(directory: Path, cluster: PostgresCluster) -> OutageReport:
    report = OutageReport("SIGTERM to a worker while every server process is SIGSTOPped", goal_s=SIGTERM_GOAL_S)
    with _fleet(directory, cluster, LONG_WAIT_S, report) as (url, fleet):
        proc = fleet.start("--concurrency", "2")
        if not _under_way(url, report):
            return report
        with frozen(cluster):
            time.sleep(3.0)  # the worker's calls now hang
            proc.send_signal(signal.SIGTERM)
            signalled = time.monotonic()
            report.exit_code = fleet.wait(proc, report, timeout=60)
            report.exit_s = time.monotonic() - signalled
        if report.exit_code != 143:
            report.problems.append(f"exit {report.exit_code} (expected 143): {fleet.err(proc).strip()[-300:]}")
        if "Traceback" in fleet.err(proc):
            report.problems.append(f"a traceback: {fleet.err(proc).strip()[-300:]}")
        report.note = f"exit {report.exit_code} {report.exit_s:.1f} s after SIGTERM"
    return report


def all_checks(
    directory: Path, cluster: PostgresCluster, *, on_report: Callable[[OutageReport], None] | None = None
) -> list[OutageReport]:
    checks: list[tuple[str, Callable[[Path], OutageReport]]] = [
        ("worker-restart-fast", lambda place: restarted_under_two_workers(place, cluster, "fast")),
        ("worker-restart-immediate", lambda place: restarted_under_two_workers(place, cluster, "immediate")),
        ("worker-stalled", lambda place: stalled_worker(place, cluster)),
        ("worker-sigterm", lambda place: sigterm_while_frozen(place, cluster)),
        ("worker-gone", lambda place: gone_for_good(place, cluster)),
    ]
    return run_checks(checks, directory, on_report)


# -- helpers -------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _fleet(
    directory: Path, cluster: PostgresCluster, wait_s: float, report: OutageReport
) -> Iterator[tuple[str, Fleet]]:
    """A fresh database with the sweep queued on it, and a fleet to start workers with (all killed at the
    end; the server started again if a check stopped it). Nothing is yielded when the sweep cannot queue."""
    directory.mkdir(parents=True, exist_ok=True)
    url = cluster.database()
    env = _environment(directory, url, wait_s)
    config = directory / "config.toml"
    config.write_text(LIMITED)
    env.update({"WORKBENCH_CONFIG": str(config), "WORKBENCH_QUEUE__HEARTBEAT_S": "0.5"})
    env["WORKBENCH_QUEUE__STALE_AFTER_S"] = str(LEASE_S)
    queued = subprocess.run(
        workbench_command("bench", "--queue", *SELECTION, "--model", "scripted:paced"),
        env=env, capture_output=True, text=True, timeout=HUNG_AFTER_S,
    )  # fmt: skip
    if queued.returncode != 0:
        report.problems.append(f"bench --queue failed: {queued.stderr.strip()[-300:]}")
    fleet = Fleet(directory, env)
    try:
        yield url, fleet
    finally:
        fleet.stop_all()
        if not (cluster.data / "postmaster.pid").exists():
            cluster.restart()


def _under_way(url: str, report: OutageReport) -> bool:
    """Wait for a comparison to run (the fault is then tried); False if none does, or none was queued."""
    if report.problems or not _wait_for(lambda: _running(url), report, "a comparison to run"):
        return False
    report.tried = True
    return True


def _wait_for(condition: Callable[[], Any], report: OutageReport, what: str) -> Any:
    deadline = time.monotonic() + HUNG_AFTER_S
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    report.problems.append(f"timed out waiting for {what}")
    return None


def _running(url: str) -> list[tuple[Any, ...]]:
    return _safe_sql(url, "SELECT id, pid FROM sessions WHERE status = 'running'")


def _safe_sql(url: str, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    try:
        return _sql(url, statement, *params)
    except Exception:  # the server is down or restarting: nothing to see yet
        return []


def _judge_sweep(directory: Path, url: str, report: OutageReport) -> set[str]:
    """Every comparison recorded once and completed, and no two of the limited provider's at once; the
    recorded sessions' ids."""
    (sweep_id,) = [row[0] for row in _sql(url, "SELECT id FROM bench_sweeps")]
    exported = subprocess.run(
        workbench_command("export", sweep_id, "--format", "json", "--db", url),
        env=_environment(directory, url), capture_output=True, text=True, timeout=HUNG_AFTER_S,
    )  # fmt: skip
    if exported.returncode != 0:
        report.problems.append(f"export failed: {exported.stderr.strip()[-300:]}")
        return set()
    runs = json.loads(exported.stdout)["runs"]
    cases = [(run["task"], run["items"], run["seed"], run["repeat"]) for run in runs]
    report.lost = PLANNED - len(set(cases))
    report.recorded_twice += len(cases) - len(set(cases))
    members = {run["session_id"] for run in runs}
    times = {
        sid: (created, finished) for sid, created, finished in _sql(url, "SELECT id, created, finished FROM sessions")
    }
    spans: list[tuple[datetime, datetime]] = sorted(times[sid] for sid in members if sid in times)
    for (_, finished), (started, _) in itertools.pairwise(spans):
        if finished is None or started is None or finished > started:
            report.problems.append("two comparisons of a provider limited to 1 ran at once")
            break
    return members


def _answered_after_take_over(url: str, victim: str, peer_pid: int) -> int:
    """Requests of the stalled attempt answered beyond those it had sent before the peer's attempt started."""
    rows = _sql(url, "SELECT created FROM sessions WHERE pid = %s ORDER BY created LIMIT 1", peer_pid)
    (created,) = _sql(url, "SELECT created FROM sessions WHERE id = %s", victim)[0]
    if not rows:
        return 0
    taken_over = rows[0][0]
    events = _sql(url, "SELECT kind, t FROM events WHERE session_id = %s", victim)
    sent_before = sum(
        1 for kind, t in events if kind == "request_started" and created.timestamp() + t < taken_over.timestamp()
    )
    answered = sum(1 for kind, _ in events if kind == "usage")
    return max(0, answered - sent_before)
