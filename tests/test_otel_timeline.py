"""The trace's spans open and end as the timeline's nodes appear and settle: each call ends at its own result
(results of parallel calls arriving in any order), a call a turn's end left without a result ends with that turn,
and a recording cut short ends what it left open where its last event was, its arm interrupted."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.events import (
    ArmEvent,
    Payload,
    RequestStarted,
    RunFinished,
    RunStarted,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnEnded,
    TurnStarted,
    Usage,
)
from workbench.session import fold_comparison

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

BASE_NS = 1_000_000_000_000


def _spans(payloads: list[Payload]) -> dict[str, Any]:
    """The session's spans by name (calls by ``call <id>``), with times in seconds since the comparison began."""
    from datetime import UTC, datetime

    from workbench.share.otel import comparison_spans

    events = [ArmEvent("tool", seq, float(seq), payload) for seq, payload in enumerate(payloads)]
    created = datetime.fromtimestamp(BASE_NS / 1e9, UTC)
    comparison = fold_comparison(events, session_id="t", app="cart", items=1, arms=["tool"], created=created)
    spans: dict[str, Any] = {}
    for span in comparison_spans(comparison):
        call_id = span.attributes.get("gen_ai.tool.call.id")
        spans[f"call {call_id}" if call_id else span.name] = span
    return spans


def _seconds(span: Any) -> tuple[float, float]:
    return ((span.start_time - BASE_NS) / 1e9, (span.end_time - BASE_NS) / 1e9)


def _started() -> RunStarted:
    return RunStarted("tool", "scripted", "cart", 1, 0, "p", ["get"])


def _usage(request: int) -> Usage:
    return Usage(request, 10, 2, 0, 10 * request, 2 * request, None, None)


def _result(call_id: str) -> ToolResult:
    return ToolResult(call_id, "get", "ok", "{}", 2, 1.0, content="{}")


def test_parallel_calls_end_at_their_own_results_in_any_order() -> None:
    spans = _spans([
        _started(), RequestStarted(1), TextDelta("Looking."), _usage(1),                   # 0-3
        ToolCall("a", "get", {}), ToolCall("b", "get", {}), ToolCall("c", "get", {}),     # 4-6
        _result("c"), _result("a"), _result("b"),                                         # 7-9
        RunFinished("completed", None, "done"),
    ])  # fmt: skip
    assert [_seconds(spans[f"call {call}"]) for call in "abc"] == [(4.0, 8.0), (5.0, 9.0), (6.0, 7.0)]
    chat = spans["chat scripted"]
    assert _seconds(chat) == (1.0, 3.0) and chat.attributes["workbench.response.text"] == "Looking."
    assert all(spans[f"call {call}"].attributes["workbench.outcome"] == "ok" for call in "abc")


def test_a_turns_end_ends_the_calls_it_left_without_a_result() -> None:
    spans = _spans([
        _started(), TurnStarted(1, "p"), RequestStarted(1), _usage(1), ToolCall("a", "get", {}),  # 0-4
        TurnEnded(1, "cancelled", "cancelled by the user", ""), RunFinished("cancelled", None, ""),  # 5-6
    ])  # fmt: skip
    call = spans["call a"]
    assert _seconds(call) == (4.0, 5.0) and call.attributes["workbench.outcome"] == "no result"
    assert spans["turn 1"].attributes["workbench.status"] == "cancelled"
    assert spans["call a"].parent.span_id == spans["turn 1"].context.span_id


def test_a_recording_cut_short_ends_what_it_left_open_and_its_arm_is_interrupted() -> None:
    from opentelemetry.trace import StatusCode

    spans = _spans([_started(), RequestStarted(1), _usage(1), ToolCall("a", "get", {}), RequestStarted(2)])
    assert _seconds(spans["call a"]) == (3.0, 4.0) and spans["call a"].attributes["workbench.outcome"] == "no result"
    agent = spans["invoke_agent tool"]
    assert agent.attributes["workbench.status"] == "interrupted" and agent.status.status_code is StatusCode.ERROR
    assert _seconds(agent) == (0.0, 4.0)
