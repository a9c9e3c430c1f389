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

Where the spans go, and how an export is kept from holding a run up, is :mod:`workbench.share.otel_export`.
Needs the ``otel`` extra (``opentelemetry-sdk``, ``opentelemetry-exporter-otlp-proto-http``); imported only
when tracing is on.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from workbench.display import clip_tail
from workbench.events import RUN_CODE, ArmEvent, InnerResult, ProviderRetry, RunStarted, ToolResult
from workbench.session import ArmRun
from workbench.share.otel_export import (
    FLUSH_TIMEOUT_MS,
    MISSING,
    SERVICE_NAME,
    OtelUnavailable,
    flush,
    send_spans,
    tracer,
    warn_once,
)
from workbench.timeline import NoticeEntry, ResponseEntry, SnippetEntry, TextEntry, Timeline, TurnEntry
from workbench.timeline_records import CallRecord, InnerRecord, SnippetRecord
from workbench.verdict import FAILED, PASSED

ATTRIBUTE_CHARS = 8_000
"""Longest text kept in one span attribute (arguments, results, code, answers)."""

_log = logging.getLogger("workbench.otel")


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
            warn_once(self.endpoint, "workbench: warning: the trace collector at %s did not take every span "
                       "within %g s", self.endpoint, FLUSH_TIMEOUT_MS / 1000)  # fmt: skip

    def close(self) -> None:
        """End the trace and send what is buffered (once)."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        self.finish()
        self.send()


def comparison_spans(comparison: Any) -> list[Any]:
    """A stored (or finished) comparison's spans, ended and in memory (what :func:`export_comparison` sends)."""
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError as error:
        raise OtelUnavailable(MISSING.format(name=error.name)) from None
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
    send_spans(spans, endpoint)
    return len(spans)
