"""What the model receives from one tool call or one snippet is bounded, the same rule for both arms.

A result over ``max_result_bytes`` (default 1 MB) — a snippet's value, its error or traceback, a tool's
result — reaches the model clipped, with a note saying so; its result event records the original size.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

import workbench
from workbench.config import ConfigError, load_settings
from workbench.events import ToolResult
from workbench.guards import DEFAULT_MAX_RESULT_BYTES, clip_result, clip_text, utf8_size
from workbench.tui import format as fmt

MB = 1024 * 1024


class Script:
    """A FunctionModel that plays the given calls one response each, then says done; it keeps the size of
    every tool result it received, as the text it would send to a real model."""

    def __init__(self, *calls: ToolCallPart) -> None:
        self.calls = calls
        self.received: list[tuple[str, str, int]] = []
        self.model = FunctionModel(self._respond, stream_function=self._stream)

    def _pick(self, messages: list[ModelMessage]) -> ModelResponse:
        for part in messages[-1].parts:
            if isinstance(part, ToolReturnPart):
                text = part.model_response_str()
                self.received.append((part.tool_call_id, text[-400:], len(text.encode())))
        made = sum(isinstance(m, ModelResponse) for m in messages)
        return ModelResponse(parts=[self.calls[made]] if made < len(self.calls) else [TextPart("done")])

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return self._pick(messages)

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> Any:
        response = self._pick(messages)
        if isinstance(response.parts[0], TextPart):
            yield "done"
            return
        call = response.parts[0]
        yield {0: DeltaToolCall(name=call.tool_name, json_args=call.args_as_json_str(), tool_call_id=call.tool_call_id)}


def _snippet(code: str, call_id: str) -> ToolCallPart:
    return ToolCallPart("run_code", {"code": code}, call_id)


def _results(comparison: workbench.Comparison, arm: str) -> dict[str, ToolResult]:
    return {e.payload.call_id: e.payload for e in comparison.arms[arm].events if isinstance(e.payload, ToolResult)}


def test_a_snippet_returning_100_mb_reaches_the_model_clipped_to_1_mb() -> None:
    script = Script(_snippet('x = "y" * 100_000_000\nx', "big"), _snippet("'small'", "small"))
    comparison = workbench.compare_sync("anything", app="cart", items=5, model=script.model, arms=["code"], db=False)
    assert comparison.arms["code"].summary.status == "completed"
    received = {call_id: (tail, size) for call_id, tail, size in script.received}
    tail, size = received["big"]
    assert size <= DEFAULT_MAX_RESULT_BYTES
    assert "clipped by the workbench: this result is 100,000,000 bytes" in tail
    results = _results(comparison, "code")
    assert results["big"].clipped_from == 100_000_000 and results["big"].bytes <= DEFAULT_MAX_RESULT_BYTES
    assert results["big"].outcome == "ok"
    assert results["small"].clipped_from is None and received["small"] == ("small", 5)


def test_a_huge_error_or_traceback_is_clipped_like_a_value() -> None:
    script = Script(_snippet('raise ValueError("z\\n" * 1_500_000)', "boom"))
    limit = 64 * 1024
    comparison = workbench.compare_sync(
        "anything", app="cart", items=5, model=script.model, arms=["code"], db=False,
        config=workbench.ArmConfig(max_result_bytes=limit),
    )  # fmt: skip
    ((call_id, tail, size),) = script.received
    assert call_id == "boom" and size <= limit  # escaped inside {"error": ...}, and still within the limit
    assert "clipped by the workbench" in tail
    result = _results(comparison, "code")["boom"]
    assert result.outcome == "retried" and result.clipped_from is not None and result.clipped_from > 3_000_000
    assert result.bytes <= limit


def test_the_same_limit_applies_to_a_tool_call_and_to_a_snippet() -> None:
    """A page of 50 cart lines is over a 2 KB limit whichever way the model asks for it."""
    limit = 2048
    config = workbench.ArmConfig(max_result_bytes=limit)
    tool = Script(ToolCallPart("list_cart_items", {"page": 1}, "page"))
    code = Script(_snippet("await list_cart_items(page=1)", "page"))
    for arm, script in (("tool", tool), ("code", code)):
        comparison = workbench.compare_sync(
            "anything", app="cart", items=60, model=script.model, arms=[arm], db=False, config=config
        )
        result = _results(comparison, arm)["page"]
        assert result.clipped_from is not None and result.clipped_from > limit, arm
        ((_, tail, size),) = script.received
        assert size <= limit and tail.endswith("e.g. a count or a summary.]"), arm


def test_clipping_never_splits_a_character_and_keeps_small_results_whole() -> None:
    clipped = clip_text("é" * 600_000, 10_000)
    assert clipped is not None and clipped.original_bytes == 1_200_000
    assert utf8_size(clipped.text) <= 10_000
    clipped.text.encode("utf-8")  # valid UTF-8 throughout
    assert clip_text("fits", 10_000) is None
    assert clip_result({"items": list(range(10))}, 10_000) is None
    listed = clip_result({"items": list(range(100_000))}, 10_000)
    assert listed is not None and utf8_size(listed.text) <= 10_000


def test_the_pane_says_what_was_clipped() -> None:
    assert fmt.clipped(MB, 100 * MB) == "clipped: 100.0 MB → 1.0 MB"
    assert fmt.clipped(MB, None) == ""


@pytest.mark.parametrize("value", ["0", "-5", "1e300", "inf", "nan", str(2**64)])
def test_a_result_limit_that_cannot_work_is_refused(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_MAX_RESULT_BYTES", value)
    with pytest.raises(ConfigError, match="max_result_bytes"):
        load_settings()
