"""A real OTLP/HTTP trace receiver on 127.0.0.1 for tests: decodes each export with the official
opentelemetry-proto messages and keeps the spans, as a collector would receive them."""

from __future__ import annotations

import gzip
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [any_value(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


@dataclass
class ReceivedSpan:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    status_code: int
    events: list[tuple[str, dict[str, Any]]]
    service: str


@dataclass
class OtlpReceiver:
    spans: list[ReceivedSpan] = field(default_factory=list)
    posts: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> OtlpReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.take(request)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.shutdown()
        self.server.server_close()

    def take(self, request: ExportTraceServiceRequest) -> None:
        with self.lock:
            self.posts += 1
            for resource_spans in request.resource_spans:
                resource = {item.key: any_value(item.value) for item in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans.append(
                            ReceivedSpan(
                                trace_id=span.trace_id.hex(),
                                span_id=span.span_id.hex(),
                                parent_id=span.parent_span_id.hex(),
                                name=span.name,
                                start_ns=span.start_time_unix_nano,
                                end_ns=span.end_time_unix_nano,
                                attributes={item.key: any_value(item.value) for item in span.attributes},
                                status_code=span.status.code,
                                events=[
                                    (event.name, {item.key: any_value(item.value) for item in event.attributes})
                                    for event in span.events
                                ],
                                service=str(resource.get("service.name", "")),
                            )
                        )

    def wait_for(self, count: int, timeout: float = 60) -> list[ReceivedSpan]:
        """The spans once at least ``count`` arrived (polled with a generous bound; CI machines are busy)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.spans) >= count:
                    return list(self.spans)
            time.sleep(0.05)
        raise AssertionError(f"{len(self.spans)} spans arrived, expected {count}")

    def clear(self) -> None:
        with self.lock:
            self.spans.clear()


@dataclass
class SlowCollector:
    """A collector that takes each export's request, then answers one byte a second: no HTTP read timeout ever
    fires on it (each read gets its byte in time), so only a wall-time bound ends an export. It stops by
    itself after ``lifetime_s`` and when the ``with`` block ends."""

    lifetime_s: float = 300.0
    posts: int = 0
    _listener: socket.socket | None = None
    _stop: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        assert self._listener is not None
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self) -> SlowCollector:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._listener is not None:
            self._listener.close()

    def _accept(self) -> None:
        ends = time.monotonic() + self.lifetime_s
        while not self._stop.is_set() and time.monotonic() < ends:
            try:
                connection, _ = self._listener.accept()  # type: ignore[union-attr]
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._crawl, args=(connection, ends), daemon=True).start()

    def _crawl(self, connection: socket.socket, ends: float) -> None:
        with connection:
            connection.settimeout(5.0)
            try:
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return  # a reachability probe: connected, then closed
                    head += chunk
                self.posts += 1
                reply = b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 1000000\r\n\r\n"
                reply += b"\0" * 1_000_000
                for byte in reply:
                    if self._stop.wait(1.0) or time.monotonic() > ends:
                        return
                    connection.sendall(bytes([byte]))
            except OSError:
                return
