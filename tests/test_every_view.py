"""One session through every view: the TUI's timeline, ``show``, JSON, Markdown, CSV, HTML and OpenTelemetry
each show every inner call and every mark (eager statements, speculation, a run_code whose arguments were not
valid JSON, estimated tokens, a clipped result, a retried stream, a cancelled arm), because each reads the same
fold of the same events."""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

import pytest
from rich.console import Console

from workbench.bench.export import export_session
from workbench.display import ESTIMATED, clipped
from workbench.events import (
    MALFORMED_ARGUMENTS,
    RUN_CODE,
    ArmEvent,
    EagerProgress,
    InnerCall,
    InnerResult,
    Payload,
    ProviderRetry,
    RequestStarted,
    RunFinished,
    RunStarted,
    Snippet,
    SnippetDelta,
    Speculation,
    TextDelta,
    ToolCall,
    ToolResult,
    Usage,
)
from workbench.printer import comparison_view
from workbench.session import Comparison, fold_comparison
from workbench.timeline import NoticeEntry, SnippetEntry, Timeline

INNER = [f"inner-{index}" for index in range(5)]
EAGER = INNER[:3]
"""Inner calls the eager arm made while its snippet still streamed (before its run_code call arrived)."""
CLIPPED_FROM = 5_000_000
SPECULATION_HIDDEN_MS = 3.5
RETRY_ERROR = "HTTP 503: overloaded"


def _events(arm: str, payloads: list[Payload]) -> list[ArmEvent]:
    return [ArmEvent(arm, seq, seq * 0.01, payload) for seq, payload in enumerate(payloads)]


def _usage(request: int) -> Usage:
    return Usage(request, 1200, 80, 0, 1200 * request, 80 * request, 0.002, 0.002 * request, estimated=True)


def _inner(call_id: str) -> list[Payload]:
    return [
        InnerCall(call_id, "snippet-1", "update_line", {"line_id": call_id}),
        InnerResult(call_id, "snippet-1", "update_line", "ok", "{}", 2, 0.4),
    ]


def session() -> Comparison:
    started = RunStarted(
        "code", "scripted", "cart", 10, 0, "Cap quantities", [RUN_CODE], sandboxed_tools=["update_line"]
    )
    eager = [
        started,
        RequestStarted(1),
        SnippetDelta("snippet-1", "for line in lines:\n"),
        *[payload for call_id in EAGER for payload in _inner(call_id)],
        EagerProgress("snippet-1", 3, 2),
        Speculation("snippet-1", "launch-1", "launched", "update_line", {"line_id": INNER[3]}, 2, 2),
        Speculation("snippet-1", "launch-1", "settled", "update_line", outcome="ready", elapsed_ms=3.0),
        Speculation("snippet-1", "launch-1", "claimed", "update_line", hidden_ms=SPECULATION_HIDDEN_MS),
        Snippet("snippet-1", "for line in lines:\n    update_line(line)\n"),
        ToolCall("snippet-1", RUN_CODE, {"code": "for line in lines:\n    update_line(line)\n"}),
        *[payload for call_id in INNER[len(EAGER) :] for payload in _inner(call_id)],
        ToolResult("snippet-1", RUN_CODE, "ok", "done", 1_000_000, 12.0, content="done", clipped_from=CLIPPED_FROM),
        _usage(1),
        RequestStarted(2),
        Snippet("snippet-2", "broken(", raw_arguments='{"code": "broken('),
        ToolCall("snippet-2", RUN_CODE, '{"code": "broken('),
        ToolResult("snippet-2", RUN_CODE, "failed", "invalid JSON", 12, 0.1, error="invalid JSON"),
        _usage(2),
        TextDelta("Capped every line."),
        RunFinished("completed", None, "Capped every line."),
    ]
    tool_started = RunStarted("tool", "scripted", "cart", 10, 0, "Cap quantities", ["update_line"])
    cancelled = [
        tool_started,
        RequestStarted(1),
        TextDelta("Let me look"),
        ProviderRetry(1, 4, RETRY_ERROR, 0.5),  # the stream was cut short and tried again
        _usage(1),
        RunFinished("cancelled", None, ""),
    ]
    events = _events("code-eager", eager) + _events("tool", cancelled)
    return fold_comparison(events, session_id="everyview", app="cart", items=10, arms=["tool", "code-eager"])


