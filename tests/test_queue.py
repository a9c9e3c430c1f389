"""Queued sweeps: ``bench --queue`` enqueues, ``workbench worker`` processes run them, a killed worker's comparisons
are recovered by a live one, and the report equals the in-process sweep's.

Everything DBOS runs in real subprocesses (DBOS is one per process); the system database is a real PostgreSQL
server (the ``postgres_url`` fixture) or the embedded SQLite file beside a SQLite store.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.cli_process import WORKBENCH, workbench, workbench_process

FAST_HEARTBEATS = {"WORKBENCH_QUEUE__HEARTBEAT_S": "0.5", "WORKBENCH_QUEUE__STALE_AFTER_S": "8"}
"""A killed worker is taken for dead after 8 s of silence (a live one beats every 0.5 s, even under load)."""
WAIT_S = 600.0
"""Generous bound for conditions polled on a busy shared machine."""


def wait_for(condition: Callable[[], object], *, what: str, timeout: float = WAIT_S) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class Workers:
    """``workbench worker`` processes this test started (only these are ever signalled)."""

    def __init__(self, tmp_path: Path, db: Path | str, env: dict[str, str]) -> None:
        self.tmp_path, self.db, self.env = tmp_path, db, env
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, *args: str) -> subprocess.Popen[str]:
        index = len(self.procs)
        environment = {**os.environ, "WORKBENCH_DB": str(self.db), **self.env}
        proc = subprocess.Popen(
            [WORKBENCH, "worker", *args],
            stdout=(self.tmp_path / f"worker{index}.out").open("w"),
            stderr=(self.tmp_path / f"worker{index}.err").open("w"),
            env=environment,
            text=True,
        )
        self.procs.append(proc)
        return proc

    def output(self, proc: subprocess.Popen[str]) -> tuple[str, str]:
        index = self.procs.index(proc)
        return (self.tmp_path / f"worker{index}.out").read_text(), (self.tmp_path / f"worker{index}.err").read_text()

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=60)


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Callable[[Path, dict[str, str]], Workers]]:
    started: list[Workers] = []

    def make(db: Path | str, env: dict[str, str]) -> Workers:
        group = Workers(tmp_path, db, env)
        started.append(group)
        return group

    yield make
    for group in started:
        group.stop_all()


def running_sessions_of(db: Path | str, pid: int) -> int:
    """Sessions process ``pid`` is writing now, in a SQLite file or a PostgreSQL database."""
    from sqlalchemy import create_engine, text

    url = str(db).replace("postgresql://", "postgresql+psycopg://", 1) if "://" in str(db) else f"sqlite:///{db}"
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            query = text("SELECT count(*) FROM sessions WHERE pid = :pid AND status = 'running'")
            return connection.execute(query, {"pid": pid}).scalar_one()
    finally:
        engine.dispose()


def report_rows(report: dict) -> list[tuple]:
    """What a report says about each run (not its session ids, created time or wall times)."""
    rows = []
    for run in report["runs"]:
        case = (run["tier"], run["task"], run["items"], run["seed"], run["repeat"], run["model"])
        for name, arm in run["arms"].items():
            rows.append(
                (*case, name, arm["status"], arm["passed"], arm["requests"], arm["input_tokens"],
                 arm["output_tokens"], arm["tool_calls"], arm["app_calls"], arm["cost_usd"])
            )  # fmt: skip
    return sorted(rows)


def queued_id(stdout: str) -> str:
    return stdout.split(":", 1)[0].strip()


# -- enqueueing ------------------------------------------------------------------------------------


def test_bad_input_to_bench_queue_is_one_line_and_enqueues_nothing(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    for args, said in (
        (("--tier", "nope"), "nope"),
        (("--task", "cart/no-such-task"), "cart/no-such-task"),
        (("--model", "no-such-model"), "no-such-model"),
        (("--resume",), "--resume"),
        (("--out", str(tmp_path / "r.md")), "--out"),
    ):
        done = workbench_process("bench", "--queue", "--app", "cart", *args, db=db)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("workbench: error:") and said in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert json.loads(workbench("bench", "--list", "--json", db=db)) == []


def test_enqueueing_twice_never_duplicates_a_comparison(tmp_path: Path, postgres_url: str) -> None:
    """The same sweep enqueued again (as after an enqueue cut short) finds its comparisons by workflow id."""
    code = f"""
