"""Transcript blocks and the strip drawn as lines: Markdown, expanded calls with their full results, wrapping."""

from __future__ import annotations

from tests.support.tui_helpers import settle, wait_for
from workbench.display import DEMO_LABEL
from workbench.events import ArmEvent, Payload, RequestStarted, SnippetDelta, ToolCall, ToolResult
from workbench.summary import ArmSummary
from workbench.timeline import ResponseEntry
from workbench.timeline_records import CallRecord
from workbench.tui.app import make_app
from workbench.tui.markdown import markdown_lines
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.widgets.calls import MORE, ResponseBlock
from workbench.tui.widgets.roster import main_counters
from workbench.tui.widgets.strip import ComparisonStrip
from workbench.tui.widgets.transcript import Transcript

SIZE = (140, 45)


def plain(lines: list) -> list[str]:  # type: ignore[type-arg]
    return [line.plain for line in lines]


def test_markdown_is_laid_out_as_lines_within_the_width() -> None:
    text = "# Done\n\nRemoved **35 items** over `$50`:\n\n- one item whose line is long enough to wrap\n- two\n"
    lines = plain(markdown_lines(text, 24))
    assert lines[0] == "Done" and "Removed 35 items over" in lines
    assert "• one item whose line is" in lines and "  long enough to wrap" in lines
    assert all(len(line) <= 24 for line in lines)
    assert plain(markdown_lines("still **streaming", 40)) == ["still **streaming"]


def test_an_expanded_call_shows_its_whole_result_or_says_it_has_only_a_preview() -> None:
    content = '{"id": "line-0001", "product": "Linen Duvet Cover", "notes": "' + "x" * 300 + '"}'
    block = ResponseBlock(ResponseEntry(request=1))
    block.records["c1"] = CallRecord("c1", "get_cart_item", {"item_id": "line-0001"})
    block.records["c1"].result = ToolResult(
        "c1", "get_cart_item", "ok", content[:240], len(content), 0.5, None, content
    )
    block.toggle("c1")
    shown = "\n".join(plain(block.lines(80, "c1")[0]))
    assert '"product": "Linen Duvet Cover"' in shown and "x" * 60 in shown and "a preview" not in shown

    old = ResponseBlock(ResponseEntry(request=1))
    old.records["c1"] = CallRecord("c1", "get_cart_item", {})
    old.records["c1"].result = ToolResult("c1", "get_cart_item", "ok", content[:240], len(content), 0.5)
    old.toggle("c1")
    assert "a preview" in "\n".join(plain(old.lines(80, None)[0]))


def test_the_strip_wraps_between_figures_never_inside_one() -> None:
    tool, code = ArmSummary(name="tool", tool_calls=38), ArmSummary(name="code", tool_calls=1)
    tool.requests, tool.cost_usd, tool.input_tokens, tool.wall_s, tool.status = 5, 0.0081, 28545, 0.9, "completed"
    code.requests, code.cost_usd, code.input_tokens, code.wall_s, code.status = 2, 0.0011, 3344, 1.0, "completed"
    strip = ComparisonStrip()
    strip.arms = [tool, code]
    wide, narrow = plain(strip._lines(140)), plain(strip._lines(80))
    assert len(wide) == 1 and len(narrow) == 2
    assert all(len(line) <= 80 for line in narrow)
    assert narrow[1].startswith("wall time") and narrow[0].endswith("code ✓")


async def test_up_and_enter_expand_a_call_in_the_pane(recorded_events: list[ArmEvent]) -> None:
    async with make_app(store=None).run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        screen.feed.put_many(recorded_events)
        await settle(pilot, screen)
        transcript = screen.panes["tool"].transcript
        transcript.focus()
        await pilot.press("up", "up", "enter")
        await pilot.pause()
        assert transcript.cursor is not None
        block, call_id = transcript.cursor
        assert isinstance(block, ResponseBlock) and call_id in block.expanded
        result = block.records[call_id].result
        assert result is not None and result.content
        assert "result (as the model saw it)" in block.plain and '"product":' in block.plain
        assert not transcript.following  # picking a row higher up stops the pane following the run
        await pilot.press("enter")
        await wait_for(pilot, lambda: call_id not in block.expanded, what="the call to fold")


