"""The recorder capability: sees every tool execution and every model response of an arm.

CodeMode emits no event per nested call, but every nested call goes through a ToolManager that keeps the
agent's capabilities, so ``wrap_tool_execute`` fires for each one. While ``run_code`` executes, a
ContextVar holds its call id; the nested calls run in tasks created inside it and so inherit it as
their parent id. The recorder turns what it sees into the workbench's own event payloads and emits them
into the run's event stream (``ctx.emit``), where they arrive interleaved in real time with
pydantic-ai's own events.

Each event through that stream costs as much as one of pydantic-ai's own (a trip through every generator
between the run and its reader), and a snippet's nested calls are most of an arm's events. So a recorder with
a ``sink`` (the runner's own emit) hands the nested calls of a snippet that runs alone straight to it: first a
:class:`StreamBarrier` goes through the stream and the snippet waits until the runner has taken it (every
event before the snippet is recorded by then), and while the snippet runs nothing else enters the stream
(the response called no other tool; arms that speculate or run eager statements keep the stream), so the
events are recorded in the same order as through the stream.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

import pydantic
import pydantic_core
from pydantic_ai import CapabilityEvent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ModelRetry, ToolFailed, ToolFailedError, ToolRetryError
from pydantic_ai.messages import AgentStreamEvent, ModelMessage, ModelResponse, ToolCallPart, ToolReturn
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.tools import RunContext, ToolDefinition

from workbench.events import PREVIEW_CHARS, RUN_CODE, InnerCall, InnerResult, Outcome, Payload, clip
from workbench.guards import (
    DEFAULT_MAX_RESULT_BYTES,
    MAX_ARGUMENT_CHARS,
    clip_result,
    clip_text,
    drop_arguments,
    oversized,
)

KEPT_CHARS = 4_000
"""Longest string kept in an inner call's arguments or error message in its event (the call itself gets all)."""

_running_snippet: ContextVar[str | None] = ContextVar("workbench_running_snippet", default=None)
_sunk_snippet: ContextVar[bool] = ContextVar("workbench_sunk_snippet", default=False)
"""Whether the snippet running in this context sends its nested calls to the recorder's sink."""


@dataclass(kw_only=True)
class Recorded(CapabilityEvent, namespace="workbench"):
    """Carries one workbench payload through pydantic-ai's event stream."""

    payload: Payload


@dataclass(kw_only=True)
class StreamBarrier(CapabilityEvent, namespace="workbench"):
    """Sent before a snippet whose nested calls go to the recorder's sink: the reader sets ``reached`` once it
    has taken it, so everything the stream carried before the snippet is recorded before its first call."""

    reached: asyncio.Event = field(default_factory=asyncio.Event, repr=False, compare=False)


@dataclass(kw_only=True)
class ModelRequesting(CapabilityEvent, namespace="workbench"):
    """A model request is about to be sent: what it carries, to count it when its response reports no usage."""

    messages: list[ModelMessage] = field(default_factory=list)
    parameters: ModelRequestParameters | None = None


@dataclass(kw_only=True)
class ModelResponded(CapabilityEvent, namespace="workbench"):
    """A model response arrived: its usage as the provider (or the scripted model) reported it."""

    response: ModelResponse


