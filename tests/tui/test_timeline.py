"""The transcript's model folds events into entries without any widget (no Pilot, no Textual)."""

from __future__ import annotations

import sys

from workbench.events import (
    ArmEvent,
    EagerProgress,
    InnerCall,
    InnerResult,
    Payload,
    ProviderRetry,
    RequestStarted,
    RunFinished,
    Snippet,
    SnippetDelta,
    Speculation,
    TextDelta,
    ToolCall,
    ToolResult,
    Usage,
)
from workbench.timeline import NoticeEntry, ResponseEntry, SnippetEntry, TextEntry, Timeline


def events(arm: str, *payloads: Payload) -> list[ArmEvent]:
    return [ArmEvent(arm, seq, seq * 0.01, payload) for seq, payload in enumerate(payloads)]


def test_the_model_is_plain_python() -> None:
    import workbench.timeline as module

    assert "textual" not in {name.split(".")[0] for name in vars(module) if not name.startswith("_")}
    assert not any(getattr(value, "__module__", "").startswith("textual") for value in vars(module).values())
    assert "workbench.timeline" in sys.modules


def test_recorded_arms_fold_into_requests_calls_snippets_and_answers(recorded_events: list[ArmEvent]) -> None:
    tool, code = Timeline("tool"), Timeline("code")
    tool.apply(event for event in recorded_events if event.arm == "tool")
    code.apply(event for event in recorded_events if event.arm == "code")
    assert tool.mode == "tool" and code.mode == "code"
    assert len(tool.requests) == 5 and len(tool.calls) == 38 and not tool.snippets
    assert all(record.outcome == "ok" for entry in tool.calls.values() for record in entry.records.values())
    (snippet,) = code.snippets.values()
    assert snippet.record.complete and len(snippet.record.inner) == 38 and snippet.record.result is not None
    for model in (tool, code):
        answers = [entry for entry in model.entries if isinstance(entry, TextEntry) and entry.answer]
        assert len(answers) == 1 and "35 items" in answers[0].text


def test_changes_mark_the_first_entry_to_measure_again() -> None:
    model = Timeline("tool")
    model.apply(events("tool", RequestStarted(1), ToolCall("c1", "list", {}), RequestStarted(2)))
    assert model.take_stale() == 0 and model.take_stale() is None
    first = model.requests[1]
    version = first.version
    model.apply([ArmEvent("tool", 9, 0.2, ToolResult("c1", "list", "ok", "[]", 2, 0.5))])
    assert model.take_stale() == model.index(first) == 0 and first.version > version
    model.apply([ArmEvent("tool", 10, 0.3, Usage(2, 100, 5, 0, 200, 10, 0.001, 0.002))])
    assert model.take_stale() == 1


def test_calls_after_text_start_a_response_and_results_without_calls_are_kept() -> None:
    model = Timeline("tool")
    model.apply(
        events(
            "tool",
            RequestStarted(1),
            TextDelta("Looking"),
            ToolCall("c1", "list", {"page": 1}),
            ToolResult("c2", "get", "ok", "{}", 2, 0.1),  # its call was never seen (a truncated recording)
        )
    )
    kinds = [type(entry) for entry in model.entries]
    assert kinds == [ResponseEntry, TextEntry, ResponseEntry]
    calls = model.entries[2]
    assert isinstance(calls, ResponseEntry) and calls.request is None and list(calls.records) == ["c1", "c2"]


def test_a_retry_joins_its_request_and_the_end_closes_what_is_still_open() -> None:
    model = Timeline("code")
    model.apply(
        events(
            "code",
            ProviderRetry(1, 4, "HTTP 429", 0.5),
            RequestStarted(1),
            ProviderRetry(2, 4, "HTTP 503", 1.0),
            SnippetDelta("s1", "x = 1\n"),
            InnerCall("s1__1", "s1", "list", {}),
            RunFinished("cancelled", None, ""),
        )
    )
    first, request, snippet, cancelled = model.entries
    assert isinstance(first, NoticeEntry) and first.kind == "retry"
    assert isinstance(request, ResponseEntry) and [retry.error for retry in request.retries] == ["HTTP 503"]
    assert request.ended
    assert isinstance(snippet, SnippetEntry) and snippet.record.ended and not snippet.record.complete
    assert isinstance(cancelled, NoticeEntry) and cancelled.kind == "cancelled"


