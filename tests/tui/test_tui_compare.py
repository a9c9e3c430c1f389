"""The compare screen, driven like a person would: type, run, cancel, pick a task, get told what is wrong."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from textual.binding import Binding
from textual.widgets import Input, Select, Static, TextArea
from textual.widgets._footer import FooterKey

import workbench.apps as apps
from tests.support.tui_helpers import run_to_end, wait_for
from workbench.config import load_settings, recent_models, remember_model
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.screens.help import keys_table
from workbench.tui.widgets.arm_pane import ArmPane
from workbench.tui.widgets.calls import ResponseBlock
from workbench.tui.widgets.run_form import RunForm
from workbench.tui.widgets.snippet import SnippetBlock
from workbench.tui.widgets.strip import ComparisonStrip

PROMPT = "Remove everything in the cart that costs more than $50 apiece."
SIZE = (140, 45)


def form_message(screen: CompareScreen) -> str:
    return str(screen.query_one("#form-message", Static).content)


async def test_type_a_prompt_run_and_both_arms_finish_with_figures_and_a_diff(store: Store) -> None:
    app = make_app(store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        assert isinstance(screen.focused, TextArea), "the prompt has focus at start"
        await pilot.press(*PROMPT)
        await pilot.press("ctrl+r")
        await run_to_end(pilot, screen)

        tool, code = screen.panes["tool"], screen.panes["code"]
        for pane in (tool, code):
            summary = pane.summary
            assert summary.status == "completed" and summary.passed is True
            assert summary.requests > 0 and summary.input_tokens > 0 and summary.output_tokens > 0
            assert summary.cost_usd and summary.cost_usd > 0 and summary.wall_s > 0
            assert pane.outcome.has_class("-shown")
            assert pane.outcome.table.row_count == summary.diff["deleted"] > 0
        assert tool.summary.tool_calls > tool.summary.diff["deleted"]  # the listed pages, then one call per item
        assert code.summary.inner_calls == tool.summary.tool_calls and code.summary.snippets == 1
        assert tool.summary.input_tokens > code.summary.input_tokens
        assert len(tool.summary.input_tokens_per_request) == tool.summary.requests

        calls = tool.transcript.model.calls
        assert len(calls) == tool.summary.tool_calls
        assert all(isinstance(tool.transcript.block(entry), ResponseBlock) for entry in calls.values())
        assert all(record.outcome == "ok" for entry in calls.values() for record in entry.records.values())
        (snippet,) = code.transcript.model.snippets.values()
        assert isinstance(code.transcript.block(snippet), SnippetBlock) and "list_cart_items" in snippet.record.code
        assert len(snippet.record.inner) == code.summary.inner_calls

        session_id = screen.last_comparison.session_id if screen.last_comparison else ""
        assert session_id and session_id in form_message(screen)
        stored = store.session(session_id)
        assert stored.status == "completed" and [arm.passed for arm in stored.arms] == [True, True]


async def test_escape_cancels_both_arms_and_the_session_is_saved(store: Store) -> None:
    """A paced run takes many seconds: arms that end as cancelled were stopped by the Escape (how quickly is a
    figure of ``python -m reliability --only limits``)."""
    app = make_app(store=store, model="scripted:paced")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        screen.query_one("#prompt", TextArea).text = PROMPT
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: screen.panes["tool"].summary.requests >= 1, what="the first request")
        await pilot.press("escape")
        await wait_for(pilot, lambda: screen.last_comparison is not None, what="both arms to stop")
        assert {pane.summary.status for pane in screen.panes.values()} == {"cancelled"}
        assert "cancelled" in form_message(screen)
        session = store.session(screen.last_comparison.session_id)  # type: ignore[union-attr]
        assert session.status == "cancelled" and {arm.status for arm in session.arms} == {"cancelled"}


async def test_task_picker_fills_app_items_and_prompt(store: Store) -> None:
    app = make_app(store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        screen.query_one(RunForm).choose_task("kanban/archive-done")
        await pilot.pause()
        assert screen.query_one("#app", Select).value == "kanban"
        assert screen.query_one("#items").value == "150"  # type: ignore[attr-defined]
        assert "Ben Lindqvist" in screen.query_one("#prompt", TextArea).text
        assert "kanban/archive-done" in form_message(screen)

        screen.query_one("#app", Select).value = "cart"  # a person picks another app
        await pilot.pause()
        task = screen.query_one("#task", Select)
        assert task.value is Select.NULL and screen.query_one("#items").value == "50"  # type: ignore[attr-defined]
        assert {value for _, value in task._options if value is not Select.NULL} == {
            t.id for t in apps.tasks_for("cart")
        }


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("#prompt", "   \n  ", "Type a prompt first"),
        ("#items", "0", "items must be between"),
        ("#items", "lots", "whole number"),
        ("#model", "nonsense", "unknown model 'nonsense'"),
        ("#model", "[/b]", "unknown model '[/b]'"),  # quoted as typed, not read as markup
        ("#model", "anthropic:claude-sonnet-4-5", "cannot use model"),
    ],
)
async def test_bad_input_is_an_inline_message_not_a_crash(store: Store, field: str, value: str, message: str) -> None:
    app = make_app(store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        screen.query_one("#prompt", TextArea).text = PROMPT
        widget = screen.query_one(field)
        if isinstance(widget, TextArea):
            widget.text = value
        else:
            widget.value = value  # type: ignore[attr-defined]
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert message in form_message(screen)
        assert screen.query_one("#form-message").has_class("-error")
        assert not screen.running and store.count_sessions() == 0


async def test_an_error_under_the_form_stays_when_an_earlier_change_is_handled_after_it(store: Store) -> None:
    """A change made before ctrl+r can be handled after the run was refused (another widget's message queue):
    the task note it schedules must not replace the error for the same values."""
    app = make_app(store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        form = screen.query_one(RunForm)
        screen.query_one("#prompt", TextArea).text = PROMPT
        screen.query_one("#items", Input).value = "0"
        await wait_for(pilot, lambda: form._match_timer is None, what="the note for the typed values")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: "items must be between" in form_message(screen), what="the error")
        form._prompt_changed()  # the earlier change, handled late
        await wait_for(pilot, lambda: form._match_timer is None, what="the late change to be matched")
        assert "items must be between" in form_message(screen)
        assert screen.query_one("#form-message").has_class("-error")
        screen.query_one("#items", Input).value = "40"  # a new change: the note may speak again
        await wait_for(pilot, lambda: "graded on 40 items" in form_message(screen), what="the note for 40 items")


@pytest.mark.parametrize(
    "prompt",
    [
        "delete \x1b[31mred\x1b[0m \x07 everything\x00",
        "احذف كل شيء في السلة \u202e reversed \u202c",
        "🛒🔥 remove 💸 everything over $50 👩‍👩‍👧",
    ],
    ids=["control-chars", "rtl-and-bidi", "emoji"],
)
async def test_unusual_prompts_run_without_breaking_the_layout(store: Store, prompt: str) -> None:
    app = make_app(store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        screen.query_one("#prompt", TextArea).text = prompt
        await pilot.press("ctrl+r")
        await run_to_end(pilot, screen)
        for pane in screen.panes.values():
            assert pane.summary.status == "completed"  # the scripted model explains what it can do
            assert pane.region.width >= 60 and pane.region.height >= 20
        strip = screen.query_one("#strip", ComparisonStrip)
        assert strip.region.height == len(strip._lines(strip.size.width)) <= 2  # the figures, the demo label
        assert screen.query_one("#panes").region.bottom <= SIZE[1] - 1
        assert store.session(screen.last_comparison.session_id).prompt == prompt  # type: ignore[union-attr]


async def test_a_100_kb_prompt_keeps_the_form_in_shape(store: Store) -> None:
    app = make_app(store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        prompt = screen.query_one("#prompt", TextArea)
        prompt.text = ("Remove every item over $50 " * 4000)[:100_000]
        await pilot.pause()
        assert prompt.region.height == 6 and screen.query_one("#panes").region.height >= 25
        assert len(prompt.text) == 100_000


async def test_narrow_terminals_stack_the_panes(store: Store) -> None:
    app = make_app(store=store)
    async with app.run_test(size=(100, 60)) as pilot:
        await pilot.pause()
        tool, code = app.screen.query(ArmPane)
        assert app.screen.has_class("-narrow")
        assert tool.region.x == code.region.x and code.region.y >= tool.region.bottom
    async with make_app(store=store).run_test(size=SIZE) as pilot:
        await pilot.pause()
        tool, code = pilot.app.screen.query(ArmPane)
        assert tool.region.y == code.region.y and code.region.x >= tool.region.right


async def test_one_arm_failing_shows_in_its_pane_and_the_other_completes(store: Store) -> None:
    from workbench.events import ArmEvent, RunFinished, RunStarted
    from workbench.tui.widgets.blocks import Notice

    app = make_app(store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        screen.feed.put_many(
            [
                ArmEvent("tool", 0, 0.0, RunStarted("tool", "scripted", "cart", 5, 0, "p", ["list_cart_items"])),
                ArmEvent("code", 0, 0.0, RunStarted("code", "scripted", "cart", 5, 0, "p", ["run_code"])),
                ArmEvent("tool", 1, 0.1, RunFinished("failed", "ModelHTTPError: status_code: 500", "")),
            ]
        )
        await wait_for(pilot, lambda: screen.feed.idle)
        await pilot.pause()
        tool = screen.panes["tool"]
        notice = tool.transcript.blocks[-1]
        assert tool.has_class("-failed") and isinstance(notice, Notice) and "ModelHTTPError" in notice.plain
        assert screen.panes["code"].summary.status == "running"


async def test_streamed_text_that_ends_the_run_becomes_the_final_answer_once(recorded_events) -> None:  # type: ignore[no-untyped-def]
    """Text split across batches, its last piece arriving with the run's end: one answer block, not two."""
    from workbench.events import TextDelta
    from workbench.timeline import TextEntry
    from workbench.tui.widgets.blocks import TextBlock

    tool = [event for event in recorded_events if event.arm == "tool"]
    first_text = next(i for i, event in enumerate(tool) if isinstance(event.payload, TextDelta))
    async with make_app(store=None).run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        screen.feed.put_many(tool[: first_text + 1])
        await wait_for(pilot, lambda: screen.feed.idle)
        screen.feed.put_many(tool[first_text + 1 :])
        await wait_for(pilot, lambda: screen.feed.idle)
        await pilot.pause()
        transcript = screen.panes["tool"].transcript
        (answer,) = [entry for entry in transcript.model.entries if isinstance(entry, TextEntry)]
        assert answer.answer and answer.text == screen.panes["tool"].summary.output
        assert isinstance(transcript.block(answer), TextBlock)


async def test_escape_right_after_ctrl_r_still_cancels(store: Store) -> None:
    app = make_app(store=store, model="scripted:paced")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        screen.query_one("#prompt", TextArea).text = PROMPT
        await pilot.press("ctrl+r", "escape")
        await wait_for(pilot, lambda: screen.last_comparison is not None, what="the cancel")
        assert screen.last_comparison is not None and screen.last_comparison.status == "cancelled"


async def test_the_model_field_suggests_models_used_before_most_recent_first(store: Store) -> None:
    for spec in ("openai:gpt-5", "ollama:qwen3:8b"):  # as earlier runs left them, newest last
        remember_model(spec)
    app = make_app(store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        form = screen.query_one(RunForm)
        await wait_for(pilot, lambda: bool(form.recent_models), what="the remembered models")
        model = screen.query_one("#model", Input)
        model.value = ""
        model.focus()
        await pilot.press("o")
        await wait_for(pilot, lambda: model._suggestion == "ollama:qwen3:8b", what="the newest model suggested")
        await pilot.press("p")  # "op": the older one, before the built-in list's openai:gpt-5-mini
        await wait_for(pilot, lambda: model._suggestion == "openai:gpt-5", what="the older remembered model")

        model.value = "scripted:paced"
        screen.query_one("#prompt", TextArea).text = PROMPT
        await pilot.press("ctrl+r")
        assert form.recent_models[0] == "scripted:paced"  # suggested first as soon as it runs
        await wait_for(pilot, lambda: recent_models()[:1] == ["scripted:paced"], what="the model kept for next time")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not screen.running, what="the cancelled run to end")


async def test_command_line_settings_reach_the_runs_started_in_the_tui(store: Store) -> None:
    """``workbench --request-limit 2``: a tool arm that needs more requests is stopped by it, in the TUI too."""
    app = make_app(store=store, settings=load_settings(request_limit=2))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        screen.query_one("#prompt", TextArea).text = PROMPT
        screen.query_one("#items", Input).value = "122"  # three pages to list: more than two requests
        await pilot.press("ctrl+r")
        await run_to_end(pilot, screen)
        tool = screen.panes["tool"].summary
        assert tool.status == "failed" and tool.requests == 2
        assert "request limit" in (tool.error or "").lower()
        assert screen.panes["code"].summary.status == "completed"


async def test_a_run_whose_database_stays_locked_says_so_in_a_notification(tmp_path: Path) -> None:
    db = tmp_path / "locked.db"
    store = Store(db, busy_timeout_s=0.2)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # a real write lock, held by another connection for the whole run
    try:
        app = make_app(store=store)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, CompareScreen)
            await pilot.press(*PROMPT)
            await pilot.press("ctrl+r")
            await run_to_end(pilot, screen)
            comparison = screen.last_comparison
            assert comparison is not None and not comparison.stored
            await wait_for(pilot, lambda: any("not fully stored" in (n.title or "") for n in app._notifications))
            (note,) = [n for n in app._notifications if "not fully stored" in (n.title or "")]
            assert "stayed locked" in note.message and f"{comparison.session_id}.jsonl" in note.message
    finally:
        holder.execute("COMMIT")
        holder.close()


