"""The live writer's transactions, on SQLite and on PostgreSQL: a comparison shorter than a flush interval is
stored whole in one; a longer one is listed as running from its first flush and ends with its last batch.

Transactions are counted with a ``commit`` listener on the store's engine; the flush interval and the
heartbeat are set so that what happens does not depend on how loaded the machine is.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from sqlalchemy import event

import workbench
from tests.support.store_backends import execute_sql
from workbench.events import ArmEvent, TextDelta
from workbench.runner import ComparisonRun, RunRequest, prepare
from workbench.session import fold_comparison
from workbench.store import Store

WAIT_S = 60.0
FOREVER_S = 3600.0
SAVE = "Move every electronics item in my cart to my saved-for-later list."
RESTORE = "Move every saved-for-later item under $40 back into my cart, one of each."


def commits(store: Store) -> list[object]:
    """The transactions committed on the store's engine from now on (one entry each)."""
    seen: list[object] = []
    event.listen(store.engine, "commit", seen.append)
    return seen


def test_a_comparison_shorter_than_a_flush_interval_is_stored_whole_in_one_transaction(
    store_db: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("workbench.store.writer.FLUSH_INTERVAL_S", FOREVER_S)  # the run ends before its first flush
    store = Store(store_db)
    committed = commits(store)
    result = workbench.compare_sync(task="cart/cap-quantity", items=5, db=store)
    assert result.stored and len(committed) == 1
    info = store.session(result.session_id)
    assert info.status == "completed"
    assert [(arm.name, arm.status, arm.passed) for arm in info.arms] == [
        ("tool", "completed", True),
        ("code", "completed", True),
    ]
    assert len(store.events(result.session_id)) == sum(len(arm.events) for arm in result.arms.values())
    ((finished, heartbeat),) = execute_sql(store_db, "SELECT finished, heartbeat FROM sessions")
    assert finished is not None and heartbeat is not None  # its writer was alive when it stored it


def test_a_follow_up_turn_shorter_than_a_flush_interval_is_appended_in_one_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stored session is marked running again, its new events appended and its end recorded at once."""
    monkeypatch.setattr("workbench.store.writer.FLUSH_INTERVAL_S", FOREVER_S)
    store = Store(tmp_path / "follow.db")

    async def follow_up() -> tuple[workbench.Comparison, int]:
        run = ComparisonRun(prepare(RunRequest(SAVE, app="cart")), store, keep_open=True)
        await run.result()
        committed = commits(store)
        second = await run.follow_up(RESTORE)
        await run.close()
        return second, len(committed)

    comparison, committed = asyncio.run(follow_up())
    assert comparison.stored and committed == 1
    assert store.session(comparison.session_id).status == "completed"
    stored = store.events(comparison.session_id)
    assert len(stored) == sum(len(arm.events) for arm in comparison.arms.values())
    assert {event.turn for event in stored} == {1, 2}


def test_a_session_longer_than_a_flush_interval_is_listed_as_running_before_it_ends(
    store_db: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first flush writes the session's rows with the events so far, which another process's listing
    then shows; the last batch is written with the session's end, in one transaction."""
    monkeypatch.setattr("workbench.store.writer.FLUSH_INTERVAL_S", 0.05)
    monkeypatch.setattr("workbench.store.writer.HEARTBEAT_INTERVAL_S", FOREVER_S)  # no heartbeat of its own
    store = Store(store_db)
    elsewhere = Store(store_db)  # a reader that is not the writer's (as another process's is)
    committed = commits(store)
    comparison = fold_comparison([], session_id="long", app="cart", items=5, arms=["tool"])
    writer = store.begin(comparison)
    try:
        writer.put(ArmEvent("tool", 0, 0.0, TextDelta("first ")))
        deadline = time.monotonic() + WAIT_S
        while not any(info.id == "long" for info in elsewhere.sessions()):
            assert time.monotonic() < deadline, "the session was never listed while it ran"
            time.sleep(0.01)
        assert elsewhere.session("long").status == "running"
        assert [event.seq for event in elsewhere.events("long")] == [0]  # written with the session's rows
        assert len(committed) == 1
        # From now on a batch gathers until the run ends: the last one goes with the session's end.
        monkeypatch.setattr("workbench.store.writer.FLUSH_INTERVAL_S", FOREVER_S)
        writer.put(ArmEvent("tool", 1, 0.1, TextDelta("second")))
    finally:
        writer.close(comparison)
    assert writer.stored and len(committed) == 2
    assert [event.seq for event in store.events("long")] == [0, 1]
    assert store.session("long").status == comparison.status


def test_a_listing_in_the_process_running_a_session_shows_it_from_its_start(
    store_db: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's own listing has the writer write the session's rows at once, without waiting for the
    first flush."""
    monkeypatch.setattr("workbench.store.writer.FLUSH_INTERVAL_S", FOREVER_S)
    store = Store(store_db)
    comparison = fold_comparison([], session_id="starting", app="cart", items=5, arms=["tool"])
    writer = store.begin(comparison)
    try:
        writer.put(ArmEvent("tool", 0, 0.0, TextDelta("first ")))
        assert [(info.id, info.status) for info in store.sessions()] == [("starting", "running")]
        assert store.session("starting").status == "running"
    finally:
        writer.close(comparison)
    assert writer.stored and len(store.events("starting")) == 1
