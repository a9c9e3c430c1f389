"""Comparisons as OpenTelemetry traces: one trace per comparison, a span per arm, per model request (GenAI
semantic conventions), per tool call and per snippet, with the snippet's inner calls as its child spans.

:class:`ComparisonTrace` is one more consumer of the event stream: a live run feeds it each event as it
happens (spans end, and are exported, as their results arrive), and a stored session is exported by feeding
it the stored events. Span times come from the events (the comparison's start plus each event's seconds since
its arm started), so a live export and a later export of the same session give the same spans.

Needs the ``otel`` extra (``opentelemetry-sdk``, ``opentelemetry-exporter-otlp-proto-http``); imported only
when tracing is on. When Logfire is installed, ``logfire.configure()`` is called and its tracer provider used
(spans go to Logfire when a token is present, and to the OTLP endpoint); when the program already set a global
tracer provider (its own ``logfire.configure()``, say), that provider is used.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from workbench.display import clip_tail
from workbench.errors import UserError
from workbench.events import (
    ArmEvent,
    EndState,
    Graded,
    InnerCall,
    InnerResult,
    ProviderRetry,
    RequestStarted,
    RunFinished,
    RunStarted,
    Snippet,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnEnded,
    TurnStarted,
    Usage,
)
from workbench.summary import ArmSummary
from workbench.verdict import verdict_of

SERVICE_NAME = "code-mode-workbench"
ATTRIBUTE_CHARS = 8_000
"""Longest text kept in one span attribute (arguments, results, code, answers)."""
EXPORT_TIMEOUT_S = 5.0
"""Most seconds one export to a collector may take, in wall time: an unreachable or crawling collector (one
that answers a byte at a time never trips an HTTP read timeout) never holds a run up for long."""
FLUSH_TIMEOUT_MS = 2_000
"""Most a run's end waits for its last spans to be sent."""
SHUTDOWN_TIMEOUT_MS = 1_000
"""Most the process's exit waits for the exporter to shut down."""
BATCH_DELAY_MS = 200
"""Finished spans are sent in batches this often, so a live run shows up while it runs."""


class OtelUnavailable(UserError, RuntimeError):
    """Tracing was asked for but the ``otel`` extra is not installed."""


_log = logging.getLogger("workbench.otel")
_MISSING = "OpenTelemetry export needs the otel extra: pip install 'code-mode-workbench[otel]' ({name} is missing)"


def _clip(text: str) -> str:
    return clip_tail(text, ATTRIBUTE_CHARS + 1)


