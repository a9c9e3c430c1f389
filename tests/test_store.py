"""The session store: what a run writes is what a reader gets back, on SQLite and on PostgreSQL."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import workbench
from tests.support.store_backends import execute_sql
from workbench.events import ArmEvent, RunStarted, TextDelta
from workbench.session import fold_comparison
from workbench.store import SCHEMA_VERSION, Store, StoreError, UnknownSession


def test_events_read_back_from_the_store_equal_the_events_emitted(store_db: Path | str) -> None:
    result = workbench.compare_sync(task="inventory/reorder-low-stock", items=60, db=store_db)
    store = Store(store_db)
    stored = store.events(result.session_id)
    emitted = result.arms["tool"].events + result.arms["code"].events
    assert len(stored) == len(emitted)
    assert sorted(stored, key=lambda e: (e.arm, e.seq)) == sorted(emitted, key=lambda e: (e.arm, e.seq))


def test_show_from_the_store_matches_the_live_result(store_db: Path | str) -> None:
    result = workbench.compare_sync(task="chatroom/pin-popular", items=50, db=store_db)
    again = Store(store_db).load(result.session_id)
    assert again.to_dict() == result.to_dict()
    info = Store(store_db).session(result.session_id)
    assert info.status == "completed"
    assert [(a.name, a.status, a.passed) for a in info.arms] == [
        ("tool", "completed", True),
        ("code", "completed", True),
    ]


def test_sessions_are_listed_newest_first_and_searchable(store_db: Path | str) -> None:
    store = Store(store_db)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for number, app in enumerate(["cart", "kanban", "cart"]):
        store.save(fold_comparison([], session_id=f"s{number}", created=start + timedelta(minutes=number), app=app,
                                   items=5, prompt=f"prompt {app} {number}"))  # fmt: skip
    assert [s.id for s in store.sessions()] == ["s2", "s1", "s0"]
    assert [s.id for s in store.sessions(search="KANBAN")] == ["s1"]
    store.save(fold_comparison([], session_id="s3", created=start + timedelta(minutes=3), app="calendar", items=5,
                               prompt="Verschiebe das Treffen in der Straße ÉTÉ"))  # fmt: skip
    # Case-insensitive beyond ASCII: SQLite's own lower() leaves É and ß alone.
    assert [s.id for s in store.sessions(search="été")] == ["s3"]
    assert [s.id for s in store.sessions(search="STRASSE")] == ["s3"]
    store.delete_session("s3")
    assert [s.id for s in store.sessions(limit=1)] == ["s2"]
    assert store.count_sessions() == 3


def test_session_ids_resolve_by_unique_prefix(store_db: Path | str) -> None:
    store = Store(store_db)
    for session_id in ("abc123", "abd456"):
        store.save(fold_comparison([], session_id=session_id, app="cart", items=5))
    assert store.resolve_id("abc") == "abc123"
    with pytest.raises(UnknownSession, match="ambiguous"):
        store.resolve_id("ab")
    with pytest.raises(UnknownSession, match="no session 'zz'"):
        store.resolve_id("zz")


def test_a_running_session_whose_process_is_gone_reads_as_interrupted(store_db: Path | str) -> None:
    store = Store(store_db)
    events = [ArmEvent("tool", 0, 0.0, RunStarted("tool", "scripted", "cart", 5, 0, "p", [])),
              ArmEvent("tool", 1, 0.1, TextDelta("hel"))]  # fmt: skip
    store.save(fold_comparison(events, session_id="dead", app="cart", items=5), pid=2**22 + 12345)
    info = store.session("dead")
    assert info.status == "interrupted" and info.arms[0].status == "interrupted"
    shown = store.load("dead").to_dict()
    assert shown["arms"][0]["status"] == "interrupted"


def test_deleting_a_session_removes_its_arms_and_events(store_db: Path | str) -> None:
    result = workbench.compare_sync(task="cart/cap-quantity", items=20, db=store_db)
    store = Store(store_db)
    store.delete_session(result.session_id)
    assert store.sessions() == [] and store.events(result.session_id) == []


def test_a_file_that_is_not_sqlite_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("my precious notes\n")
    with pytest.raises(StoreError, match=r"notes\.db is not a workbench database"):
        Store(path)
    assert path.read_text() == "my precious notes\n"


def test_a_foreign_sqlite_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        connection.execute("INSERT INTO invoices VALUES (1, 9.5)")
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a workbench session store"):
        Store(path)
    assert path.read_bytes() == before


def test_a_store_from_a_newer_workbench_is_refused(store_db: Path | str) -> None:
    Store(store_db)
    newer = str(SCHEMA_VERSION + 1)
    execute_sql(store_db, "UPDATE workbench_meta SET value = :v WHERE key = 'schema_version'", v=newer)
    with pytest.raises(StoreError, match="newer workbench"):
        Store(store_db)


def test_the_store_uses_write_ahead_logging(db_path: Path) -> None:
    Store(db_path)
    with sqlite3.connect(db_path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _handles(path: Path) -> int:
    """This process's open file descriptors on ``path`` (or its -wal/-shm files)."""
    count = 0
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = str(fd.readlink())
        except OSError:
            continue
        count += target.startswith(str(path.resolve()))
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts file descriptors through /proc")
def test_whoever_opens_a_store_closes_it(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from workbench.cli import cli

    db = tmp_path / "s.db"
    with Store(db) as store:
        assert store.sessions() == [] and _handles(db) > 0
    assert _handles(db) == 0
    result = workbench.compare_sync(task="cart/remove-expensive", items=5, db=db)
    assert result.stored and _handles(db) == 0  # the run opened the database by path, so it closed it
    listed = CliRunner().invoke(cli, ["sessions", "--db", str(db), "--json"])
    assert listed.exit_code == 0 and result.session_id in listed.output
    assert _handles(db) == 0  # the command closed what it opened
    with Store(db) as given:
        workbench.compare_sync(task="cart/remove-expensive", items=5, db=given)
        assert len(given.sessions()) == 2  # a store handed in stays open for its owner
