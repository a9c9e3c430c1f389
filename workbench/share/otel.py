"""Comparisons as OpenTelemetry traces: one trace per comparison, a span per arm, per conversation turn, per
model request (GenAI semantic conventions), per tool call and per snippet, with the snippet's inner calls as
its child spans.

:class:`ComparisonTrace` draws no fold of its own: each arm's events go through the engine's one
:class:`~workbench.timeline.Timeline` (the fold the TUI, the HTML and the Markdown read), and the trace opens
and ends a span as a timeline node appears or settles (a request's usage, a call's result, a turn's end);
the figures on arm and turn spans are the arm's :class:`~workbench.summary.ArmSummary`. A live run feeds it
each event as it happens (spans end, and are exported, as their results arrive), and a stored session is
exported by feeding it the stored events. Span times come from the events (the comparison's start plus each
event's seconds since its arm started), so a live export and a later export of the same session give the
same spans.

Needs the ``otel`` extra (``opentelemetry-sdk``, ``opentelemetry-exporter-otlp-proto-http``); imported only
when tracing is on. When Logfire is installed, ``logfire.configure()`` is called and its tracer provider used
(spans go to Logfire when a token is present, and to the OTLP endpoint); when the program already set a global
tracer provider (its own ``logfire.configure()``, say), that provider is used.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from workbench.display import clip_tail
from workbench.errors import UserError
from workbench.events import RUN_CODE, ArmEvent, InnerResult, ProviderRetry, RunStarted, ToolResult
from workbench.session import ArmRun
from workbench.timeline import NoticeEntry, ResponseEntry, SnippetEntry, TextEntry, Timeline, TurnEntry
from workbench.timeline_records import CallRecord, InnerRecord, SnippetRecord
from workbench.verdict import FAILED, PASSED

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
    """One arm's timeline and the spans open on its nodes (keyed by the node's id: the timeline keeps every
    node it made, so no id is reused while the trace lives)."""

    run: ArmRun
    span: Span
    context: Context
    timeline: Timeline
    last_t: float = 0.0
    synced: dict[int, int] = field(default_factory=dict)
    """id(entry) -> the entry's version when its spans were last brought up to date."""
    snippets: dict[int, Span] = field(default_factory=dict)
    """Open ``run_code`` spans by id(snippet record)."""
    ended: set[int] = field(default_factory=set)
    """id(snippet record) of every snippet whose span has ended."""
    contexts: dict[int, Context] = field(default_factory=dict)
    """The contexts of open ``run_code`` spans (their inner calls' parent), by id(snippet record)."""
    calls: dict[int, dict[str, Span]] = field(default_factory=dict)
    """Open call spans by call id, per node holding them: id(response entry) for its calls, id(snippet record)
    for its inner calls."""
    calls_seen: dict[int, int] = field(default_factory=dict)
    """Per node holding calls, how many of them (in order) have a span."""
    request: Span | None = None
    request_entry: ResponseEntry | None = None
    chats: dict[int, int] = field(default_factory=dict)
    """id(entry) of each request whose chat span was opened -> how many of its provider retries are span events."""
    texts: list[TextEntry] = field(default_factory=list)
    """The text streamed since the open request began (its response's text)."""
    turn: Span | None = None
    """The open span of the conversation's current turn (``None`` for a run of one prompt)."""
    turn_entry: TurnEntry | None = None
    turn_context: Context | None = None

    @property
    def parent(self) -> Context:
        """Where a request or a call span goes: under its turn in a conversation, else under the arm."""
        return self.turn_context or self.context


