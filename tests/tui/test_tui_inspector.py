"""The snippet inspector: full code, every inner call in order, one call in full, copy to the clipboard."""

from __future__ import annotations

from conftest import SESSION_ID
from textual.widgets import DataTable, Static

from tests.support.tui_helpers import settle, wait_for
from workbench.events import ArmEvent, InnerCall, InnerResult, RunStarted, Snippet, SnippetDelta, ToolResult
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.screens.inspector import InspectorScreen
from workbench.tui.screens.replay import ReplayScreen

SIZE = (140, 45)


def text(widget: Static) -> str:
    return str(widget.content)


async def test_inspector_shows_the_snippet_its_inner_calls_and_copies_the_code(stored: Store) -> None:
    async with make_app(store=stored, replay=SESSION_ID, autoplay=False).run_test(size=SIZE) as pilot:
        replay = pilot.app.screen
        assert isinstance(replay, ReplayScreen)
        await wait_for(pilot, lambda: replay.clock is not None)
        await pilot.press("end")
        await settle(pilot, replay)
        transcript = replay.panes["code"].transcript
        (snippet,) = transcript.model.snippets.values()
        transcript.focus()  # the cursor starts on the latest item: the snippet
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, InspectorScreen), what="the inspector")
        inspector = pilot.app.screen
        await pilot.pause()

        code = text(inspector.query_one("#code", Static))
        lines = snippet.record.code.rstrip("\n").splitlines()
        numbered = [line for line in code.splitlines() if line[3] == "│"]  # the rest: a long line going on (┆)
        assert code.splitlines()[0].startswith(" 1 │ ") and len(numbered) == len(lines)
        shown = "".join(line[5:] for line in code.splitlines())
        assert "".join(shown.split()) == "".join(snippet.record.code.split())  # every character, none cut
        assert inspector.query_one("#code-pane").border_title == f"Code · {len(lines)} lines"  # as numbered
        table = inspector.query_one("#inner-calls", DataTable)
        assert table.row_count == len(snippet.record.inner) == 38
        assert [str(table.get_row_at(i)[1]) for i in range(4)] == ["list_cart_items"] * 3 + ["delete_cart_item"]
        assert "list_cart_items" in text(inspector.query_one("#call-detail", Static))

        table.focus()
        await pilot.press("down", "down", "down")
        detail = text(inspector.query_one("#call-detail", Static))
        assert "delete_cart_item" in detail and '"item_id": "line-0001"' in detail and "ok" in detail
        assert '"removed": 35' in text(inspector.query_one("#snippet-result", Static))

        copied: list[str] = []
        pilot.app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await pilot.press("c")
        assert copied == [snippet.record.code]
        await pilot.press("escape")
        await wait_for(pilot, lambda: pilot.app.screen is replay)


async def test_retries_and_sandbox_errors_are_red_with_the_message_the_model_got(store: Store) -> None:
    error = "Type error in code: error[invalid-syntax] line 3: unexpected indent"
    events = [
        ArmEvent("code", 0, 0.0, RunStarted("code", "scripted", "cart", 5, 0, "p", ["run_code"])),
        ArmEvent("code", 1, 0.1, SnippetDelta("c1", "x = await get_cart_item(item_id='nope')\n  oops")),
        ArmEvent("code", 2, 0.2, InnerCall("c1__1", "c1", "get_cart_item", {"item_id": "nope"})),
        ArmEvent("code", 3, 0.3, InnerResult("c1__1", "c1", "get_cart_item", "retried", "", 0, 0.2, "no item 'nope'")),
        ArmEvent("code", 4, 0.4, ToolResult("c1", "run_code", "retried", "", 80, 3.0, error)),
    ]
    async with make_app(store=store).run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        screen.feed.put_many(events)
        await settle(pilot, screen)
        (entry,) = screen.panes["code"].transcript.model.snippets.values()
        snippet = screen.panes["code"].transcript.block(entry)
        lines, _ = snippet.lines(200, None)
        assert any("$error" in str(span.style) for span in lines[0].spans)  # the snippet's bar
        assert error in snippet.plain and "the model received" in snippet.plain
        assert "no item 'nope'" in snippet.plain
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, InspectorScreen))
        inspector = pilot.app.screen
        assert "retried" in str(inspector.query_one("#inner-calls", DataTable).get_row_at(0)[3])
        assert error in text(inspector.query_one("#snippet-result", Static))


async def test_the_inspector_shows_whole_results_and_marks_previews_of_older_recordings(store: Store) -> None:
    whole = '{"id": "line-0001", "notes": "' + "n" * 400 + '"}'
    events = [
        ArmEvent("code", 0, 0.0, RunStarted("code", "scripted", "cart", 5, 0, "p", ["run_code"])),
        ArmEvent("code", 1, 0.1, SnippetDelta("c1", "await get_cart_item(item_id='line-0001')")),
        ArmEvent("code", 2, 0.2, InnerCall("c1__1", "c1", "get_cart_item", {"item_id": "line-0001"})),
        ArmEvent(
            "code", 3, 0.3, InnerResult("c1__1", "c1", "get_cart_item", "ok", whole[:240], len(whole), 0.2, None, whole)
        ),
        ArmEvent("code", 4, 0.4, InnerCall("c1__2", "c1", "get_cart_item", {"item_id": "line-0002"})),
        ArmEvent("code", 5, 0.5, InnerResult("c1__2", "c1", "get_cart_item", "ok", whole[:240], len(whole), 0.2)),
    ]
    async with make_app(store=store).run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        screen.feed.put_many(events)
        await settle(pilot, screen)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, InspectorScreen))
        inspector = pilot.app.screen
        await pilot.pause()
        detail = text(inspector.query_one("#call-detail", Static))
        assert "n" * 400 in detail and "a preview" not in detail
        await pilot.press("down")
        detail = text(inspector.query_one("#call-detail", Static))
        assert "n" * 400 not in detail and "a preview: this session was recorded before" in detail


async def test_a_snippet_whose_arguments_were_not_json_shows_the_recovered_code_and_the_raw_text(
    store: Store,
) -> None:
    raw = '{"code": "x = 1\ny = 2"}'  # a raw newline inside the string: not valid JSON
    told = '{"error":[{"type":"missing","loc":["code"],"msg":"Field required"}]}'
    events = [
        ArmEvent("code", 0, 0.0, RunStarted("code", "openai-chat:m", "cart", 5, 0, "p", ["run_code"])),
        ArmEvent("code", 1, 0.1, SnippetDelta("c1", "x = 1\ny = 2")),
        ArmEvent("code", 2, 0.2, Snippet("c1", "x = 1\ny = 2", raw_arguments=raw)),
        ArmEvent("code", 3, 0.3, ToolResult("c1", "run_code", "retried", "", len(told), 0.0, told)),
    ]
    async with make_app(store=store).run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        screen.feed.put_many(events)
        await settle(pilot, screen)
        (entry,) = screen.panes["code"].transcript.model.snippets.values()
        snippet = screen.panes["code"].transcript.block(entry)
        assert "2 lines" in snippet.plain and "arguments were not valid JSON" in snippet.plain
        assert "sandbox error" not in snippet.plain and "Field required" in snippet.plain
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, InspectorScreen))
        inspector = pilot.app.screen
        await pilot.pause()
        title = str(inspector.query_one("#code-pane").border_title)
        assert title == "Code · 2 lines · arguments were not valid JSON: recovered, never ran"
        result = text(inspector.query_one("#snippet-result", Static))
        assert "arguments were not valid JSON; as written:" in result and raw in result and told in result