import csv
import io
import itertools
import json
from workbench import open_store
from workbench.bench import plan
from workbench.config import load_settings
from workbench.queue.enqueue import enqueue_sweep
from workbench.queue.progress import QueueReader
from workbench.runner import RunRequest

store = open_store({str(tmp_path / "s.db")!r})
settings = load_settings()
cases = plan("everyday", app="kanban")
first = enqueue_sweep(store, cases, request=RunRequest(model="scripted"), settings=settings, options={{}}, flags={{}})
again = enqueue_sweep(store, cases, request=RunRequest(model="scripted"), settings=settings, options={{}}, flags={{}},
                      sweep_id=first.sweep_id)
reader = QueueReader(first.system_database)
rows = reader.rows([first.sweep_id])
print(json.dumps({{"planned": first.planned, "again": again.planned, "rows": len(rows),
                  "ids": len({{row[0] for row in rows}}), "states": sorted({{row[1] for row in rows}})}}))
"""
    env = {**os.environ, "WORKBENCH_QUEUE__SYSTEM_DATABASE": postgres_url}
    done = subprocess.run(
        [str(Path(WORKBENCH).parent / "python"), "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["planned"] == found["again"] == found["rows"] == found["ids"] > 0
    assert found["states"] == ["ENQUEUED"]


def queued_rows(url: str) -> list[tuple[str, str]]:
    """(workflow id, status) of every comparison DBOS holds in a PostgreSQL database."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as connection:
            query = text("SELECT workflow_uuid, status FROM dbos.workflow_status WHERE name = 'workbench.comparison'")
            return [tuple(row) for row in connection.execute(query).all()]  # type: ignore[misc]
    except Exception:  # no DBOS tables yet
        return []
    finally:
        engine.dispose()