def _events(arm: str, *payloads: Payload) -> list[ArmEvent]:
    return [ArmEvent(arm, seq, 0.01 * seq, payload) for seq, payload in enumerate(payloads)]


def _bar_colour(transcript: Transcript, text: str) -> tuple[str | None, str | None]:
    """The colour of the bar and the background of the painted line that shows ``text``."""
    for y in range(transcript.scrollable_content_region.height):
        strip = transcript.render_line(y)
        if text in strip.text:
            style = next(iter(strip)).style
            return (style.color.name if style and style.color else None,
                    style.bgcolor.name if style and style.bgcolor else None)  # fmt: skip
    raise AssertionError(f"{text!r} is not on screen")


async def test_lines_are_painted_again_when_only_their_colours_change() -> None:
    """Picking a snippet, a snippet failing and a new theme all restyle lines whose text stays the same."""
    async with make_app(store=None).run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        transcript = screen.panes["code"].transcript
        screen.feed.put_many(_events("code", RequestStarted(1), SnippetDelta("s1", "x = 1\ny = 2\n")))
        await settle(pilot, screen)
        plain = _bar_colour(transcript, "x = 1")
        transcript.focus()
        await pilot.pause()
        picked = _bar_colour(transcript, "x = 1")
        assert picked != plain  # the picked snippet's bar and background
        screen.query_one("#prompt").focus()
        await pilot.pause()
        assert _bar_colour(transcript, "x = 1") == plain
        screen.feed.put_many(
            [ArmEvent("code", 2, 0.1, ToolResult("s1", "run_code", "failed", "", 0, 1.0, "NameError"))]
        )
        await settle(pilot, screen)
        failed = _bar_colour(transcript, "x = 1")
        assert failed[0] != plain[0]
        pilot.app.theme = "nord"
        await pilot.pause()
        await pilot.pause()
        assert _bar_colour(transcript, "x = 1") not in (failed, plain)


async def test_focusing_a_pane_by_clicking_expands_the_row_clicked(
    recorded_events: list[ArmEvent],
) -> None:
    async with make_app(store=None).run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        screen.feed.put_many(recorded_events)
        await settle(pilot, screen)
        transcript = screen.panes["tool"].transcript
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        row = next(y for y in range(10) if "list_cart_items(page=1)" in transcript.render_line(y).text)
        await pilot.click(transcript, offset=(10, row + transcript.styles.gutter.top))  # below the top border
        await pilot.pause()
        assert transcript.has_focus and transcript.scroll_y <= row  # at most brought the expansion into view
        block, call_id = transcript.cursor or (None, "")
        assert isinstance(block, ResponseBlock) and block.records[call_id].name == "list_cart_items"
        assert call_id in block.expanded and not any(getattr(b, "show_all", False) for b in transcript.blocks)
        scrolled = transcript.scroll_y
        await pilot.press("tab")  # leaving the pane does not scroll it
        await pilot.pause()
        assert transcript.scroll_y == scrolled


async def test_a_picked_call_pushed_out_by_newer_calls_leaves_the_cursor_on_earlier_calls() -> None:
    async with make_app(store=None).run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        transcript = screen.panes["tool"].transcript
        calls = [ToolCall(f"c{n}", "get_cart_item", {"item_id": f"line-{n:04d}"}) for n in range(3)]
        screen.feed.put_many(_events("tool", RequestStarted(1), *calls))
        await settle(pilot, screen)
        transcript.focus()
        await pilot.press("up")
        assert transcript.cursor is not None and transcript.cursor[1] == "c1"
        more = [ArmEvent("tool", 10 + n, 1.0, ToolCall(f"d{n}", "get_cart_item", {})) for n in range(12)]
        screen.feed.put_many(more)
        await settle(pilot, screen)
        assert transcript.cursor is not None and transcript.cursor[1] == MORE
        assert any("▸ … " in transcript.render_line(y).text for y in range(transcript.size.height))


