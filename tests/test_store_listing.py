"""The quick session listing (sqlite3 alone) lists what the store lists, and leaves every other case to it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

import workbench
from workbench.bench import Sweep, plan
from workbench.bench.manifest import sessions_without_sweeps
from workbench.cli import cli
from workbench.events import ArmEvent, RequestStarted
from workbench.locations import fallback_dir
from workbench.session import fold_comparison
from workbench.store import Store
from workbench.store.listing import quick_sessions
from workbench.verdict import session_comparability

SCHEMA1 = Path(__file__).parent / "fixtures" / "schema1.db"


def running_session(store: Store, session_id: str, pid: int, created: datetime, host: str | None = None) -> None:
    events = [ArmEvent("tool", 0, 1.0, RequestStarted(1))]
    comparison = fold_comparison(
        events, session_id=session_id, app="cart", items=5, prompt="Été 50% max_items", created=created, arms=["tool"]
    )
    store.save(comparison, pid=pid, host=host)


@pytest.fixture(scope="module")
def listed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A person's own comparisons (one declined, one with three arms), a small bench sweep, and sessions whose
    writer lives, died, or ran under another host name."""
    path = tmp_path_factory.mktemp("listing") / "sessions.db"
    store = Store(path)
    workbench.compare_sync(task="cart/remove-expensive", items=20, db=store)
    workbench.compare_sync(task="cart/remove-expensive", items=20, db=store, arms=["tool", "code", "hybrid"])
    workbench.compare_sync("Write me a poem about carts", app="cart", items=5, db=store)
    asyncio.run(Sweep([case for case in plan("scaling", app="cart") if case.items <= 20], store=store).run())
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    now = datetime.now(UTC)
    running_session(store, "alive", os.getpid(), now)
    running_session(store, "gone", int(gone.stdout), now)
    running_session(store, "elsewhere-silent", os.getpid(), now - timedelta(hours=1), "another-host")
    return path


@pytest.mark.parametrize(
    "options",
    [{}, {"limit": 2}, {"search": "POEM"}, {"search": "été 50%"}, {"search": "max_i"}, {"search": "%"}],
    ids=["all", "limit", "search", "unicode", "underscore", "percent"],
)
def test_the_quick_listing_lists_what_the_store_lists(listed: Path, options: dict[str, object]) -> None:
    quick = quick_sessions(listed, **options)  # type: ignore[arg-type]
    assert quick is not None and quick.hidden == 0
    assert quick.sessions == Store(listed).sessions(**options)  # type: ignore[arg-type]


def test_the_quick_listing_settles_writers_and_counts_tool_calls(listed: Path) -> None:
    sessions = {info.id: info for info in quick_sessions(listed).sessions}  # type: ignore[union-attr]
    assert sessions["alive"].status == "running"
    assert sessions["gone"].status == "interrupted" and sessions["gone"].arms[0].status == "interrupted"
    assert sessions["elsewhere-silent"].status == "interrupted"
    declined = next(info for info in sessions.values() if info.prompt.startswith("Write me a poem"))
    assert [arm.tool_calls for arm in declined.arms] == [0, 0]
    assert session_comparability(declined.arms).reason == "neither arm called a tool"
    three = next(info for info in sessions.values() if len(info.arms) == 3)
    assert [arm.name for arm in three.arms] == ["tool", "code", "hybrid"]
    assert all(arm.tool_calls for arm in three.arms)


def test_the_quick_listing_leaves_out_bench_runs_as_the_store_does(listed: Path) -> None:
    quick = quick_sessions(listed, hide_bench=True)
    assert quick is not None
    own, hidden = sessions_without_sweeps(Store(listed))
    assert (quick.sessions, quick.hidden) == (own, hidden) and hidden == 2


def test_the_cli_prints_the_same_list_either_way(listed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def listing(*extra: str) -> str:
        result = CliRunner().invoke(cli, ["sessions", "--db", str(listed), *extra])
        assert result.exit_code == 0, result.output
        return result.stdout

    quick = [listing(), listing("--json"), listing("--no-bench"), listing("--search", "poem")]
    monkeypatch.setattr("workbench.store.listing.quick_sessions", lambda *args, **kwargs: None)
    assert [listing(), listing("--json"), listing("--no-bench"), listing("--search", "poem")] == quick
    assert "2 bench runs left out" in quick[2]
    declined = next(row for row in json.loads(quick[1]) if row["prompt"].startswith("Write me a poem"))
    assert declined["comparable"] is False and declined["not_comparable_reason"] == "neither arm called a tool"
    poem_row = next(line for line in quick[3].splitlines() if "poem" in line)
    assert "partial" in poem_row


def test_a_schema_1_store_is_left_to_the_store_and_not_touched(tmp_path: Path) -> None:
    path = tmp_path / "schema1.db"
    shutil.copy(SCHEMA1, path)
    before = path.read_bytes()
    assert quick_sessions(path) is None
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["schema1.db"]


def test_missing_foreign_damaged_and_locked_files_are_left_to_the_store(tmp_path: Path) -> None:
    assert quick_sessions(tmp_path / "none.db") is None
    assert not (tmp_path / "none.db").exists()
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")
    assert quick_sessions(foreign) is None
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    assert quick_sessions(damaged) is None
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 100)
    assert quick_sessions(text) is None and text.read_text() == "not a database\n" * 100

    locked = tmp_path / "locked.db"
    store = Store(locked)
    workbench.compare_sync(task="cart/remove-expensive", items=5, db=store)
    store.engine.dispose()
    holder = sqlite3.connect(locked, isolation_level=None)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert quick_sessions(locked) is None
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert quick_sessions(locked) is not None


def test_fallback_files_waiting_to_be_imported_are_left_to_the_store(tmp_path: Path) -> None:
    """A fallback file naming this database (or one unreadable) sends the listing through the store, which
    imports it; another database's file does not."""
    path = tmp_path / "sessions.db"
    workbench.compare_sync(task="cart/remove-expensive", items=5, db=path)
    assert quick_sessions(path) is not None
    fallback_dir().mkdir(parents=True, exist_ok=True)
    header = {"record": "session", "db": str(tmp_path / "other.db"), "session": {}, "arms": []}
    (fallback_dir() / "0123456789.jsonl").write_text(json.dumps(header) + "\n")
    assert quick_sessions(path) is not None
    (fallback_dir() / "0123456780.jsonl").write_text("{not json\n")
    assert quick_sessions(path) is None
    (fallback_dir() / "0123456780.jsonl").write_text(json.dumps(header | {"db": str(path.resolve())}) + "\n")
    assert quick_sessions(path) is None


def test_a_postgresql_database_is_listed_through_the_store(postgres_url: str) -> None:
    workbench.compare_sync("Write me a poem about carts", app="cart", items=5, db=postgres_url)
    result = CliRunner().invoke(cli, ["sessions", "--json", "--db", postgres_url])
    assert result.exit_code == 0, result.output
    (listed,) = json.loads(result.stdout)
    assert listed["not_comparable_reason"] == "neither arm called a tool"
    assert [arm["tool_calls"] for arm in listed["arms"]] == [0, 0]
