"""The two arms: the same toolset, instructions and model; the code arm adds CodeMode."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai import Agent
from pydantic_ai._utils import is_async_callable
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai_harness import CodeMode

from apps import DemoApp
from workbench.recorder import Recorder
from workbench.sources.base import AppInstance

Mode = Literal["tool", "code"]

INSTRUCTIONS = """\
You operate the {title} demo app: {about}. Use its tools to do what the user asks.
Lists are paginated: keep reading pages while has_more is true. Change only what the request asks for.
When you are done, reply with a one- or two-sentence summary of what you did."""


@dataclass(frozen=True)
class SandboxLimits:
    """Limits for the code arm's Monty sandbox.

    Time and heap are CodeMode's defaults (30 s per snippet, 256 MiB). The call budgets are raised from
    CodeMode's defaults (100 nested calls per snippet, 1,000 suspensions per session) so that one
    snippet can act on every record of a 500-item long-horizon task, as the published runs did.
    """

    max_duration_secs: float = 30.0
    max_memory: int = 256 * 1024 * 1024
    max_tool_calls: int = 1_000
    max_suspensions: int = 20_000

    def as_dict(self) -> dict[str, Any]:
        return {
            "max_duration_secs": self.max_duration_secs,
            "max_memory": self.max_memory,
            "max_tool_calls": self.max_tool_calls,
            "max_suspensions": self.max_suspensions,
        }


@dataclass(frozen=True)
class ArmConfig:
    request_limit: int = 50
    """Model requests per arm before it is stopped (a model that loops)."""
    sandbox: SandboxLimits = field(default_factory=SandboxLimits)


def instructions_for(app: DemoApp) -> str:
    return INSTRUCTIONS.format(title=app.title, about=app.about)


def build_agent(mode: Mode, model: Model, app: AppInstance, recorder: Recorder, config: ArmConfig) -> Agent[None, str]:
    capabilities: list[Any] = []
    if mode == "code":
        limits = config.sandbox
        capabilities.append(
            CodeMode(
                max_tool_calls=limits.max_tool_calls,
                resource_limits={
                    "max_duration_secs": limits.max_duration_secs,
                    "max_memory": limits.max_memory,
                    "max_suspensions": limits.max_suspensions,
                },
            )
        )
    capabilities.append(recorder)
    return Agent(streamable(model), toolsets=[app.toolset], instructions=app.instructions, capabilities=capabilities)


def streamable(model: Model) -> Model:
    """Arms always stream (that is how events arrive live). A FunctionModel written with only a plain
    ``function`` gets a stream function that sends each of its responses in one piece."""
    if not isinstance(model, FunctionModel) or model.stream_function is not None or model.function is None:
        return model
    function = model.function

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        if is_async_callable(function):
            response: ModelResponse = await function(messages, info)  # type: ignore[misc]
        else:
            response = function(messages, info)  # type: ignore[assignment]
        calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
        if not calls:
            yield "".join(part.content for part in response.parts if isinstance(part, TextPart)) or " "
            return
        yield {
            index: DeltaToolCall(name=call.tool_name, json_args=call.args_as_json_str(), tool_call_id=call.tool_call_id)
            for index, call in enumerate(calls)
        }

    return FunctionModel(function, stream_function=stream, model_name=model.model_name, profile=model.profile)
