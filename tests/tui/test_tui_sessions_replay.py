"""Sessions screen and replay: list, filter, delete (asking first), open a stored session and play it."""

from __future__ import annotations

import dataclasses
import functools
from datetime import timedelta

import pytest
from conftest import CREATED, SESSION_ID, store_session
from textual.widgets import Button, DataTable, Input

from tests.support.tui_helpers import settle, wait_for
from workbench.events import ArmEvent
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.screens.confirm import ConfirmScreen
from workbench.tui.screens.replay import ReplayScreen
from workbench.tui.screens.sessions import SessionsScreen
from workbench.tui.widgets.replay_bar import ReplayBar

SIZE = (140, 45)


async def open_sessions(pilot) -> SessionsScreen:  # type: ignore[no-untyped-def]
    await pilot.press("ctrl+o")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen), what="the sessions screen")
    screen = pilot.app.screen
    await wait_for(pilot, lambda: screen.query_one(DataTable).row_count == len(screen.sessions) > 0, what="rows")
    return screen


async def replayed_to_the_end(pilot) -> ReplayScreen:  # type: ignore[no-untyped-def]
    """The replay the app opened on, once its session loaded and every event was played (``end``)."""
    screen = pilot.app.screen
    assert isinstance(screen, ReplayScreen)
    await wait_for(pilot, lambda: screen.clock is not None, what="the session to load")
    await pilot.press("end")
    await settle(pilot, screen)
    assert screen.clock is not None and screen.clock.finished
    return screen


async def test_sessions_list_newest_first_filters_and_opens_a_replay(stored: Store, recorded_events) -> None:
    store_session(stored, recorded_events, session_id="0a1d000002", created=CREATED - timedelta(days=1),
                  prompt="Lower every quantity above 2 to 2.", task="cart/cap-quantity")  # fmt: skip
    async with make_app(store=stored, autoplay=False).run_test(size=SIZE) as pilot:
        screen = await open_sessions(pilot)
        assert [info.id for info in screen.sessions] == [SESSION_ID, "0a1d000002"]

        await pilot.press("slash", *"quantity")
        await wait_for(pilot, lambda: [info.id for info in screen.sessions] == ["0a1d000002"], what="the filter")
        await pilot.press("escape")  # clears the filter
        await wait_for(pilot, lambda: len(screen.sessions) == 2, what="the full list again")

        screen.query_one(DataTable).focus()
        assert screen.selected is not None and screen.selected.id == "0a1d000002"  # the selection survives
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ReplayScreen), what="the replay")
        replay = pilot.app.screen
        assert isinstance(replay, ReplayScreen) and replay.replay_id == "0a1d000002"
        await wait_for(pilot, lambda: replay.clock is not None, what="the session to load")
        assert replay.clock is not None and not replay.clock.playing and replay.clock.position == 0


async def test_replay_steps_changes_speed_and_jumps_to_the_end(stored: Store) -> None:
    expected = stored.load(SESSION_ID)
    async with make_app(store=stored, replay=SESSION_ID, autoplay=False).run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, ReplayScreen)
        await wait_for(pilot, lambda: screen.clock is not None, what="the session to load")
        clock = screen.clock
        assert clock is not None

        await pilot.press("n", "n", "right")
        await settle(pilot, screen)
        assert clock.position == 3 and not clock.playing
        assert sum(pane.summary.requests for pane in screen.panes.values()) >= 1

        await pilot.press("s")
        assert clock.speed == 4.0
        await pilot.press("space")
        await wait_for(pilot, lambda: clock.position > 3, what="playing")
        if clock.playing:
            await pilot.press("space")
            assert not clock.playing
        await pilot.press("end")
        await settle(pilot, screen)
        assert clock.finished
        assert "replayed to the end" in str(screen.query_one(ReplayBar).render())
        for name, arm in expected.arms.items():
            assert screen.panes[name].summary.to_dict() == arm.summary.to_dict()

        await pilot.press("escape")
        await wait_for(pilot, lambda: pilot.app.screen is pilot.app.home, what="back to the compare screen")  # type: ignore[attr-defined]


