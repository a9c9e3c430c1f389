"""One session through every view: the TUI's timeline, ``show``, JSON, Markdown, CSV and HTML each show every
inner call and every mark (eager statements, a run_code whose arguments were not valid JSON, estimated tokens,
a clipped result, a cancelled arm), because each reads the same fold of the same events."""

from __future__ import annotations

import csv
import io
import json
import re

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
    RequestStarted,
    RunFinished,
    RunStarted,
    Snippet,
    SnippetDelta,
    TextDelta,
    ToolCall,
    ToolResult,
    Usage,
)
from workbench.printer import comparison_view
from workbench.session import Comparison, fold_comparison
from workbench.timeline import SnippetEntry, Timeline

INNER = [f"inner-{index}" for index in range(5)]
EAGER = INNER[:3]
"""Inner calls the eager arm made while its snippet still streamed (before its run_code call arrived)."""
CLIPPED_FROM = 5_000_000


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
    cancelled = [tool_started, RequestStarted(1), _usage(1), RunFinished("cancelled", None, "")]
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


def test_show_json_and_csv_count_every_inner_call_and_carry_every_mark() -> None:
    comparison = session()
    console = Console(width=200, record=True, color_system=None)
    console.print(comparison_view(comparison))
    shown = console.export_text()
    assert f"{ESTIMATED}2,400" in shown and "of which not valid JSON" in shown and "eager statements" in shown
    assert "cancelled" in shown and re.search(r"inner calls\s+│\s+–\s+│\s+5 ", shown)

    data = json.loads(export_session(comparison, "json"))
    arms = {arm["name"]: arm for arm in data["arms"]}
    code = arms["code-eager"]
    assert code["inner_calls"] == len(INNER) and code["malformed_calls"] == 1 and code["tokens_estimated"]
    assert code["eager_statements"] == 3 and arms["tool"]["status"] == "cancelled"

    rows = {row["arm"]: row for row in csv.DictReader(io.StringIO(export_session(comparison, "csv")))}
    assert rows["code-eager"]["inner_calls"] == str(len(INNER)) and rows["code-eager"]["malformed_calls"] == "1"
    assert rows["code-eager"]["tokens_estimated"] == "True" and rows["tool"]["status"] == "cancelled"


def test_markdown_names_every_inner_call_and_every_mark() -> None:
    text = export_session(session(), "md")
    assert f"update_line ×{len(INNER)}" in text and MALFORMED_ARGUMENTS in text
    assert f"{ESTIMATED}2,400" in text and "cancelled" in text and "clipped: 4.8 MB → 976.6 KB" in text


def test_html_shows_every_inner_call_and_every_mark() -> None:
    page = export_session(session(), "html")
    article = page[page.index('id="arm-code-eager"') :]
    inner_ids = re.findall(r'class="call ok inner-call" data-call="([^"]+)"', article)
    assert inner_ids == INNER
    assert MALFORMED_ARGUMENTS in article and "clipped: 4.8 MB → 976.6 KB" in article
    assert f"{ESTIMATED}1,200 in" in article and f"{ESTIMATED}80 out" in article
    assert "Code mode, eager" in page and "Tool calling" in page
    assert "cancelled" in page[page.index('id="arm-tool"') :]
