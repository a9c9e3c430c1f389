"""Queued sweeps through outages, on a real PostgreSQL cluster of the test's own, with real worker processes
and real signals: a server restarted (``pg_ctl stop -m fast`` / ``-m immediate``, then started again) under
two workers, a worker stalled (SIGSTOP) past its lease and resumed, a server that never comes back, and a
SIGTERM while every server process is SIGSTOPped.

What is asserted are properties, not timings: each comparison recorded exactly once, the provider's limit
of one comparison at a time never exceeded (by the sessions' start and end times), the exit codes and the
one-line messages. Windows are generous for a loaded 2-core machine.
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

import pytest
from cli_process import WORKBENCH, workbench
from postgres_cluster import PostgresCluster, postgres_bindir

WAIT_S = 600.0
LEASE_S = 15.0
"""A worker silent this long is taken over; a live one renews every 0.5 s, even on a loaded machine."""
SELECTION = ("--task", "cart/cap-quantity", "--task", "cart/save-category", "--repeat", "2")
SELECTION += ("--model", "scripted:paced")
LIMITED = "[queue]\nconcurrency = 8\n[queue.providers.scripted]\nconcurrency = 1\n"
"""One comparison of the scripted provider at a time, across every worker."""


@pytest.fixture
def cluster(postgres_url: str) -> Iterator[PostgresCluster]:
    """A cluster of the test's own (its server is stopped, restarted and frozen); thawed before it is deleted."""
    bindir = postgres_bindir()
    assert bindir is not None
    with PostgresCluster(bindir) as own:
        try:
            yield own
        finally:
            signal_server(own, signal.SIGCONT)


def server_pids(cluster: PostgresCluster) -> list[int]:
    """The postmaster and every backend of this cluster (children of its postmaster)."""
    pid_file = cluster.data / "postmaster.pid"
    if not pid_file.exists():
        return []
    postmaster = int(pid_file.read_text().split()[0])
    pids = [postmaster]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == postmaster:
                pids.append(int(entry.name))
    return pids


def signal_server(cluster: PostgresCluster, signum: int) -> None:
    for pid in server_pids(cluster):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)


def wait_for(condition: Callable[[], object], *, what: str, timeout: float = WAIT_S) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def query(url: str, sql: str, params: dict | None = None) -> list[tuple]:
    from sqlalchemy import create_engine, text

    driver_url = url.replace("postgresql://", "postgresql+psycopg://", 1)
    engine = create_engine(driver_url, connect_args={"connect_timeout": 5})
    try:
        with engine.connect() as connection:
            return [tuple(row) for row in connection.execute(text(sql), params or {}).all()]
    except Exception:  # the server is down or frozen: nothing to see yet
        return []
    finally:
        engine.dispose()


class Fleet:
    """Worker processes this test started; only these are ever signalled."""

    def __init__(self, tmp_path: Path, url: str, env: dict[str, str]) -> None:
        self.tmp_path, self.url, self.env = tmp_path, url, env
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, *args: str) -> subprocess.Popen[str]:
        index = len(self.procs)
        proc = subprocess.Popen(
            [WORKBENCH, "worker", *args],
            stdout=(self.tmp_path / f"worker{index}.out").open("w"),
            stderr=(self.tmp_path / f"worker{index}.err").open("w"),
            env={**os.environ, "WORKBENCH_DB": self.url, **self.env},
            text=True,
        )
        self.procs.append(proc)
        return proc

    def err(self, proc: subprocess.Popen[str]) -> str:
        return (self.tmp_path / f"worker{self.procs.index(proc)}.err").read_text()

    def out(self, proc: subprocess.Popen[str]) -> str:
        return (self.tmp_path / f"worker{self.procs.index(proc)}.out").read_text()

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)
                proc.kill()
            proc.wait(timeout=60)


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Callable[[str, dict[str, str]], Fleet]]:
    made: list[Fleet] = []

    def make(url: str, env: dict[str, str]) -> Fleet:
        made.append(Fleet(tmp_path, url, env))
        return made[-1]

    yield make
    for group in made:
        group.stop_all()


