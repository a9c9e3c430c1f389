"""A sandbox error reads as text (real line breaks and quotes) in the snippet block, Markdown and HTML, not as
the JSON the model received; a real code arm over HTTP against the fake OpenAI-compatible server."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo
from test_faults import compare, settings_for, warm_clients  # noqa: F401 (warm_clients: autouse)

from tests.support.fake_openai import fake_openai
from workbench.bench.export import session_markdown
from workbench.display import error_text
from workbench.runner import prepare
from workbench.share.session_html import session_html
from workbench.timeline import SnippetEntry, Timeline
from workbench.tui.widgets.snippet import SnippetBlock

FAILING = "items = 1\nraise ValueError('no item called \"lamp\"')"


def _fails_once(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    answered = any(isinstance(message, ModelRequest) and len(message.parts) and
                   getattr(message.parts[-1], "tool_name", None) == "run_code" for message in messages)  # fmt: skip
    if answered:
        return ModelResponse(parts=[TextPart("The snippet failed.")])
    return ModelResponse(parts=[ToolCallPart("run_code", {"code": FAILING}, "call_1")])


async def _failed_session() -> Any:
    with fake_openai(policy=_fails_once) as server:
        setup = prepare(task="cart/remove-expensive", model="openai-chat:gpt-4o-mini", arms=["code"],
                        settings=settings_for(server))  # fmt: skip
        return await compare(setup)


async def test_a_sandbox_error_reads_as_text_everywhere() -> None:
    comparison = await _failed_session()
    timeline = Timeline("code")
    timeline.apply(comparison.arms["code"].events)
    snippet = next(entry for entry in timeline.entries if isinstance(entry, SnippetEntry))
    result = snippet.record.result
    assert result is not None and result.outcome != "ok" and "\\n" in (result.error or "")  # JSON, as the model got it

    drawn = [line.plain for line in SnippetBlock(snippet).lines(120, None)[0]]
    assert any('no item called "lamp"' in line for line in drawn)
    assert not any("\\n" in line or '\\"' in line for line in drawn)

    markdown = session_markdown(comparison)
    assert "Sandbox error (the model received it):" in markdown
    block = markdown.split("Sandbox error (the model received it):")[1].split("```")[1]
    assert 'ValueError: no item called "lamp"' in block and "\\n" not in block

    html = session_html(comparison)
    assert "no item called &quot;lamp&quot;" in html and "ValueError: no item" in html


def test_error_text_decodes_whole_and_clipped_errors_and_leaves_other_text() -> None:
    assert error_text('{"error": "Runtime error:\\nNameError: \\"x\\""}') == 'Runtime error:\nNameError: "x"'
    clipped = '{"error":"Runtime error:\\n[stdout]\\nab … 1,000 characters cut … yz\\nMemoryError: limit"}'
    assert error_text(clipped[:40] + " … " + clipped[-30:]).endswith("\nMemoryError: limit")
    assert error_text("Invalid JSON: control character") == "Invalid JSON: control character"
    assert error_text('{"items": [1]}') == '{"items": [1]}'
