"""Conversations: a run of several user turns, each arm answering them in order on its own state and history."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import FunctionToolset

import workbench
from workbench.errors import BadInput
from workbench.events import RunFinished, TurnEnded, TurnStarted
from workbench.runner import ComparisonRun, RunRequest, prepare
from workbench.scripted.model import current_turn, decide
from workbench.sources import AppInstance, AppSource
from workbench.turns import TurnCall, turn_calls, turn_prompts

SAVE = "Move every electronics item in my cart to my saved-for-later list."
RESTORE = "Move every saved-for-later item under $40 back into my cart, one of each."
TURNS = [SAVE, RESTORE]


@pytest.fixture(scope="module")
def conversation() -> workbench.Comparison:
    return workbench.compare_sync(turns=TURNS, app="cart", db=False)


def test_each_arm_answers_every_turn_and_is_graded_at_the_end(conversation: workbench.Comparison) -> None:
    assert conversation.task == "cart/save-category + cart/restore-saved"
    for arm in conversation.arms.values():
        summary = arm.summary
        assert summary.status == "completed" and summary.passed, (arm.name, summary.mismatches)
        assert [turn.prompt for turn in summary.turns] == TURNS
        assert [turn.status for turn in summary.turns] == ["completed", "completed"]
        first, second = summary.turns
        assert first.output.startswith("Moved 8 Electronics items")
        # Turn 2 sees turn 1's state: the 8 items it saved are on the list it restores from (4 under $40).
        assert second.output.startswith("Moved 4 saved items under $40") and "7 items stay saved" in second.output
        # The turns' figures add up to the conversation's.
        assert first.requests + second.requests == summary.requests
        assert first.input_tokens + second.input_tokens == summary.input_tokens
        assert first.tool_calls + second.tool_calls == summary.tool_calls
        kinds = [(event.turn, event.kind) for event in arm.events if event.kind in ("turn_started", "turn_ended")]
        assert kinds == [(1, "turn_started"), (1, "turn_ended"), (2, "turn_started"), (2, "turn_ended")]
        assert turn_prompts(arm.events) == TURNS
        assert [event.seq for event in arm.events] == list(range(len(arm.events)))
        assert sum(isinstance(event.payload, RunFinished) for event in arm.events) == 1


def test_per_turn_calls_include_the_code_arms_inner_calls(conversation: workbench.Comparison) -> None:
    tool_calls = turn_calls(conversation.arms["tool"].events)
    code_calls = turn_calls(conversation.arms["code"].events)
    assert [len(calls) for calls in tool_calls] == [len(calls) for calls in code_calls] == [17, 9]
    for calls in (tool_calls, code_calls):
        assert all(call.outcome == "ok" and call.ran for turn in calls for call in turn)
        assert {call.name for call in calls[0]} == {"list_cart_items", "create_saved_item", "delete_cart_item"}
    assert all(call.parent is None for call in tool_calls[1])
    assert all(call.parent is not None and call.name != "run_code" for call in code_calls[1])
    # The same actions, in both arms, turn by turn.
    for tool_turn, code_turn in zip(tool_calls, code_calls, strict=True):
        assert _actions(tool_turn) == _actions(code_turn)


def _actions(calls: Sequence[TurnCall]) -> list[tuple[str, list[tuple[str, Any]]]]:
    return sorted((c.name, sorted(c.args.items())) for c in calls if isinstance(c.args, dict) and "list" not in c.name)


def test_turn_two_gets_turn_ones_messages_in_both_arms() -> None:
    seen: dict[str, list[list[ModelMessage]]] = {}

    def recording(arm: str) -> FunctionModel:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            seen.setdefault(arm, []).append(list(messages))
            return decide(messages, info)

        return FunctionModel(respond, model_name=f"recording-{arm}")

    comparison = workbench.compare_sync(
        turns=TURNS, app="cart", db=False, arm_models={"tool": recording("tool"), "code": recording("code")}
    )
    for arm in ("tool", "code"):
        assert comparison.arms[arm].summary.passed
        requests = seen[arm]
        prompts_of = [_user_prompts(messages) for messages in requests]
        turn_two = [index for index, prompts in enumerate(prompts_of) if RESTORE in prompts]
        assert turn_two, arm
        first_of_two = requests[turn_two[0]]
        assert prompts_of[turn_two[0]] == TURNS  # turn 1's prompt is in the history turn 2 sends
        # ...and so is all of turn 1: every message of turn 1's last request, and its answer.
        before = requests[turn_two[0] - 1]
        assert len(first_of_two) == len(before) + 2


def _user_prompts(messages: Sequence[ModelMessage]) -> list[str]:
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and isinstance(part.content, str)
    ]


def test_a_turn_that_fails_ends_the_conversation_there() -> None:
    calls = {"n": 0}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls["n"] += 1
        if RESTORE in _user_prompts(messages):
            raise RuntimeError("the provider broke on turn 2")
        return decide(messages, info)

    comparison = workbench.compare_sync(
        turns=[SAVE, RESTORE, SAVE], app="cart", db=False, arms=["tool"], model=FunctionModel(respond)
    )
    summary = comparison.arms["tool"].summary
    assert summary.status == "failed" and "turn 2" in (summary.error or "")
    assert [(turn.turn, turn.status) for turn in summary.turns] == [(1, "completed"), (2, "failed")]
    ended = [event.payload for event in comparison.arms["tool"].events if isinstance(event.payload, TurnEnded)]
    assert [payload.turn for payload in ended] == [1, 2]
    started = [event.payload for event in comparison.arms["tool"].events if isinstance(event.payload, TurnStarted)]
    assert [payload.turn for payload in started] == [1, 2]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"turns": [SAVE, "  "]}, "turn 2 is not a prompt"),
        ({"turns": [SAVE, RESTORE], "prompt": SAVE}, "give a prompt or turns, not both"),
        ({"turns": [SAVE, RESTORE], "task": "cart/save-category"}, "for a conversation give its turns"),
    ],
)
def test_bad_turns_are_refused_with_one_line(fields: dict[str, Any], message: str) -> None:
    prompt = fields.pop("prompt", None)
    with pytest.raises(BadInput, match=message):
        prepare(RunRequest(prompt, app="cart", **fields))


def test_one_prompt_has_no_turn_events() -> None:
    comparison = workbench.compare_sync(SAVE, app="cart", db=False, arms=["tool"])
    arm = comparison.arms["tool"]
    assert not any(event.kind.startswith("turn_") for event in arm.events)
    assert arm.summary.turns == [] and "turns" not in arm.summary.to_dict()
    assert {event.turn for event in arm.events} == {1}


def test_a_task_file_gives_a_conversation_as_turns(tmp_path: Path) -> None:
    from workbench.sources.taskfile import load_task_file

    (tmp_path / "tools.py").write_text("def note(text: str) -> str:\n    return text\n\nTOOLS = [note]\n")
    path = tmp_path / "chat.toml"
    path.write_text(
        '[defaults]\ntoolset = "tools:TOOLS"\n\n'
        '[[tasks]]\nid = "two"\nturns = ["first, note this", "then note that"]\n\n'
        '[[tasks]]\nid = "one"\nprompt = "just this"\n'
    )
    two, one = load_task_file(path)
    assert (two.prompt, two.turns) == ("first, note this", ("first, note this", "then note that"))
    assert (one.prompt, one.turns) == ("just this", ())
    for bad, message in [
        ('turns = ["a", ""]', "task x: turns: turn 2 is not a prompt"),
        ('turns = "a"', "task x: turns must be a list of prompts"),
        ('prompt = "a"\nturns = ["a", "b"]', "task x: give a prompt or turns, not both"),
    ]:
        path.write_text(f'[[tasks]]\nid = "x"\ntoolset = "tools:TOOLS"\n{bad}\n')
        with pytest.raises(ValueError, match=message):
            load_task_file(path)


Snapshot = dict[str, dict[str, dict[str, Any]]]


class _Ledger(AppSource):
    """A source of the test's own whose second tool arrives in turn 2 (as BFCL's ``miss_func`` holds one back),
    recording each turn's calls and state from the end-of-turn hook."""

    label = "ledger"

    def __init__(self) -> None:
        self.turns: dict[str, list[tuple[int, list[tuple[str, Any]], list[str]]]] = {}

    @asynccontextmanager
    async def open(self, arm: str) -> AsyncIterator[AppInstance]:
        entries: list[str] = []

        def add(text: str) -> str:
            entries.append(text)
            return f"added {text!r}"

        def count() -> int:
            return len(entries)

        first, both = FunctionToolset([add]), FunctionToolset([add, count])

        async def snapshot() -> Snapshot:
            return {"entries": {str(i): {"text": text} for i, text in enumerate(entries)}}

        instance = AppInstance(first, ["add"], "Keep the ledger.", snapshot)

        async def begin_turn(turn: int) -> None:
            if turn == 2:
                instance.toolset, instance.tool_names = both, ["add", "count"]

        async def end_turn(turn: int, calls: list[TurnCall]) -> None:
            made = [(call.name, call.args) for call in calls]
            self.turns.setdefault(arm, []).append((turn, made, list(entries)))

        instance.begin_turn, instance.end_turn = begin_turn, end_turn
        yield instance


