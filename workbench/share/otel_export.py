"""Where a comparison's spans go: the process's tracer provider for an OTLP/HTTP endpoint, and an export that
never holds a run up. Each export to a collector is bounded to ``EXPORT_TIMEOUT_S`` of wall time, a flush to
``FLUSH_TIMEOUT_MS`` and the exit's shutdown to ``SHUTDOWN_TIMEOUT_MS``; a call still hanging is left to a daemon
thread, and a collector that fails once is given up on for the process, with one warning.

When Logfire is installed, ``logfire.configure()`` is called and its tracer provider used (spans go to Logfire
when a token is present, and to the OTLP endpoint); when the program already set a global tracer provider (its
own ``logfire.configure()``, say), that provider is used. Needs the ``otel`` extra; imported only when tracing
is on.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Tracer

from workbench.errors import UserError

SERVICE_NAME = "code-mode-workbench"
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


class ExportFailed(UserError, RuntimeError):
    """The collector did not accept a stored session's trace."""


_log = logging.getLogger("workbench.otel")
MISSING = "OpenTelemetry export needs the otel extra: pip install 'code-mode-workbench[otel]' ({name} is missing)"


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
        raise OtelUnavailable(MISSING.format(name=error.name)) from None
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


def warn_once(endpoint: str, message: str, *args: Any) -> None:
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
                warn_once(
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


def flush(endpoint: str) -> bool:
    """Send what is still buffered; False when the collector did not take it within ``FLUSH_TIMEOUT_MS``."""
    done, flushed = _within(FLUSH_TIMEOUT_MS / 1000, tracer_provider(endpoint).force_flush, FLUSH_TIMEOUT_MS)
    return bool(done and flushed)


def send_spans(spans: Any, endpoint: str) -> None:
    """Send ended spans to ``endpoint`` in one bounded export; raises :class:`ExportFailed` when the collector
    refused them or could not be reached."""
    from opentelemetry.sdk.trace.export import SpanExportResult

    exporter = _exporter(endpoint)
    try:
        result = exporter.export(spans)
    finally:
        exporter.shutdown()
    if result is not SpanExportResult.SUCCESS:
        raise ExportFailed(f"the collector at {endpoint} did not accept the trace (unreachable or refused)")
