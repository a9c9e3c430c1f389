"""The recorder: sees every tool execution and every model response of an arm, without being a capability.

pydantic-ai calls every capability on every hook of every tool call (validation and execution, before,
after and around) and copies the run context for each, whether or not the capability overrides the hook:
a capability costs per call whatever it does. So the recorder sits where only what it needs passes: a
toolset around the agent's tools (:class:`RecordingToolset`: each call's time, its result clipped, a
snippet's nested calls) and a model around the arm's model (:class:`RecordingModel`: each request and its
response).

CodeMode emits no event per nested call, but every nested call goes through a ToolManager over the toolset
CodeMode wraps, and so through a recording toolset placed inside it (around the app's tools); the
``run_code`` call itself goes through the one CodeMode's own toolset is wrapped in
(:class:`RecordingCodeMode`). While ``run_code`` executes, a ContextVar holds its call id; the nested calls
run in tasks created inside it and so inherit it as their parent id. The recorder turns what it sees into
the workbench's own event payloads and emits them into the run's event stream (``ctx.emit``), where they
arrive interleaved in real time with pydantic-ai's own events.

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
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

import pydantic
import pydantic_core
from pydantic_ai import CustomEvent
from pydantic_ai.exceptions import ModelRetry, ToolFailed, ToolFailedError, ToolRetryError
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart, ToolReturn
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import AbstractToolset, WrapperToolset
from pydantic_ai.toolsets.abstract import ToolsetTool
from pydantic_ai_harness import CodeMode

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
class Recorded(CustomEvent, name="workbench.recorded"):
    """Carries one workbench payload through pydantic-ai's event stream."""

    payload: Payload


@dataclass(kw_only=True)
class StreamBarrier(CustomEvent, name="workbench.stream_barrier"):
    """Sent before a snippet whose nested calls go to the recorder's sink: the reader sets ``reached`` once it
    has taken it, so everything the stream carried before the snippet is recorded before its first call."""

    reached: asyncio.Event = field(default_factory=asyncio.Event, repr=False, compare=False)


@dataclass(kw_only=True)
class ModelRequesting(CustomEvent, name="workbench.model_requesting"):
    """A model request is about to be sent: what it carries, to count it when its response reports no usage."""

    messages: list[ModelMessage] = field(default_factory=list)
    parameters: ModelRequestParameters | None = None


@dataclass(kw_only=True)
class ModelResponded(CustomEvent, name="workbench.model_responded"):
    """A model response arrived: its usage as the provider (or the scripted model) reported it."""

    response: ModelResponse
    request: ModelRequesting | None = field(default=None, repr=False, compare=False)
    """The request it answers (as :attr:`Recorder.unannounced` held it)."""