@dataclass
class Recorder(AbstractCapability[Any]):
    """Records tool executions (top-level timings, nested calls as events) and model responses."""

    durations_ms: dict[str, float] = field(default_factory=dict)
    """Top-level call id -> execution time; the runner attaches it to the call's result event."""
    max_argument_chars: int = MAX_ARGUMENT_CHARS
    """Calls with larger arguments are refused (see :mod:`workbench.guards`)."""
    sandboxed: frozenset[str] = frozenset()
    """The tools callable inside ``run_code``. A call to one of them made while no snippet executes is an
    eager statement's (run while the snippet still streams): its id is ``<run_code id>__<n>``."""
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES
    """What the model receives from one top-level call (a tool's result, a snippet's value or error) is
    clipped to this many bytes of text, visibly (see :func:`workbench.guards.clip_result`)."""
    clipped_from: dict[str, int] = field(default_factory=dict)
    """Top-level call id -> bytes of a result that was clipped; the translator records it in the result event."""
    sink: Callable[[Payload], None] | None = None
    """Where the nested calls of a snippet that runs alone go at once (the runner's emit), instead of through
    pydantic-ai's event stream; ``None``: always through the stream. Give one only to an arm that neither
    speculates nor runs eager statements (their events enter the stream while a snippet runs)."""

    async def _record(self, ctx: RunContext[Any], payload: Payload) -> None:
        if _sunk_snippet.get():
            assert self.sink is not None
            self.sink(payload)
        else:
            await ctx.emit(Recorded(payload=payload))

    def _parent(self, call: ToolCallPart) -> str | None:
        """The ``run_code`` call a nested call belongs to (``None``: a top-level call)."""
        parent = _running_snippet.get()
        if parent is None and call.tool_name in self.sandboxed and "__" in call.tool_call_id:
            parent = call.tool_call_id.rpartition("__")[0]
        return parent

    def wrap_run_event_stream(
        self, ctx: RunContext[Any], *, stream: AsyncIterable[AgentStreamEvent]
    ) -> AsyncIterable[AgentStreamEvent]:
        """The stream itself, not wrapped: pydantic-ai wraps every run's stream in each capability's hook, and the
        default hook is an async generator that passes each event on (one more frame per event, per arm)."""
        return stream

    async def before_model_request(self, ctx: RunContext[Any], request_context: Any) -> Any:
        await ctx.emit(
            ModelRequesting(messages=request_context.messages, parameters=request_context.model_request_parameters)
        )
        return request_context

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: Any, response: ModelResponse
    ) -> ModelResponse:
        await ctx.emit(ModelResponded(response=response))
        return response

    async def before_tool_validate(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any
    ) -> Any:
        """Refuse oversized arguments here rather than in a capability of its own: pydantic-ai copies the run
        context for every capability on every hook of every call, so one capability costs half of two."""
        if tool_def.name == RUN_CODE:
            return args
        message = oversized(tool_def.name, args, self.max_argument_chars)
        if message is None:
            return args
        parent = self._parent(call)
        if parent is not None:
            summary = {"dropped": f"over {self.max_argument_chars:,} characters of arguments"}
            await self._record(ctx, InnerCall(call.tool_call_id, parent, call.tool_name, summary))
            await self._record(
                ctx, InnerResult(call.tool_call_id, parent, call.tool_name, "retried", "", 0, 0.0, message)
            )
        drop_arguments(args, call.args)
        raise ModelRetry(message)

    async def on_tool_validate_error(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any, error: Exception
    ) -> Any:
        parent = self._parent(call)
        if parent is not None:
            # A nested call whose arguments do not validate never executes; show it anyway.
            outcome, message = _classify(error)
            arguments = args if isinstance(args, dict) else {"raw": str(args)}
            await self._record(ctx, InnerCall(call.tool_call_id, parent, call.tool_name, _jsonable(arguments)))
            await self._record(
                ctx, InnerResult(call.tool_call_id, parent, call.tool_name, outcome, "", 0, 0.0, message)
            )
        raise error

    async def wrap_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any, handler: Any
    ) -> Any:
        parent = self._parent(call)
        if parent is None:
            return await self._top_level(ctx, call, tool_def, args, handler)
        await self._record(ctx, InnerCall(call.tool_call_id, parent, call.tool_name, _jsonable(args)))
        started = time.perf_counter()
        try:
            result = await handler(args)
        except Exception as error:
            outcome, message = _classify(error)
            elapsed = _ms(started)
            await self._record(
                ctx, InnerResult(call.tool_call_id, parent, call.tool_name, outcome, "", 0, elapsed, message)
            )
            raise
        elapsed = _ms(started)
        text = _json_text(result)
        await self._record(
            ctx,
            InnerResult(
                call.tool_call_id,
                parent,
                call.tool_name,
                "ok",
                text[:PREVIEW_CHARS],
                len(text.encode()),
                elapsed,
                content=clip(text),
            ),
        )
        return result

    async def _top_level(
        self, ctx: RunContext[Any], call: ToolCallPart, tool_def: ToolDefinition, args: Any, handler: Any
    ) -> Any:
        snippet = tool_def.name == RUN_CODE
        token = _running_snippet.set(call.tool_call_id) if snippet else None
        sunk = None
        started = time.perf_counter()
        try:
            if snippet and await self._sink_open(ctx):
                sunk = _sunk_snippet.set(True)
                started = time.perf_counter()  # the wait for the reader is not the snippet's time
            result = await handler(args)
        except ToolRetryError as error:  # a snippet's error, traceback or type-check output; a tool's retry
            content = error.tool_retry.content
            clipped = clip_text(content, self.max_result_bytes, escaped=True) if isinstance(content, str) else None
            if clipped is not None:
                error.tool_retry.content = clipped.text
                self.clipped_from[call.tool_call_id] = clipped.original_bytes
            raise
        finally:
            self.durations_ms[call.tool_call_id] = _ms(started)
            if token is not None:
                _running_snippet.reset(token)
            if sunk is not None:
                _sunk_snippet.reset(sunk)
        return self._bounded(call.tool_call_id, result)

    async def _sink_open(self, ctx: RunContext[Any]) -> bool:
        """Whether the snippet about to run sends its nested calls to the sink: there is one, the response that
        called it called no other tool (whose events would enter the stream meanwhile), and the reader has
        taken everything before it (the barrier)."""
        if self.sink is None:
            return False
        response = ctx.messages[-1] if ctx.messages else None
        if not isinstance(response, ModelResponse) or sum(isinstance(p, ToolCallPart) for p in response.parts) != 1:
            return False
        barrier = StreamBarrier()
        await ctx.emit(barrier)
        await barrier.reached.wait()
        return True

    def _bounded(self, call_id: str, result: Any) -> Any:
        """``result``, or its text clipped to ``max_result_bytes`` (the same rule for a tool and a snippet)."""
        value = result.return_value if isinstance(result, ToolReturn) else result
        clipped = clip_result(value, self.max_result_bytes)
        if clipped is None:
            return result
        self.clipped_from[call_id] = clipped.original_bytes
        return replace(result, return_value=clipped.text) if isinstance(result, ToolReturn) else clipped.text


