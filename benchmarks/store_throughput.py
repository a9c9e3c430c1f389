"""The session store's write throughput: events per second from 4 concurrent runs, PostgreSQL vs SQLite.

    python benchmarks/store_throughput.py                 # 4 runs x 20,000 events on each backend
    python benchmarks/store_throughput.py --events 50000 --runs 8

Each run is its own process streaming its events through the real writer (``Store.begin`` ->
``SessionWriter``: a background thread committing batches a few times a second), as ``workbench run``
does, all started at once. The events are a realistic mix: text deltas, with a tool result carrying 1 KB
of content every 20th event. Throughput is all the runs' events over the wall time from the first run's
start to the last run's ``close`` (every event committed); every event is then counted in the database.

PostgreSQL is a throw-away cluster started for this (``tests/support/postgres_cluster.py``) with fsync and
synchronous commits on, as a real server runs; SQLite is a file in a temporary directory, in WAL mode with
``synchronous=NORMAL``, as the store opens it. Both live on this machine's disk.

The backends take turns (``--rounds``, 3 by default: SQLite first in odd rounds, PostgreSQL first in even
ones), each round on a fresh database, so neither always runs on a cold cache or a machine warmed by the
other; the figures are medians of the rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

RESULT_EVERY = 20
"""Every 20th event is a tool result with 1 KB of content; the rest are short text deltas."""


def child(db: str, session_id: str, events: int) -> None:
    """One run: open the store, say ready, wait for the start signal, stream ``events`` events, report."""
    from workbench.events import ArmEvent, TextDelta, ToolResult
    from workbench.session import fold_comparison
    from workbench.store import Store

    store = Store(db)
    comparison = fold_comparison([], session_id=session_id, app="cart", items=50, arms=["tool", "code"])
    content = "x" * 1024
    stream = [
        ArmEvent(
            "tool" if seq % 2 else "code", seq, seq * 0.001,
            ToolResult(f"c{seq}", "list_items", "ok", content[:80], 1024, 1.5, content=content)
            if seq % RESULT_EVERY == 0
            else TextDelta("the model says a few words here, "),
        )
        for seq in range(events)
    ]  # fmt: skip
    print("ready", flush=True)
    sys.stdin.readline()
    started = time.time()
    writer = store.begin(comparison)
    for event in stream:
        writer.put(event)
    writer.close(comparison)
    report = {"stored": writer.stored, "written": writer.written, "started": started, "ended": time.time()}
    print(json.dumps(report), flush=True)


def measure(db: str, runs: int, events: int) -> dict[str, float]:
    """Start ``runs`` writer processes on ``db``, release them together, and time them to the last close."""
    command = [sys.executable, __file__, "--child", db]
    processes = [
        subprocess.Popen([*command, f"run{n}", str(events)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for n in range(runs)
    ]
    for process in processes:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    reports = [json.loads(process.communicate()[0].splitlines()[-1]) for process in processes]
    wall_s = max(report["ended"] for report in reports) - min(report["started"] for report in reports)
    if not all(report["stored"] and report["written"] == events for report in reports):
        raise SystemExit(f"a run was not stored whole on {db}: {reports}")
    from sqlalchemy import create_engine, text

    from workbench.locations import db_location

    engine = create_engine(db_location(db).url)
    with engine.connect() as connection:
        counted = connection.execute(text("SELECT count(*) FROM events")).scalar_one()
    engine.dispose()
    if counted != runs * events:
        raise SystemExit(f"{db} holds {counted} events, not {runs * events}")
    slowest = max(report["ended"] - report["started"] for report in reports)
    return {"wall_s": wall_s, "events_per_s": runs * events / wall_s, "slowest_run_s": slowest}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=4, help="concurrent runs (processes), default 4")
    parser.add_argument("--events", type=int, default=20_000, help="events per run, default 20,000")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per backend, default 3")
    parser.add_argument("--child", nargs=3, metavar=("DB", "SESSION", "EVENTS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return

    from tests.support.postgres_cluster import PostgresCluster, postgres_bindir
    from workbench.store import Store

    bindir = postgres_bindir()
    if bindir is None:
        raise SystemExit("PostgreSQL is not installed (apt-get install -y postgresql)")
    rounds: dict[str, list[dict[str, float]]] = {"SQLite": [], "PostgreSQL": []}
    with (
        tempfile.TemporaryDirectory(prefix="workbench-throughput-") as folder,
        PostgresCluster(bindir, durable=True) as cluster,
    ):
        for number in range(args.rounds):
            databases = {
                "SQLite": str(Path(folder) / f"sessions-{number}.db"),
                "PostgreSQL": cluster.database("throughput"),
            }
            order = ["SQLite", "PostgreSQL"] if number % 2 == 0 else ["PostgreSQL", "SQLite"]
            for backend in order:
                Store(databases[backend]).engine.dispose()  # the schema, before the clock starts
                rounds[backend].append(measure(databases[backend], args.runs, args.events))
    results = {
        backend: {key: statistics.median(figures[key] for figures in runs) for key in runs[0]}
        for backend, runs in rounds.items()
    }

    print(
        f"{args.runs} concurrent runs x {args.events:,} events, each through the real session writer; "
        f"medians of {args.rounds} interleaved rounds"
    )
    print(f"{'':24}{'SQLite':>14}{'PostgreSQL':>14}{'PG / SQLite':>14}")
    rows = (("events per second", "events_per_s", "{:,.0f}"), ("wall time, s", "wall_s", "{:.2f}"),
            ("slowest run, s", "slowest_run_s", "{:.2f}"))  # fmt: skip
    for label, key, shape in rows:
        sqlite, postgres = results["SQLite"][key], results["PostgreSQL"][key]
        print(f"{label:24}{shape.format(sqlite):>14}{shape.format(postgres):>14}{postgres / sqlite:>13.2f}x")


if __name__ == "__main__":
    main()