def environment(tmp_path: Path, *, busy_timeout_s: float) -> dict[str, str]:
    config = tmp_path / "config.toml"
    config.write_text(LIMITED)
    return {
        "WORKBENCH_CONFIG": str(config),
        "WORKBENCH_QUEUE__HEARTBEAT_S": "0.5",
        "WORKBENCH_QUEUE__STALE_AFTER_S": str(LEASE_S),
        "WORKBENCH_STORE_BUSY_TIMEOUT_S": str(busy_timeout_s),
    }


def enqueue(url: str, env: dict[str, str]) -> str:
    return workbench("bench", "--queue", *SELECTION, db=url, env=env).split(":", 1)[0].strip()


def running(url: str) -> list[tuple]:
    return query(url, "SELECT id, pid FROM sessions WHERE status = 'running'")


def spans(url: str, session_ids: set[str]) -> list[tuple[datetime, datetime]]:
    rows = query(url, "SELECT id, created, finished FROM sessions")
    return sorted((created, finished) for sid, created, finished in rows if sid in session_ids)


def assert_recorded_once_within_the_limit(url: str, sweep_id: str) -> dict:
    report = json.loads(workbench("export", sweep_id, "--format", "json", db=url))
    cases = [(run["task"], run["items"], run["seed"], run["repeat"]) for run in report["runs"]]
    assert report["status"] == "completed"
    assert len(cases) == len(set(cases)) == report["planned"] == 4, "every comparison recorded exactly once"
    members = spans(url, {run["session_id"] for run in report["runs"]})
    assert len(members) == 4
    for (_, finished), (started, _) in itertools.pairwise(members):
        assert finished <= started, "two comparisons of a provider limited to 1 ran at once"
    return report


# -- a restart under two workers ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_two_workers_ride_out_a_server_restart(tmp_path: Path, cluster: PostgresCluster, fleet, mode: str) -> None:
    """``pg_ctl stop -m MODE``, 6 s down, started again, while a comparison runs: both workers survive and
    finish the sweep, every comparison is recorded once, the limit of one at a time holds, and none was
    paid for twice (one session per comparison). DBOS says so in at most one line per worker."""
    url = cluster.database()
    env = environment(tmp_path, busy_timeout_s=WAIT_S)
    sweep_id = enqueue(url, env)
    group = fleet(url, env)
    workers = [group.start("--exit-when-idle", "--concurrency", "2") for _ in range(2)]
    wait_for(lambda: running(url), what="a comparison to run")

    cluster.stop_server(mode)
    time.sleep(6.0)
    cluster.restart()
    for proc in workers:
        assert proc.wait(timeout=WAIT_S) == 0, group.err(proc)

    assert_recorded_once_within_the_limit(url, sweep_id)
    sessions = json.loads(workbench("sessions", "--json", db=url))
    assert len(sessions) == 4 and {s["status"] for s in sessions} == {"completed"}, "nothing ran twice"
    for proc in workers:
        err = group.err(proc)
        assert "Traceback" not in err, err
        assert sum("dbos" in line.lower() for line in err.splitlines()) <= 1, err
    said = "".join(group.err(proc) for proc in workers)
    assert "does not answer" in said and "answers again" in said, said


# -- a stalled worker ---------------------------------------------------------------------------------