@dataclass
class Recorder:
    """Records tool executions (top-level timings, nested calls as events) and model responses; the arm's
    agent gets it through :meth:`toolset`, :meth:`model` and :meth:`code_mode`."""

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
    unannounced: ModelRequesting | None = None
    """The request the arm's model sent that the reader (the translator) has not announced yet."""
    _run: RunContext[Any] | None = field(default=None, init=False, repr=False)
    """The run context of the model's last request (see :meth:`_emitter`)."""

    def toolset(self, wrapped: AbstractToolset[Any], *, nested: bool = False) -> RecordingToolset:
        """``wrapped`` recorded: its calls top-level ones, or (``nested``) the calls of snippets (the toolset
        CodeMode runs them through)."""
        return RecordingToolset(wrapped, recorder=self, nested=nested)

    def model(self, wrapped: Any) -> RecordingModel:
        """The arm's model, with each request and each whole response recorded."""
        return RecordingModel(wrapped, self)

    def code_mode(self, **options: Any) -> RecordingCodeMode:
        """CodeMode with its ``run_code`` calls (and the direct calls it passes through) recorded."""
        return RecordingCodeMode(**options, recorder=self)

    def run_ended(self) -> None:
        """Lets go of the run's context (its messages, its tools) once the run is over."""
        self._run = None

    def _emitter(self, ctx: RunContext[Any]) -> RunContext[Any]:
        """The run's context, as the model's last request had it, rather than a tool call's ``ctx``: pydantic-ai
        refuses a custom event emitted from a capability's tool or hook (``run_code`` is CodeMode's, and so are
        the calls of an eager statement, which CodeMode's stream hook runs), and the recorder's events are the
        run's. A call always follows a request of its run, which sets it."""
        return self._run if self._run is not None else ctx

    async def _record(self, ctx: RunContext[Any], payload: Payload) -> None:
        """``payload`` to the sink (a snippet that runs alone) or into the run's stream."""
        if _sunk_snippet.get():
            assert self.sink is not None
            self.sink(payload)
        else:
            await self._emitter(ctx).emit(Recorded(payload=payload))

    def _parent(self, name: str, call_id: str) -> str:
        """The ``run_code`` call a nested call belongs to: the snippet running, or an eager statement's."""
        parent = _running_snippet.get()
        if parent is None and name in self.sandboxed and "__" in call_id:
            parent = call_id.rpartition("__")[0]
        return parent or ""

    async def _nested(self, ctx: RunContext[Any], name: str, args: dict[str, Any], call: Callable[[], Any]) -> Any:
        call_id = ctx.tool_call_id or ""
        parent = self._parent(name, call_id)
        if isinstance(args, _Refused):
            # Refused at validation (see RecordingToolset.get_tools): a nested call that never executes is
            # shown anyway, then fails as it would have at validation.
            await self._record(ctx, InnerCall(call_id, parent, name, args.shown))
            outcome, message = _classify(args.error)
            await self._record(ctx, InnerResult(call_id, parent, name, outcome, "", 0, 0.0, message))
            raise args.error
        await self._record(ctx, InnerCall(call_id, parent, name, _jsonable(args)))
        started = time.perf_counter()
        try:
            result = await call()
        except Exception as error:
            outcome, message = _classify(error)
            elapsed = _ms(started)
            await self._record(ctx, InnerResult(call_id, parent, name, outcome, "", 0, elapsed, message))
            raise
        elapsed = _ms(started)
        text = _json_text(result)
        await self._record(
            ctx,
            InnerResult(
                call_id, parent, name, "ok", text[:PREVIEW_CHARS], len(text.encode()), elapsed, content=clip(text)
            ),
        )
        return result

    async def _top_level(self, ctx: RunContext[Any], name: str, call: Callable[[], Any]) -> Any:
        call_id = ctx.tool_call_id or ""
        snippet = name == RUN_CODE
        token = _running_snippet.set(call_id) if snippet else None
        sunk = None
        started = time.perf_counter()
        try:
            if snippet and await self._sink_open(ctx):
                sunk = _sunk_snippet.set(True)
                started = time.perf_counter()  # the wait for the reader is not the snippet's time
            result = await call()
        except ModelRetry as error:  # a snippet's error, traceback or type-check output; a tool's retry
            clipped = self._clip_text(call_id, error.message)
            if clipped is not None:
                error.message = clipped
            raise
        except ToolRetryError as error:
            clipped = self._clip_text(call_id, error.tool_retry.content)
            if clipped is not None:
                error.tool_retry.content = clipped
            raise
        finally:
            self.durations_ms[call_id] = _ms(started)
            if token is not None:
                _running_snippet.reset(token)
            if sunk is not None:
                _sunk_snippet.reset(sunk)
        return self._bounded(call_id, result)

    def _clip_text(self, call_id: str, content: Any) -> str | None:
        clipped = clip_text(content, self.max_result_bytes, escaped=True) if isinstance(content, str) else None
        if clipped is None:
            return None
        self.clipped_from[call_id] = clipped.original_bytes
        return clipped.text

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
        await self._emitter(ctx).emit(barrier)
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


