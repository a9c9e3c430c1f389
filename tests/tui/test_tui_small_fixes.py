"""80x24 and wording: the replay footer shows its own keys, the empty bench hint is whole, and messages name
the TUI's fields rather than CLI flags or library calls."""

from __future__ import annotations

import pytest
from conftest import SESSION_ID
from textual.widgets import Input, Static
from textual.widgets._footer import FooterKey

from tests.support.tui_helpers import run_to_end, wait_for
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.bench import EMPTY_HINT, BenchScreen
from workbench.tui.screens.replay import ReplayScreen
from workbench.tui.widgets.run_form import RunForm


async def test_a_missing_api_key_names_the_model_field_not_the_library_call(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    async with make_app(store=store).run_test(size=(120, 40)) as pilot:
        screen = pilot.app.screen
        form = screen.query_one(RunForm)
        form.choose_task("cart/remove-expensive")
        await wait_for(pilot, lambda: "$50" in form.values().prompt, what="the task's prompt")
        form.query_one("#model", Input).value = "openai:gpt-5-mini"
        await pilot.press("ctrl+r")
        message = form.query_one("#form-message", Static)
        await wait_for(pilot, lambda: "OPENAI_API_KEY" in str(message.render()), what="the key's message")
        text = str(message.render())
    assert "OpenAIProvider" not in text and "api_key=" not in text
    assert "--model" not in text
    assert "Model field" in text


async def test_the_replay_footer_at_80x24_shows_every_replay_key(stored: Store) -> None:
    async with make_app(store=stored, replay=SESSION_ID, autoplay=False).run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ReplayScreen), what="the replay")
        screen = pilot.app.screen
        await wait_for(pilot, lambda: len(screen.query(FooterKey)) > 0, what="the footer")
        await pilot.pause()
        shown = {key.key_display: key.region for key in screen.query(FooterKey)}
        for key in ("space", "n", "s", "e", "r", "esc"):
            assert key in shown, f"{key} not in the footer: {sorted(shown)}"
            assert shown[key].right <= 80 - len(" ^p palette"), f"{key} is cut off at {shown[key]}"


async def test_the_empty_bench_screen_shows_its_whole_hint_at_80x24(store: Store) -> None:
    async with make_app(store=store).run_test(size=(80, 24)) as pilot:
        await pilot.press("f3")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, BenchScreen), what="the bench screen")
        headline = pilot.app.screen.query_one("#bench-headline", Static)
        await wait_for(pilot, lambda: str(headline.render()) == EMPTY_HINT, what="the hint")
        await pilot.pause()
        assert headline.region.height >= 3  # wrapped over lines of its own, not cut at the edge


def test_a_diff_leads_with_the_field_the_tasks_rule_checks_and_never_cuts_a_record_id() -> None:
    from workbench.apps.registry import checked_fields
    from workbench.events import EndState
    from workbench.tui.widgets.outcome import DiffTable, diff_rows

    assert checked_fields("cart/remove-expensive") == ("unit_price",)
    assert checked_fields("cart/cap-quantity") == ("quantity",)
    assert checked_fields("not/a-task") == ()
    record = {"id": "line-0001", "product": "Linen Duvet Cover", "sku": "HOM-927", "unit_price": 133.43}
    diff = EndState(created=[], updated=[], deleted=[{"entity": "cart_items", "id": "line-0001", "record": record}])
    rows = diff_rows(diff, checked_fields("cart/remove-expensive"))
    assert rows[0][3].startswith("unit_price=133.43, product=")
    table = DiffTable()
    table.rows = rows
    _mark, record_width, field_width, detail = table._widths(56)
    assert record_width == len("cart_items line-0001") and field_width == 0  # whole id; no empty field column
    assert detail >= 12


async def test_the_finished_view_at_120x40_keeps_8_transcript_rows_and_whole_counters(stored: Store) -> None:
    from workbench.tui.widgets.figures import ArmCounters

    async with make_app(store=stored, replay=SESSION_ID, autoplay=False).run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ReplayScreen), what="the replay")
        screen = pilot.app.screen
        await wait_for(pilot, lambda: screen.clock is not None, what="the session to load")
        await pilot.press("end")
        await wait_for(pilot, lambda: all(p.summary.status != "running" for p in screen.panes.values()) and
                       screen.feed.idle, what="every arm to finish")  # fmt: skip
        for _ in range(3):
            await pilot.pause()
        assert len(screen.panes) == 2
        for pane in screen.panes.values():
            assert pane.transcript.size.height >= 8, f"{pane.transcript.size.height} transcript rows"
        for counters in screen.query(ArmCounters):
            lines = counters.render().split("\n")
            assert max(line.cell_length for line in lines) <= counters.size.width, [line.plain for line in lines]


async def test_the_finished_compare_view_at_120x40_keeps_8_transcript_rows_below_the_form(store: Store) -> None:
    """The live screen has the form and the prompt above the panes: the charts and the diff give rows back."""
    from workbench.tui.screens.compare import CompareScreen

    async with make_app(store=store).run_test(size=(120, 40)) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen) and screen.has_class("-medium")
        screen.query_one(RunForm).choose_task("cart/remove-expensive")
        await wait_for(pilot, lambda: "$50" in screen.query_one(RunForm).values().prompt, what="the task's prompt")
        await pilot.press("ctrl+r")
        await run_to_end(pilot, screen)
        for _ in range(3):
            await pilot.pause()
        for pane in screen.panes.values():
            assert pane.outcome.table.row_count > 0  # the diff is there, in fewer rows
            assert pane.transcript.size.height >= 8, f"{pane.transcript.size.height} transcript rows"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_task_dropdown_is_as_wide_as_the_screen_allows(store: Store, size: tuple[int, int]) -> None:
    from textual.widgets import Select
    from textual.widgets._select import SelectOverlay

    async with make_app(store=store).run_test(size=size) as pilot:
        task = pilot.app.screen.query_one("#task", Select)
        task.focus()
        await pilot.press("enter")
        overlay = task.query_one(SelectOverlay)
        await wait_for(pilot, lambda: overlay.display and overlay.region.width > 0, what="the open list")
        await pilot.pause()
        assert overlay.region.width >= size[0] - 2, overlay.region  # not the ~27 columns of the field
        assert overlay.region.right <= size[0]  # shifted left to stay on the screen
        assert overlay.styles.text_wrap == "nowrap"  # one line per entry
