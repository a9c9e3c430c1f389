"""How an arm's agent is built: the app's toolset, instructions and model, and for a sandboxed arm CodeMode over
the Monty sandbox. What an arm *is* (name, mode, options, limits) is data in :mod:`workbench.arm_spec`.
"""

from __future__ import annotations

import inspect
import warnings
from typing import TYPE_CHECKING, Any

from workbench.arm_spec import DIRECT_PREFIX, ArmConfig, ArmSpec
from workbench.sandbox import local_pool

if TYPE_CHECKING:
    from pydantic_ai import Agent
    from pydantic_ai.models import Model

    from workbench.apps import DemoApp
    from workbench.recorder import Recorder
    from workbench.sources.base import AppInstance

INSTRUCTIONS = """\
You operate the {title} demo app: {about}. Use its tools to do what the user asks.
Lists are paginated: keep reading pages while has_more is true. Change only what the request asks for.
When you are done, reply with a one- or two-sentence summary of what you did."""
HYBRID_INSTRUCTIONS = f"""
Each tool is callable two ways: directly (named {DIRECT_PREFIX}_<tool>), or from Python inside run_code under its
own name. Use whichever suits each step."""


def instructions_for(app: DemoApp) -> str:
    return INSTRUCTIONS.format(title=app.title, about=app.about)


def build_agent(
    arm: ArmSpec, model: Model, app: AppInstance, recorder: Recorder, config: ArmConfig
) -> Agent[None, str]:
    """The arm's agent. pydantic-ai and the harness are imported here, not with the arm definitions, which the
    CLI and the TUI read at start-up."""
    from pydantic_ai import Agent
    from pydantic_ai_harness.code_mode import CodeModeReturnSchemaWarning

    # Most MCP servers declare no output schema: CodeMode warns of it on every run (the catalog shows `-> Any`),
    # which says nothing a user can act on and clutters `run`'s output.
    warnings.filterwarnings("ignore", category=CodeModeReturnSchemaWarning)
    # The recorder wraps the arm's tools and model rather than being a capability (see workbench.recorder):
    # a sandboxed arm's app tools are recorded as a snippet's nested calls, its run_code (and a hybrid arm's
    # direct tools) through CodeMode's own toolset; a tool-calling arm's tools as top-level calls.
    capabilities: list[Any] = []
    toolsets: list[Any] = [recorder.toolset(app.toolset, nested=True) if arm.sandboxed else app.toolset]
    instructions = app.instructions
    if arm.sandboxed:
        capabilities.append(
            recorder.code_mode(
                tools=list(app.tool_names),
                monty_sandbox=local_pool,  # any pool factory works, not only remote ones
                **arm.sandbox_limits(config.sandbox).to_codemode_kwargs(),
                eager=arm.eager,
                speculate=arm.speculate(app.tool_names, app.read_only_tools),
            )
        )
    if arm.mode == "hybrid":
        toolsets.append(app.toolset.prefixed(DIRECT_PREFIX))
        instructions += HYBRID_INSTRUCTIONS
    if not arm.sandboxed:
        toolsets = [recorder.toolset(toolset) for toolset in toolsets]
    model = recorder.model(streamable(model))
    return Agent(model, toolsets=toolsets, instructions=instructions, capabilities=capabilities)


def streamable(model: Model) -> Model:
    """Arms always stream (that is how events arrive live). A FunctionModel written with only a plain
    ``function`` gets a stream function that sends each of its responses in one piece."""
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

    if not isinstance(model, FunctionModel) or model.stream_function is not None or model.function is None:
        return model
    function = model.function

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        response: ModelResponse = function(messages, info)  # type: ignore[assignment]
        if inspect.isawaitable(response):  # an async function (or any callable returning an awaitable)
            response = await response
        calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
        if not calls:
            yield "".join(part.content for part in response.parts if isinstance(part, TextPart)) or " "
            return
        yield {
            index: DeltaToolCall(name=call.tool_name, json_args=call.args_as_json_str(), tool_call_id=call.tool_call_id)
            for index, call in enumerate(calls)
        }

    return FunctionModel(function, stream_function=stream, model_name=model.model_name, profile=model.profile)