def test_an_interrupted_enqueue_is_finished_by_resume_and_every_comparison_is_queued_once(
    tmp_path: Path, postgres_url: str
) -> None:
    """Ctrl+C (a real SIGINT) while `bench --queue` enqueues a large sweep: it stops between two comparisons,
    names the sweep and prints the command that queues the rest; that command enqueues exactly what is
    missing, a second run adds nothing, and every place of the sweep has exactly one workflow."""
    environment = {**os.environ, "WORKBENCH_DB": postgres_url}
    enqueue = subprocess.Popen(
        [WORKBENCH, "bench", "--queue", "--tier", "all", "--repeat", "20"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment,
    )  # fmt: skip
    try:
        wait_for(lambda: len(queued_rows(postgres_url)) >= 20 or enqueue.poll() is not None, what="enqueueing")
        enqueue.send_signal(signal.SIGINT)
        out, err = enqueue.communicate(timeout=WAIT_S)
    finally:
        if enqueue.poll() is None:
            enqueue.kill()
            enqueue.wait()
    assert enqueue.returncode == 130, (out, err)
    assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    first = len(queued_rows(postgres_url))
    sweep_id = err.split("sweep ", 1)[1].split()[0]
    planned = 87 * 20
    assert f"has {first} of {planned} comparisons queued" in err and 20 <= first < planned, err
    command = err.split("queue the rest with: ", 1)[1].strip().split()
    assert command[:5] == ["workbench", "bench", "--queue", "--resume", sweep_id], command

    listed = workbench("bench", "--list", db=postgres_url)
    assert f"{sweep_id}: {first} of {planned} comparisons enqueued" in listed and "--resume" in listed

    resumed = json.loads(workbench(*command[1:], "--json", db=postgres_url))
    assert (resumed["planned"], resumed["added"]) == (planned, planned - first)
    again = json.loads(workbench(*command[1:], "--json", db=postgres_url))
    assert (again["planned"], again["added"]) == (planned, 0)

    rows = queued_rows(postgres_url)
    positions = sorted(int(workflow_id.split("/")[1].split("-")[0]) for workflow_id, _ in rows)
    assert positions == list(range(planned)), "every comparison enqueued exactly once"
    assert {workflow_id.split("/")[0] for workflow_id, _ in rows} == {sweep_id}
    assert {status for _, status in rows} == {"ENQUEUED"}
    assert f"{sweep_id}: {planned} planned · {planned} queued" in workbench("bench", "--list", db=postgres_url)


# -- recording (no DBOS) -------------------------------------------------------------------------------


async def test_a_partial_queued_sweep_exports_marked_as_such_and_each_place_is_recorded_once(db_path: Path) -> None:
    """A queued sweep with 1 of 3 comparisons finished exports as running in every format; recording a second
    finished run at the same place (a recovered comparison's second attempt) changes nothing."""
    from workbench.bench import BenchCase, RunResult, SweepStore, load_sweep, render
    from workbench.bench.manifest import QUEUED
    from workbench.runner import ComparisonRun, RunRequest, prepare
    from workbench.store import Store

    store = Store(db_path)
    log = SweepStore(store)
    log.start("sweep-0000beef", "scripted", 3, {"queued": True}, status=QUEUED)
    case = BenchCase("everyday", "cart/remove-expensive", 122, 0)
    results = []
    for _ in range(2):
        setup = prepare(RunRequest(model="scripted", task=case.task, items=case.items, seed=case.seed))
        results.append(RunResult.from_comparison(case, await ComparisonRun(setup, store).result()))
    assert log.record_once("sweep-0000beef", results[0], 0) is True
    assert log.record_once("sweep-0000beef", results[1], 0) is False
    assert not log.complete_if_done("sweep-0000beef")

    report = load_sweep(store, "sweep-0000beef")
    assert report.status == "running" and report.finished == 1 and report.runs[0].session_id == results[0].session_id
    assert log.sweep("sweep-0000beef").finished_runs == 1
    assert json.loads(render(report, "json"))["status"] == "running"
    assert "1 of 3 runs (running)" in render(report, "md")
    assert "1 of 3 runs (running)" in render(report, "html")
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert rows and {row["sweep_status"] for row in rows} == {"running"}


# -- running ----------------------------------------------------------------------------------------


def test_a_worker_runs_a_queued_sweep_on_the_embedded_queue(tmp_path: Path, workers) -> None:
    """SQLite store, DBOS on the SQLite file beside it: one worker, one line per comparison, a full report."""
    db = tmp_path / "s.db"
    queued = workbench("bench", "--queue", "--tier", "everyday", "--app", "chatroom", db=db)
    sweep_id = queued_id(queued)
    assert (tmp_path / "s.db.dbos.sqlite").exists()
    listed = json.loads(workbench("bench", "--list", "--json", db=db))
    assert listed[0]["sweep_id"] == sweep_id and listed[0]["status"] == "queued" and listed[0]["finished"] == 0
    partial = json.loads(workbench("export", sweep_id, "--format", "json", db=db))
    assert partial["status"] == "running" and partial["finished"] == 0

    group = workers(db, {})
    proc = group.start("--exit-when-idle", "--concurrency", "2")
    assert proc.wait(timeout=WAIT_S) == 0
    out, err = group.output(proc)
    lines = out.strip().splitlines()
    assert len(lines) == listed[0]["planned"] and all(line.startswith(sweep_id) for line in lines)
    assert all("completed" in line for line in lines), out
    assert "Traceback" not in err and "DBOS" not in err

    report = json.loads(workbench("export", sweep_id, "--format", "json", db=db))
    assert report["status"] == "completed" and report["finished"] == report["planned"] == len(lines)
    assert json.loads(workbench("bench", "--list", "--json", db=db))[0]["status"] == "completed"


def test_a_killed_worker_is_recovered_by_another_and_the_report_equals_the_in_process_one(
    tmp_path: Path, postgres_url: str, workers
) -> None:
    """The session store and DBOS on one PostgreSQL database; 3 workers on a queued everyday sweep of
    scripted:paced, one SIGKILLed while it runs comparisons. A live worker re-queues them, every comparison is
    stored exactly once in the report, and the report's rows equal those of the same sweep run in-process.
    The killed attempts' sessions read as interrupted."""
    db = postgres_url
    env = dict(FAST_HEARTBEATS)
    selection = ("--tier", "everyday", "--app", "cart", "--model", "scripted:paced")
    sweep_id = queued_id(workbench("bench", "--queue", *selection, db=db, env=env))

    group = workers(db, env)
    victim = group.start("--concurrency", "2")
    survivors = [group.start("--exit-when-idle", "--concurrency", "2") for _ in range(2)]
    wait_for(lambda: running_sessions_of(db, victim.pid) > 0, what="the victim to run a comparison")
    victim.send_signal(signal.SIGKILL)
    assert victim.wait(timeout=60) == -signal.SIGKILL
    for proc in survivors:
        assert proc.wait(timeout=WAIT_S) == 0, group.output(proc)

    recovered = "".join(group.output(proc)[1] for proc in survivors)
    assert "went silent" in recovered and "re-queued" in recovered, recovered
    queued_report = json.loads(workbench("export", sweep_id, "--format", "json", db=db))
    cases = [(run["task"], run["items"], run["seed"], run["repeat"]) for run in queued_report["runs"]]
    assert len(cases) == len(set(cases)) == queued_report["planned"], "every comparison exactly once"
    assert queued_report["status"] == "completed"
    progress = json.loads(workbench("bench", "--list", "--json", db=db, env=env))[0]["queue"]
    assert (progress["finished"], progress["queued"], progress["running"]) == (progress["planned"], 0, 0)
    assert len(progress["workers"]) >= 2
    assert {worker["state"] for worker in progress["workers"].values()} <= {"stopped", "dead"}
    assert sum(worker.get("finished", 0) for worker in progress["workers"].values()) == progress["planned"]

    killed = json.loads(workbench("sessions", "--json", db=db))
    abandoned = {info["session_id"] for info in killed if info["status"] == "interrupted"}
    assert len(abandoned) >= 1
    assert abandoned.isdisjoint({run["session_id"] for run in queued_report["runs"]})

    in_process = json.loads(workbench("bench", *selection, "--concurrency", "4", "--json", db=tmp_path / "ref.db"))
    assert report_rows(queued_report) == report_rows(in_process)


def test_a_stopped_worker_puts_its_comparisons_back_and_exits_143(tmp_path: Path, postgres_url: str, workers) -> None:
    """SIGTERM: the running comparisons are cancelled (saved as cancelled) and re-queued; another worker
    finishes the sweep, and the report has every comparison once."""
    db = tmp_path / "s.db"
    env = {"WORKBENCH_QUEUE__SYSTEM_DATABASE": postgres_url, **FAST_HEARTBEATS}
    four = ("--task", "kanban/archive-done", "--task", "kanban/label-overdue", "--items", "60")
    sweep_id = queued_id(
        workbench("bench", "--queue", *four, "--repeat", "2", "--model", "scripted:paced", db=db, env=env)
    )
    group = workers(db, env)
    first = group.start("--concurrency", "2")
    wait_for(lambda: running_sessions_of(db, first.pid) > 0, what="the worker to run a comparison")
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=WAIT_S) == 143
    _, err = group.output(first)
    assert "stopped" in err and "Traceback" not in err

    second = group.start("--exit-when-idle", "--concurrency", "3")
    assert second.wait(timeout=WAIT_S) == 0, group.output(second)
    report = json.loads(workbench("export", sweep_id, "--format", "json", db=db))
    cases = [(run["task"], run["items"], run["seed"], run["repeat"]) for run in report["runs"]]
    assert len(cases) == len(set(cases)) == report["planned"] and report["status"] == "completed"
    statuses = {info["status"] for info in json.loads(workbench("sessions", "--json", db=db))}
    assert "cancelled" in statuses