def _classify(error: BaseException) -> tuple[Outcome, str]:
    outcome, message = _describe(error)
    return outcome, _clip(message)


def _describe(error: BaseException) -> tuple[Outcome, str]:
    if isinstance(error, pydantic.ValidationError):
        return "retried", _validation_summary(error)
    if isinstance(error, ModelRetry):
        return "retried", error.message
    if isinstance(error, ToolRetryError):
        return "retried", error.tool_retry.model_response_str() if hasattr(
            error.tool_retry, "model_response_str"
        ) else str(error)
    if isinstance(error, ToolFailed | ToolFailedError):
        return "failed", str(error)
    return "failed", f"{type(error).__name__}: {error}"


def _validation_summary(error: pydantic.ValidationError) -> str:
    problems = [f"{'.'.join(map(str, item['loc'])) or 'arguments'}: {item['msg']}" for item in error.errors()]
    return "invalid arguments: " + "; ".join(problems)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _json_text(value: Any) -> str:
    try:
        return pydantic_core.to_json(value).decode()
    except pydantic_core.PydanticSerializationError:
        return repr(value)


def _jsonable(value: Any) -> dict[str, Any]:
    try:
        plain = _clip_strings(pydantic_core.to_jsonable_python(value))
    except pydantic_core.PydanticSerializationError:
        return {"repr": _clip(repr(value))}
    return plain if isinstance(plain, dict) else {"value": plain}


def _clip(text: str) -> str:
    return clip(text, KEPT_CHARS)


def _clip_strings(value: Any) -> Any:
    """``value`` with every long string clipped: a snippet can pass a 200 MB string to every call it makes."""
    if isinstance(value, str):
        return _clip(value)
    if isinstance(value, dict):
        return {_clip(str(key)): _clip_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_clip_strings(item) for item in value]
    return value
