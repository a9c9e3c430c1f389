"""The session store on a real PostgreSQL server: the URL forms, one-line errors that never show a password,
many processes creating the schema at once, and text PostgreSQL cannot hold.

The assertions every backend shares run on both in ``test_store*.py`` (the ``store_db`` fixture); these are
the ones only a server has.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import workbench
from tests.support.postgres_cluster import PostgresCluster, postgres_bindir
from tests.support.store_backends import all_at_once, execute_sql
from workbench.cli import cli
from workbench.events import ArmEvent, RunStarted, TextDelta
from workbench.locations import db_location, fallback_dir
from workbench.session import fold_comparison
from workbench.store import SCHEMA_VERSION, Store, StoreError

TASK = "cart/cap-quantity"
WAIT_S = 60.0
"""Generous bound for a condition polled on a busy machine (never a pace the test relies on)."""
WORKBENCH = str(Path(sys.executable).parent / "workbench")


def cli_run(*args: str, env: dict[str, str | None] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), prog_name="workbench", env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def with_password(url: str, user: str, password: str) -> str:
    return url.replace("postgres@", f"{user}:{password}@", 1)


def test_postgres_and_postgresql_urls_name_the_same_database(postgres_url: str) -> None:
    result = workbench.compare_sync(task=TASK, items=10, db=postgres_url)
    other = postgres_url.replace("postgresql://", "postgres://", 1)
    assert db_location(other).url == db_location(postgres_url).url
    assert [info.id for info in Store(other).sessions()] == [result.session_id]


def test_run_sessions_show_and_export_work_on_postgres(postgres_url: str, tmp_path: Path) -> None:
    code, out, err = cli_run("run", "--task", TASK, "--items", "10", "--json", "--db", postgres_url)
    assert code == 0, err
    run = json.loads(out)
    code, out, _ = cli_run("sessions", "--json", "--db", postgres_url)
    assert code == 0 and [s["session_id"] for s in json.loads(out)] == [run["session_id"]]
    code, out, _ = cli_run("show", run["session_id"][:6], "--json", "--db", postgres_url)
    assert code == 0 and json.loads(out) == run
    code, out, _ = cli_run("export", run["session_id"], "--format", "csv", "--db", postgres_url)
    assert code == 0 and out.count(run["session_id"]) == 2
    replayed = Store(postgres_url).events_by_time(run["session_id"])  # what the TUI's replay reads
    assert len(replayed) == sum(1 for _ in Store(postgres_url).events(run["session_id"])) > 10
    # A URL is not a path: nothing is created beside it, under the working directory or the data dir's name for it.
    assert not Path("postgresql:").exists() and not (tmp_path / "unsaved").exists()


def test_the_database_can_come_from_the_environment_or_the_config_file(postgres_url: str, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'db = "{postgres_url}"\n')
    code, out, err = cli_run("run", "--task", TASK, "--items", "5", "--json", env={"WORKBENCH_CONFIG": str(config),
                                                                                   "WORKBENCH_DB": None})  # fmt: skip
    assert code == 0, err
    session_id = json.loads(out)["session_id"]
    code, out, _ = cli_run("sessions", "--json", env={"WORKBENCH_DB": postgres_url})
    assert code == 0 and [s["session_id"] for s in json.loads(out)] == [session_id]


def test_many_processes_opening_a_new_database_at_once_create_the_schema_once(postgres_url: str) -> None:
    processes = [
        subprocess.Popen([WORKBENCH, "sessions", "--json", "--db", postgres_url], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(6)
    ]  # fmt: skip
    results = [(process.wait(timeout=120), *process.communicate()) for process in processes]
    assert all(code == 0 and json.loads(out) == [] for code, out, _ in results), results

    def save(number: int) -> None:
        Store(postgres_url).save(fold_comparison([], session_id=f"t{number}", app="cart", items=5))

    assert not all_at_once(save, 6)
    store = Store(postgres_url)
    assert store.schema_version() == SCHEMA_VERSION and store.count_sessions() == 6
    assert execute_sql(postgres_url, "SELECT value FROM workbench_meta") == [(str(SCHEMA_VERSION),)]


def test_a_server_that_cannot_be_reached_is_one_line(postgres_cluster: PostgresCluster) -> None:
    with __import__("socket").socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    url = f"postgresql://someone:hunter2@127.0.0.1:{port}/wb"
    for args in (["sessions"], ["show", "abc"], ["run", "--task", TASK], ["export", "abc"]):
        code, _, err = cli_run(*args, "--db", url)
        assert code == 2 and err.count("\n") == 1 and "cannot be reached" in err, (args, err)
        assert "hunter2" not in err and "someone:***@" in err


def test_a_missing_database_and_an_unknown_role_have_their_own_messages(postgres_cluster: PostgresCluster) -> None:
    code, _, err = cli_run("sessions", "--db", postgres_cluster.url("no_such_db"))
    assert code == 2 and err.count("\n") == 1 and 'database "no_such_db" does not exist' in err and "createdb" in err
    code, _, err = cli_run("sessions", "--db", postgres_cluster.url().replace("postgres@", "nobody:pw@"))
    assert code == 2 and err.count("\n") == 1 and 'role "nobody" does not exist' in err and ":pw@" not in err


def test_a_wrong_password_is_one_line_and_never_printed(postgres_cluster: PostgresCluster, postgres_url: str) -> None:
    user = f"pw_{uuid.uuid4().hex[:8]}"
    execute_sql(postgres_cluster.url(), f"CREATE ROLE {user} LOGIN PASSWORD 'right-one'")
    execute_sql(postgres_url, f"GRANT ALL ON SCHEMA public TO {user}")
    hba = postgres_cluster.data / "pg_hba.conf"
    hba.write_text(f"host all {user} 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
    execute_sql(postgres_cluster.url(), "SELECT pg_reload_conf()")
    code, _, err = cli_run("sessions", "--db", with_password(postgres_url, user, "wrong-one"))
    assert code == 2 and err.count("\n") == 1 and "password authentication failed" in err
    assert "wrong-one" not in err and f"{user}:***@" in err
    code, out, err = cli_run("sessions", "--json", "--db", with_password(postgres_url, user, "right-one"))
    assert code == 0 and json.loads(out) == [], err
    code, out, _ = cli_run("locate", "--json", env={"WORKBENCH_DB": with_password(postgres_url, user, "right-one")})
    assert code == 0 and "right-one" not in out and f"{user}:***@" in json.loads(out)["database"]
    code, out, _ = cli_run("config", env={"WORKBENCH_DB": with_password(postgres_url, user, "right-one")})
    assert code == 0 and "right-one" not in out


def test_a_missing_driver_names_the_extra_to_install(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # what `import psycopg` meets where it is not installed
    code, _, err = cli_run("sessions", "--db", postgres_url)
    assert code == 2 and err.count("\n") == 1
    assert "pip install 'code-mode-workbench[postgres]'" in err


def test_text_postgres_cannot_hold_is_stored_visibly_and_events_losslessly(postgres_url: str) -> None:
    store = Store(postgres_url)
    events = [ArmEvent("tool", 0, 0.0, RunStarted("tool", "scripted", "cart", 5, 0, "a\x00b", [])),
              ArmEvent("tool", 1, 0.1, TextDelta("nul \x00 and lone \ud800 surrogate"))]  # fmt: skip
    comparison = fold_comparison(events, session_id="nul", app="cart", items=5, prompt="before\x00after")
    comparison.header = replace(comparison.header, model="model\x00name")
    store.save(comparison)
    info = store.session("nul")
    assert info.prompt == "before\ufffdafter" and info.model == "model\ufffdname"
    stored = store.events("nul")
    assert stored[0].payload.prompt == "a\x00b"  # type: ignore[attr-defined]
    assert stored[1].payload.text == "nul \x00 and lone \ufffd surrogate"  # type: ignore[attr-defined]


def test_moments_round_trip_in_utc_whatever_the_server_time_zone(postgres_url: str) -> None:
    database = postgres_url.rsplit("/", 1)[1]
    execute_sql(postgres_url, f"ALTER DATABASE {database} SET timezone TO 'Pacific/Auckland'")
    created = datetime(2026, 6, 30, 23, 30, 15, 123456, tzinfo=UTC)
    store = Store(postgres_url)
    store.save(fold_comparison([], session_id="utc", created=created, app="cart", items=5))
    store.save(fold_comparison([], session_id="later", created=created + timedelta(seconds=1), app="cart", items=5))
    assert store.session("utc").created == created
    assert [info.id for info in store.sessions()] == ["later", "utc"]


def test_a_session_written_twice_keeps_one_event_per_arm_and_seq(postgres_url: str, tmp_path: Path) -> None:
    result = workbench.compare_sync(task=TASK, items=10, db=postgres_url)
    store = Store(postgres_url)
    from workbench.store.codec import encode_event

    encoded = [encode_event(event) for event in result.events]
    assert store.insert_events(result.session_id, encoded, skip_stored=True) == 0
    with pytest.raises(StoreError):
        store.insert_events(result.session_id, encoded[:1])
    again = store.load(result.session_id)
    assert again.to_dict() == result.to_dict()


def test_importing_psycopg_is_left_to_a_postgres_database(tmp_path: Path) -> None:
    probe = (
        "import sys, workbench\n"
        f"workbench.compare_sync(task={TASK!r}, items=5, db={str(tmp_path / 'x.db')!r})\n"
        "print('psycopg' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYDANTIC_AI_NO_BANNER": "1"})  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == "False"


# -- the server goes away mid-run ------------------------------------------------------------------


@pytest.fixture
def own_cluster() -> Iterator[PostgresCluster]:
    """A cluster of its own, for the tests that stop its server (the shared one stays up)."""
    bindir = postgres_bindir()
    assert bindir is not None  # the postgres_url fixture has already skipped where PostgreSQL is missing
    with PostgresCluster(bindir) as cluster:
        yield cluster


def start_paced_run(url: str, busy_timeout_s: float) -> subprocess.Popen[str]:
    """``workbench run`` of a run lasting several seconds, whose session is already in the database."""
    env = {**os.environ, "WORKBENCH_DB": url, "WORKBENCH_STORE_BUSY_TIMEOUT_S": str(busy_timeout_s)}
    run = subprocess.Popen(
        [WORKBENCH, "run", "--task", "cart/remove-expensive", "--items", "150", "--model", "scripted:paced", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + WAIT_S
    while not execute_sql(url, "SELECT id FROM sessions"):
        assert run.poll() is None and time.monotonic() < deadline, "the run never stored its session"
        time.sleep(0.05)
    return run


def test_a_server_stopped_mid_run_sends_the_run_to_its_fallback_file_and_import_brings_it_back(
    postgres_url: str, own_cluster: PostgresCluster
) -> None:
    url = own_cluster.database()
    Store(url).engine.dispose()  # the schema, before the run
    run = start_paced_run(url, busy_timeout_s=1.0)
    own_cluster.stop_server()
    out, err = run.communicate(timeout=WAIT_S)
    assert run.returncode == 3, err
    shown = json.loads(out)
    unsaved = fallback_dir() / f"{shown['session_id']}.jsonl"
    assert shown["stored"] is False and "could not be reached for 1 s" in shown["store_error"]
    assert err.count("\n") == 1 and str(unsaved) in err and "workbench import" in err and "Traceback" not in err
    assert unsaved.exists()

    own_cluster.restart()
    code, out, err = cli_run("import", "--db", url)
    assert code == 0 and f"session {shown['session_id']}:" in out and not unsaved.exists(), err
    again = Store(url).load(shown["session_id"])
    assert again.to_dict() == {**shown, "stored": True, "store_error": None}
    assert Store(url).session(shown["session_id"]).status == "completed"


def test_a_server_restarted_mid_run_is_waited_out_and_the_run_stored_whole(
    postgres_url: str, own_cluster: PostgresCluster
) -> None:
    url = own_cluster.database()
    Store(url).engine.dispose()  # the schema, before the run
    run = start_paced_run(url, busy_timeout_s=WAIT_S)
    own_cluster.stop_server()  # every connection of the run's pool is cut
    own_cluster.restart()
    out, err = run.communicate(timeout=2 * WAIT_S)
    assert run.returncode == 0, err
    shown = json.loads(out)
    assert shown["stored"] is True and list(fallback_dir().glob("*.jsonl")) == []
    assert Store(url).load(shown["session_id"]).to_dict() == shown


def test_a_deadlock_and_a_terminated_connection_are_transient(postgres_url: str) -> None:
    import psycopg

    from workbench.store.faults import fault_kind

    execute_sql(postgres_url, "CREATE TABLE pair (id int PRIMARY KEY, n int); INSERT INTO pair VALUES (1, 0), (2, 0)")
    first, second = psycopg.connect(postgres_url), psycopg.connect(postgres_url)
    first.execute("UPDATE pair SET n = 1 WHERE id = 1")
    second.execute("UPDATE pair SET n = 2 WHERE id = 2")
    errors: list[BaseException] = []

    def cross(connection: psycopg.Connection[Any], row: int) -> None:
        try:
            connection.execute("UPDATE pair SET n = 3 WHERE id = %s", (row,))
        except psycopg.Error as error:
            errors.append(error)
        finally:
            connection.rollback()

    threads = [threading.Thread(target=cross, args=(first, 2)), threading.Thread(target=cross, args=(second, 1))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (deadlock,) = errors
    assert isinstance(deadlock, psycopg.errors.DeadlockDetected) and fault_kind(deadlock) == "transient"

    victim = psycopg.connect(postgres_url)
    pid = victim.info.backend_pid
    execute_sql(postgres_url, "SELECT pg_terminate_backend(:pid)", pid=pid)
    with pytest.raises(psycopg.Error) as terminated:
        victim.execute("SELECT 1")
    assert fault_kind(terminated.value) == "transient"
    for connection in (first, second, victim):
        connection.close()


def test_a_writer_whose_connections_are_terminated_reconnects_and_stores_everything(postgres_url: str) -> None:
    store = Store(postgres_url)
    comparison = fold_comparison([], session_id="cut", app="cart", items=5, arms=["tool"])
    writer = store.begin(comparison)
    kill = (
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() "
        "AND application_name = 'workbench' AND pid <> pg_backend_pid()"
    )
    seq = 0
    for _round in range(3):
        for _ in range(50):
            writer.put(ArmEvent("tool", seq, seq * 0.01, TextDelta(f"word {seq} ")))
            seq += 1
        deadline = time.monotonic() + WAIT_S
        while writer.written < seq:  # committed: then its connection (back in the pool) is cut
            assert time.monotonic() < deadline and writer.error is None, writer.error
            time.sleep(0.02)
        assert execute_sql(postgres_url, kill)[0][0] >= 1
    writer.close(comparison)
    assert writer.stored and writer.written == seq
    assert [event.seq for event in store.events("cut")] == list(range(seq))


def test_a_login_that_may_only_read_lists_and_shows_but_run_refuses(postgres_url: str) -> None:
    result = workbench.compare_sync(task=TASK, items=5, db=postgres_url)
    reader = f"reader_{uuid.uuid4().hex[:8]}"
    execute_sql(postgres_url, f"CREATE ROLE {reader} LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader}")
    as_reader = postgres_url.replace("postgres@", f"{reader}@", 1)
    code, out, err = cli_run("sessions", "--json", "--db", as_reader)
    assert code == 0 and [s["session_id"] for s in json.loads(out)] == [result.session_id], err
    code, out, _ = cli_run("show", result.session_id, "--json", "--db", as_reader)
    assert code == 0 and json.loads(out)["session_id"] == result.session_id
    for args in (["run", "--task", TASK], ["bench", "--task", TASK]):
        code, _, err = cli_run(*args, "--db", as_reader)
        assert code == 2 and err.count("\n") == 1 and "takes no writes" in err, (args, err)
    assert Store(postgres_url).count_sessions() == 1


def test_commands_suggested_after_queueing_name_the_database_without_its_password(postgres_url: str) -> None:
    from workbench.commands.bench import _db_argument

    store = Store(postgres_url.replace("postgres@", "postgres:secret-pw@", 1))
    assert _db_argument(store) == f" --db {postgres_url}"