# -- limits ------------------------------------------------------------------------------------------


def test_a_provider_limit_holds_across_workers(tmp_path: Path, workers) -> None:
    """[queue.providers.scripted] concurrency = 1: two workers of two slots each never run two of its
    comparisons at once (no two sessions overlap), and its rate limit is the queue's, in the database."""
    import sqlite3

    config = tmp_path / "config.toml"
    config.write_text(
        "[queue]\nconcurrency = 8\n[queue.providers.scripted]\nconcurrency = 1\nlimit = 60\nperiod_s = 30\n"
    )
    db = tmp_path / "s.db"
    env = {"WORKBENCH_CONFIG": str(config), **FAST_HEARTBEATS}
    selection = ("--task", "cart/cap-quantity", "--task", "cart/save-category", "--repeat", "2")
    queued = workbench("bench", "--queue", *selection, "--model", "scripted:paced", db=db, env=env)
    assert "on workbench-scripted (4)" in queued

    group = workers(db, env)
    procs = [group.start("--exit-when-idle", "--concurrency", "2") for _ in range(2)]
    for proc in procs:
        assert proc.wait(timeout=WAIT_S) == 0, group.output(proc)

    with sqlite3.connect(db) as connection:
        spans = sorted(connection.execute("SELECT created, finished FROM sessions").fetchall())
    assert len(spans) == 4
    for (_, finished), (started, _) in itertools.pairwise(spans):
        assert finished <= started, "two comparisons of a provider limited to 1 ran at once"
    with sqlite3.connect(tmp_path / "s.db.dbos.sqlite") as connection:
        limits = connection.execute(
            "SELECT concurrency, rate_limit_max, rate_limit_period_sec FROM queues WHERE name = 'workbench-scripted'"
        ).fetchone()
        default = connection.execute("SELECT concurrency FROM queues WHERE name = 'workbench'").fetchone()
    assert limits == (1, 60, 30.0) and default == (8,)