def test_eager_progress_and_speculation_are_kept_on_their_snippet() -> None:
    model = Timeline("code-eager")
    model.apply(
        events(
            "code-eager",
            SnippetDelta("s1", "a = await list_items(page=1)\n"),
            EagerProgress("s1", 1, 1),
            Speculation("s1", "L1", "launched", "get_item", {"id": 1}, line_start=3, line_end=3),
            Speculation("s1", "L2", "launched", "get_item", {"id": 2}, line_start=4, line_end=4),
            SnippetDelta("s1", "a = await list_items(page=1)\nb = 2\nc = await get_item(id=1)\n"),
            EagerProgress("s1", 2, 2),
            Speculation("s1", "L1", "settled", "get_item", outcome="ready", elapsed_ms=4.0),
            Speculation("s1", "L1", "claimed", "get_item", hidden_ms=3.5),
            Speculation("s1", "L2", "evicted", "get_item", outcome="running"),
            InnerCall("s1__1", "s1", "get_item", {"id": 1}),
            InnerResult("s1__1", "s1", "get_item", "ok", "{}", 2, 0.1),
            Snippet("s1", "a = await list_items(page=1)\nb = 2\nc = await get_item(id=1)\n"),
        )
    )
    (snippet,) = model.snippets.values()
    record = snippet.record
    assert (record.eager_statements, record.eager_lines) == (2, 2)
    assert record.speculation_counts() == {"claimed": 1, "evicted": 1}
    claimed = record.speculations["L1"]
    assert claimed.outcome == "ready" and claimed.hidden_ms == 3.5 and claimed.line_start == 3
    assert len(model.entries) == 1 and record.complete


def test_a_snippet_marks_the_lines_that_ran_early_and_lists_speculated_calls() -> None:
    from workbench.tui.widgets.snippet import SnippetBlock

    model = Timeline("code-eager")
    code = "a = await list_items(page=1)\nb = 2\nc = await get_item(id=1)\n"
    model.apply(
        events(
            "code-eager",
            SnippetDelta("s1", code),
            EagerProgress("s1", 2, 2),
            Speculation("s1", "L1", "launched", "get_item", {"id": 1}, line_start=3, line_end=3),
            Speculation("s1", "L1", "claimed", "get_item", hidden_ms=3.5),
            Speculation("s1", "m1", "missed", "list_items"),
        )
    )
    (entry,) = model.snippets.values()
    lines = [line.plain for line in SnippetBlock(entry).lines(100, None)[0]]
    assert "eager: 2 statements ran while the model wrote" in lines[0]
    code_lines = lines[1:4]
    assert [line[2] for line in code_lines] == ["▸", "▸", " "]  # after the snippet's bar
    assert any("speculation: 1 launched · 1 claimed (hid 3.5 ms) · 1 missed · 0 evicted" in line for line in lines)
    assert any("✓ claimed get_item(id=1)  line 3  hid 3.5 ms" in line for line in lines)
    assert any("✗ missed list_items()" in line for line in lines)


def test_the_counters_add_a_line_for_eager_and_speculation() -> None:
    from workbench.summary import ArmSummary
    from workbench.tui.widgets.figures import eager_line, eager_or_speculative

    summary = ArmSummary(name="code-eager")
    assert not eager_or_speculative(summary)
    summary.eager_statements, summary.speculation_launched, summary.speculation_claimed = 6, 4, 3
    summary.speculation_hidden_ms = 12.0
    assert eager_or_speculative(summary)
    assert eager_line(summary).plain == "Eager 6 · Launched 4 · Claimed 3 · Missed 0 · Evicted 0 · Hid 12 ms"