class ManualTime:
    """A replay clock's time source that moves only when the test says so: no wall-clock pacing to wait on."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def manual_time(monkeypatch: pytest.MonkeyPatch) -> ManualTime:
    """The time source of every replay clock the test opens."""
    from workbench.tui.screens import replay

    time = ManualTime()
    monkeypatch.setattr(replay, "ReplayClock", functools.partial(replay.ReplayClock, now=time))
    return time


async def playing(pilot) -> ReplayScreen:  # type: ignore[no-untyped-def]
    screen = pilot.app.screen
    assert isinstance(screen, ReplayScreen)
    await wait_for(pilot, lambda: screen.clock is not None and screen.clock.playing, what="playing")
    return screen


async def test_replay_at_recorded_pace_plays_to_the_end_by_itself(stored: Store, manual_time: ManualTime) -> None:
    time = manual_time
    async with make_app(store=stored, replay=SESSION_ID).run_test(size=SIZE) as pilot:
        screen = await playing(pilot)
        clock = screen.clock
        assert clock is not None and clock.speed == 1.0
        halfway = clock.duration / 2
        time.now += halfway  # half the recorded time passes: exactly the events recorded by then are played
        due = sum(1 for event in clock.events if event.t <= halfway)
        await wait_for(pilot, lambda: clock.position == due, what="the first half")
        assert not clock.finished and clock.playing
        time.now += halfway + 1
        await wait_for(pilot, lambda: clock.finished, what="the end")
        await settle(pilot, screen)
        assert {pane.summary.status for pane in screen.panes.values()} == {"completed"}


async def test_live_and_replayed_events_build_the_same_panes(stored: Store, recorded_events: list[ArmEvent]) -> None:
    """The feed is the only way in: events pushed as a live run would, and the same session replayed."""
    async with make_app(store=stored).run_test(size=SIZE) as pilot:
        live = pilot.app.screen
        assert isinstance(live, CompareScreen)
        live.feed.put_many(recorded_events)
        await settle(pilot, live)
        live_view = {
            arm: (pane.summary.to_dict(), sorted(pane.transcript.model.calls)) for arm, pane in live.panes.items()
        }
        pilot.app.open_replay(SESSION_ID)  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ReplayScreen))
        replay = pilot.app.screen
        await wait_for(pilot, lambda: replay.clock is not None)  # type: ignore[attr-defined]
        await pilot.press("end")
        await settle(pilot, replay)  # type: ignore[arg-type]
        replay_view = {
            arm: (pane.summary.to_dict(), sorted(pane.transcript.model.calls))
            for arm, pane in replay.panes.items()  # type: ignore[attr-defined]
        }
        assert replay_view == live_view


async def test_deleting_a_session_asks_first(stored: Store) -> None:
    async with make_app(store=stored).run_test(size=SIZE) as pilot:
        screen = await open_sessions(pilot)
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen), what="the question")
        assert pilot.app.screen.focused is pilot.app.screen.query_one("#no", Button)
        await pilot.press("n")
        await wait_for(pilot, lambda: pilot.app.screen is screen)
        assert stored.count_sessions() == 1

        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: stored.count_sessions() == 0, what="the delete")
        await wait_for(pilot, lambda: screen.query_one(DataTable).row_count == 0, what="the list to refresh")


async def test_sessions_screen_stays_usable_while_a_run_writes(stored: Store) -> None:
    async with make_app(store=stored, model="scripted:paced").run_test(size=SIZE) as pilot:
        home = pilot.app.screen
        assert isinstance(home, CompareScreen)
        home.query_one("#prompt").text = "Remove everything in the cart that costs more than $50 apiece."  # type: ignore[attr-defined]
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: home.session_id is not None, what="the live session")
        screen = await open_sessions(pilot)
        await wait_for(pilot, lambda: len(screen.sessions) == 2, what="the running session in the list")
        assert screen.sessions[0].status == "running"
        await pilot.press("slash", *"5e551")
        await wait_for(pilot, lambda: [info.id for info in screen.sessions] == [SESSION_ID], what="the filter")
        assert isinstance(screen.focused, Input)
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: pilot.app.screen is home)
        await pilot.press("escape")
        await wait_for(pilot, lambda: home.last_comparison is not None, what="the cancel")


async def test_a_long_session_opens_on_its_first_page_and_loads_the_rest_behind(
    stored: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.tui.screens import replay as compare

    monkeypatch.setattr(compare, "FIRST_PAGE", 50)
    expected = stored.load(SESSION_ID)
    async with make_app(store=stored, replay=SESSION_ID, autoplay=False).run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, ReplayScreen)
        await wait_for(pilot, lambda: screen.clock is not None)
        clock = screen.clock
        assert clock is not None
        await pilot.press("end")  # maybe before the rest has arrived: it is delivered when it does
        await wait_for(pilot, lambda: clock.finished, what="the rest of the session")
        await settle(pilot, screen)
        assert clock.total == len(stored.events(SESSION_ID))
        for name, arm in expected.arms.items():
            assert screen.panes[name].summary.to_dict() == arm.summary.to_dict()


async def test_a_long_session_opens_on_its_first_page_and_reads_the_rest_in_pages(
    stored: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    import workbench.tui.screens.replay as compare

    monkeypatch.setattr(compare, "FIRST_PAGE", 40)
    monkeypatch.setattr(compare, "REST_PAGE", 50)
    expected = stored.load(SESSION_ID)
    async with make_app(store=stored, replay=SESSION_ID, autoplay=False).run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, ReplayScreen)
        await wait_for(pilot, lambda: screen.clock is not None, what="the first page")
        assert screen.clock is not None
        await pilot.press("end")  # before the rest is read: the pages that follow play as they arrive
        await wait_for(pilot, lambda: screen.clock is not None and screen.clock.finished, what="every page")
        await settle(pilot, screen)
        assert screen.clock.total == len(expected.events)
        for name, arm in expected.arms.items():
            assert screen.panes[name].summary.to_dict() == arm.summary.to_dict()


async def test_prompts_and_model_names_that_look_like_markup_are_shown_as_written(
    store: Store, recorded_events: list[ArmEvent]
) -> None:
    """A table reads plain strings as Rich markup: "[/b]" would fail to render and "[red]" would colour."""
    prompt = "Remove [/b] the [red]items[/red] over $50"
    store_session(store, recorded_events, prompt=prompt, model="openai-chat:[/]qwen")
    async with make_app(store=store, autoplay=False).run_test(size=SIZE) as pilot:
        screen = await open_sessions(pilot)
        table = screen.query_one(DataTable)
        row = [str(getattr(cell, "plain", cell)) for cell in table.get_row_at(0)]
        assert "openai-chat:[/]qwen" in row and any(cell.startswith("Remove [/b] the [red]items") for cell in row)


async def test_x1_replay_keeps_its_clock_through_pause_resume_and_speed_changes(
    store: Store, recorded_events: list[ArmEvent], manual_time: ManualTime
) -> None:
    """The replay bar, the panes' running wall time and the events played all follow the recorded time: at
    x1 as much replay time passes as real time while playing, none while paused, four times as much at x4."""
    from workbench.tui import format as fmt

    time = manual_time
    stretched = [dataclasses.replace(event, t=round(event.t * 20, 6)) for event in recorded_events]  # ~20 s
    store_session(store, stretched)
    async with make_app(store=store, replay=SESSION_ID).run_test(size=SIZE) as pilot:
        screen = await playing(pilot)
        clock = screen.clock
        assert clock is not None and clock.speed == 1.0 and clock.duration > 12
        bar = screen.query_one(ReplayBar)

        async def played_to(seconds: float) -> None:
            due = sum(1 for event in clock.events if event.t <= seconds)
            await wait_for(
                pilot,
                lambda: (
                    clock.position == due
                    and f"at {fmt.seconds(seconds)} /" in str(bar.render())
                    and all(pane.counters.elapsed_s == seconds for pane in screen.panes.values() if pane.running)
                ),
                what=f"the replay at {seconds} s",
            )

        time.now += 3.0
        await played_to(3.0)
        await pilot.press("space")  # pause: ten seconds pass, the replay stays where it was
        time.now += 10.0
        await pilot.pause()
        await played_to(3.0)
        assert not clock.playing
        await pilot.press("space")
        time.now += 2.0
        await played_to(5.0)
        await pilot.press("s")  # x4: one second plays four
        time.now += 1.0
        await played_to(9.0)
        assert "playing x4" in str(bar.render())


async def test_sessions_filter_and_replay_on_a_postgres_store(postgres_url: str, recorded_events) -> None:
    url = postgres_url.replace("postgres@", "postgres:not-shown@", 1)  # the test cluster trusts any password
    store = Store(url)
    store_session(store, recorded_events)
    store_session(store, recorded_events, session_id="0a1d000002", created=CREATED - timedelta(days=1),
                  prompt="Lower every quantity above 2 to 2.", task="cart/cap-quantity")  # fmt: skip
    async with make_app(store=store, autoplay=False).run_test(size=SIZE) as pilot:
        screen = await open_sessions(pilot)
        assert [info.id for info in screen.sessions] == [SESSION_ID, "0a1d000002"]
        shown = f"{pilot.app.title} {pilot.app.sub_title} {screen.title} {screen.sub_title}"
        assert "not-shown" not in shown and "postgres:***@" in shown
        await pilot.press("slash", *"QUANTITY")
        await wait_for(pilot, lambda: [info.id for info in screen.sessions] == ["0a1d000002"], what="the filter")
        screen.query_one(DataTable).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ReplayScreen), what="the replay")
        replay = pilot.app.screen
        assert isinstance(replay, ReplayScreen)
        await wait_for(pilot, lambda: replay.clock is not None, what="the session to load")
        assert replay.clock is not None and len(replay.clock.events) == len(recorded_events)


async def test_a_replayed_conversation_shows_every_turn(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A conversation of two turns, stored, then replayed to its end: each pane shows both turns' rules, prompts
    and answers, and the figures the live run had."""
    import workbench
    from workbench.timeline import TurnEntry
    from workbench.tui.widgets.blocks import TurnBlock

    turns = [
        "Move every electronics item in my cart to my saved-for-later list.",
        "Move every saved-for-later item under $40 back into my cart, one of each.",
    ]
    store = Store(tmp_path / "conversation.db")
    ran = await workbench.compare(turns=turns, app="cart", db=store)
    async with make_app(store=store, replay=ran.session_id, autoplay=False).run_test(size=SIZE) as pilot:
        screen = await replayed_to_the_end(pilot)
        for name, pane in screen.panes.items():
            timeline = pane.transcript.model
            assert [(entry.turn, entry.prompt) for entry in timeline.turns] == list(enumerate(turns, 1))
            blocks = [pane.transcript.block(entry) for entry in timeline.entries if isinstance(entry, TurnEntry)]
            assert all(isinstance(block, TurnBlock) for block in blocks)
            assert "Turn 2" in blocks[1].plain and turns[1] in blocks[1].plain
            answers = [entry for entry in timeline.entries if getattr(entry, "answer", False)]
            assert [entry.turn for entry in answers] == [1, 2]
            assert pane.summary.to_dict() == ran.arms[name].summary.to_dict()