def test_a_workers_claim_on_the_embedded_queue_holds_the_write_lock_from_its_first_read(tmp_path: Path) -> None:
    """DBOS claims queued workflows in one transaction that counts the queue's PENDING ones, then marks the next
    ENQUEUED ones PENDING. On the worker's SQLite engine that transaction holds the file's write lock from its
    first read, so a peer's claim waits until it commits. Python's sqlite3 as DBOS 3.4 configures it (the
    driver's own ``BEGIN IMMEDIATE``) begins only at the first write: a peer could claim between the count and
    the write, and a queue of concurrency 1 ran two comparisons at once."""
    import sqlite3

    from sqlalchemy import text

    from workbench.queue.system_db import system_engine

    path = tmp_path / "q.sqlite"
    count = "SELECT count(*) FROM workflow_status WHERE status = 'PENDING'"
    claim = "UPDATE workflow_status SET status = 'PENDING' WHERE id = ? AND status = 'ENQUEUED'"
    with sqlite3.connect(path) as setup:
        setup.execute("CREATE TABLE workflow_status (id TEXT PRIMARY KEY, status TEXT)")
        setup.executemany("INSERT INTO workflow_status VALUES (?, 'ENQUEUED')", [("a",), ("b",), ("c",)])
    peer = sqlite3.connect(path, timeout=0, isolation_level=None)

    engine = system_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as connection:
            assert connection.execute(text(count)).scalar_one() == 0
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                peer.execute(claim, ("b",))  # the peer cannot claim while this claim has counted
            connection.execute(text(claim.replace("?", ":id")), {"id": "a"})
    finally:
        engine.dispose()
    assert peer.execute(claim, ("b",)).rowcount == 1  # after the commit it can (and counts 1 running first)

    dbos_like = sqlite3.connect(path, timeout=0)
    dbos_like.isolation_level = "IMMEDIATE"  # as DBOS 3.4's own SQLite engine: no transaction before the write
    assert dbos_like.execute(count).fetchone() == (2,)
    assert peer.execute(claim, ("c",)).rowcount == 1, "the peer claimed in between (what the engine prevents)"
    dbos_like.close()
    peer.close()


# -- trust -------------------------------------------------------------------------------------------


def workflow_rows(system_db: Path, sweep_id: str) -> list[tuple[str, str, str]]:
    """(workflow id, status, error message) of a sweep's comparisons in an embedded (SQLite) system database:
    the workflow's error, else its step's (DBOS records both as portable JSON for the workbench)."""
    import sqlite3

    query = (
        "SELECT w.workflow_uuid, w.status, COALESCE(w.error, o.error) FROM workflow_status w "
        "LEFT JOIN operation_outputs o ON o.workflow_uuid = w.workflow_uuid WHERE w.workflow_uuid LIKE ? ORDER BY 1"
    )
    with sqlite3.connect(system_db) as connection:
        rows = connection.execute(query, (f"{sweep_id}/%",)).fetchall()
    return [(wid, status, json.loads(error)["message"] if error else "") for wid, status, error in rows]


