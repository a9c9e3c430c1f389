"""The ``scripted`` model: an offline, deterministic FunctionModel that plays the built-in tasks.

It recognises a built-in task (or a simple variation of its prompt) from the latest user message and the
app's tools it is offered (in a conversation each turn is played on its own, after the turns before it),
and performs it the way real models were observed to (see
:mod:`workbench.scripted.player`). Anything else gets a plain text reply naming how to choose a real
model. Its usage is a real o200k BPE count of each request and response, identical on the streaming and
non-streaming paths, so cost mechanics are exact even though success rates say nothing about real
models.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel, FunctionStreamedResponse
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext
from pydantic_ai.usage import RequestUsage

import workbench.apps as apps
from workbench.events import RUN_CODE
from workbench.pricing import Pricer
from workbench.scripted import SURFACE, Surface, player
from workbench.tokens import count_request, count_response, load_encoding

PRICE_AS = "openai:gpt-5-mini"
"""The real model the scripted model's token counts are priced as (o200k is its tokenizer family)."""

_HELP_START = (
    "I'm the offline scripted model, so I can only play the workbench's built-in tasks (and simple "
    "variations of their prompts, like another threshold or name) on the {app} app. "
)
HELP_REPLIES: dict[Surface, str] = {
    "cli": _HELP_START + "Run `workbench tasks` to see them. To try your own prompt, choose a real model: "
    "`--model openai:gpt-5-mini` (needs OPENAI_API_KEY), `--model anthropic:claude-sonnet-4-5` "
    "(ANTHROPIC_API_KEY), or a local OpenAI-compatible server with "
    "`--model openai-chat:<name> --base-url http://localhost:8000/v1`.",
    "tui": _HELP_START
    + "Pick one in the Task list above the prompt. To try your own prompt, type a real model in the Model "
    "field: openai:gpt-5-mini (needs OPENAI_API_KEY), anthropic:claude-sonnet-4-5 (ANTHROPIC_API_KEY), or "
    "openai-chat:<name> for a local OpenAI-compatible server (start the workbench with --base-url URL).",
}
"""The reply to a prompt the scripted model does not know, by where the comparison was started."""


@dataclass(frozen=True)
class Pace:
    """Simulated latency of a real model, so wall-time mechanics show up offline.

    Each response waits ``first_token_s + input_tokens / prefill_tps`` before its first chunk and then
    streams at ``output_tps`` tokens per second.
    """

    first_token_s: float = 0.4
    prefill_tps: float = 25_000.0
    output_tps: float = 150.0

    def before_first_chunk(self, input_tokens: int) -> float:
        return self.first_token_s + input_tokens / self.prefill_tps

    def per_output_token(self) -> float:
        return 1.0 / self.output_tps


class ScriptedModel(FunctionModel):
    """Deterministic stand-in for a competent, plain agent model. ``pace=None`` answers instantly."""

    def __init__(
        self,
        *,
        pace: Pace | None = None,
        price_as: str = PRICE_AS,
        policy: Callable[[Sequence[ModelMessage], AgentInfo], ModelResponse] | None = None,
    ) -> None:
        super().__init__(self._respond, stream_function=self._stream, model_name="scripted")
        load_encoding()
        self.pace = pace
        self.policy = policy or decide
        """What to answer: the built-in tasks' player, or a suite's own (BFCL's ground truth)."""
        provider, _, name = price_as.partition(":")
        self.pricer = Pricer(
            model_ref=name or provider,
            provider_id=provider if name else None,
            label=f"scripted model, priced as {price_as}",
        )

    @property
    def label(self) -> str:
        return "scripted:paced" if self.pace else "scripted"

    # -- the two request paths ---------------------------------------------------------------------

    async def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        response = self.policy(messages, info)
        response.usage = RequestUsage(
            input_tokens=_input_tokens(messages, info), output_tokens=count_response(response)
        )
        if self.pace:
            await asyncio.sleep(
                self.pace.before_first_chunk(response.usage.input_tokens)
                + response.usage.output_tokens * self.pace.per_output_token()
            )
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        model_settings, parameters = self.prepare_request(model_settings, model_request_parameters)
        info = AgentInfo(
            function_tools=parameters.declared_function_tools,
            allow_text_output=parameters.allow_text_output,
            output_tools=parameters.output_tools,
            model_settings=model_settings,
            model_request_parameters=parameters,
            instructions=_instructions(messages, parameters),
        )
        yield _CountedStream(
            model_request_parameters=parameters,
            _model_name=self.model_name,
            _iter=self._stream(messages, info),
            input_tokens=_input_tokens(messages, info),
        )

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        response = self.policy(messages, info)
        if self.pace:
            await asyncio.sleep(self.pace.before_first_chunk(_input_tokens(messages, info)))
        for chunk in _chunks(response):
            if self.pace:
                await asyncio.sleep(_chunk_tokens(chunk) * self.pace.per_output_token())
            yield chunk


@dataclass
class _CountedStream(FunctionStreamedResponse):
    """A FunctionModel stream whose usage is the real token count, set once the response is complete."""

    input_tokens: int = 0

    async def _get_event_iterator(self) -> AsyncIterator[Any]:
        async for event in super()._get_event_iterator():
            yield event
        self._usage = RequestUsage(input_tokens=self.input_tokens, output_tokens=count_response(self.get()))


def _instructions(messages: Sequence[ModelMessage], parameters: ModelRequestParameters) -> str | None:
    from pydantic_ai.messages import InstructionPart

    parts = FunctionModel._get_instruction_parts(messages, parameters)
    return InstructionPart.join(parts) if parts else None


def _input_tokens(messages: Sequence[ModelMessage], info: AgentInfo) -> int:
    return count_request(info.instructions, [*info.function_tools, *info.output_tools], messages)