def test_tabs_in_a_code_fence_are_expanded_before_the_line_is_fitted() -> None:
    lines = plain(markdown_lines("```python\ndef f():\n\t\treturn compute_the_total(items, threshold) + 42\n```", 40))
    code = [line for line in lines if "│" in line]
    assert "".join(code).replace("│", "").replace(" ", "").endswith("compute_the_total(items,threshold)+42")
    assert all(len(line) <= 40 for line in lines)


def test_tool_names_with_terminal_escapes_are_shown_harmlessly() -> None:
    block = ResponseBlock(ResponseEntry(request=1))
    block.records["c1"] = CallRecord("c1", "evil\x1b[1;1HTOPLEFT", {"a": 1})
    shown = block.plain
    assert "\x1b" not in shown and "␛[1;1HTOPLEFT" in shown


def test_the_strip_judges_wall_time_mid_run_only_once_it_is_decided() -> None:
    tool, code = ArmSummary(name="tool"), ArmSummary(name="code")
    tool.requests = code.requests = 2
    strip = ComparisonStrip()
    strip.arms = [tool, code]
    tool.wall_s, code.wall_s = 1.0, 1.2  # both running: the latest events say nothing about the end
    assert "wall time when both end" in plain(strip._lines(200))[0]
    code.status, code.wall_s, tool.wall_s = "completed", 2.45, 5.74  # code ended; tool already ran longer
    line = plain(strip._lines(200))[0]
    assert "wall time ≤-57%" in line and "✓" not in line, "a bound, but no winner until both ended"
    tool.wall_s = 2.0  # code ended at 2.45 s, tool still running at 2.0 s: not decided yet
    assert "wall time when both end" in plain(strip._lines(200))[0]
    tool.status, code.status, tool.wall_s = "completed", "running", 5.0  # the other way round: tool ended first
    code.wall_s = 6.0
    line = plain(strip._lines(200))[0]
    assert "wall time ≥+20%" in line and "✓" not in line


def test_the_strip_marks_no_winner_mid_run_and_waits_for_a_first_response() -> None:
    tool, code = ArmSummary(name="tool", mode="tool"), ArmSummary(name="code", mode="code")
    strip = ComparisonStrip()
    strip.arms = [tool, code]
    tool.requests = code.requests = tool.tool_calls = code.tool_calls = 1
    tool.input_tokens, tool.input_tokens_per_request, tool.cost_usd = 1200, [1200], 0.002
    line = plain(strip._lines(300))[0]  # code's first request is in flight
    assert "cost waiting" in line and "input tokens waiting" in line and "0 in" not in line
    assert "✓" not in line
    code.input_tokens, code.input_tokens_per_request, code.cost_usd = 300, [300], 0.0005
    line = plain(strip._lines(300))[0]  # both answered, both still running: figures, no winner
    assert "cost -75%" in line and "✓" not in line
    tool.status = code.status = "completed"
    tool.wall_s, code.wall_s = 2.0, 1.0
    assert "cost -75% code ✓" in plain(strip._lines(300))[0]
    assert main_counters(ArmSummary(name="x", mode="code", requests=1), 1.5) == "waiting · 1.50 s"


def test_the_strip_says_scripted_figures_are_a_demonstration() -> None:
    tool, code = (
        ArmSummary(name=n, mode=n, model="scripted", status="completed", requests=2) for n in ("tool", "code")
    )
    strip = ComparisonStrip()
    strip.arms = [tool, code]
    assert DEMO_LABEL in plain(strip._lines(400))[0]
    code.model = "openai:gpt-4o"
    assert DEMO_LABEL not in "".join(plain(strip._lines(400)))