class ComparisonTrace:
    """One comparison as one trace; feed it events with :meth:`add`, close it with :meth:`finish`. The events
    must be folded into ``comparison`` first (the runner's arms, or a stored session's): the arm and turn
    spans carry its figures."""

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
        self._touched: str | None = None
        """The call id of the event being traced, if it has one: the one call of a node it can have settled."""
        self.spans = 1
        self.finished = False

    def _ns(self, t: float) -> int:
        at = self._base_ns + int(t * 1e9)
        self._end_ns = max(self._end_ns, at)
        return at

    def _start(self, name: str, parent: Context, t: float, attributes: dict[str, Any]) -> Span:
        self.spans += 1
        return self.tracer.start_span(name, context=parent, start_time=self._ns(t), attributes=attributes)

    def _arm(self, name: str) -> _ArmTrace | None:
        arm = self._arms.get(name)
        if arm is None:
            run = self.comparison.arms.get(name)
            if run is None:
                return None  # an event of no arm of this comparison
            span = self._start(
                f"invoke_agent {name}",
                self._root_context,
                0.0,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name, "workbench.arm": name},
            )
            arm = _ArmTrace(run, span, trace.set_span_in_context(span), Timeline(name))
            self._arms[name] = arm
        return arm

    def add(self, event: ArmEvent) -> None:
        """Fold one event into its arm's timeline, and open or end the spans of the nodes it added or settled.
        Never raises: tracing that breaks stops tracing this comparison (with one warning), never the run."""
        with self._lock:
            if self.finished:
                return
            try:
                arm = self._arm(event.arm)
                if arm is not None:
                    arm.last_t = max(arm.last_t, event.t)
                    arm.timeline.apply((event,))
                    self._touched = getattr(event.payload, "call_id", None)
                    self._sync(arm, event.t)
            except Exception as error:
                _log.warning("workbench: tracing of session %s stopped: %s", self.comparison.session_id, error)
                self.finished = True

    def add_all(self, events: Iterable[ArmEvent]) -> None:
        for event in events:
            self.add(event)

    # -- from timeline nodes to spans ------------------------------------------------------------------

    def _sync(self, arm: _ArmTrace, t: float) -> None:
        """Bring the spans of every entry that changed up to date, in timeline order, at time ``t``."""
        timeline = arm.timeline
        stale = timeline.take_stale()
        if stale is None:
            return
        for entry in islice(timeline.entries, stale, None):
            key = id(entry)
            if arm.synced.get(key) == entry.version:
                continue
            arm.synced[key] = entry.version
            if isinstance(entry, ResponseEntry):
                self._response(arm, entry, t)
            elif isinstance(entry, SnippetEntry):
                self._snippet(arm, entry.record, t)
            elif isinstance(entry, TextEntry):
                if arm.request is not None and entry not in arm.texts:
                    arm.texts.append(entry)
            elif isinstance(entry, TurnEntry):
                self._turn(arm, entry, t)
            elif isinstance(entry, NoticeEntry) and entry.retry is not None:
                self._retry(arm.request or arm.turn or arm.span, entry.retry, t)

    def _response(self, arm: _ArmTrace, entry: ResponseEntry, t: float) -> None:
        """A model request's ``chat`` span (from its request to its usage) and its calls' spans."""
        if entry.request is not None and id(entry) not in arm.chats:
            self._end_request(arm, t)
            system, model = _split_model(arm.run.summary.model)
            arm.request = self._start(
                f"chat {model}",
                arm.parent,
                t,
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.system": system,
                    "gen_ai.request.model": model,
                    "workbench.request": entry.request,
                },
            )
            arm.request_entry, arm.chats[id(entry)] = entry, 0
        seen = arm.chats.get(id(entry), 0)
        if len(entry.retries) > seen:
            target = arm.request if arm.request_entry is entry else None
            for retry in entry.retries[seen:]:
                self._retry(target or arm.turn or arm.span, retry, t)
            arm.chats[id(entry)] = len(entry.retries)
        if arm.request_entry is entry and (entry.usage is not None or entry.ended):
            self._end_request(arm, t)
        self._calls(arm, id(entry), entry.records, arm.parent, t)

    def _retry(self, span: Span, retry: ProviderRetry, t: float) -> None:
        span.add_event(
            "provider_retry",
            {"attempt": retry.attempt, "attempts": retry.attempts, "error": _clip(retry.error),
             "wait_s": retry.wait_s},
            timestamp=self._ns(t),
        )  # fmt: skip

    def _end_request(self, arm: _ArmTrace, t: float) -> None:
        span, entry = arm.request, arm.request_entry
        if span is None or entry is None:
            return
        usage = entry.usage
        if usage is not None:
            attributes: dict[str, Any] = {
                "gen_ai.usage.input_tokens": usage.input_tokens,
                "gen_ai.usage.output_tokens": usage.output_tokens,
            }
            if usage.cache_read_tokens:
                attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read_tokens
            if usage.cost_usd is not None:
                attributes["operation.cost"] = usage.cost_usd
            if usage.estimated:
                attributes["workbench.tokens_estimated"] = True
            if usage.finish_reason:
                attributes["gen_ai.response.finish_reasons"] = [usage.finish_reason]
            span.set_attributes(attributes)
        text = "".join(entry.text for entry in arm.texts)
        if text:
            span.set_attribute("workbench.response.text", _clip(text))
        span.end(end_time=self._ns(t))
        arm.request, arm.request_entry, arm.texts = None, None, []

    def _calls(
        self,
        arm: _ArmTrace,
        key: int,
        records: dict[str, CallRecord] | dict[str, InnerRecord],
        parent: Context,
        t: float,
    ) -> None:
        """The spans of the calls one node holds (a response's calls, a snippet's inner calls): each opens when
        its call appears and ends with its result (or when its turn or arm ended without one). Only the call the
        event names can have settled; an event naming none (a turn's or the arm's end) may have settled all."""
        opened = arm.calls.setdefault(key, {})
        touched = self._touched
        settled = list(opened) if touched is None else [touched] if touched in opened else []
        for call_id in settled:
            record = records[call_id]
            if record.result is not None or (isinstance(record, CallRecord) and record.ended):
                self._end_call(opened.pop(call_id), record.result, t)
        seen = arm.calls_seen.get(key, 0)
        if len(records) > seen:
            for record in islice(records.values(), seen, None):
                call = record.call if isinstance(record, InnerRecord) else record
                span = self._start(f"execute_tool {call.name}", parent, t, _call_attributes(record))
                if record.result is not None:
                    self._end_call(span, record.result, t)
                else:
                    opened[call.call_id] = span
            arm.calls_seen[key] = len(records)

    def _snippet(self, arm: _ArmTrace, record: SnippetRecord, t: float) -> None:
        """A snippet's ``run_code`` span, from the moment it runs (its call, or the first statement eager
        execution ran while the model still wrote it) to its result, and its inner calls' spans under it."""
        key = id(record)
        if key in arm.ended:
            return
        span = arm.snippets.get(key)
        if span is None:
            running = record.called or record.inner or record.eager_statements or record.speculations
            if not running and record.result is None:
                return  # still being written (or never run): no span yet
            span = arm.snippets[key] = self._start(f"execute_tool {RUN_CODE}", arm.parent, t,
                                                   _tool_attributes(record.call_id, RUN_CODE))  # fmt: skip
            arm.contexts[key] = trace.set_span_in_context(span)
        self._calls(arm, key, record.inner, arm.contexts[key], t)
        if record.result is None and not record.ended:
            return
        for inner in arm.calls.pop(key, {}).values():  # inner calls the snippet's end left without a result
            self._end_call(inner, None, t)
        span.set_attributes(_snippet_attributes(record))
        self._end_call(span, record.result, t)
        del arm.snippets[key], arm.contexts[key]
        arm.ended.add(key)

    def _end_call(self, span: Span, result: ToolResult | InnerResult | None, t: float) -> None:
        if result is None:
            span.set_attribute("workbench.outcome", "no result")
        else:
            attributes: dict[str, Any] = {
                "workbench.outcome": result.outcome,
                "workbench.result_bytes": result.bytes,
                "workbench.tool_ms": result.ms,
                "gen_ai.tool.call.result": _clip(result.content or result.preview),
            }
            if isinstance(result, ToolResult) and result.clipped_from is not None:
                attributes["workbench.result_clipped_from_bytes"] = result.clipped_from
            span.set_attributes(attributes)
            if result.outcome in ("failed", "denied"):
                span.set_status(Status(StatusCode.ERROR, _clip(result.error or result.outcome)))
        span.end(end_time=self._ns(t))

    def _turn(self, arm: _ArmTrace, entry: TurnEntry, t: float) -> None:
        """A conversation turn's span, from its start to its end, with its own figures."""
        if entry is not arm.turn_entry and entry.status == "running":
            self._end_turn(arm, t)
            if entry.turn > 1 and entry is arm.timeline.turns[0]:
                self._implicit_first_turn(arm, t)
            arm.turn = self._start(
                f"turn {entry.turn}",
                arm.context,
                t,
                {"workbench.turn": entry.turn, "workbench.turn.prompt": _clip(entry.prompt)},
            )
            arm.turn_entry, arm.turn_context = entry, trace.set_span_in_context(arm.turn)
        elif entry is arm.turn_entry and entry.status != "running":
            self._end_turn(arm, t)

    def _implicit_first_turn(self, arm: _ArmTrace, t: float) -> None:
        """A follow-up on a run of one prompt (the TUI's ctrl+f): its first turn had no turn events, so its
        spans sit under the arm; a span for it still carries its prompt and figures, as every turn's does."""
        figures = next((turn for turn in arm.run.summary.turns if turn.turn == 1), None)
        if figures is not None:
            span = self._start("turn 1", arm.context, 0.0,
                               {"workbench.turn": 1, "workbench.turn.prompt": _clip(figures.prompt)})  # fmt: skip
            self._turn_figures(span, 1, arm)
            span.end(end_time=self._ns(t))

    def _end_turn(self, arm: _ArmTrace, t: float) -> None:
        if arm.turn is None or arm.turn_entry is None:
            return
        self._end_request(arm, t)
        self._turn_figures(arm.turn, arm.turn_entry.turn, arm)
        arm.turn.end(end_time=self._ns(t))
        arm.turn, arm.turn_entry, arm.turn_context = None, None, None

    def _turn_figures(self, span: Span, turn: int, arm: _ArmTrace) -> None:
        """The turn's own figures (from the arm's summary)."""
        figures = next((figures for figures in reversed(arm.run.summary.turns) if figures.turn == turn), None)
        if figures is None:
            return
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
        span.set_attributes(attributes)
        if figures.status not in ("completed", "running"):
            span.set_status(Status(StatusCode.ERROR, _clip(figures.error or figures.status)))

    def _close_arm(self, arm: _ArmTrace) -> None:
        """End the arm's span with its totals; whatever is still open (an arm stopped before its results, a
        recording cut short) ends with it, where the arm's last event was."""
        t = arm.last_t
        self._end_turn(arm, t)
        self._end_request(arm, t)
        for snippet in arm.timeline.snippets.values():
            if (span := arm.snippets.get(id(snippet.record))) is not None:
                span.set_attributes(_snippet_attributes(snippet.record))
        for opened in (*arm.calls.values(), arm.snippets):
            for span in opened.values():
                self._end_call(span, None, t)
        arm.calls.clear()
        arm.snippets.clear()
        summary = arm.run.summary
        status = "interrupted" if summary.status == "running" else summary.status
        started = next((event.payload for event in arm.run.events if isinstance(event.payload, RunStarted)), None)
        system, model = _split_model(summary.model)
        attributes: dict[str, Any] = {
            "workbench.mode": summary.mode,
            "gen_ai.system": system,
            "gen_ai.request.model": model,
            "workbench.model": summary.model,
            "workbench.tools": list(started.tools) if started else [],
            "workbench.sandboxed_tools": list(started.sandboxed_tools) if started else [],
            "workbench.status": status,
            "workbench.requests": summary.requests,
            "gen_ai.usage.input_tokens": summary.input_tokens,
            "gen_ai.usage.output_tokens": summary.output_tokens,
            "workbench.tool_calls": summary.tool_calls,
            "workbench.malformed_calls": summary.malformed_calls,
            "workbench.inner_calls": summary.inner_calls,
            "workbench.snippets": summary.snippets,
            "workbench.eager_statements": summary.eager_statements,
            "workbench.provider_retries": summary.retries,
            "workbench.tokens_estimated": summary.tokens_estimated,
            "workbench.wall_s": summary.wall_s,
            "workbench.waited_s": summary.waited_s,
            "workbench.created": summary.diff.get("created", 0),
            "workbench.updated": summary.diff.get("updated", 0),
            "workbench.deleted": summary.diff.get("deleted", 0),
            "workbench.verdict": summary.verdict,
        }
        if summary.verdict in (PASSED, FAILED):  # agreement is not a pass: no workbench.passed for it
            attributes["workbench.passed"] = bool(summary.passed)
            attributes["workbench.mismatches"] = len(summary.mismatches)
        if summary.cost_usd is not None:
            attributes["operation.cost"] = summary.cost_usd
        if summary.output:
            attributes["workbench.answer"] = _clip(summary.output)
        arm.span.set_attributes(attributes)
        if status != "completed":
            arm.span.set_status(Status(StatusCode.ERROR, _clip(summary.error or status)))
        arm.span.end(end_time=self._ns(t))

    def finish(self, status: str | None = None) -> None:
        """End every arm's span (with what is still open in it) and the trace."""
        with self._lock:
            if self.finished:
                return
            self.finished = True
            for arm in self._arms.values():
                self._close_arm(arm)
            self.root.set_attribute("workbench.status", status or self.comparison.status)
            self.root.end(end_time=self._end_ns)