def _json(value: Any) -> str:
    return _clip(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _split_model(label: str) -> tuple[str, str]:
    """``openai:gpt-5-mini`` -> (``openai``, ``gpt-5-mini``); a label without a provider is its own system."""
    provider, _, name = label.partition(":")
    return (provider, name) if name else (label, label)


@dataclass
class _ArmTrace:
    """The open spans of one arm while its events arrive."""

    name: str
    span: Span
    context: Context
    summary: ArmSummary
    request: Span | None = None
    request_number: int = 0
    text: list[str] = field(default_factory=list)
    calls: dict[str, Span] = field(default_factory=dict)
    """Open call spans by call id (inner calls as ``parent/call``)."""
    contexts: dict[str, Context] = field(default_factory=dict)
    """Contexts of ``run_code`` spans, the parents of their inner calls."""
    codes: dict[str, str] = field(default_factory=dict)
    finished: bool = False
    turn: Span | None = None
    """The open span of the conversation's current turn (``None`` for a run of one prompt)."""
    turn_context: Context | None = None

    @property
    def parent(self) -> Context:
        """Where a request or a call span goes: under its turn in a conversation, else under the arm."""
        return self.turn_context or self.context


class ComparisonTrace:
    """One comparison as one trace; feed it events with :meth:`add`, close it with :meth:`finish`."""

    def __init__(self, comparison: Any, tracer: Tracer) -> None:
        self.tracer = tracer
        self.comparison = comparison
        self._base_ns = int(comparison.created.timestamp() * 1e9)
        self._end_ns = self._base_ns
        self._lock = threading.Lock()
        self.root = tracer.start_span(
            f"comparison {comparison.app}",
            kind=SpanKind.INTERNAL,
            start_time=self._base_ns,
            attributes={
                "workbench.session_id": comparison.session_id,
                "workbench.app": comparison.app,
                "workbench.items": comparison.items,
                "workbench.seed": comparison.seed,
                "workbench.task": comparison.task or "",
                "workbench.prompt": _clip(comparison.prompt),
                "workbench.model": comparison.model,
                "workbench.arms": list(comparison.arms),
            },
        )
        self._root_context = trace.set_span_in_context(self.root)
        self._arms: dict[str, _ArmTrace] = {}
        self.spans = 1
        self.finished = False

    def _ns(self, t: float) -> int:
        at = self._base_ns + int(t * 1e9)
        self._end_ns = max(self._end_ns, at)
        return at

    def _start(self, name: str, parent: Context, t: float, attributes: dict[str, Any]) -> Span:
        self.spans += 1
        return self.tracer.start_span(name, context=parent, start_time=self._ns(t), attributes=attributes)

    def _arm(self, name: str) -> _ArmTrace:
        arm = self._arms.get(name)
        if arm is None:
            span = self._start(
                f"invoke_agent {name}",
                self._root_context,
                0.0,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name, "workbench.arm": name},
            )
            arm = _ArmTrace(name, span, trace.set_span_in_context(span), ArmSummary(name))
            self._arms[name] = arm
        return arm

    def add(self, event: ArmEvent) -> None:
        """Fold one event in: open or close the spans it starts or ends. Never raises: tracing that breaks
        stops tracing this comparison (with one warning), never the run."""
        with self._lock:
            if self.finished:
                return
            try:
                arm = self._arm(event.arm)
                if not arm.finished:
                    arm.summary.add(event)
                    self._apply(arm, event.payload, event.t)
            except Exception as error:
                _log.warning("workbench: tracing of session %s stopped: %s", self.comparison.session_id, error)
                self.finished = True

    def add_all(self, events: Iterable[ArmEvent]) -> None:
        for event in events:
            self.add(event)

    def _apply(self, arm: _ArmTrace, payload: Any, t: float) -> None:
        match payload:
            case RunStarted():
                system, model = _split_model(payload.model)
                arm.span.set_attributes(
                    {
                        "workbench.mode": payload.mode,
                        "gen_ai.system": system,
                        "gen_ai.request.model": model,
                        "workbench.model": payload.model,
                        "workbench.tools": list(payload.tools),
                        "workbench.sandboxed_tools": list(payload.sandboxed_tools),
                    }
                )
            case RequestStarted():
                self._end_request(arm, t)
                system, model = _split_model(arm.summary.model)
                arm.request_number = payload.request
                arm.request = self._start(
                    f"chat {model}",
                    arm.parent,
                    t,
                    {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.system": system,
                        "gen_ai.request.model": model,
                        "workbench.request": payload.request,
                    },
                )
            case ProviderRetry():
                target = arm.request or arm.span
                target.add_event(
                    "provider_retry",
                    {"attempt": payload.attempt, "attempts": payload.attempts, "error": _clip(payload.error),
                     "wait_s": payload.wait_s},
                    timestamp=self._ns(t),
                )  # fmt: skip
            case TextDelta():
                arm.text.append(payload.text)
            case Usage():
                if arm.request is not None and payload.request == arm.request_number:
                    attributes: dict[str, Any] = {
                        "gen_ai.usage.input_tokens": payload.input_tokens,
                        "gen_ai.usage.output_tokens": payload.output_tokens,
                    }
                    if payload.cache_read_tokens:
                        attributes["gen_ai.usage.cache_read.input_tokens"] = payload.cache_read_tokens
                    if payload.cost_usd is not None:
                        attributes["operation.cost"] = payload.cost_usd
                    arm.request.set_attributes(attributes)
                    self._end_request(arm, t)
            case ToolCall():
                span = self._start(
                    f"execute_tool {payload.name}",
                    arm.parent,
                    t,
                    {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": payload.name,
                        "gen_ai.tool.call.id": payload.call_id,
                        "gen_ai.tool.call.arguments": _json(payload.args),
                    },
                )
                if payload.call_id in arm.codes:
                    span.set_attribute("workbench.snippet.code", _clip(arm.codes[payload.call_id]))
                arm.calls[payload.call_id] = span
                arm.contexts[payload.call_id] = trace.set_span_in_context(span)
            case Snippet():
                arm.codes[payload.call_id] = payload.code
                if (span := arm.calls.get(payload.call_id)) is not None:
                    span.set_attribute("workbench.snippet.code", _clip(payload.code))
            case InnerCall():
                parent = arm.contexts.get(payload.parent_id, arm.parent)
                arm.calls[f"{payload.parent_id}/{payload.call_id}"] = self._start(
                    f"execute_tool {payload.name}",
                    parent,
                    t,
                    {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": payload.name,
                        "gen_ai.tool.call.id": payload.call_id,
                        "gen_ai.tool.call.arguments": _json(payload.args),
                        "workbench.inner": True,
                        "workbench.parent_call_id": payload.parent_id,
                    },
                )
            case ToolResult() | InnerResult():
                key = f"{payload.parent_id}/{payload.call_id}" if isinstance(payload, InnerResult) else payload.call_id
                span = arm.calls.pop(key, None)
                if span is not None:
                    span.set_attributes(
                        {
                            "workbench.outcome": payload.outcome,
                            "workbench.result_bytes": payload.bytes,
                            "workbench.tool_ms": payload.ms,
                            "gen_ai.tool.call.result": _clip(payload.content or payload.preview),
                        }
                    )
                    if payload.outcome in ("failed", "denied"):
                        span.set_status(Status(StatusCode.ERROR, _clip(payload.error or payload.outcome)))
                    span.end(end_time=self._ns(t))
            case EndState():
                arm.span.set_attributes(
                    {
                        "workbench.created": len(payload.created),
                        "workbench.updated": len(payload.updated),
                        "workbench.deleted": len(payload.deleted),
                    }
                )
            case Graded():
                verdict = verdict_of(payload)
                graded = {"workbench.verdict": verdict, "workbench.mismatches": len(payload.mismatches)}
                if verdict in ("passed", "failed"):  # agreement is not a pass: no workbench.passed for it
                    graded["workbench.passed"] = payload.passed
                arm.span.set_attributes(graded)
            case RunFinished():
                self._close_arm(arm, t)
            case TurnStarted():
                self._end_turn(arm, t)
                arm.turn = self._start(
                    f"turn {payload.turn}",
                    arm.context,
                    t,
                    {"workbench.turn": payload.turn, "workbench.turn.prompt": _clip(payload.prompt)},
                )
                arm.turn_context = trace.set_span_in_context(arm.turn)
            case TurnEnded():
                self._end_turn(arm, t)
            case _:
                pass

    def _end_turn(self, arm: _ArmTrace, t: float) -> None:
        """End the current turn's span with its own figures (from the one fold)."""
        if arm.turn is None:
            return
        self._end_request(arm, t)
        figures = arm.summary.turns[-1] if arm.summary.turns else None
        if figures is not None:
            attributes: dict[str, Any] = {
                "workbench.status": figures.status,
                "workbench.requests": figures.requests,
                "gen_ai.usage.input_tokens": figures.input_tokens,
                "gen_ai.usage.output_tokens": figures.output_tokens,
                "workbench.tool_calls": figures.tool_calls,
                "workbench.inner_calls": figures.inner_calls,
                "workbench.turn.answer": _clip(figures.output),
            }
            if figures.cost_usd is not None:
                attributes["operation.cost"] = figures.cost_usd
            arm.turn.set_attributes(attributes)
            if figures.status not in ("completed", "running"):
                arm.turn.set_status(Status(StatusCode.ERROR, _clip(figures.error or figures.status)))
        arm.turn.end(end_time=self._ns(t))
        arm.turn, arm.turn_context = None, None

    def _end_request(self, arm: _ArmTrace, t: float) -> None:
        if arm.request is None:
            return
        if arm.text:
            arm.request.set_attribute("workbench.response.text", _clip("".join(arm.text)))
            arm.text.clear()
        arm.request.end(end_time=self._ns(t))
        arm.request = None

    def _close_arm(self, arm: _ArmTrace, t: float) -> None:
        """End the arm's span with its totals (from the one fold); calls left open end with it."""
        self._end_turn(arm, t)
        self._end_request(arm, t)
        for span in arm.calls.values():
            span.set_attribute("workbench.outcome", "no result")
            span.end(end_time=self._ns(t))
        arm.calls.clear()
        summary = arm.summary
        attributes: dict[str, Any] = {
            "workbench.status": summary.status,
            "workbench.requests": summary.requests,
            "gen_ai.usage.input_tokens": summary.input_tokens,
            "gen_ai.usage.output_tokens": summary.output_tokens,
            "workbench.tool_calls": summary.tool_calls,
            "workbench.inner_calls": summary.inner_calls,
            "workbench.snippets": summary.snippets,
            "workbench.wall_s": summary.wall_s,
            "workbench.waited_s": summary.waited_s,
        }
        if summary.cost_usd is not None:
            attributes["operation.cost"] = summary.cost_usd
        if summary.output:
            attributes["workbench.answer"] = _clip(summary.output)
        arm.span.set_attributes(attributes)
        if summary.status != "completed":
            arm.span.set_status(Status(StatusCode.ERROR, _clip(summary.error or summary.status)))
        arm.span.end(end_time=self._ns(max(t, summary.wall_s)))
        arm.finished = True

    def finish(self, status: str | None = None) -> None:
        """Close every open span (an arm that never finished ends where its last event was) and the trace."""
        with self._lock:
            if self.finished:
                return
            for arm in self._arms.values():
                if not arm.finished:
                    arm.summary.status = "interrupted" if arm.summary.status == "running" else arm.summary.status
                    self._close_arm(arm, arm.summary.wall_s)
            self.root.set_attribute("workbench.status", status or self.comparison.status)
            self.root.end(end_time=self._end_ns)
            self.finished = True