def test_the_timeline_holds_every_inner_call_and_mark() -> None:
    comparison = session()
    timeline = Timeline("code-eager")
    timeline.apply(comparison.arms["code-eager"].events)
    snippets = [entry.record for entry in timeline.entries if isinstance(entry, SnippetEntry)]
    assert [[inner.call.call_id for inner in s.inner.values()] for s in snippets] == [INNER, []]
    assert snippets[0].eager_statements == 3 and snippets[0].result is not None
    assert clipped(snippets[0].result.bytes, snippets[0].result.clipped_from) == "clipped: 4.8 MB → 976.6 KB"
    assert snippets[1].raw_arguments is not None
    usages = [entry.usage for entry in timeline.requests.values()]
    assert usages and all(usage is not None and usage.estimated for usage in usages)
    (speculation,) = snippets[0].speculations.values()
    assert speculation.phase == "claimed" and speculation.hidden_ms == SPECULATION_HIDDEN_MS
    tool = Timeline("tool")
    tool.apply(comparison.arms["tool"].events)
    notices = [entry for entry in tool.entries if isinstance(entry, NoticeEntry)]
    assert [(notice.kind, notice.retry and notice.retry.error) for notice in notices] == [
        ("retry", RETRY_ERROR),
        ("cancelled", None),
    ]


def test_show_json_and_csv_count_every_inner_call_and_carry_every_mark() -> None:
    comparison = session()
    console = Console(width=200, record=True, color_system=None)
    console.print(comparison_view(comparison))
    shown = console.export_text()
    assert f"{ESTIMATED}2,400" in shown and "of which not valid JSON" in shown and "eager statements" in shown
    assert "cancelled" in shown and re.search(r"inner calls\s+│\s+–\s+│\s+5 ", shown)
    assert re.search(r"provider retries\s+│\s+1 ", shown) and re.search(r"speculation l/c/m/e.*1/1/0/0", shown)
    assert re.search(r"latency hidden\s+│\s+–\s+│\s+3\.5 ms ", shown)  # as the TUI and Markdown say it, not 0.00 s

    data = json.loads(export_session(comparison, "json"))
    arms = {arm["name"]: arm for arm in data["arms"]}
    code = arms["code-eager"]
    assert code["inner_calls"] == len(INNER) and code["malformed_calls"] == 1 and code["tokens_estimated"]
    assert code["eager_statements"] == 3 and arms["tool"]["status"] == "cancelled"
    assert code["speculation"]["claimed"] == 1 and code["speculation"]["hidden_ms"] == SPECULATION_HIDDEN_MS
    assert arms["tool"]["provider_retries"] == 1

    rows = {row["arm"]: row for row in csv.DictReader(io.StringIO(export_session(comparison, "csv")))}
    assert rows["code-eager"]["inner_calls"] == str(len(INNER)) and rows["code-eager"]["malformed_calls"] == "1"
    assert rows["code-eager"]["tokens_estimated"] == "True" and rows["tool"]["status"] == "cancelled"
    assert rows["code-eager"]["eager_statements"] == "3" and rows["code-eager"]["speculation_claimed"] == "1"
    assert rows["tool"]["provider_retries"] == "1"


