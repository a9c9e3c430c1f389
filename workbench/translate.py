"""Turns one arm's pydantic-ai event stream into workbench event payloads."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pydantic_core
from pydantic_ai.messages import (
    INVALID_JSON_KEY,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
)
from pydantic_ai.run import AgentRunResultEvent
from pydantic_ai.usage import RequestUsage

from workbench.display import clip_middle
from workbench.events import (
    PREVIEW_CHARS,
    RUN_CODE,
    Payload,
    RequestStarted,
    Snippet,
    SnippetDelta,
    TextDelta,
    ToolCall,
    ToolResult,
    Usage,
    clip,
)
from workbench.recorder import ModelRequesting, ModelResponded, Recorded, Recorder, StreamBarrier
from workbench.speculation import SPECULATION_EVENTS, EagerWatch, SpeculationWatch
from workbench.tokens import count_response, estimate_request

ERROR_CHARS = 8_000
"""Most of a failed result's message kept in its event, head and tail (``bytes`` still tells the full size): a
snippet that prints 10 MiB and fails must not put 10 MiB into every stored session and every pane showing it."""
SNIPPET_DELTA_SMALL = 2_048
"""Below this many characters of streamed arguments the snippet is updated every ``SNIPPET_DELTA_STEP``
characters; above it only after it grew by an eighth, so a long snippet streamed in tiny chunks costs linear
(not quadratic) time and storage."""
SNIPPET_DELTA_STEP = 32
_OUTCOMES = {"success": "ok", "retried": "retried", "failed": "failed", "denied": "denied"}


@dataclass
class Translator:
    """Stateful per arm: remembers streaming tool-call parts, request numbers and running totals."""

    durations_ms: dict[str, float]
    """Shared with the recorder: top-level call id -> execution time."""
    price: Callable[[RequestUsage, str | None, str | None], float | None]
    clipped_from: dict[str, int] = field(default_factory=dict)
    """Shared with the recorder: top-level call id -> bytes of a result clipped to the result limit."""
    recorder: Recorder | None = None
    """The arm's recorder, which holds the request its model sent until it is announced (:meth:`announce`)."""
    requests: int = 0
    total_input: int = 0
    total_output: int = 0
    total_cost: float | None = None
    """``None`` until a response is priced, and for good once one cannot be."""
    output: str | None = None
    eager: bool = False
    """The arm runs statements while the snippet streams: report how far (:class:`EagerProgress`)."""
    _unpriced: bool = False
    _request: ModelRequesting | None = None
    _answered = True
    """Whether the last request sent has its response (``False`` while one is out, or when it never came)."""
    _calibration: float | None = None
    """The server's input count over the workbench's own for the first request it counted (its chat template
    adds tokens the own count cannot see: 16-39% more with llama.cpp's SmolLM2); later estimates are scaled
    by it."""
    _answered_by: tuple[str | None, str | None] = (None, None)
    """The model and provider the last whole response named (an unfinished request is priced as them)."""
    _streamed: list[str] = field(default_factory=list)
    """Text the pending response streamed so far (its run_code arguments are in ``_streaming_calls``)."""
    _streaming_calls: dict[int, _StreamingCall] = field(default_factory=dict)
    _eager: EagerWatch = field(default_factory=EagerWatch)
    _speculation: SpeculationWatch = field(default_factory=SpeculationWatch)

    def __call__(self, event: Any) -> Iterator[Payload]:
        if isinstance(event, PartDeltaEvent):  # the most frequent event by far
            if self.recorder is not None and self.recorder.unannounced is not None:
                yield from self.announce()
            yield from self._part_delta(event)
        elif isinstance(event, PartStartEvent):
            if self.recorder is not None and self.recorder.unannounced is not None:
                yield from self.announce()
            yield from self._part_start(event)
        elif isinstance(event, FunctionToolCallEvent):
            part = event.part
            yield ToolCall(part.tool_call_id, part.tool_name, _arguments(part))
            if part.tool_name == RUN_CODE:
                yield _snippet(part)
        elif isinstance(event, FunctionToolResultEvent):
            yield self._tool_result(event)
        elif isinstance(event, Recorded):
            yield event.payload
        elif isinstance(event, ModelRequesting):
            yield self._requesting(event)
        elif isinstance(event, ModelResponded):
            if self.recorder is not None and event.request is not None and event.request is self.recorder.unannounced:
                yield from self.announce()  # a response without parts
            self._answered = True
            yield self._usage(event)
        elif isinstance(event, SPECULATION_EVENTS):
            yield from self._speculation(event)
        elif isinstance(event, StreamBarrier):
            event.reached.set()  # everything before the snippet is recorded: its nested calls may come directly
        elif isinstance(event, AgentRunResultEvent):
            output = event.result.output
            self.output = output if isinstance(output, str) else pydantic_core.to_json(output).decode()

    def announce(self) -> Iterator[Payload]:
        """The start of the request the arm's model sent, if not announced yet. The request is sent inside the
        stream's first pull, so an event emitted then would surface only after the response's first part, and
        the reader may still be one event behind then (pydantic-ai's stream runs one event ahead of it), so it
        cannot take the request at once either. It is announced here instead, in the old place: before the
        first part of its response (its response if it has none), a retry or limiter wait recorded meanwhile,
        or its estimated usage if it never answers."""
        request = self.recorder.unannounced if self.recorder is not None else None
        if request is not None:
            assert self.recorder is not None
            self.recorder.unannounced = None
            yield self._requesting(request)

    def _requesting(self, event: ModelRequesting) -> RequestStarted:
        self.requests += 1
        self._request = event
        self._answered = False
        self._streamed.clear()
        self._streaming_calls.clear()
        return RequestStarted(self.requests)

    def _part_start(self, event: PartStartEvent) -> Iterator[Payload]:
        part = event.part
        if isinstance(part, TextPart) and part.content:
            self._streamed.append(part.content)
            yield TextDelta(part.content)
        elif isinstance(part, ToolCallPart) and RUN_CODE.startswith(part.tool_name):
            call = _StreamingCall(part.tool_name, part.tool_call_id, _raw_arguments(part.args))
            self._streaming_calls[event.index] = call
            yield from self._snippet_delta(call)

    def _part_delta(self, event: PartDeltaEvent) -> Iterator[Payload]:
        delta = event.delta
        if isinstance(delta, TextPartDelta) and delta.content_delta:
            self._streamed.append(delta.content_delta)
            yield TextDelta(delta.content_delta)
        elif isinstance(delta, ToolCallPartDelta):
            call = self._streaming_calls.get(event.index)
            if call is None:
                return
            if delta.tool_name_delta:
                call.name += delta.tool_name_delta
            if not RUN_CODE.startswith(call.name):
                del self._streaming_calls[event.index]  # only a run_code call's arguments are worth decoding
                return
            if delta.tool_call_id:
                call.call_id = delta.tool_call_id
            if isinstance(delta.args_delta, str):
                call.args += delta.args_delta
            elif delta.args_delta is not None:
                call.args = _raw_arguments(delta.args_delta)
            yield from self._snippet_delta(call)

    def _snippet_delta(self, call: _StreamingCall) -> Iterator[Payload]:
        for payload in call.snippet_delta():
            yield payload
            if self.eager and isinstance(payload, SnippetDelta):
                yield from self._eager(payload.call_id, payload.code)

    def _tool_result(self, event: FunctionToolResultEvent) -> ToolResult:
        part = event.part
        text = part.model_response_str()
        outcome = _OUTCOMES.get(part.outcome, "failed")
        return ToolResult(
            call_id=part.tool_call_id,
            name=part.tool_name,
            outcome=outcome,  # type: ignore[arg-type]
            preview=text[:PREVIEW_CHARS],
            bytes=len(text.encode()),
            ms=self.durations_ms.pop(part.tool_call_id, 0.0),
            error=clip_middle(text, ERROR_CHARS) if outcome != "ok" else None,
            content=clip(text),
            clipped_from=self.clipped_from.pop(part.tool_call_id, None),
        )

    def unfinished(self) -> Usage | None:
        """The estimated usage of a request that was sent but got no whole response (it timed out, the
        connection dropped, the stream was cut after some text, the arm was cancelled meanwhile): the server
        counted it, so it shows the workbench's own count, marked estimated, never 0. ``None``: none pending."""
        request = self._request
        if self._answered or request is None or request.parameters is None:
            return None
        self._answered = True
        streamed = [*self._streamed, *(call.args for call in self._streaming_calls.values())]
        parts = [TextPart("".join(streamed))] if streamed else []
        model, provider = self._answered_by
        return self._usage(ModelResponded(response=ModelResponse(parts, model_name=model, provider_name=provider)))

    def _usage(self, event: ModelResponded) -> Usage:
        response = event.response
        if response.model_name:
            self._answered_by = (response.model_name, response.provider_name)
        usage, estimated = self._counted(response)
        cost = self.price(usage, response.model_name, response.provider_name)
        cache_cost = None
        if usage.cache_read_tokens and cost is not None:
            cached = RequestUsage(input_tokens=usage.cache_read_tokens, cache_read_tokens=usage.cache_read_tokens)
            cache_cost = self.price(cached, response.model_name, response.provider_name)
        self.total_input += usage.input_tokens
        self.total_output += usage.output_tokens
        self._unpriced = self._unpriced or cost is None
        self.total_cost = None if self._unpriced or cost is None else (self.total_cost or 0.0) + cost
        return Usage(
            request=self.requests,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            total_input_tokens=self.total_input,
            total_output_tokens=self.total_output,
            cost_usd=cost,
            total_cost_usd=self.total_cost,
            estimated=estimated,
            cache_cost_usd=cache_cost,
            finish_reason=response.finish_reason,
        )

    def _counted(self, response: ModelResponse) -> tuple[RequestUsage, bool]:
        """The response's usage, or, when it reported none (many local servers stream none), the workbench's
        own BPE count of the request that was sent and of the response: never 0 for a request that went out."""
        usage = response.usage
        request = self._request
        sent = request is not None and request.parameters is not None
        if not usage.unmeasured_requests and (usage.input_tokens or usage.output_tokens):
            if self._calibration is None and sent and usage.input_tokens:
                assert request is not None and request.parameters is not None
                own = estimate_request(request.messages, request.parameters)
                self._calibration = usage.input_tokens / own if own else None
            return usage, False
        input_tokens = usage.input_tokens
        if not input_tokens and sent:
            assert request is not None and request.parameters is not None
            input_tokens = estimate_request(request.messages, request.parameters)
            if self._calibration is not None:  # the server's chat template, as far as one counted request shows it
                input_tokens = round(input_tokens * self._calibration)
        output_tokens = usage.output_tokens or count_response(response)
        return RequestUsage(input_tokens=input_tokens, output_tokens=output_tokens), True


