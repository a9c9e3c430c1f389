"""Storage faults tried, sessions lost: real faults under a real run, and what survived them.

    python benchmarks/storage_faults.py            # every fault (mounts need root; they are skipped without)
    python benchmarks/storage_faults.py --hold 40  # hold the lock 40 s: past the default 30 s wait

Each fault runs one scripted comparison (cart/remove-expensive, 122 items) against a database that
cannot take it as usual, then counts the events that reached the database directly or through
``workbench import`` of the fallback file afterwards. Prints one row per fault: whether the run was
stored directly, how long a locked database was waited out, the events emitted and recovered, and the
sessions lost (goal: 0).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

TASK = "cart/remove-expensive"


@dataclass
class FaultResult:
    fault: str
    stored: bool | None = None
    waited_s: float = 0.0
    emitted: int = 0
    recovered: int = 0
    note: str = ""

    @property
    def lost(self) -> int:
        return 0 if self.stored is None or self.recovered >= self.emitted else 1


def _count(db: Path, session_id: str) -> int:
    with contextlib.closing(sqlite3.connect(db)) as connection:
        return connection.execute("SELECT count(*) FROM events WHERE session_id = ?", (session_id,)).fetchone()[0]


@contextlib.contextmanager
def _lock(db: Path) -> Iterator[Callable[[], None]]:
    code = (
        "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1], isolation_level=None)\nc.execute('BEGIN EXCLUSIVE')\n"
        "print('locked', flush=True)\nsys.stdin.readline()\nc.execute('COMMIT')\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)  # fmt: skip
    assert holder.stdout is not None and holder.stdin is not None
    holder.stdout.readline()

    def release() -> None:
        if not holder.stdin.closed:  # type: ignore[union-attr]
            holder.stdin.write("\n")  # type: ignore[union-attr]
            holder.stdin.close()  # type: ignore[union-attr]

    try:
        yield release
    finally:
        release()
        holder.wait()


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _recover(result: FaultResult, db: Path, session_id: str, store_factory: Callable[[], object]) -> None:
    """Open the database again (which imports the fallback file) and count what it holds."""
    store = store_factory()
    result.recovered = _count(db, session_id)
    store.engine.dispose()  # type: ignore[attr-defined]


def locked(directory: Path, hold_s: float, timeout_s: float) -> FaultResult:
    import workbench
    from workbench.store import Store

    db = directory / "locked.db"
    store = Store(db, busy_timeout_s=timeout_s)
    result = FaultResult(f"locked {hold_s:g} s (wait {timeout_s:g} s)")
    with _lock(db) as release:
        timer = threading.Timer(hold_s, release)
        timer.start()
        comparison = workbench.compare_sync(task=TASK, db=store)
        timer.cancel()
    result.stored, result.waited_s, result.emitted = comparison.stored, store.busy_waited_s, len(comparison.events)
    result.note = "" if comparison.stored else "fallback file, imported on the next open"
    store.engine.dispose()
    _recover(result, db, comparison.session_id, lambda: Store(db))
    return result


def disk_full(directory: Path) -> FaultResult:
    import workbench
    from workbench.store import Store

    mount = directory / "small"
    mount.mkdir()
    result = FaultResult("disk full (tmpfs)")
    if not _mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)):
        result.note = "skipped: mount refused"
        return result
    try:
        db = mount / "sessions.db"
        store = Store(db)
        filler = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT)
        with contextlib.suppress(OSError):
            while True:
                os.write(filler, b"\0" * 65536)
        os.close(filler)
        started = time.monotonic()
        comparison = workbench.compare_sync(task=TASK, db=store)
        result.stored, result.emitted = comparison.stored, len(comparison.events)
        result.note = f"run took {time.monotonic() - started:.2f} s"
        store.engine.dispose()
        (mount / "filler").unlink()
        _recover(result, db, comparison.session_id, lambda: Store(db))
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
    return result


def read_only(directory: Path) -> FaultResult:
    import workbench
    from workbench.store import Store

    mount = directory / "media"
    mount.mkdir()
    result = FaultResult("read-only file system")
    if not _mount("-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)):
        result.note = "skipped: mount refused"
        return result
    try:
        db = mount / "sessions.db"
        Store(db).engine.dispose()
        _mount("-o", "remount,ro", str(mount))
        store = Store(db)
        comparison = workbench.compare_sync(task=TASK, db=store)
        result.stored, result.emitted = comparison.stored, len(comparison.events)
        store.engine.dispose()
        _mount("-o", "remount,rw", str(mount))
        _recover(result, db, comparison.session_id, lambda: Store(db))
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
    return result


def damaged(directory: Path) -> FaultResult:
    import workbench
    from workbench.locations import fallback_dir
    from workbench.store import Store

    db = directory / "damaged.db"
    store = Store(db)
    workbench.compare_sync(task=TASK, db=store)
    store.engine.dispose()
    with contextlib.closing(sqlite3.connect(db)) as connection:
        root = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = 'events'").fetchone()[0]
        page = connection.execute("PRAGMA page_size").fetchone()[0]
    with db.open("r+b") as handle:
        handle.seek((root - 1) * page + 8)
        handle.write(b"\xa5" * (page - 8))
    result = FaultResult("damaged page")
    comparison = workbench.compare_sync(task=TASK, db=Store(db))
    result.stored, result.emitted = comparison.stored, len(comparison.events)
    fresh = Store(directory / "recovered.db")
    fresh.import_file(fallback_dir() / f"{comparison.session_id}.jsonl")
    result.recovered = _count(directory / "recovered.db", comparison.session_id)
    result.note = "imported into a new database"
    return result


def lone_surrogate(directory: Path) -> FaultResult:
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    import workbench
    from workbench.store import Store

    answer = "Done \ud800 (a lone surrogate, as some servers send)"

    def reply(messages: list[object], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(answer)])

    async def stream(messages: list[object], info: AgentInfo):  # type: ignore[no-untyped-def]
        yield answer

    db = directory / "surrogate.db"
    store = Store(db)
    model = FunctionModel(reply, stream_function=stream)
    comparison = workbench.compare_sync("Say done", app="cart", items=5, db=store, model=model)
    result = FaultResult("lone surrogate in an answer", comparison.stored, 0.0, len(comparison.events))
    result.recovered = _count(db, comparison.session_id)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hold", type=float, default=5.0, help="Seconds the lock is held in the waited-out case")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        os.environ["XDG_DATA_HOME"] = str(directory / "data")
        os.environ.pop("WORKBENCH_DB", None)
        for name in ("waited", "too-long"):
            (directory / name).mkdir()
        results = [
            locked(directory / "waited", args.hold, 30.0),
            locked(directory / "too-long", 3.0, 1.0),
            disk_full(directory),
            read_only(directory),
            damaged(directory),
            lone_surrogate(directory),
        ]
    print(f"{'fault':40} {'stored':>7} {'waited':>8} {'events':>7} {'kept':>6} {'lost':>5}  note")
    for result in results:
        stored = "-" if result.stored is None else ("yes" if result.stored else "no")
        print(f"{result.fault:40} {stored:>7} {result.waited_s:>7.2f}s {result.emitted:>7} {result.recovered:>6} "
              f"{result.lost:>5}  {result.note}")  # fmt: skip
    tried = [r for r in results if r.stored is not None]
    print(f"storage faults tried: {len(tried)}, sessions lost: {sum(r.lost for r in tried)} (goal 0)")
    return 0 if all(r.lost == 0 for r in tried) else 1


if __name__ == "__main__":
    sys.exit(main())