def test_a_job_cannot_send_a_workers_key_to_an_endpoint_the_worker_does_not_trust(tmp_path: Path, workers) -> None:
    """The attack of issue 20: a sweep enqueued with --base-url pointing at a server its enqueuer controls. The
    worker's config names another endpoint, so the attacker's server sees no request and no key; the comparison
    fails with the reason, and the worker says so in one line. Sweeps asking for the worker's own base_url, or
    for one its command line allows, run (and only those endpoints see its key)."""
    from tests.support.fake_openai import fake_openai

    secret = "sk-worker-own-key-5f2c"
    with fake_openai() as trap, fake_openai() as own, fake_openai() as allowed:
        config = tmp_path / "worker.toml"
        config.write_text(f'base_url = "{own.url}"\n')
        db = tmp_path / "s.db"
        task = ("--task", "cart/remove-expensive", "--model", "openai-chat:gpt-4o-mini")
        enqueuer = {"OPENAI_API_KEY": "sk-enqueuer"}
        attack = queued_id(workbench("bench", "--queue", *task, "--base-url", trap.url, db=db, env=enqueuer))
        honest = queued_id(workbench("bench", "--queue", *task, "--base-url", own.url + "/", db=db, env=enqueuer))
        plain = queued_id(workbench("bench", "--queue", *task, db=db, env=enqueuer))
        extra = queued_id(workbench("bench", "--queue", *task, "--base-url", allowed.url, db=db, env=enqueuer))

        group = workers(db, {"OPENAI_API_KEY": secret, "WORKBENCH_CONFIG": str(config)})
        proc = group.start("--exit-when-idle", "--allow-base-url", allowed.url)
        assert proc.wait(timeout=WAIT_S) == 0, group.output(proc)
        out, err = group.output(proc)

        assert trap.hits == [], "the untrusted endpoint received requests"
        refused = [line for line in err.splitlines() if "refused" in line]
        assert len(refused) == 1 and attack in refused[0] and trap.url in refused[0], err
        assert "not one this worker sends its keys to" in refused[0] and "--allow-base-url" in refused[0]
        [(_, status, error)] = workflow_rows(tmp_path / "s.db.dbos.sqlite", attack)
        assert status == "ERROR" and "not one this worker sends its keys to" in error

        for sweep_id in (honest, plain, extra):
            report = json.loads(workbench("export", sweep_id, "--format", "json", db=db))
            assert report["status"] == "completed", (sweep_id, out, err)
        assert {auth for _, _, auth in own.hits} == {f"Bearer {secret}"} and len(own.hits) >= 4
        assert {auth for _, _, auth in allowed.hits} == {f"Bearer {secret}"} and allowed.hits
    listed = {sweep["sweep_id"]: sweep for sweep in json.loads(workbench("bench", "--list", "--json", db=db))}
    assert listed[attack]["queue"]["failed"] == 1 and listed[attack]["finished"] == 0


def test_a_worker_refuses_forged_jobs_and_never_unpickles(tmp_path: Path, workers) -> None:
    """Rows written straight to DBOS's tables, as anyone with the database's password can: a job with a setting
    outside the allow-list (otel_endpoint), one with a field no job has, and a pickled job whose unpickling
    would run a command. Each fails with the reason; the command never runs; a genuine sweep still runs."""
    db = tmp_path / "s.db"
    genuine = queued_id(workbench("bench", "--queue", "--task", "cart/remove-expensive", db=db))
    marker = tmp_path / "pwned"
    code = f"""
import os
from dbos import DBOSClient
from workbench.queue.enqueue import enqueue_options
from workbench.queue.serialization import SERIALIZER

class Payload:
    def __reduce__(self):
        return (os.system, ("touch {marker}",))

job = {{"sweep_id": "sweep-00000001", "position": 0, "tier": "everyday", "repeat": 0,
        "request": {{"task": "cart/remove-expensive", "items": 122, "model": "scripted", "arms": ["tool", "code"]}}}}
url = "sqlite:///{tmp_path / "s.db.dbos.sqlite"}"
json_client = DBOSClient(system_database_url=url, application_name="workbench", serializer=SERIALIZER)
json_client.enqueue(enqueue_options("sweep-00000001/00000-otel"), {{**job, "settings": {{"otel_endpoint": "http://x"}}}})
json_client.enqueue(enqueue_options("sweep-00000001/00001-flags"), {{**job, "flags": {{"base_url": "http://x"}}}})
json_client.destroy()
pickle_client = DBOSClient(system_database_url=url, application_name="workbench")
pickle_client.enqueue(enqueue_options("sweep-00000001/00002-pickle"), Payload())
pickle_client.destroy()
"""
    done = subprocess.run(
        [str(Path(WORKBENCH).parent / "python"), "-c", code], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), "the enqueuer's own unpickling ran the payload"

    group = workers(db, {})
    proc = group.start("--exit-when-idle")
    assert proc.wait(timeout=WAIT_S) == 0, group.output(proc)
    _, err = group.output(proc)
    assert not marker.exists(), "a worker unpickled a forged job"
    system_db = tmp_path / "s.db.dbos.sqlite"
    rows = {
        wid.rpartition("-")[2]: (status, error) for wid, status, error in workflow_rows(system_db, "sweep-00000001")
    }
    assert (
        rows["otel"] == ("ERROR", rows["otel"][1]) and "otel_endpoint, which a worker does not take" in rows["otel"][1]
    )
    assert rows["flags"][0] == "ERROR" and "flags, which a worker does not take" in rows["flags"][1]
    import sqlite3

    with sqlite3.connect(system_db) as connection:
        pickled = connection.execute(
            "SELECT status FROM workflow_status WHERE workflow_uuid LIKE '%-pickle'"
        ).fetchone()
    assert pickled == ("ERROR",)
    assert "Traceback" not in err and "does not unpickle" in err
    assert sum("failed: refused by the worker" in line for line in err.splitlines()) == 2
    assert json.loads(workbench("export", genuine, "--format", "json", db=db))["status"] == "completed"


