"""Writer liveness on a shared store, on both backends: a session written on this host is judged by its
writer's pid, one written on another host by the heartbeat its writer refreshes (by the database's clock).
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlmodel import col, update

import workbench
from tests.support.store_backends import all_at_once, execute_sql
from workbench.events import ArmEvent, RequestStarted
from workbench.session import fold_comparison
from workbench.store import SCHEMA_VERSION, Store
from workbench.store.listing import quick_sessions
from workbench.store.liveness import HEARTBEAT_STALE_S, SILENT_WRITER_S, writer_alive
from workbench.store.schema import SessionRow

WAIT_S = 60.0
DEAD_PID = 2**22 + 12345


def running(store: Store, session_id: str, *, pid: int, host: str, last_t: float | None = None) -> None:
    events = [] if last_t is None else [ArmEvent("tool", 0, last_t, RequestStarted(1))]
    comparison = fold_comparison(events, session_id=session_id, app="cart", items=5, arms=["tool"])
    store.save(comparison, pid=pid, host=host)


def set_heartbeat(store: Store, session_id: str, moment: datetime) -> None:
    with store.engine.begin() as connection:
        connection.execute(update(SessionRow).where(col(SessionRow.id) == session_id).values(heartbeat=moment))


def statuses(store: Store) -> dict[str, str]:
    return {info.id: info.status for info in store.sessions()}


def test_another_hosts_writer_is_alive_while_its_heartbeat_is_fresh(store_db: Path | str) -> None:
    store = Store(store_db)
    for session_id in ("beating", "stale", "never"):
        running(store, session_id, pid=os.getpid(), host="worker-7")
    store.beat("beating")
    set_heartbeat(store, "stale", datetime.now(UTC) - timedelta(seconds=HEARTBEAT_STALE_S + 30))
    # A writer from before heartbeats: judged by its last event (none, and created just now: still running).
    expected = {"beating": "running", "stale": "interrupted", "never": "running"}
    assert statuses(store) == expected
    if isinstance(store_db, Path):  # the sessions list's sqlite3-only path agrees
        listing = quick_sessions(store_db)
        assert listing is not None and {info.id: info.status for info in listing.sessions} == expected


def test_on_this_host_the_pid_decides_whatever_the_heartbeat(store_db: Path | str) -> None:
    store = Store(store_db)
    running(store, "dead", pid=DEAD_PID, host="")
    running(store, "alive", pid=os.getpid(), host="")
    store.beat("dead")
    set_heartbeat(store, "alive", datetime.now(UTC) - timedelta(hours=1))
    assert statuses(store) == {"dead": "interrupted", "alive": "running"}


def test_a_finished_session_keeps_its_status_and_is_not_beaten(store_db: Path | str) -> None:
    store = Store(store_db)
    result = workbench.compare_sync(task="cart/cap-quantity", items=5, db=store)
    ((heartbeat,),) = execute_sql(store_db, "SELECT heartbeat FROM sessions WHERE id = :id", id=result.session_id)
    assert heartbeat is not None  # the writer beat while it ran
    store.beat(result.session_id)
    assert execute_sql(store_db, "SELECT heartbeat FROM sessions") == [(heartbeat,)]
    assert store.session(result.session_id).status == "completed"


def test_a_writer_waiting_on_its_model_keeps_beating(store_db: Path | str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("workbench.store.writer.HEARTBEAT_INTERVAL_S", 0.05)
    store = Store(store_db)
    comparison = fold_comparison([], session_id="waiting", app="cart", items=5, arms=["tool"])
    writer = store.begin(comparison)
    try:
        seen: set[object] = set()
        deadline = time.monotonic() + WAIT_S
        while len(seen) < 3:  # three distinct heartbeats, with no event written
            assert time.monotonic() < deadline, f"the heartbeat did not move: {seen}"
            seen |= {row[0] for row in execute_sql(store_db, "SELECT heartbeat FROM sessions") if row[0]}
            time.sleep(0.02)
        assert store.session("waiting").status == "running"
    finally:
        writer.close(comparison)
    assert writer.stored


def test_a_schema_2_store_gains_the_heartbeat_and_keeps_its_sessions(store_db: Path | str) -> None:
    store = Store(store_db)
    running(store, "old", pid=DEAD_PID, host="old-host", last_t=1.0)
    store.engine.dispose()
    execute_sql(store_db, "ALTER TABLE sessions DROP COLUMN heartbeat")
    execute_sql(store_db, "UPDATE workbench_meta SET value = '2' WHERE key = 'schema_version'")
    migrated = Store(store_db)
    assert migrated.schema_version() == SCHEMA_VERSION == 4
    assert statuses(migrated) == {"old": "running"}  # another host's, silent for less than 600 s
    migrated.beat("old")
    assert execute_sql(store_db, "SELECT count(*) FROM sessions WHERE heartbeat IS NOT NULL") == [(1,)]


def test_many_processes_migrating_one_database_at_once_migrate_it_once(store_db: Path | str) -> None:
    Store(store_db).engine.dispose()
    execute_sql(store_db, "ALTER TABLE sessions DROP COLUMN heartbeat")
    execute_sql(store_db, "UPDATE workbench_meta SET value = '2' WHERE key = 'schema_version'")
    errors = all_at_once(lambda _: Store(store_db).engine.dispose(), 6)
    assert not errors
    assert execute_sql(store_db, "SELECT value FROM workbench_meta") == [(str(SCHEMA_VERSION),)]


def test_the_rule_is_one_function() -> None:
    now = datetime.now(UTC)

    def alive(pid: int, host: str, age_s: float | None, last_t: float | None = None) -> bool:
        return writer_alive(pid, host, now, lambda: age_s, lambda: last_t)

    assert alive(os.getpid(), "", None) is True
    assert alive(DEAD_PID, "", 1.0) is False
    assert alive(1, "elsewhere", HEARTBEAT_STALE_S - 1) is True
    assert alive(1, "elsewhere", HEARTBEAT_STALE_S + 1) is False
    assert alive(1, "elsewhere", None, last_t=-SILENT_WRITER_S - 1) is False
    assert alive(1, "elsewhere", None) is True  # never beat, created just now