def _tool_attributes(call_id: str, name: str) -> dict[str, Any]:
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id}


def _call_attributes(record: CallRecord | InnerRecord) -> dict[str, Any]:
    """A call's attributes as it begins: its tool, id and arguments (and, inside a snippet, the snippet's id)."""
    if isinstance(record, InnerRecord):
        call = record.call
        attributes = _tool_attributes(call.call_id, call.name)
        attributes["gen_ai.tool.call.arguments"] = _json(call.args)
        attributes["workbench.inner"] = True
        attributes["workbench.parent_call_id"] = call.parent_id
        return attributes
    attributes = _tool_attributes(record.call_id, record.name)
    attributes["gen_ai.tool.call.arguments"] = _json(record.args)
    if isinstance(record.args, str):
        attributes["workbench.malformed_arguments"] = True
    return attributes


def _snippet_attributes(record: SnippetRecord) -> dict[str, Any]:
    """The snippet as it ran: its code and arguments, and what eager execution and speculation did."""
    attributes: dict[str, Any] = {
        "gen_ai.tool.call.arguments": _clip(record.raw_arguments)
        if record.raw_arguments is not None
        else _json({"code": record.code}),
        "workbench.snippet.code": _clip(record.code),
    }
    if record.raw_arguments is not None:
        attributes["workbench.malformed_arguments"] = True
    if record.eager_statements:
        attributes["workbench.eager_statements"] = record.eager_statements
        attributes["workbench.eager_lines"] = record.eager_lines
    for phase, count in record.speculation_counts().items():
        attributes[f"workbench.speculation.{phase}"] = count
    hidden = sum(speculation.hidden_ms or 0.0 for speculation in record.speculations.values())
    if hidden:
        attributes["workbench.speculation.hidden_ms"] = hidden
    return attributes


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
    """A comparison traced while it runs; closing it ends the trace and sends what is still buffered.

    A session kept open for follow-up turns (the TUI) stays one trace: its comparison and arm spans end when
    the session closes (or the process exits), and :meth:`send` sends what each turn ended meanwhile."""

    def __init__(self, comparison: Any, tracer: Tracer, endpoint: str) -> None:
        super().__init__(comparison, tracer)
        self.endpoint = endpoint
        self._closed = False
        atexit.register(self.close)  # a process that ends without closing it still ends the trace it began

    def send(self) -> None:
        """Send the spans ended so far, waiting at most ``FLUSH_TIMEOUT_MS`` (one warning when the collector
        did not take them, however it failed)."""
        if not flush(self.endpoint):
            _warn_once(self.endpoint, "workbench: warning: the trace collector at %s did not take every span "
                       "within %g s", self.endpoint, FLUSH_TIMEOUT_MS / 1000)  # fmt: skip

    def close(self) -> None:
        """End the trace and send what is buffered (once)."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        self.finish()
        self.send()


def flush(endpoint: str) -> bool:
    """Send what is still buffered; False when the collector did not take it within ``FLUSH_TIMEOUT_MS``."""
    done, flushed = _within(FLUSH_TIMEOUT_MS / 1000, tracer_provider(endpoint).force_flush, FLUSH_TIMEOUT_MS)
    return bool(done and flushed)


class ExportFailed(UserError, RuntimeError):
    """The collector did not accept a stored session's trace."""


def comparison_spans(comparison: Any) -> list[Any]:
    """A stored (or finished) comparison's spans, ended and in memory (what :func:`export_comparison` sends)."""
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
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
    return list(collected.get_finished_spans())


def export_comparison(comparison: Any, endpoint: str) -> int:
    """Send a stored (or finished) comparison to ``endpoint`` as one trace, and say whether the collector took it.

    Returns the number of spans sent; raises :class:`ExportFailed` when the collector refused them or could
    not be reached.
    """
    spans = comparison_spans(comparison)
    from opentelemetry.sdk.trace.export import SpanExportResult

    exporter = _exporter(endpoint)
    try:
        result = exporter.export(spans)
    finally:
        exporter.shutdown()
    if result is not SpanExportResult.SUCCESS:
        raise ExportFailed(f"the collector at {endpoint} did not accept the trace (unreachable or refused)")
    return len(spans)
