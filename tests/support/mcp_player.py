"""A model that plays the tools it is given: pydantic-ai's FunctionModel making planned calls, for tests on
MCP servers and toolsets (the scripted model only knows the demo apps)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

Call = tuple[str, dict[str, Any]]
Plan = Sequence[Call] | Callable[[str], Sequence[Call]]
"""The calls to make, or the calls by arm (``tool`` for an arm without ``run_code``, else ``code``)."""


def player(plan: Plan, before: Callable[[str], None] | None = None) -> FunctionModel:
    """A model that makes the plan's calls (one per response as tool calls, or all in one run_code snippet),
    then ends; ``before(arm)`` runs before an arm's first call."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        arm = "code" if any(tool.name == "run_code" for tool in info.function_tools) else "tool"
        done = sum(isinstance(part, ToolReturnPart | RetryPromptPart) for message in messages for part in message.parts)
        if before is not None and done == 0:
            before(arm)
        calls = list(plan(arm) if callable(plan) else plan)
        if arm == "code":
            if done:
                return ModelResponse(parts=[TextPart("done")])
            lines = [f"await {name}({', '.join(f'{k}={v!r}' for k, v in args.items())})" for name, args in calls]
            return ModelResponse(parts=[ToolCallPart("run_code", {"code": "\n".join(lines) or "None"})])
        if done < len(calls):
            name, args = calls[done]
            return ModelResponse(parts=[ToolCallPart(name, args)])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(respond)
