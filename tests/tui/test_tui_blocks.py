"""Transcript blocks and the strip drawn as lines: Markdown, expanded calls with their full results, wrapping."""

from __future__ import annotations

from tui_helpers import settle, wait_for

from workbench.events import ArmEvent, ToolResult
from workbench.summary import ArmSummary
from workbench.tui.app import make_app
from workbench.tui.markdown import markdown_lines
from workbench.tui.records import CallRecord
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.widgets.calls import ResponseBlock
from workbench.tui.widgets.strip import ComparisonStrip

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
    block = ResponseBlock(1)
    block.add(CallRecord("c1", "get_cart_item", {"item_id": "line-0001"}))
    block.records["c1"].result = ToolResult(
        "c1", "get_cart_item", "ok", content[:240], len(content), 0.5, None, content
    )
    block.toggle("c1")
    shown = "\n".join(plain(block.lines(80, "c1")[0]))
    assert '"product": "Linen Duvet Cover"' in shown and "x" * 60 in shown and "a preview" not in shown

    old = ResponseBlock(1)
    old.add(CallRecord("c1", "get_cart_item", {}))
    old.records["c1"].result = ToolResult("c1", "get_cart_item", "ok", content[:240], len(content), 0.5)
    old.toggle("c1")
    assert "a preview" in "\n".join(plain(old.lines(80, None)[0]))


def test_the_strip_wraps_between_figures_never_inside_one() -> None:
    tool, code = ArmSummary(name="tool"), ArmSummary(name="code")
    tool.requests, tool.cost_usd, tool.input_tokens, tool.wall_s, tool.status = 5, 0.0081, 28545, 0.9, "completed"
    code.requests, code.cost_usd, code.input_tokens, code.wall_s, code.status = 2, 0.0011, 3344, 1.0, "completed"
    strip = ComparisonStrip()
    strip.tool, strip.code = tool, code
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