# -- tracer providers ------------------------------------------------------------------------------

_providers: dict[str, Any] = {}
_providers_lock = threading.Lock()


def tracer_provider(endpoint: str) -> Any:
    """The process's tracer provider exporting to ``endpoint`` (made once per endpoint)."""
    with _providers_lock:
        if endpoint not in _providers:
            _providers[endpoint] = _make_provider(endpoint)
        return _providers[endpoint]


def _make_provider(endpoint: str) -> Any:
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: F401
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as error:
        raise OtelUnavailable(_MISSING.format(name=error.name)) from None
    processor = _bounded(BatchSpanProcessor(_exporter(endpoint), schedule_delay_millis=BATCH_DELAY_MS))
    existing = trace.get_tracer_provider()
    if hasattr(existing, "add_span_processor"):
        existing.add_span_processor(processor)
        return existing
    try:
        import logfire
    except ImportError:
        provider = TracerProvider(resource=Resource.create({"service.name": SERVICE_NAME}))
        provider.add_span_processor(processor)
        return provider
    logfire.configure(
        service_name=SERVICE_NAME, send_to_logfire="if-token-present", console=False,
        additional_span_processors=[processor],
    )  # fmt: skip
    return trace.get_tracer_provider()


def _within(seconds: float, call: Any, *args: Any) -> tuple[bool, Any]:
    """``call(*args)`` in a daemon thread, waited for at most ``seconds``: (True, its result), or (False, None)
    when it had not returned (the thread is left to finish on its own; it cannot keep the process alive)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(call(*args))
        except Exception as error:  # reported as a failed call, never raised into the run
            _log.debug("workbench: %s failed: %s", getattr(call, "__name__", call), error)
            outcome.append(None)

    worker = threading.Thread(target=run, name="workbench-otel-export", daemon=True)
    worker.start()
    worker.join(seconds)
    return (True, outcome[0]) if outcome else (False, None)


def _bounded(processor: Any) -> Any:
    """A span processor whose flush and shutdown end within their timeouts in wall time (the SDK's batch
    processor ignores a flush's timeout, and its shutdown waits for an export in flight)."""
    from opentelemetry.sdk.trace import SpanProcessor

    class BoundedProcessor(SpanProcessor):
        stuck: bool
        """A flush or shutdown did not return in time: the exporter's thread is abandoned."""

        def on_start(self, span: Any, parent_context: Context | None = None) -> None:
            processor.on_start(span, parent_context=parent_context)

        def _on_ending(self, span: Any) -> None:
            getattr(processor, "_on_ending", lambda _span: None)(span)

        def on_end(self, span: Any) -> None:
            processor.on_end(span)

        def force_flush(self, timeout_millis: int = FLUSH_TIMEOUT_MS) -> bool:
            if self.stuck:
                return False
            done, flushed = _within(timeout_millis / 1000, processor.force_flush, timeout_millis)
            self.stuck = not done
            return bool(done and flushed)

        def shutdown(self) -> None:
            if not self.stuck:  # a flush that never returned: shutting down would wait on the same export
                self.stuck = not _within(SHUTDOWN_TIMEOUT_MS / 1000, processor.shutdown, SHUTDOWN_TIMEOUT_MS)[0]

    bounded = BoundedProcessor()
    bounded.stuck = False
    return bounded


_warned: set[str] = set()
_warned_lock = threading.Lock()


def _warn_once(endpoint: str, message: str, *args: Any) -> None:
    """One warning per collector and process, whatever goes wrong with it afterwards."""
    with _warned_lock:
        if endpoint in _warned:
            return
        _warned.add(endpoint)
    _log.warning(message, *args)


def _exporter(endpoint: str) -> Any:
    """An OTLP/HTTP exporter that gives up for the rest of the process once the collector fails it or takes
    longer than ``EXPORT_TIMEOUT_S`` (wall time) to take a batch, saying so once (the SDK's own retry messages
    are silenced: a run must not fill the terminal with them)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    logging.getLogger("opentelemetry.exporter.otlp.proto.http").setLevel(logging.CRITICAL)

    class GuardedExporter(SpanExporter):
        def __init__(self) -> None:
            self.inner = OTLPSpanExporter(endpoint=endpoint, timeout=EXPORT_TIMEOUT_S)
            self.down = False

        def export(self, spans: Any) -> Any:
            if self.down:
                return SpanExportResult.FAILURE
            started = time.monotonic()
            result = SpanExportResult.FAILURE
            if _reachable(endpoint):
                done, answer = _within(max(0.1, EXPORT_TIMEOUT_S - (time.monotonic() - started)), self._send, spans)
                result = answer if done and answer is not None else SpanExportResult.FAILURE
            if result is not SpanExportResult.SUCCESS:
                self.down = True
                _warn_once(
                    endpoint,
                    "workbench: warning: the trace collector at %s did not take %d spans within %g s "
                    "(unreachable, refused or too slow); no more traces are sent from this process",
                    endpoint,
                    len(spans),
                    EXPORT_TIMEOUT_S,
                )
            return result

        def _send(self, spans: Any) -> Any:
            return self.inner.export(spans)

        def shutdown(self) -> None:
            if not self.down:  # a session whose request still crawls is left to its abandoned thread
                self.inner.shutdown()

        def force_flush(self, timeout_millis: int = 30_000) -> bool:
            return True

    return GuardedExporter()


def _reachable(endpoint: str, timeout_s: float = 2.0) -> bool:
    """Whether anything listens at the endpoint's host and port (a refused connection is not worth retrying)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(endpoint)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with socket.create_connection((parts.hostname or "localhost", port), timeout=timeout_s):
            return True
    except (OSError, ValueError):
        return False


def tracer(endpoint: str) -> Tracer:
    return tracer_provider(endpoint).get_tracer("workbench")


def open_trace(comparison: Any, endpoint: str) -> LiveTrace:
    """A live run's trace: feed it the run's events as they happen, then :meth:`LiveTrace.close` it."""
    return LiveTrace(comparison, tracer(endpoint), endpoint)


class LiveTrace(ComparisonTrace):
    """A comparison traced while it runs; closing it ends the trace and sends what is still buffered."""

    def __init__(self, comparison: Any, tracer: Tracer, endpoint: str) -> None:
        super().__init__(comparison, tracer)
        self.endpoint = endpoint

    def close(self) -> None:
        """End the trace and send what is buffered, waiting at most ``FLUSH_TIMEOUT_MS`` (one warning when the
        collector did not take it, however it failed)."""
        self.finish()
        if not flush(self.endpoint):
            _warn_once(self.endpoint, "workbench: warning: the trace collector at %s did not take every span "
                       "within %g s", self.endpoint, FLUSH_TIMEOUT_MS / 1000)  # fmt: skip


def flush(endpoint: str) -> bool:
    """Send what is still buffered; False when the collector did not take it within ``FLUSH_TIMEOUT_MS``."""
    done, flushed = _within(FLUSH_TIMEOUT_MS / 1000, tracer_provider(endpoint).force_flush, FLUSH_TIMEOUT_MS)
    return bool(done and flushed)


class ExportFailed(UserError, RuntimeError):
    """The collector did not accept a stored session's trace."""


def export_comparison(comparison: Any, endpoint: str) -> int:
    """Send a stored (or finished) comparison to ``endpoint`` as one trace, and say whether the collector took it.

    Returns the number of spans sent; raises :class:`ExportFailed` when the collector refused them or could
    not be reached.
    """
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError as error:
        raise OtelUnavailable(_MISSING.format(name=error.name)) from None
    collected = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE_NAME}), shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(collected))
    traced = ComparisonTrace(comparison, provider.get_tracer("workbench"))
    for arm in comparison.arms.values():
        traced.add_all(arm.events)
    traced.finish()
    spans = collected.get_finished_spans()
    exporter = _exporter(endpoint)
    try:
        result = exporter.export(spans)
    finally:
        exporter.shutdown()
    if result is not SpanExportResult.SUCCESS:
        raise ExportFailed(f"the collector at {endpoint} did not accept the trace (unreachable or refused)")
    return len(spans)
