"""The session store against damaged, foreign, newer, older and impossible database files.

Whatever the file, the workbench says which file and why in one line (exit 2 from the CLI) and never
writes to a file it refuses. A damaged event or a kind from a newer workbench costs that event, not the
session.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

import workbench
from tests.support.store_backends import all_at_once, execute_sql, open_transaction
from workbench.cli import cli
from workbench.store import SCHEMA_VERSION, Store, StoreError

TASK = "cart/cap-quantity"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cli_run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), prog_name="workbench")
    return result.exit_code, result.stdout, result.stderr


def assert_one_line_refusal(db: str, *fragments: str) -> None:
    for args in (["sessions", "--db", db], ["show", "abc", "--db", db], ["run", "--task", TASK, "--db", db]):
        code, _, err = cli_run(*args)
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, (args, code, err)
        assert all(fragment in err for fragment in fragments), err


@pytest.fixture
def stored_anywhere(store_db: Path | str) -> tuple[Path | str, str]:
    """A database on each backend holding two runs; the first one's session id."""
    store = Store(store_db)
    result = workbench.compare_sync(task=TASK, items=20, db=store)
    workbench.compare_sync(task=TASK, items=10, db=store)
    store.engine.dispose()
    return store_db, result.session_id


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "real.db"
    store = Store(db)  # not the cached store of compare(db=path): the tests change the file behind its back
    result = workbench.compare_sync(task=TASK, items=20, db=store)
    workbench.compare_sync(task=TASK, items=10, db=store)
    store.engine.dispose()
    return db, result.session_id


@pytest.mark.parametrize(
    "content",
    [os.urandom(4096), b"SQLite format 3\x00" + os.urandom(4096), b"\x00" * 8192, b'{"sessions": []}\n'],
    ids=["random-bytes", "sqlite-header-then-garbage", "zeros", "json"],
)
def test_a_corrupt_file_is_refused_by_name_and_left_untouched(tmp_path: Path, content: bytes) -> None:
    db = tmp_path / "corrupt.db"
    db.write_bytes(content)
    before = digest(db)
    with pytest.raises(StoreError, match=r"corrupt\.db"):
        Store(db)
    assert_one_line_refusal(str(db), str(db))
    assert digest(db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corrupt.db"]


@pytest.mark.parametrize("fraction", [0.9, 0.5, 0.1])
def test_a_truncated_store_is_refused_not_crashed_on(stored: tuple[Path, str], fraction: float) -> None:
    db, _ = stored
    data = db.read_bytes()
    db.write_bytes(data[: int(len(data) * fraction)])
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    before = digest(db)
    assert_one_line_refusal(str(db), str(db))
    assert digest(db) == before


def test_a_foreign_sqlite_database_is_never_written(tmp_path: Path) -> None:
    db = tmp_path / "other-app.db"
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE sessions (id TEXT, secret TEXT)")
        connection.execute("INSERT INTO sessions VALUES ('1', 'keep me')")
    before = digest(db)
    assert_one_line_refusal(str(db), str(db), "not a workbench session store")
    assert digest(db) == before and not Path(f"{db}-wal").exists()


def test_a_newer_schema_is_refused_with_a_clear_message(stored: tuple[Path, str]) -> None:
    db, _ = stored
    with sqlite3.connect(db) as connection:
        connection.execute(
            "UPDATE workbench_meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 5),)
        )
    before = digest(db)
    assert_one_line_refusal(str(db), "newer workbench", f"schema {SCHEMA_VERSION + 5}")
    assert digest(db) == before


def test_an_older_store_is_migrated_and_keeps_its_sessions(stored: tuple[Path, str]) -> None:
    db, session_id = stored
    with sqlite3.connect(db) as connection:  # an older store: no version row yet, and a table still missing
        connection.execute("DELETE FROM workbench_meta")
        connection.execute("DROP INDEX IF EXISTS ix_events_session_id")
    store = Store(db)
    assert store.schema_version() == SCHEMA_VERSION
    assert store.load(session_id).arms["tool"].summary.passed is True


def test_a_damaged_or_newer_event_costs_that_event_not_the_session(stored_anywhere: tuple[Path | str, str]) -> None:
    db, session_id = stored_anywhere
    total = len(Store(db).events(session_id))
    execute_sql(
        db, "UPDATE events SET data = '{broken' WHERE session_id = :id AND arm = 'tool' AND seq = 2", id=session_id
    )
    execute_sql(
        db,
        "INSERT INTO events (session_id, arm, seq, t, kind, data) VALUES (:id, 'code', 999, 9.0,"
        " 'kind_from_a_newer_workbench', '{}')",
        id=session_id,
    )
    assert len(Store(db).events(session_id)) == total - 1
    code, out, _ = cli_run("show", session_id, "--json", "--db", str(db))
    assert code == 0 and session_id in out


def test_a_damaged_session_row_is_a_one_line_error(stored: tuple[Path, str]) -> None:
    db, session_id = stored
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE sessions SET created = 'last tuesday' WHERE id = ?", (session_id,))
    code, _, err = cli_run("sessions", "--db", str(db))
    assert code == 2 and "damaged session row" in err and str(db) in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("location", "fragment"),
    [
        ("{tmp}", "is a directory"),
        ("/dev/null", "not a regular file"),
        ("{tmp}/fifo", "not a regular file"),
        ("{tmp}/a-file/inside.db", "is not a folder"),
        ("/proc/self/status", "cannot be created as a database"),
        ("~no-such-user-here/x.db", "cannot be used"),
        ("nosuchdialect://host/db", "cannot be opened"),
        ("postgresql://nobody@127.0.0.1:1/none", "cannot be"),
    ],
)
def test_impossible_locations_are_one_line_errors(tmp_path: Path, location: str, fragment: str) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "a-file").write_text("not a folder")
    db = location.format(tmp=tmp_path)
    with pytest.raises(StoreError, match=fragment):
        Store(db)
    code, _, err = cli_run("sessions", "--db", db)
    assert code == 2 and fragment in err and err.count("\n") == 1