def _ledger_player(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Adds the turn's word, then (once ``count`` is offered) counts; works in the tool and the code arm."""
    turn = current_turn(messages)
    word = _user_prompts(turn)[-1].split()[-1]
    names = {tool.name for tool in info.function_tools}
    answered = any(isinstance(m, ModelRequest) and any(p.part_kind == "tool-return" for p in m.parts) for m in turn)
    if answered:
        return ModelResponse(parts=[TextPart(f"done with {word}")])
    if "run_code" in names:
        catalog = next(tool.description or "" for tool in info.function_tools if tool.name == "run_code")
        code = f"await add(text={word!r})\n" + ("await count()\n" if "def count(" in catalog else "")
        return ModelResponse(parts=[ToolCallPart("run_code", {"code": code})])
    calls = [ToolCallPart("add", {"text": word})] + ([ToolCallPart("count", {})] if "count" in names else [])
    return ModelResponse(parts=calls)


def test_a_source_changes_its_tools_per_turn_and_reads_each_turns_calls() -> None:
    source = _Ledger()
    request = RunRequest(turns=["add alpha", "add beta"], source=source, model=FunctionModel(_ledger_player))
    comparison = asyncio.run(ComparisonRun(prepare(request), None).result())
    for arm in ("tool", "code"):
        summary = comparison.arms[arm].summary
        assert summary.status == "completed", (arm, summary.error)
        assert source.turns[arm] == [
            (1, [("add", {"text": "alpha"})], ["alpha"]),
            (2, [("add", {"text": "beta"}), ("count", {})], ["alpha", "beta"]),
        ]
        started = [e.payload for e in comparison.arms[arm].events if isinstance(e.payload, TurnStarted)]
        assert [(payload.turn, payload.tools) for payload in started] == [(1, None), (2, ["add", "count"])]
        assert summary.diff == {"created": 2, "updated": 0, "deleted": 0}


def test_a_stored_conversation_folds_back_with_its_turns_in_every_view(tmp_path: Path) -> None:
    from rich.console import Console

    from workbench.bench.export import export_session
    from workbench.printer import comparison_view
    from workbench.store import Store
    from workbench.timeline import TextEntry, Timeline, TurnEntry

    store = Store(tmp_path / "c.db")
    ran = workbench.compare_sync(turns=TURNS, app="cart", db=store)
    assert ran.stored
    loaded = store.load(ran.session_id)
    for name, arm in loaded.arms.items():
        live = ran.arms[name]
        assert [(e.seq, e.turn, e.kind) for e in arm.events] == [(e.seq, e.turn, e.kind) for e in live.events]
        assert [t.to_dict() for t in arm.summary.turns] == [t.to_dict() for t in live.summary.turns]
        timeline = Timeline(name)
        timeline.apply(arm.events)
        assert [(entry.turn, entry.prompt, entry.status) for entry in timeline.turns] == [
            (1, SAVE, "completed"),
            (2, RESTORE, "completed"),
        ]
        answers = [entry for entry in timeline.entries if isinstance(entry, TextEntry) and entry.answer]
        assert [entry.turn for entry in answers] == [1, 2]  # each turn's answer once, none added at the end
        turn_two = timeline.entries.index(timeline.turns[1])
        assert all(not isinstance(entry, TurnEntry) for entry in timeline.entries[turn_two + 1 :])

    data = json.loads(export_session(loaded, "json"))
    assert [turn["prompt"] for turn in data["arms"][0]["turns"]] == TURNS
    assert {event["turn"] for event in data["events"]} == {1, 2}
    rows = list(csv.DictReader(io.StringIO(export_session(loaded, "csv"))))
    assert [(row["arm"], row["turn"]) for row in rows] == [
        ("tool", ""), ("code", ""), ("tool", "1"), ("tool", "2"), ("code", "1"), ("code", "2"),
    ]  # fmt: skip
    per_turn = [row for row in rows if row["arm"] == "code" and row["turn"]]
    assert sum(int(row["inner_calls"]) for row in per_turn) == int(rows[1]["inner_calls"]) == 26
    markdown = export_session(loaded, "md")
    assert "## Turns" in markdown and markdown.count("### Turn 2") == 2 and f"| 2 | {RESTORE} |" in markdown
    html = export_session(loaded, "html")
    assert html.count('class="turn" data-turn="2"') == 2 and 'id="turn-table"' in html
    assert "<li>" + RESTORE.replace("$", "$") + "</li>" in html

    console = Console(width=200, record=True)
    console.print(comparison_view(loaded))
    shown = console.export_text()
    assert SAVE in shown and RESTORE in shown and "answered turn 2" in shown


def test_the_trace_has_a_span_per_turn_holding_its_requests_and_calls(conversation: workbench.Comparison) -> None:
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from workbench.share.otel import ComparisonTrace

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    traced = ComparisonTrace(conversation, provider.get_tracer("test"))
    traced.add_all(conversation.events)
    traced.finish()
    spans = exporter.get_finished_spans()
    by_id = {span.context.span_id: span for span in spans}
    for name, arm in conversation.arms.items():
        agent = next(span for span in spans if span.name == f"invoke_agent {name}")
        turns = sorted(
            (s for s in spans if s.parent and s.parent.span_id == agent.context.span_id), key=lambda s: s.start_time
        )
        assert [span.name for span in turns] == ["turn 1", "turn 2"]
        for span, figures in zip(turns, arm.summary.turns, strict=True):
            attributes = dict(span.attributes or {})
            assert attributes["workbench.turn.prompt"] == figures.prompt
            assert attributes["workbench.requests"] == figures.requests
            assert attributes["gen_ai.usage.input_tokens"] == figures.input_tokens
            chats = [
                s for s in spans if s.parent and s.parent.span_id == span.context.span_id and s.name.startswith("chat")
            ]
            assert len(chats) == figures.requests
        calls = [s for s in spans if s.name.startswith("execute_tool") and s.attributes.get("workbench.inner") is None]
        for call in calls:  # every top-level call sits under a turn, not under the arm
            assert by_id[call.parent.span_id].name.startswith("turn ")


def _raw_turns(events: Sequence[Any]) -> list[tuple[str, int, int, str]]:
    return [(event.arm, event.seq, event.turn, event.kind) for event in events]


def test_the_stores_raw_events_carry_their_turns_in_every_read(tmp_path: Path) -> None:
    """``Store.events`` and every page of ``Store.events_by_time`` give each event the turn the live run gave it
    (a conversation of two turns, and a session continued with a follow-up, whose first turn has no
    turn-started event); a run of one prompt is all turn 1."""
    from workbench.store import Store

    store = Store(tmp_path / "t.db")
    conversation = workbench.compare_sync(turns=TURNS, app="cart", db=store)
    followed, _ = asyncio.run(_follow_up_on(store))
    single = workbench.compare_sync(
        "Remove everything in the cart that costs more than $50 apiece.", app="cart", db=store
    )
    for ran, turns in ((conversation, {1, 2}), (followed, {1, 2}), (single, {1})):
        live = [event for arm in ran.arms.values() for event in arm.events]
        assert {event.turn for event in live} == turns
        raw = store.events(ran.session_id)
        assert _raw_turns(raw) == _raw_turns(live), ran.session_id
        by_time = store.events_by_time(ran.session_id)
        assert sorted(_raw_turns(by_time)) == sorted(_raw_turns(live))
        pages = [store.events_by_time(ran.session_id, offset=offset, limit=7) for offset in range(0, len(raw), 7)]
        assert [event for page in pages for event in page] == by_time, "a page starting mid-turn knows its turn"
    turn_two = [event for event in store.events(followed.session_id) if event.turn == 2]
    assert turn_two[0].kind == "turn_started" and turn_two[-1].kind == "run_finished"


async def _follow_up_on(store: Any, *, prompt: str = SAVE) -> tuple[workbench.Comparison, list[Any]]:
    setup = prepare(RunRequest(prompt, app="cart"))
    run = ComparisonRun(setup, store, keep_open=True)
    first = await run.result()
    statuses = [(first.status, dict((n, a.summary.status) for n, a in first.arms.items()))]
    assert run.can_follow_up
    second = await run.follow_up(RESTORE)
    statuses.append((second.status, dict((n, a.summary.status) for n, a in second.arms.items())))
    await run.close()
    assert not run.can_follow_up
    with pytest.raises(BadInput, match="cannot continue"):
        run.follow_up("Remove everything in the cart that costs more than $50 apiece.")
    return second, statuses


def test_a_follow_up_continues_the_same_session_on_the_same_state(tmp_path: Path) -> None:
    from workbench.store import Store

    store = Store(tmp_path / "f.db")
    comparison, statuses = asyncio.run(_follow_up_on(store))
    assert statuses == [("completed", {"tool": "completed", "code": "completed"})] * 2
    assert comparison.stored and comparison.task == "cart/save-category"  # the header keeps turn 1's task
    loaded = store.load(comparison.session_id)
    assert store.sessions()[0].status == "completed"
    for name, arm in loaded.arms.items():
        summary = arm.summary
        assert [(turn.turn, turn.prompt, turn.status) for turn in summary.turns] == [
            (1, SAVE, "completed"),
            (2, RESTORE, "completed"),
        ]
        assert summary.turns[1].output.startswith("Moved 4 saved items under $40"), name  # turn 1's state
        # Graded again at the end of the follow-up, against both turns' tasks applied in order.
        grades = [event.payload for event in arm.events if event.kind == "grade"]
        assert [grade.task for grade in grades] == ["cart/save-category", "cart/save-category + cart/restore-saved"]
        assert summary.passed and summary.verdict == "passed"
        assert [event.seq for event in arm.events] == list(range(len(arm.events)))
        assert [e.turn for e in arm.events if e.kind == "run_finished"] == [1, 2]
        # The arm's clock went on from its last event: the wait between the turns is not its time.
        started = next(e for e in arm.events if e.kind == "turn_started")
        previous = arm.events[arm.events.index(started) - 1]
        assert started.t - previous.t < 1.0


async def _cancelled_follow_up() -> tuple[list[str], list[str], workbench.Comparison]:
    run = ComparisonRun(prepare(RunRequest(SAVE, app="cart", model="scripted:paced")), None, keep_open=True)
    await run.result()
    seen: list[str] = []
    run.subscribe(lambda event: seen.append(event.kind) if event.turn == 2 else None)
    follow_up = run.follow_up(RESTORE)
    while "request_started" not in seen:
        await asyncio.sleep(0.01)
    run.cancel()
    cancelled = await follow_up
    statuses = [arm.summary.status for arm in cancelled.arms.values()]
    third = await run.follow_up(RESTORE)  # the arms are still open: the session goes on after a cancel
    again = [arm.summary.status for arm in third.arms.values()]
    await run.close()
    return statuses, again, third


def test_a_cancelled_follow_up_leaves_the_session_open_for_another() -> None:
    statuses, again, comparison = asyncio.run(_cancelled_follow_up())
    assert statuses == ["cancelled", "cancelled"]
    assert again == ["completed", "completed"]
    for arm in comparison.arms.values():
        assert [(turn.turn, turn.status) for turn in arm.summary.turns] == [
            (1, "completed"), (2, "cancelled"), (3, "completed"),
        ]  # fmt: skip
