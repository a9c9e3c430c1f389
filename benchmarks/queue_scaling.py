"""Queued sweep wall time with 1, 2 and 4 worker processes, and the scaling efficiency.

    python benchmarks/queue_scaling.py                  # 50 comparisons (the everyday tier) on scripted:paced
    python benchmarks/queue_scaling.py --workers 1 2 --concurrency 1

Starts its own throw-away PostgreSQL cluster (tests/support/postgres_cluster.py, without fsync as in the tests: the
comparisons' pacing bounds these figures, not the database). For each worker count it creates a
fresh database (the session store and DBOS in one), enqueues the sweep with ``bench --queue``, starts that
many ``workbench worker --exit-when-idle`` processes and waits for them to exit. Prints per worker count:
the wall time from starting the workers to the last one's exit, the busy span DBOS recorded (first
comparison dequeued to last one finished, without the workers' start-up), the comparisons per minute, and
the scaling efficiency T(1) / (n * T(n)) of the busy span (1.0 would be perfect).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.postgres_cluster import PostgresCluster, postgres_bindir  # noqa: E402

WORKBENCH = str(Path(sys.executable).parent / "workbench")


def run_once(url: str, workers: int, concurrency: int, model: str, scratch: Path) -> dict[str, float]:
    env = {
        **os.environ, "WORKBENCH_DB": url, "XDG_DATA_HOME": str(scratch / "data"),
        "XDG_CONFIG_HOME": str(scratch / "config"), "WORKBENCH_CONFIG": str(scratch / "none.toml"),
    }  # fmt: skip
    enqueued = subprocess.run(
        [WORKBENCH, "bench", "--queue", "--tier", "everyday", "--model", model, "--json"],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    queued = json.loads(enqueued.stdout)
    started = time.perf_counter()
    command = [WORKBENCH, "worker", "--exit-when-idle", "--concurrency", str(concurrency)]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = [subprocess.Popen(command, env=env, **quiet) for _ in range(workers)]
    codes = [proc.wait() for proc in procs]
    wall = time.perf_counter() - started
    if any(codes):
        raise SystemExit(f"a worker failed: exit codes {codes}")
    busy = busy_span(url, queued["sweep_id"])
    report = subprocess.run(
        [WORKBENCH, "export", queued["sweep_id"], "--format", "json"], capture_output=True, text=True, env=env,
        check=True,
    )  # fmt: skip
    finished = json.loads(report.stdout)["finished"]
    return {"planned": queued["planned"], "finished": finished, "wall_s": wall, "busy_s": busy}


def busy_span(url: str, sweep_id: str) -> float:
    """First dequeue to last completion of the sweep's workflows, as DBOS recorded them."""
    import sqlalchemy as sa

    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    query = sa.text(
        "SELECT min(started_at_epoch_ms), max(completed_at) FROM dbos.workflow_status WHERE workflow_uuid LIKE :p"
    )
    with engine.connect() as connection:
        first, last = connection.execute(query, {"p": f"{sweep_id}/%"}).one()
    engine.dispose()
    return (last - first) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--concurrency", type=int, default=2, help="comparisons per worker at once (default 2)")
    parser.add_argument("--model", default="scripted:paced")
    args = parser.parse_args()
    bindir = postgres_bindir()
    if bindir is None:
        raise SystemExit("PostgreSQL is not installed (apt-get install -y postgresql)")
    print(f"everyday tier on {args.model}, {args.concurrency} comparisons per worker at once, {os.cpu_count()} CPUs")
    print(f"{'workers':>7} {'runs':>6} {'wall s':>8} {'busy s':>8} {'per min':>8} {'efficiency':>10}")
    base: float | None = None
    with PostgresCluster(bindir) as cluster, tempfile.TemporaryDirectory(prefix="queue-scaling-") as scratch:
        for count in args.workers:
            figures = run_once(cluster.database(), count, args.concurrency, args.model, Path(scratch))
            busy = figures["busy_s"]
            base = base if base is not None else busy * count
            efficiency = base / (count * busy)
            print(
                f"{count:>7} {figures['finished']:>3}/{figures['planned']:<2} {figures['wall_s']:>8.1f} {busy:>8.1f} "
                f"{60 * figures['finished'] / busy:>8.1f} {efficiency:>10.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
