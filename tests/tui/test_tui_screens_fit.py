"""The bench screen, the inspector and the prompt at the sizes people use: nothing collapses, wraps or hides."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console
from textual.app import App
from textual.widgets import Static, TextArea

from tests.support.tui_helpers import run_to_end, wait_for
from workbench.bench import Sweep, plan
from workbench.bench.charts import axis_label, scaling_chart
from workbench.bench.report import ScalingSeries
from workbench.store import Store
from workbench.timeline import SnippetEntry
from workbench.timeline_records import SnippetRecord
from workbench.tui import format as fmt
from workbench.tui.app import make_app
from workbench.tui.screens.bench import BenchScreen
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.screens.help import HelpScreen
from workbench.tui.screens.inspector import InspectorScreen
from workbench.tui.widgets.run_form import RunForm, task_options
from workbench.tui.widgets.snippet import SnippetBlock

PROMPT = "Remove everything in the cart that costs more than $50 apiece."


class Host(App[None]):
    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store

    def on_mount(self) -> None:
        self.push_screen(BenchScreen(self.store))


def lines_of(widget: Static) -> list[str]:
    console = Console(width=400, color_system=None)
    with console.capture() as captured:
        console.print(widget.content)
    return captured.get().rstrip("\n").split("\n")


@pytest.fixture
def swept(db_path: Path) -> Store:
    import asyncio

    store = Store(db_path)
    cases = [case for case in plan("scaling", app="cart") if case.items <= 50]
    asyncio.run(Sweep(cases, store=store).run())
    return store


@pytest.mark.parametrize("size", [(80, 24), (90, 30), (180, 50)], ids=["80x24", "90x30", "180x50"])
async def test_the_bench_report_reads_and_its_chart_fits_at_every_size(swept: Store, size: tuple[int, int]) -> None:
    async with Host(swept).run_test(size=size) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, BenchScreen)
        await wait_for(pilot, lambda: screen.report is not None, what="the report")
        chart = screen.query_one("#bench-chart", Static)
        await wait_for(pilot, lambda: "items" in "".join(lines_of(chart)), what="the chart")
        await pilot.pause()
        tiers = lines_of(screen.query_one("#bench-tiers", Static))
        header = next(line for line in tiers if "paired" in line)
        assert "tool" in header and "code" in header  # no column collapsed to nothing
        room = screen.query_one("#bench-report").scrollable_content_region.width
        assert max(len(line) for line in lines_of(chart)) <= room  # drawn at the width it gets: never wraps

        report = screen.query_one("#bench-report")
        report.scroll_home(animate=False)
        await pilot.press("m")
        await pilot.pause()
        await pilot.pause()
        top, bottom = report.scroll_y, report.scroll_y + report.scrollable_content_region.height
        assert top <= chart.virtual_region.y < bottom  # the chart the key changed is in view


def test_chart_axes_read_as_people_write_numbers() -> None:
    values = {"tool": {"input_tokens": [3000.0, 74747.0]}, "code": {"input_tokens": [3300.0, 3700.0]}}
    series = ScalingSeries("cart", "cart/x", [5, 200], values, {})  # type: ignore[arg-type]
    drawn = scaling_chart(series, "input_tokens", color=False, width=60, height=12)
    assert "74747.0" not in drawn and "74.7k" in drawn
    assert [axis_label(value, key) for value, key in ((0.0123, "cost_usd"), (1.5, "wall_s"), (50, "success"))] == [
        "$0.0123",
        "1.5 s",
        "50%",
    ]


def test_inner_calls_show_the_arguments_that_were_set() -> None:
    shown = fmt.short_args({"event_id": "evt-0001", "title": None, "start": None, "room": "Cedar"})
    assert shown == 'event_id="evt-0001", room="Cedar"'


def test_the_pane_and_the_inspector_count_a_snippets_lines_alike() -> None:
    code = "items = []\nfor page in range(3):\n    items += [page]\nitems\n"
    record = SnippetRecord("call-1", code=code, complete=True)
    header = SnippetBlock(SnippetEntry(record=record))._header_content().plain
    assert f"{fmt.line_count(code)} lines" in header and fmt.line_count(code) == 4


async def test_the_inspector_has_its_own_help_and_gives_the_code_its_width(recorded_events: list) -> None:
    from workbench.events import Snippet

    code = next(event.payload.code for event in recorded_events if isinstance(event.payload, Snippet))
    app = make_app(store=None)
    async with app.run_test(size=(140, 40)) as pilot:
        app.open_inspector(SnippetRecord("call-1", code=code, complete=True))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        longest = max(len(line) for line in code.splitlines())
        assert screen.query_one("#code-pane").size.width >= longest + 4
        await pilot.press("f1")
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        assert "Up and down walk the calls" in help_screen.about and "Snippet inspector" in help_screen.screen_title


async def test_the_prompt_behaves_like_a_text_field_and_comes_back_after_a_run(tmp_path: Path) -> None:
    app = make_app(store=Store(tmp_path / "p.db"))
    async with app.run_test(size=(140, 45)) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        prompt = screen.query_one("#prompt", TextArea)
        await pilot.press(*"some text")
        await pilot.press("ctrl+a", "backspace")
        assert prompt.text == ""

        prompt.text = PROMPT
        await wait_for(pilot, lambda: "graded on 50 items" in str(screen.query_one("#form-message").content))
        assert "runs on 122" in str(screen.query_one("#form-message").content)  # says which count the grade uses

        await pilot.press("ctrl+r")
        await run_to_end(pilot, screen)
        await pilot.pause()
        assert screen.focused is prompt and "session" in screen.sub_title
        await pilot.press("ctrl+n")
        assert screen.sub_title == "Compare"


def test_the_task_list_shows_what_each_task_asks() -> None:
    labels = dict((value, label) for label, value in task_options("cart"))
    assert "122 items" in labels["cart/remove-expensive"] and PROMPT in labels["cart/remove-expensive"]


async def test_choosing_a_task_sets_its_item_count(tmp_path: Path) -> None:
    app = make_app(store=Store(tmp_path / "t.db"))
    async with app.run_test(size=(140, 45)) as pilot:
        form = app.screen.query_one(RunForm)
        form.choose_task("cart/remove-expensive")
        await pilot.pause()
        assert form.values().items == "122" and form.values().prompt == PROMPT


@pytest.mark.parametrize(
    "size", [(80, 24), (90, 30), (119, 30), (120, 30), (180, 50)], ids=["80x24", "90x30", "119x30", "120x30", "180x50"]
)
async def test_every_field_of_the_run_form_reads_whole(tmp_path: Path, size: tuple[int, int]) -> None:
    """Every label is on screen with its field beside it, each field wide enough to read, and the prompt's
    placeholder is whole (it speaks of every arm, not of two)."""
    from textual.widgets import Label

    async with make_app(store=Store(tmp_path / "s.db")).run_test(size=size) as pilot:
        form = pilot.app.screen.query_one(RunForm)
        await pilot.pause()
        width = pilot.app.screen.size.width
        labels = {str(label.render()).strip(): label.region for label in form.query(Label)}
        assert set(labels) == {"App", "Items", "Model", "Task"}
        least = {"app": 20, "items": 5, "model": 16, "task": 24}
        for name, label_region in labels.items():
            field = form.query_one(f"#{name.lower()}").region
            assert label_region.width >= len(name) and label_region.right <= width, name
            assert field.y == label_region.y and field.x >= label_region.right, name
            assert field.right <= width - 1 and field.width >= least[name.lower()], (name, field)
        placeholder = str(form.query_one("#prompt", TextArea).placeholder)
        assert "every arm" in placeholder and "both" not in placeholder
        assert len(placeholder) <= form.query_one("#prompt", TextArea).content_region.width
