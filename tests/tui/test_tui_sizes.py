"""SVG snapshots of every main screen at the four terminal sizes people use: 80x24, 90x30, 120x40 and 180x50.

Compare (running and finished), replay, sessions and inspector are fed the recorded scripted session (its
clock readings are part of the recording, so no machine speed reaches a frame; the running view is the
recording stopped at a known event). The bench screen shows a real sweep of the offline scripted model, run
once for the module with the clock, the calendar and the random ids held still (every figure that a busy
machine would change is a constant). Update with ``pytest tests/tui/test_tui_sizes.py --snapshot-update`` and
look at each SVG: these exist so that nothing is cut where it matters at any of the sizes.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest
from conftest import CREATED, SESSION_ID
from test_tui_snapshots import MID_RUN, live
from test_tui_snapshots_small import open_inspector
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from tests.support.tui_helpers import settle, steady_frame, wait_for
from workbench.bench import Sweep, plan
from workbench.events import ArmEvent
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.bench import BenchScreen
from workbench.tui.screens.replay import ReplayScreen
from workbench.tui.screens.sessions import SessionsScreen

SIZES = [(80, 24), (90, 30), (120, 40), (180, 50)]
Snap = Callable[..., bool]

sizes = pytest.mark.parametrize("size", SIZES, ids=[f"{width}x{height}" for width, height in SIZES])


@sizes
def test_compare_running(snap_compare: Snap, recorded_events: list[ArmEvent], size: tuple[int, int]) -> None:
    assert snap_compare(make_app(store=None), terminal_size=size, run_before=live(recorded_events, count=MID_RUN))


@sizes
def test_compare_finished(snap_compare: Snap, recorded_events: list[ArmEvent], size: tuple[int, int]) -> None:
    assert snap_compare(make_app(store=None), terminal_size=size, run_before=live(recorded_events))


async def _replay(pilot: Pilot) -> ReplayScreen:
    screen = pilot.app.screen
    assert isinstance(screen, ReplayScreen)
    await wait_for(pilot, lambda: screen.clock is not None, what="the session")
    return screen


@sizes
def test_replay(snap_compare: Snap, stored: Store, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot) -> None:
        screen = await _replay(pilot)
        assert screen.clock is not None
        screen.feed.put_many(screen.clock.step(MID_RUN))
        await settle(pilot, screen)
        await steady_frame(pilot)

    app = make_app(store=stored, replay=SESSION_ID, autoplay=False)
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@sizes
def test_inspector(snap_compare: Snap, stored: Store, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot) -> None:
        await open_inspector(pilot)
        await steady_frame(pilot)

    app = make_app(store=stored, replay=SESSION_ID, autoplay=False)
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@sizes
def test_sessions(snap_compare: Snap, stored: Store, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]) -> None:
    assert stored.path is not None
    monkeypatch.setenv("HOME", str(stored.path.parent))  # the title shows ~/tui.db, not a temporary path

    async def run_before(pilot: Pilot) -> None:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen))
        await wait_for(pilot, lambda: pilot.app.screen.query_one(DataTable).row_count == 1)
        status = pilot.app.screen.query_one("#sessions-status", Static)
        await wait_for(pilot, lambda: SESSION_ID in str(status.content), what="the status line")
        await steady_frame(pilot)

    assert snap_compare(make_app(store=stored), terminal_size=size, run_before=run_before)


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A store holding one finished sweep of the scripted model: cart's everyday tasks at 20 items and the
    cart scaling rule at 5 and 20 items, run one case at a time with a still clock, calendar and ids."""
    folder = tmp_path_factory.mktemp("bench")
    with pytest.MonkeyPatch.context() as patch, held_still(patch):
        store = Store(folder / "bench.db")
        cases = [case for case in plan("scaling") if case.items <= 20 and case.app == "cart"]
        cases += plan("everyday", app="cart", items=20)
        outcome = asyncio.run(Sweep(cases, store=store, concurrency=1).run())
        assert len(outcome.results) == len(cases) and not outcome.interrupted
    yield folder / "bench.db"


class _Still(datetime):
    """``datetime`` whose ``now`` is the fixtures' fixed moment."""

    @classmethod
    def now(cls, tz=None):  # type: ignore[no-untyped-def, override]
        return CREATED if tz is None else CREATED.astimezone(tz)


class held_still:
    """Within it: ``time.perf_counter`` stands still (every wall time is 0), ``datetime.now`` in the
    workbench's modules is :data:`CREATED`, and ``secrets.token_hex`` counts (ids in the order they are made).
    The modules are found by what they hold, so moving code between them does not loosen the hold."""

    def __init__(self, patch: pytest.MonkeyPatch) -> None:
        self.patch = patch

    def __enter__(self) -> None:
        counter = itertools.count(1)
        self.patch.setattr(time, "perf_counter", lambda: 1000.0)
        self.patch.setattr(secrets, "token_hex", lambda n=16: f"{next(counter):0{2 * n}x}")
        for name, module in list(sys.modules.items()):
            if name.startswith("workbench") and getattr(module, "datetime", None) is datetime:
                self.patch.setattr(module, "datetime", _Still)

    def __exit__(self, *exc: object) -> None:
        self.patch.undo()


@sizes
def test_bench(snap_compare: Snap, swept: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]) -> None:
    monkeypatch.setenv("HOME", str(swept.parent))  # the title shows ~/bench.db, not a temporary path
    store = Store(swept)

    async def run_before(pilot: Pilot) -> None:
        await pilot.press("f3")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, BenchScreen))
        screen = pilot.app.screen
        assert isinstance(screen, BenchScreen)
        await wait_for(pilot, lambda: screen.report is not None, what="the sweep's report")
        await wait_for(pilot, lambda: screen.query_one("#sweeps", DataTable).row_count == 1, what="the sweeps list")
        await steady_frame(pilot)

    assert snap_compare(make_app(store=store), terminal_size=size, run_before=run_before)
