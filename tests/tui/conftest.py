"""Fixtures for the TUI tests: a store, and a recorded scripted session stored under a fixed id and time."""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual.pilot import Pilot

from workbench.events import ArmEvent
from workbench.session import fold_comparison
from workbench.store import Store

FIXTURE = Path(__file__).parent / "fixtures" / "cart_remove_expensive.json"
FOUR_ARMS = Path(__file__).parent / "fixtures" / "cart_remove_expensive_4_arms.json"
SESSION_ID = "5e55100001"
CREATED = datetime(2026, 6, 1, 9, 30, tzinfo=UTC)
PROMPT = "Remove everything in the cart that costs more than $50 apiece."


@pytest.fixture(autouse=True)
def utc_and_quiet(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Times shown in UTC (snapshots must not depend on the machine's zone); no pydantic-ai banner."""
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("PYDANTIC_AI_NO_BANNER", "1")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def snap_compare(snap_compare: Callable[..., bool]) -> Callable[..., bool]:
    """pytest-textual-snapshot's ``snap_compare`` with every text cursor steady: a blinking cursor is drawn or
    not depending on the moment the screenshot is taken (a busy machine moves that moment)."""

    def compare(
        app: object,
        press: tuple[str, ...] = (),
        terminal_size: tuple[int, int] = (80, 24),
        run_before: Callable[[Pilot], Awaitable[None] | None] | None = None,
    ) -> bool:
        async def steady_cursors(pilot: Pilot) -> None:
            _stop_blinking(pilot)
            if run_before is not None:
                result = run_before(pilot)
                if inspect.isawaitable(result):
                    await result
            _stop_blinking(pilot)  # in screens the steps above opened too
            await pilot.pause()

        return snap_compare(app, press=press, terminal_size=terminal_size, run_before=steady_cursors)

    return compare


def _stop_blinking(pilot: Pilot) -> None:
    for screen in pilot.app.screen_stack:
        for widget in screen.query("*"):
            if hasattr(widget, "cursor_blink"):
                widget.cursor_blink = False


@pytest.fixture(scope="session")
def recorded_events() -> list[ArmEvent]:
    """A scripted comparison of cart/remove-expensive, recorded with steady clock readings."""
    data = json.loads(FIXTURE.read_text())
    return [ArmEvent.from_dict(event) for event in data["events"]]


@pytest.fixture(scope="session")
def four_arm_events() -> list[ArmEvent]:
    """The same task recorded on the four preset arms: tool, code, code-eager (eager progress and
    speculation events) and hybrid."""
    data = json.loads(FOUR_ARMS.read_text())
    return [ArmEvent.from_dict(event) for event in data["events"]]


def with_copies(events: list[ArmEvent], copies: dict[str, str]) -> list[ArmEvent]:
    """The events and, for each new arm name, a copy of another arm's events under it (N-arm fixtures)."""
    extra = [replace(event, arm=name) for name, source in copies.items() for event in events if event.arm == source]
    return [*events, *extra]


def store_session(
    store: Store,
    events: list[ArmEvent],
    *,
    session_id: str = SESSION_ID,
    created: datetime = CREATED,
    prompt: str = PROMPT,
    model: str = "scripted",
    items: int = 122,
    task: str | None = "cart/remove-expensive",
) -> str:
    """Write a finished session with these events, as the runner would have."""
    arms = list(dict.fromkeys(event.arm for event in events))
    comparison = fold_comparison(
        events, session_id=session_id, created=created, app="cart", items=items, prompt=prompt, task=task,
        model=model, arms=arms,
    )  # fmt: skip
    store.save(comparison)
    return session_id


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "tui.db")


@pytest.fixture
def stored(store: Store, recorded_events: list[ArmEvent]) -> Store:
    """The store holding the recorded session under :data:`SESSION_ID`."""
    store_session(store, recorded_events)
    return store