def test_markdown_names_every_inner_call_and_every_mark() -> None:
    text = export_session(session(), "md")
    assert f"update_line ×{len(INNER)}" in text and MALFORMED_ARGUMENTS in text
    assert f"{ESTIMATED}2,400" in text and "cancelled" in text and "clipped: 4.8 MB → 976.6 KB" in text
    assert "3 statements run while it streamed" in text and "speculated calls: 1 claimed · hid 3.5 ms" in text
    assert f"provider retry 1 of 4 after {RETRY_ERROR}" in text[text.index("## Tool calling") :]


def test_html_shows_every_inner_call_and_every_mark() -> None:
    page = export_session(session(), "html")
    article = page[page.index('id="arm-code-eager"') :]
    inner_ids = re.findall(r'class="call ok inner-call" data-call="([^"]+)"', article)
    assert inner_ids == INNER
    assert MALFORMED_ARGUMENTS in article and "clipped: 4.8 MB → 976.6 KB" in article
    assert f"{ESTIMATED}1,200 in" in article and f"{ESTIMATED}80 out" in article
    assert "Code mode, eager" in page and "Tool calling" in page
    assert "cancelled" in page[page.index('id="arm-tool"') :]
    assert f"provider retry 1 of 4 after {RETRY_ERROR}" in page[page.index('id="arm-tool"') :]
    assert re.search(r"speculative calls claimed / launched / missed</td>.*?>1 / 1 / 0<", page, re.S)


def test_otel_has_a_span_for_every_inner_call_and_carries_every_mark() -> None:
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
    from opentelemetry.trace import StatusCode

    from workbench.share.otel import comparison_spans

    spans = comparison_spans(session())
    by_id = {span.context.span_id: span for span in spans}

    def under(parent: str) -> list[Any]:
        return sorted(
            (span for span in spans if span.parent and by_id[span.parent.span_id].name == parent),
            key=lambda span: span.start_time,
        )

    def attributes(call_id: str) -> dict[str, Any]:
        return next(dict(s.attributes or {}) for s in spans if s.attributes.get("gen_ai.tool.call.id") == call_id)

    snippet = next(s for s in spans if s.attributes.get("gen_ai.tool.call.id") == "snippet-1")
    inner = sorted((s for s in spans if s.parent and s.parent.span_id == snippet.context.span_id),
                   key=lambda span: span.start_time)  # fmt: skip
    assert [span.attributes["gen_ai.tool.call.id"] for span in inner] == INNER  # the eager ones included
    assert all(span.attributes["workbench.inner"] is True for span in inner)
    first = attributes("snippet-1")
    assert first["workbench.eager_statements"] == 3 and first["workbench.result_clipped_from_bytes"] == CLIPPED_FROM
    assert first["workbench.speculation.claimed"] == 1
    assert first["workbench.speculation.hidden_ms"] == SPECULATION_HIDDEN_MS
    malformed = next(s for s in spans if s.attributes.get("gen_ai.tool.call.id") == "snippet-2")
    assert malformed.attributes["workbench.malformed_arguments"] is True
    assert malformed.attributes["gen_ai.tool.call.arguments"] == '{"code": "broken('
    assert malformed.status.status_code is StatusCode.ERROR

    chats = [span for span in spans if span.name.startswith("chat ")]
    assert len(chats) == 3 and all(span.attributes["workbench.tokens_estimated"] is True for span in chats)
    (retried,) = [span for span in chats if span.events]
    assert [(event.name, event.attributes["error"]) for event in retried.events] == [("provider_retry", RETRY_ERROR)]
    assert by_id[retried.parent.span_id].name == "invoke_agent tool"
    agents = {span.attributes["workbench.arm"]: span for span in under("comparison cart")}
    assert agents["tool"].attributes["workbench.status"] == "cancelled"
    assert agents["tool"].status.status_code is StatusCode.ERROR
    assert agents["tool"].attributes["workbench.provider_retries"] == 1
    code = agents["code-eager"].attributes
    assert code["workbench.tokens_estimated"] is True and code["workbench.malformed_calls"] == 1
    assert code["workbench.inner_calls"] == len(INNER) and code["workbench.eager_statements"] == 3