def test_a_worker_stalled_past_its_lease_is_taken_over_once_and_stops_when_it_resumes(
    tmp_path: Path, cluster: PostgresCluster, fleet
) -> None:
    """SIGSTOP a worker running a comparison, until its peer takes its lease over; SIGCONT it. The stalled
    worker sends no model request after the take-over, records nothing, and exits 3 with one line; the peer
    finishes the sweep: each comparison recorded once, by one worker, never two at once."""
    url = cluster.database()
    env = environment(tmp_path, busy_timeout_s=WAIT_S)
    sweep_id = enqueue(url, env)
    group = fleet(url, env)
    stalled = group.start("--concurrency", "2")
    wait_for(lambda: any(pid == stalled.pid for _, pid in running(url)), what="the first worker to run one")
    peer = group.start("--exit-when-idle", "--concurrency", "2")
    (victim,) = [sid for sid, pid in running(url) if pid == stalled.pid]

    os.kill(stalled.pid, signal.SIGSTOP)
    try:
        wait_for(lambda: "re-queued" in group.err(peer), what="the peer to take the stalled worker over")
    finally:
        os.kill(stalled.pid, signal.SIGCONT)
    assert stalled.wait(timeout=WAIT_S) == 3, group.err(stalled)
    assert peer.wait(timeout=WAIT_S) == 0, group.err(peer)

    report = assert_recorded_once_within_the_limit(url, sweep_id)
    assert victim not in {run["session_id"] for run in report["runs"]}, "the stalled attempt is not recorded"
    err = group.err(stalled)
    assert "lease was taken over" in err and "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith("worker ") and "stopped:" in err.strip().splitlines()[-1]
    # The stalled attempt sent no request after the take-over: each request it started before the stall may
    # have been answered, none after.
    (taken_over,) = query(url, "SELECT created FROM sessions WHERE id != :v AND pid = :p ORDER BY created LIMIT 1",
                          {"v": victim, "p": peer.pid})  # fmt: skip
    (created,) = query(url, "SELECT created FROM sessions WHERE id = :v", {"v": victim})[0]
    events = query(url, "SELECT kind, t FROM events WHERE session_id = :v", {"v": victim})
    started_before = sum(
        1 for kind, t in events if kind == "request_started" and (created.timestamp() + t) < taken_over[0].timestamp()
    )
    answered = sum(1 for kind, _ in events if kind == "usage")
    assert answered <= started_before, "the stalled worker had a request answered that it sent after the take-over"


# -- a server that never comes back, and one that hangs ------------------------------------------------


def test_a_worker_whose_server_never_comes_back_exits_3_with_one_line(
    tmp_path: Path, cluster: PostgresCluster, fleet
) -> None:
    url = cluster.database()
    env = environment(tmp_path, busy_timeout_s=5.0)
    enqueue(url, env)
    group = fleet(url, env)
    proc = group.start("--concurrency", "2")
    wait_for(lambda: running(url), what="a comparison to run")
    cluster.stop_server("immediate")
    stopped = time.monotonic()
    assert proc.wait(timeout=WAIT_S) == 3, group.err(proc)
    took = time.monotonic() - stopped
    err = group.err(proc)
    last = err.strip().splitlines()[-1]
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 5, err
    assert ("stopped:" in last and "could not be reached for 5 s" in last) or "did not answer" in last, err
    print(f"exit 3 after {took:.1f} s (wait 5 s)")


def test_sigterm_ends_a_worker_whose_server_is_frozen(tmp_path: Path, cluster: PostgresCluster, fleet) -> None:
    """Every server process SIGSTOPped (a hung server accepts connections and never answers), then SIGTERM
    to the worker: it exits 143 within a few seconds, without a traceback."""
    url = cluster.database()
    env = environment(tmp_path, busy_timeout_s=WAIT_S)
    enqueue(url, env)
    group = fleet(url, env)
    proc = group.start("--concurrency", "2")
    wait_for(lambda: running(url), what="a comparison to run")
    signal_server(cluster, signal.SIGSTOP)
    time.sleep(3.0)  # the worker's calls now hang
    proc.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    assert proc.wait(timeout=30) == 143, group.err(proc)  # it takes about 3 s; 30 on a loaded machine
    assert "Traceback" not in group.err(proc)
    print(f"exit 143 after {time.monotonic() - signalled:.1f} s")