async def test_a_replayed_interrupted_session_ends_with_its_arms_interrupted(
    store: Store, recorded_events: list[ArmEvent]
) -> None:
    """A session whose process died mid-run (its arms never finished, its writer's pid gone): played to its end,
    each unfinished arm's border, roster and figures say interrupted, as `sessions` and `show` do."""
    from workbench.events import RunFinished
    from workbench.session import fold_comparison

    cut = [event for event in recorded_events if not isinstance(event.payload, RunFinished)]
    cut = cut[: len(cut) // 2]
    comparison = fold_comparison(cut, session_id="0a1d00dead", app="cart", items=122, arms=["tool", "code"])
    store.save(comparison, pid=2**22 + 12345, host="")  # a pid no process has: the writer is gone
    info = store.session("0a1d00dead")
    assert info.status == "interrupted" and {arm.status for arm in info.arms} == {"interrupted"}
    async with make_app(store=store, replay="0a1d00dead", autoplay=False).run_test(size=SIZE) as pilot:
        screen = await replayed_to_the_end(pilot)
        for pane in screen.panes.values():
            assert pane.summary.status == "interrupted"
            assert "interrupted" in str(pane.border_subtitle) and "running" not in str(pane.border_subtitle)
        await pilot.press("home", "n", "n", "n")  # played again from the start: running until its end
        await settle(pilot, screen)
        started = [pane for pane in screen.panes.values() if pane.started]
        assert started and all(pane.summary.status == "running" for pane in started)