def test_opening_a_new_store_from_many_places_at_once_succeeds_everywhere(store_db: Path | str) -> None:
    """Parallel runs started against a fresh database race to create it; the loser used to fail."""
    assert not all_at_once(lambda _: Store(store_db), 8)
    assert Store(store_db).schema_version() == SCHEMA_VERSION


def test_an_open_write_transaction_does_not_block_readers(stored_anywhere: tuple[Path | str, str]) -> None:
    db, _ = stored_anywhere
    with open_transaction(db, "UPDATE sessions SET prompt = prompt || ' (edited)'", write=True):
        reader = Store(db, busy_timeout_s=0)  # a read that had to wait for the writer would fail at once
        listed = reader.sessions(search="cart")
        events = reader.events(listed[0].id)
        assert listed and events
        assert not any(info.prompt.endswith("(edited)") for info in listed)  # it reads the last committed state
        reader.engine.dispose()


def test_a_long_read_does_not_block_the_event_writer(stored_anywhere: tuple[Path | str, str]) -> None:
    db, _ = stored_anywhere
    done = threading.Event()
    result: list[workbench.Comparison] = []
    with open_transaction(db, "SELECT count(*) FROM events"):  # holds a read snapshot open
        thread = threading.Thread(
            target=lambda: (result.append(workbench.compare_sync(task=TASK, items=20, db=db)), done.set())
        )
        thread.start()
        try:
            assert done.wait(60), "the run did not finish while a read was open"
            assert len(Store(db).events(result[0].session_id)) == len(result[0].events)
        finally:
            thread.join()


def test_search_matches_its_text_literally_not_as_like_wildcards(store_db: Path | str) -> None:
    store = Store(store_db)
    workbench.compare_sync("Remove everything that costs more than $50 apiece", app="cart", items=5, db=store)
    workbench.compare_sync("Give 50% off to max_items, path C:\\carts", app="cart", items=5, db=store)
    found = {
        query: [info.prompt[:4] for info in store.sessions(search=query)]
        for query in ("%", "_", "50%", "max_items", "max%items", "m_x", "C:\\carts", "apiece")
    }
    assert found == {
        "%": ["Give"],
        "_": ["Give"],
        "50%": ["Give"],
        "max_items": ["Give"],
        "max%items": [],
        "m_x": [],
        "C:\\carts": ["Give"],
        "apiece": ["Remo"],
    }