class _Refused(dict[str, Any]):
    """What a nested call's arguments validate to when they are refused (too large) or invalid: the call goes
    on to :meth:`RecordingToolset.call_tool`, which knows its id, records it and raises ``error``."""

    def __init__(self, error: Exception, shown: dict[str, Any]) -> None:
        super().__init__()
        self.error = error
        self.shown = shown


@dataclass
class _GuardedValidator:
    """A tool's argument validator behind the argument-size limit; for a nested call, a failure becomes a
    :class:`_Refused` value (so the call is shown) rather than an error at validation."""

    wrapped: Any
    name: str
    recorder: Recorder
    nested: bool

    def validate_json(self, input: str | bytes, *, allow_partial: Any = "off", **kwargs: Any) -> Any:
        return self._validate(
            input, allow_partial, lambda: self.wrapped.validate_json(input, allow_partial=allow_partial, **kwargs)
        )

    def validate_python(self, input: Any, *, allow_partial: Any = "off", **kwargs: Any) -> Any:
        return self._validate(
            input, allow_partial, lambda: self.wrapped.validate_python(input, allow_partial=allow_partial, **kwargs)
        )

    def _validate(self, args: Any, allow_partial: Any, validate: Callable[[], Any]) -> Any:
        limit = self.recorder.max_argument_chars
        message = oversized(self.name, args, limit)
        if message is not None:
            drop_arguments(args)  # CodeMode keeps a nested call's arguments in the run's history
            if self.nested:
                return _Refused(ModelRetry(message), {"dropped": f"over {limit:,} characters of arguments"})
            raise ModelRetry(message)
        if not self.nested or allow_partial not in ("off", False):
            return validate()
        try:
            return validate()
        except (pydantic.ValidationError, ModelRetry) as error:
            # A nested call whose arguments do not validate never executes; show it anyway.
            return _Refused(error, _jsonable(args if isinstance(args, dict) else {"raw": str(args)}))


@dataclass
class RecordingToolset(WrapperToolset[Any]):
    """Records the calls that go through ``wrapped``: top-level ones (their time, their result clipped) or,
    ``nested``, those of snippets (each an :class:`InnerCall` and its :class:`InnerResult`)."""

    recorder: Recorder = field(kw_only=True)
    nested: bool = field(default=False, kw_only=True)

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await self.wrapped.get_tools(ctx)
        guarded = {}
        for name, tool in tools.items():
            if name != RUN_CODE and not isinstance(tool.args_validator, _GuardedValidator):
                tool = replace(
                    tool, args_validator=_GuardedValidator(tool.args_validator, name, self.recorder, self.nested)
                )
            guarded[name] = tool
        return guarded

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        call = lambda: self.wrapped.call_tool(name, tool_args, ctx, tool)  # noqa: E731
        if self.nested:
            return await self.recorder._nested(ctx, name, tool_args, call)
        return await self.recorder._top_level(ctx, name, call)


class RecordingModel(WrapperModel):
    """The arm's model; each request it sends is held for the reader to announce (:class:`ModelRequesting`,
    :attr:`Recorder.unannounced`) and each whole response reported (:class:`ModelResponded`) in the run's
    event stream."""

    def __init__(self, wrapped: Any, recorder: Recorder) -> None:
        super().__init__(wrapped)
        self.recorder = recorder

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        # Not emitted: the stream's reader takes it before the response's first part (Translator.announce).
        request = self.recorder.unannounced = ModelRequesting(messages=messages, parameters=model_request_parameters)
        self.recorder._run = run_context
        async with self.wrapped.request_stream(
            messages, model_settings, model_request_parameters, run_context
        ) as stream:
            yield stream
        if run_context is not None:
            await run_context.emit(ModelResponded(response=stream.get(), request=request))


@dataclass
class RecordingCodeMode(CodeMode[Any]):
    """CodeMode whose toolset (``run_code``, and the direct tools it passes through) is recorded."""

    recorder: Recorder | None = field(default=None, kw_only=True)

    def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any] | None:
        code_mode = super().get_wrapper_toolset(toolset)
        assert code_mode is not None and self.recorder is not None
        return self.recorder.toolset(code_mode)


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