async def test_a_follow_up_prompt_continues_the_session_on_the_same_state(store: Store) -> None:
    save = "Move every electronics item in my cart to my saved-for-later list."
    restore = "Move every saved-for-later item under $40 back into my cart, one of each."
    app = make_app(store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await pilot.press("ctrl+f")  # nothing on screen to continue yet
        assert "Run a prompt first" in form_message(screen)
        screen.query_one(RunForm).fill(app="cart", items=30, prompt=save)
        await pilot.press("ctrl+r")
        await run_to_end(pilot, screen)
        first = screen.last_comparison
        assert first is not None and "ctrl+f sends the prompt as the next turn" in form_message(screen)
        await wait_for(pilot, lambda: screen.can_follow_up, what="the session to take a follow-up")

        prompt = screen.query_one("#prompt", TextArea)
        prompt.text = restore
        await pilot.press("ctrl+f")
        await run_to_end(pilot, screen)
        second = screen.last_comparison
        assert second is not None and second.session_id == first.session_id
        assert "turn 2" in form_message(screen)
        for pane in screen.panes.values():
            summary = pane.summary
            assert summary.status == "completed" and summary.passed is True
            assert [turn.prompt for turn in summary.turns] == [save, restore]
            # Turn 2 ran on what turn 1 left: the 8 electronics items it saved are there to restore.
            assert "7 items stay saved" in summary.turns[1].output
            (turn_entry,) = pane.transcript.model.turns
            assert turn_entry.turn == 2 and turn_entry.prompt == restore
            answers = [e for e in pane.transcript.model.entries if getattr(e, "answer", False)]
            assert len(answers) == 2
        stored = store.load(first.session_id)
        assert store.session(first.session_id).status == "completed"
        for arm in stored.arms.values():
            assert [turn.prompt for turn in arm.summary.turns] == [save, restore]
            assert arm.summary.passed

        await pilot.press("ctrl+n")  # clear: the session's apps close, a follow-up is no longer offered
        await wait_for(pilot, lambda: not screen.can_follow_up, what="the follow-up to close")


def footer_keys(screen: CompareScreen) -> dict[str, tuple[str, int]]:
    """The footer's keys on ``screen``: key shown -> (description, right edge)."""
    return {key.key_display: (key.description, key.region.right) for key in screen.query(FooterKey)}


async def test_the_footer_names_ctrl_f_only_while_the_session_on_screen_takes_a_follow_up(store: Store) -> None:
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await wait_for(pilot, lambda: len(screen.query(FooterKey)) > 0, what="the footer")
        follow_up = app.get_key_display(Binding("ctrl+f", ""))
        assert follow_up not in footer_keys(screen)  # nothing to continue yet
        await pilot.press("ctrl+f")  # the key still answers, with what it needs
        assert "Run a prompt first" in form_message(screen)
        assert screen.query_one("#prompt", TextArea).text == "", "ctrl+f reached the prompt (delete word)"

        screen.query_one(RunForm).fill(app="cart", items=30, prompt=PROMPT)
        await pilot.press("ctrl+r")
        await run_to_end(pilot, screen)
        await wait_for(pilot, lambda: follow_up in footer_keys(screen), what="ctrl+f in the footer")
        await pilot.pause()
        description, right = footer_keys(screen)[follow_up]
        assert description == "Follow up"
        assert "`^f` | **Follow up** |" in keys_table(screen)  # f1 lists it as usable now
        assert "esc" not in footer_keys(screen)  # escape has nothing to cancel: its place is ctrl+f's
        assert right <= 80 - len(" ^p palette"), f"ctrl+f is cut off at column {right}"

        await pilot.press("ctrl+n")  # cleared: the session's apps close, ctrl+f leaves the footer
        await wait_for(pilot, lambda: follow_up not in footer_keys(screen), what="ctrl+f to leave the footer")
        assert not screen.can_follow_up