# -- deciding what to say ------------------------------------------------------------------------


def decide(messages: Sequence[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The scripted model's whole policy: the next response for this conversation."""
    tool_names = [tool.name for tool in info.function_tools]
    code_mode = RUN_CODE in tool_names
    if code_mode:
        catalog = next(tool.description or "" for tool in info.function_tools if tool.name == RUN_CODE)
        tool_names = re.findall(r"^\s*(?:async )?def (\w+)\(", catalog, flags=re.MULTILINE)
    app_name = _app_for(tool_names)
    request_number = sum(isinstance(message, ModelResponse) for message in messages) + 1
    messages = current_turn(messages)
    prompt = _first_prompt(messages)
    found = apps.match_task(app_name, prompt) if app_name else None
    if found is None:
        return ModelResponse(parts=[TextPart(HELP_REPLIES[SURFACE.get()].format(app=app_name or "demo"))])
    task, params = found
    if code_mode:
        return _code_step(task.play, params, messages, request_number)
    step = player.next_tool_step(task.play, params, messages)
    if step.answer is not None:
        return ModelResponse(parts=[TextPart(step.answer)])
    return ModelResponse(
        parts=[
            ToolCallPart(name, args, tool_call_id=f"call_{request_number}_{index}")
            for index, (name, args) in enumerate(step.calls)
        ]
    )


def _code_step(play: apps.Play, params: dict[str, Any], messages: Sequence[ModelMessage], number: int) -> ModelResponse:
    returned = [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_name == RUN_CODE
    ]
    if not returned:
        code = player.snippet(play, params)
        return ModelResponse(parts=[ToolCallPart(RUN_CODE, {"code": code}, tool_call_id=f"call_{number}_0")])
    last = returned[-1]
    if last.outcome != "success":
        first_line = last.model_response_str().strip().splitlines()[0][:300]
        return ModelResponse(parts=[TextPart(f"The snippet failed, so the task is not done: {first_line}")])
    try:
        reported = json.loads(last.model_response_str())
        return ModelResponse(parts=[TextPart(player.answer(play, params, reported))])
    except (ValueError, KeyError, TypeError):
        return ModelResponse(parts=[TextPart(f"The snippet returned: {last.model_response_str()[:500]}")])


def current_turn(messages: Sequence[ModelMessage]) -> Sequence[ModelMessage]:
    """The messages of the conversation's latest user turn: from the last request with a user prompt on
    (the turns before it were played already; their state is in the app)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, ModelRequest) and any(isinstance(part, UserPromptPart) for part in message.parts):
            return messages[index:]
    return messages


def _first_prompt(messages: Sequence[ModelMessage]) -> str:
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


@cache
def _tools_by_app() -> dict[str, frozenset[str]]:
    """Each demo app's tool names (fixed by the app's code, so worked out once)."""
    return {name: frozenset(app(items=1).tool_names()) for name, app in apps.APPS.items()}


def _app_for(tool_names: Sequence[str]) -> str | None:
    """The demo app whose tools these are (the scripted model is told nothing else)."""
    offered = set(tool_names)
    for name, names in _tools_by_app().items():
        if names and names <= offered:
            return name
    return None


# -- streaming -----------------------------------------------------------------------------------

TEXT_CHUNK_WORDS = 4
ARGS_CHUNK_CHARS = 48


def text_pieces(text: str) -> list[str]:
    """Text as a stream sends it here, a few words at a time (the scripted model and the tests' fake OpenAI
    server alike)."""
    words = re.findall(r"\S+\s*", text) or [text]
    return ["".join(words[i : i + TEXT_CHUNK_WORDS]) for i in range(0, len(words), TEXT_CHUNK_WORDS)]


def argument_pieces(arguments: str) -> list[str]:
    """A tool call's JSON arguments as a stream sends them here, in small slices."""
    return [arguments[i : i + ARGS_CHUNK_CHARS] for i in range(0, len(arguments), ARGS_CHUNK_CHARS)] or [""]


def _chunks(response: ModelResponse) -> list[Any]:
    """The response as stream items: text in a few words at a time, a snippet line by line, other tool-call
    arguments in small slices."""
    chunks: list[Any] = []
    for part in response.parts:
        if isinstance(part, TextPart):
            chunks += text_pieces(part.content)
    for index, part in enumerate(p for p in response.parts if isinstance(p, ToolCallPart)):
        arguments = part.args_as_json_str()
        slices = _line_slices(arguments) if part.tool_name == RUN_CODE else argument_pieces(arguments)
        for position, piece in enumerate(slices):
            first = position == 0
            chunks.append(
                {
                    index: DeltaToolCall(
                        name=part.tool_name if first else None,
                        json_args=piece,
                        tool_call_id=part.tool_call_id if first else None,
                    )
                }
            )
    return chunks


_LINE_END = re.compile(r"(?<!\\)\\n")
"""An escaped newline in JSON text (not an escaped backslash followed by the letter n)."""


def _line_slices(arguments: str) -> list[str]:
    """A ``run_code`` call's JSON arguments cut after each line of the code: the snippet streams statement
    by statement, as a model writes it, so eager execution can run each statement while the rest streams."""
    cuts = [match.end() for match in _LINE_END.finditer(arguments)]
    bounds = [0, *cuts, len(arguments)]
    return [arguments[start:end] for start, end in pairwise(bounds) if end > start] or [""]


def _chunk_tokens(chunk: Any) -> int:
    from workbench.tokens import count_text

    if isinstance(chunk, str):
        return count_text(chunk)
    return sum(count_text((delta.name or "") + (delta.json_args or "")) for delta in chunk.values())
