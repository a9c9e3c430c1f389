"""OpenTelemetry export overhead per event: what tracing adds to a run's event path, and what sending the
spans to a real OTLP/HTTP receiver on 127.0.0.1 costs (protobuf encoding and HTTP, on the exporter's thread).
The receiver runs in its own process (as a collector does), so its reading and answering does not compete
for this process's interpreter lock and is not counted as the exporter's cost.

    python benchmarks/otel_overhead.py                          # cart/remove-expensive and a 500-item long task
    python benchmarks/otel_overhead.py --task kanban/quarter-cleanup --repeat 5

Prints microseconds per event, the median of the repeats. Needs the otel extra.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from workbench.runner import ComparisonRun, prepare
from workbench.summary import ArmSummary


class _Sink(BaseHTTPRequestHandler):
    """A collector that takes every export and answers 200 (what is measured is the sending side)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def serve_receiver() -> None:
    """The receiver process: print the port, answer exports until stdin closes (the parent went away)."""
    import threading

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()
    server.shutdown()


def measure(task: str, repeat: int, endpoint: str) -> dict[str, float]:
    from workbench.share.otel import ComparisonTrace
    from workbench.share.otel_export import flush, tracer

    comparison = asyncio.run(ComparisonRun(prepare(task=task), store=None).result())
    events = comparison.events
    fold, add, send = [], [], []
    for _ in range(repeat):
        started = time.perf_counter()
        summaries: dict[str, ArmSummary] = {}
        for event in events:
            summaries.setdefault(event.arm, ArmSummary(event.arm)).add(event)
        fold.append(time.perf_counter() - started)

        started = time.perf_counter()
        traced = ComparisonTrace(comparison, tracer(endpoint))
        for event in events:
            traced.add(event)
        traced.finish()
        added = time.perf_counter()
        flush(endpoint)
        add.append(added - started)
        send.append(time.perf_counter() - added)
    count = len(events)
    return {
        "events": count,
        "spans": traced.spans,
        "fold_us": statistics.median(fold) / count * 1e6,
        "trace_us": statistics.median(add) / count * 1e6,
        "send_us": statistics.median(send) / count * 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", action="append", help="task(s) to run (default: the cart example and a long task)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--receiver", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.receiver:
        serve_receiver()
        return 0
    receiver = subprocess.Popen(
        [sys.executable, __file__, "--receiver"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert receiver.stdout is not None
        port = int(receiver.stdout.readline())
        return _report(options, f"http://127.0.0.1:{port}/v1/traces")
    finally:
        assert receiver.stdin is not None
        receiver.stdin.close()
        receiver.wait(timeout=10)


def _report(options: argparse.Namespace, endpoint: str) -> int:
    print(f"{'task':28} {'events':>7} {'spans':>6} {'fold µs/ev':>11} {'trace µs/ev':>12} {'send µs/ev':>11}")
    for task in options.task or ["cart/remove-expensive", "kanban/quarter-cleanup"]:
        figures = measure(task, options.repeat, endpoint)
        print(
            f"{task:28} {figures['events']:>7,} {figures['spans']:>6,} {figures['fold_us']:>11.1f} "
            f"{figures['trace_us']:>12.1f} {figures['send_us']:>11.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
