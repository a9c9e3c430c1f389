"""Where comparisons are traced to, decided without importing OpenTelemetry (the start-up stays light).

Tracing is on when the config names ``otel_endpoint`` (or ``WORKBENCH_OTEL_ENDPOINT``), when the standard
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set, or when ``--otel`` is given
(then to the standard variable's endpoint, else a local collector on port 4318).
"""

from __future__ import annotations

import os
from importlib.util import find_spec
from typing import Any

from workbench.errors import BadInput

DEFAULT_ENDPOINT = "http://localhost:4318"
"""Where an OTLP/HTTP collector listens by default."""
TRACES_PATH = "/v1/traces"


def environment_endpoint() -> str | None:
    """The standard OpenTelemetry variables' traces endpoint (the traces-only one as it is)."""
    traces = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if traces:
        return traces
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    return traces_url(base) if base else None


def traces_url(endpoint: str) -> str:
    """A collector's base URL with ``/v1/traces`` added (a URL that already ends with it is kept)."""
    endpoint = endpoint.strip().rstrip("/")
    return endpoint if endpoint.endswith(TRACES_PATH) else endpoint + TRACES_PATH


def trace_endpoint(configured: str | None, *, flag: bool = False) -> str | None:
    """The traces URL to export to, or ``None`` when tracing is off."""
    if configured:
        return traces_url(configured)
    from_environment = environment_endpoint()
    if from_environment:
        return from_environment
    return traces_url(DEFAULT_ENDPOINT) if flag else None


def otel_installed() -> bool:
    """Whether the ``otel`` extra (the OpenTelemetry SDK and its OTLP/HTTP exporter) can be imported."""
    try:
        return find_spec("opentelemetry.sdk") is not None and find_spec("opentelemetry.exporter.otlp") is not None
    except ModuleNotFoundError:
        return False


def apply_otel_flag(settings: Any, flag: bool) -> None:
    """``--otel``: trace to the configured endpoint, else the standard variable's, else a local collector."""
    if flag and not settings.otel_endpoint:
        settings.otel_endpoint = environment_endpoint() or DEFAULT_ENDPOINT


class TracingUnavailable(BadInput):
    """Tracing was asked for (config or ``--otel``) but the ``otel`` extra is not installed."""


def resolve_tracing(configured: str | None) -> str | None:
    """The traces URL a comparison exports to (``None``: not traced).

    Asked for explicitly (``otel_endpoint``, or ``--otel`` which sets it) without the ``otel`` extra, this raises
    :class:`TracingUnavailable`; the standard variable alone turns tracing on only where the extra is installed
    (it is often set for other programs).
    """
    endpoint = trace_endpoint(configured)
    if endpoint is None or otel_installed():
        return endpoint
    if configured:
        raise TracingUnavailable(f"tracing to {endpoint} needs the otel extra: pip install 'code-mode-workbench[otel]'")
    return None