@dataclass
class _StreamingCall:
    name: str
    call_id: str
    args: str
    code: str = ""
    decode_at: int = 0
    """Length the arguments must reach before the next decode (see ``SNIPPET_DELTA_SMALL``)."""

    def snippet_delta(self) -> Iterator[Payload]:
        if self.name != RUN_CODE or not self.args or len(self.args) < self.decode_at:
            return
        size = len(self.args)
        self.decode_at = size + (SNIPPET_DELTA_STEP if size < SNIPPET_DELTA_SMALL else size // 8)
        code = _code_of(self.args, partial=True)
        if code and code != self.code:
            self.code = code
            yield SnippetDelta(self.call_id, code)


def _snippet(part: ToolCallPart) -> Snippet:
    """A run_code call's final code; arguments that are not valid JSON are kept as written, with the code
    recovered from them where it can be."""
    arguments = _arguments(part)
    if isinstance(arguments, str):
        return Snippet(part.tool_call_id, _code_of(arguments, partial=True), raw_arguments=arguments)
    code = arguments.get("code")
    return Snippet(part.tool_call_id, code if isinstance(code, str) else "")


def _code_of(arguments: str, *, partial: bool = False) -> str:
    """The ``code`` argument of run_code, decoded even from a JSON prefix while it streams, and leniently from
    JSON a small model broke (raw newlines or tabs inside the string, the arguments cut off)."""
    mode = "trailing-strings" if partial else False
    try:
        value = pydantic_core.from_json(arguments, allow_partial=mode)
    except ValueError:
        try:
            value = pydantic_core.from_json(_escape_raw_controls(arguments), allow_partial="trailing-strings")
        except ValueError:
            return ""
    code = value.get("code") if isinstance(value, dict) else None
    return code if isinstance(code, str) else ""


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*(?:"|$)', re.DOTALL)
_RAW_CONTROLS = {code: f"\\u{code:04x}" for code in range(0x20)} | {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}


def _escape_raw_controls(text: str) -> str:
    """``text`` with control characters inside its JSON strings escaped, as JSON requires (outside strings
    they are whitespace and stay)."""
    return _JSON_STRING.sub(lambda found: found.group().translate(_RAW_CONTROLS), text)


def _raw_arguments(args: str | dict[str, Any] | None) -> str:
    """Arguments as the JSON text streamed so far (``args_as_json_str`` would wrap a partial string)."""
    if args is None:
        return ""
    return args if isinstance(args, str) else pydantic_core.to_json(args).decode()


def _arguments(part: ToolCallPart) -> dict[str, Any] | str:
    """The call's arguments, or the text the model wrote when it is not a JSON object."""
    try:
        arguments = part.args_as_dict(raise_if_invalid=True)
    except (ValueError, AssertionError):
        return part.args if isinstance(part.args, str) else str(part.args)
    raw = arguments.get(INVALID_JSON_KEY)
    return raw if len(arguments) == 1 and isinstance(raw, str) else arguments  # pydantic-ai's wrapper of bad JSON