# -- code versions ----------------------------------------------------------------------------------


def other_checkout(tmp_path: Path) -> dict[str, str]:
    """A copy of the installed code with one comment added (another checkout), as an environment that runs it
    (from its own directory: ``python -c`` and ``-m`` put the current directory first on the path)."""
    import shutil

    import workbench
    import workbench.apps as apps

    root = tmp_path / "other-checkout"
    for package in (workbench, apps):
        source = Path(package.__file__).parent
        shutil.copytree(source, root / source.name, ignore=shutil.ignore_patterns("__pycache__"))
    with (root / "workbench" / "queue" / "jobs.py").open("a") as changed:
        changed.write("\n# a change in another checkout\n")
    return {"PYTHONPATH": str(root)}


def code_version(env: dict[str, str] | None = None) -> str:
    """The code version of this code, or (``env`` from :func:`other_checkout`) of the other checkout's."""
    code = "from workbench.queue.version import application_version; print(application_version())"
    done = subprocess.run(
        [str(Path(WORKBENCH).parent / "python"), "-c", code], capture_output=True, text=True,
        env={**os.environ, **(env or {})}, cwd=(env or {}).get("PYTHONPATH"), timeout=120, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def test_the_code_version_is_the_codes_own(tmp_path: Path) -> None:
    """Two checkouts that differ by one comment have two versions; the same code has the same one everywhere."""
    other = other_checkout(tmp_path)
    mine, again, theirs = code_version(), code_version(), code_version(other)
    assert mine == again and mine != theirs
    assert mine.startswith("workbench-") and theirs.startswith("workbench-")


def test_a_worker_leaves_another_versions_comparisons_and_says_how_many_wait(tmp_path: Path, workers) -> None:
    """A sweep enqueued by another checkout's code waits for workers of that code: a worker of this code runs
    its own sweep, then (--exit-when-idle) exits saying how many comparisons wait for the other version,
    instead of waiting for ever; bench --list shows each queued sweep's version, and --resume refuses a sweep
    of another version."""
    db = tmp_path / "s.db"
    other = other_checkout(tmp_path)
    python = str(Path(WORKBENCH).parent / "python")
    enqueued = subprocess.run(
        [python, "-m", "workbench", "bench", "--queue", "--task", "cart/remove-expensive", "--repeat", "2"],
        capture_output=True, text=True, env={**os.environ, "WORKBENCH_DB": str(db), **other}, timeout=300,
        cwd=other["PYTHONPATH"],
    )  # fmt: skip
    assert enqueued.returncode == 0, enqueued.stderr
    theirs = queued_id(enqueued.stdout)
    mine = queued_id(workbench("bench", "--queue", "--task", "cart/remove-expensive", db=db))
    theirs_version, own_version = code_version(other), code_version()

    listed = workbench("bench", "--list", db=db)
    assert f"code {own_version}" in listed and f"code {theirs_version} (not this checkout's" in listed, listed
    refused = workbench_process("bench", "--queue", "--resume", theirs, db=db)
    assert refused.returncode == 2 and theirs_version in refused.stderr and own_version in refused.stderr

    group = workers(db, {})
    proc = group.start("--exit-when-idle")
    assert proc.wait(timeout=WAIT_S) == 0, group.output(proc)
    out, err = group.output(proc)
    assert f"code {own_version}" in err.splitlines()[0]
    assert f"2 comparisons wait for workers of another code version ({theirs_version}: 2)" in err, err
    assert len(out.strip().splitlines()) == 1 and out.startswith(mine)
    assert json.loads(workbench("export", mine, "--format", "json", db=db))["status"] == "completed"
    assert json.loads(workbench("export", theirs, "--format", "json", db=db))["finished"] == 0


def test_every_job_field_is_checked_and_nothing_else_is_taken() -> None:
    """A job as a worker reads it (no DBOS): a genuine one round-trips, its request a RunRequest; a wrong type, a
    value out of range or an unknown field anywhere is refused with one line naming the field; a trusted base
    URL is compared without its trailing slash or default port, any other is refused."""
    from workbench.bench import BenchCase
    from workbench.config import load_settings
    from workbench.queue.jobs import ComparisonJob, JobRefused
    from workbench.queue.trust import WorkerTrust
    from workbench.request import RunRequest

    shared = RunRequest(model="scripted", arms=("tool", "code"), arm_models={"code": "scripted:paced"})
    case = BenchCase("everyday", "cart/cap-quantity", 60, 7, 1)
    genuine = ComparisonJob.of("sweep-0a1b2c3d", 4, case, shared, {"request_limit": 20})
    assert genuine.case == case and genuine.request.task == "cart/cap-quantity" and genuine.request.items == 60
    assert ComparisonJob.from_dict(json.loads(json.dumps(genuine.to_dict()))) == genuine
    data = genuine.to_dict()
    forged = {
        "sweep_id": ["../x", 3, "sweep-XYZ"], "position": [-1, "4", True, 10**9], "tier": [["everyday"], "a b"],
        "settings": [{"otel_endpoint": "http://x"}, {"stream": "yes"}, {"request_limit": 0},
                     {"base_url": "file:///etc/passwd"}, {"max_tokens": 1.5}],
        "request": [["not", "a", "table"], {"task": "cart/cap-quantity"}],
    }  # fmt: skip
    for key, values in forged.items():
        for value in values:
            with pytest.raises(JobRefused) as refused:
                ComparisonJob.from_dict({**data, key: value})
            message = str(refused.value)
            assert "\n" not in message and key.split("_")[0] in message, (key, value, message)
    request_forged = {
        "model": [["scripted"], "a b", ""], "arms": ["tool", [], [1], ["t"] * 33],
        "arm_models": [{"nope": "scripted"}, {"code": 3}], "tool_model": [{"x": 1}], "items": ["60", -1],
        "task": [None, "cart remove"], "seed": [1.5], "prompt": ["rm -rf /"], "source": ["sh -c x"],
        "turns": [["one"]], "page_size": [1],
    }  # fmt: skip
    for key, values in request_forged.items():
        for value in values:
            with pytest.raises(JobRefused) as refused:
                ComparisonJob.from_dict({**data, "request": {**data["request"], key: value}})
            message = str(refused.value)
            assert "\n" not in message and key.split("_")[0] in message, (key, value, message)
    with pytest.raises(JobRefused, match="toolset"):
        ComparisonJob.from_dict({**data, "toolset": "os:system"})
    with pytest.raises(JobRefused):
        ComparisonJob.from_dict(["not", "a", "table"])
    with pytest.raises(ValueError, match="prompt"):  # a queue takes a built-in task, never a request of one's own
        ComparisonJob.of("sweep-0a1b2c3d", 0, case, RunRequest(prompt="hello", model="scripted"), {}).to_dict()

    trust = WorkerTrust.of(load_settings(), ["http://LOCALHOST:80/v1/"])
    trust.check(ComparisonJob.from_dict({**data, "settings": {"base_url": "http://localhost/v1"}}))
    for url in ("http://localhost:8080/v1", "https://localhost/v1", "http://evil.example/v1"):
        with pytest.raises(JobRefused, match="not one this worker sends its keys to"):
            trust.check(ComparisonJob.from_dict({**data, "settings": {"base_url": url}}))
    with pytest.raises(ValueError, match="user name or password"):
        WorkerTrust.of(load_settings(), ["http://user:pw@localhost/v1"])
