"""Load: long tasks in both arms, a 10,000-event session loaded and replayed, 1,000 sessions listed and
filtered, and reads while a sweep writes. Times and peak memory for each.

Each measured case runs in a fresh process (``python -m reliability.load CASE DIR``): timed once,
then run again under tracemalloc for the peak Python heap it allocates. The process's peak resident set and
its baseline (the interpreter with the workbench imported) are reported beside it. Databases the cases
read are built beforehand by the parent, so building them is not measured.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from reliability import child_command, child_env

LONG_ITEMS = 500
REPLAY_EVENTS = 10_000
SESSIONS = 1_000
SWEEP_RUNS = 8
READ_STALL_S = 0.5
"""A read slower than this while a sweep writes counts as a stall."""


@dataclass
class LoadResult:
    name: str
    seconds: float
    peak_mb: float | None
    """Peak resident memory of the measuring process (None when not measured in its own process)."""
    baseline_mb: float | None = None
    """Resident memory of that process just before the case (the interpreter and the workbench imported)."""
    heap_mb: float | None = None
    """Peak Python heap the case itself allocated (tracemalloc, in a second, untimed pass)."""
    detail: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _rss_mb() -> float:
    """Peak resident memory of this process so far, in MB.

    Linux keeps ``ru_maxrss`` across ``exec``, so a child started by a big parent would report the parent's
    peak; /proc's VmHWM belongs to this program alone.
    """
    try:
        status = Path("/proc/self/status").read_text()
        return round(int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) / 1024, 1)
    except (OSError, StopIteration, ValueError):
        return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


# -- cases measured in a child process -------------------------------------------------------------


def case_long_task(directory: Path, task: str) -> LoadResult:
    """One long-horizon task at 500 items in both arms, stored as it runs."""
    import workbench

    baseline = _rss_mb()
    started = time.perf_counter()
    comparison = workbench.compare_sync(task=task, items=LONG_ITEMS, db=str(directory / "long.db"))
    seconds = time.perf_counter() - started
    arms = {name: arm.summary for name, arm in comparison.arms.items()}
    result = LoadResult(f"{task} at {LONG_ITEMS} items, both arms", seconds, _rss_mb(), baseline)
    result.detail = {
        "events": len(comparison.events),
        **{f"{name}_calls": s.tool_calls + s.inner_calls for name, s in arms.items()},
        **{f"{name}_s": round(s.wall_s, 2) for name, s in arms.items()},
    }
    for name, summary in arms.items():
        if summary.status != "completed" or not summary.passed:
            result.problems.append(f"{name} arm {summary.status}, passed={summary.passed}: {summary.error}")
    return result


def case_replay(directory: Path) -> LoadResult:
    """Load a 10,000-event session (events, then the comparison) and replay it at instant speed."""
    from workbench.replay import INSTANT, ReplayClock
    from workbench.store import Store
    from workbench.summary import ArmSummary

    store = Store(directory / "replay.db")
    session_id = store.sessions(limit=1)[0].id
    baseline = _rss_mb()
    started = time.perf_counter()
    events = store.events(session_id)
    loaded = time.perf_counter()
    comparison = store.load(session_id)
    folded = time.perf_counter()
    summaries = {name: ArmSummary(name=name) for name in comparison.arms}
    delivered = 0

    def deliver(batch: list[Any]) -> None:
        nonlocal delivered
        for event in batch:
            summaries[event.arm].add(event)
        delivered += len(batch)

    asyncio.run(ReplayClock(events, speed=INSTANT).run(deliver))
    finished = time.perf_counter()
    result = LoadResult(f"{len(events):,}-event session loaded and replayed", finished - started, _rss_mb(), baseline)
    result.detail = {
        "events_s": round(loaded - started, 3),
        "comparison_s": round(folded - loaded, 3),
        "replay_s": round(finished - folded, 3),
    }
    if len(events) < REPLAY_EVENTS or delivered != len(events):
        result.problems.append(f"{len(events)} events loaded, {delivered} replayed")
    return result


def case_list(directory: Path) -> LoadResult:
    """List and filter 1,000 stored sessions, through the store and through the CLI."""
    from click.testing import CliRunner

    from workbench.cli import cli
    from workbench.store import Store

    db = directory / "sessions.db"
    store = Store(db)
    baseline = _rss_mb()
    timings: dict[str, float] = {}

    def timed(name: str, action: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        value = action()
        timings[name] = round(time.perf_counter() - started, 4)
        return value

    started = time.perf_counter()
    first_page = timed("newest_50_s", lambda: store.sessions(limit=50))
    everything = timed("all_s", lambda: store.sessions())
    kanban = timed("search_app_s", lambda: store.sessions(search="kanban"))
    timed("search_prompt_s", lambda: store.sessions(search="archive every card"))
    missing = timed("search_none_s", lambda: store.sessions(search="no session has this text"))
    listed = timed(
        "cli_json_s", lambda: CliRunner().invoke(cli, ["sessions", "--limit", "1000", "--json", "--db", str(db)])
    )
    seconds = time.perf_counter() - started
    result = LoadResult(f"{len(everything):,} stored sessions listed and filtered", seconds, _rss_mb(), baseline)
    result.detail = timings | {"matches_kanban": len(kanban)}
    if len(everything) != SESSIONS or len(first_page) != 50 or missing or listed.exit_code != 0:
        result.problems.append(f"listed {len(everything)}, first page {len(first_page)}, cli exit {listed.exit_code}")
    if len(json.loads(listed.stdout or "[]")) != SESSIONS:
        result.problems.append("`workbench sessions --limit 1000 --json` did not list every session")
    return result


CASES: dict[str, Callable[..., LoadResult]] = {"long": case_long_task, "replay": case_replay, "list": case_list}


# -- building the databases (not measured) ---------------------------------------------------------


def build_replay_db(directory: Path, count: int = REPLAY_EVENTS) -> None:
    """A session of ``count`` events in the shape of a long code-mode run: nested calls and their results."""
    from workbench.events import ArmEvent, InnerCall, InnerResult, RequestStarted, RunFinished, RunStarted, Usage
    from workbench.session import fold_comparison
    from workbench.store import Store

    session_id = "replay10k"
    events: list[ArmEvent] = []
    preview = json.dumps({"id": "card-0001", "title": "Ship the quarterly report", "column": "Done", "labels": ["ops"]})
    for arm in ("tool", "code"):
        payloads: list[Any] = [
            RunStarted(
                mode=arm,
                model="scripted",
                app="kanban",
                items=5000,
                seed=0,
                prompt="load test",  # type: ignore[arg-type]
                tools=["run_code"],
            ),
            RequestStarted(1),
        ]
        call = 0
        while len(payloads) < count // 2 - 1:
            call += 1
            call_id, parent = f"call_1_0__{call}", "call_1_0"
            payloads.append(
                InnerCall(call_id, parent, "update_card", {"card_id": f"card-{call:04d}", "archived": True})
            )
            payloads.append(InnerResult(call_id, parent, "update_card", "ok", preview, len(preview), 1.5))
            if call % 100 == 0:
                payloads.append(Usage(1, 3000, 200, 0, 30 * call, 2 * call, 0.001, 0.00001 * call))
        payloads = [*payloads[: count // 2 - 1], RunFinished("completed", None, "done")]
        events += [ArmEvent(arm, seq, round(seq * 0.002, 6), payload) for seq, payload in enumerate(payloads)]
    comparison = fold_comparison(events, session_id=session_id, app="kanban", items=5000, prompt="load test")
    Store(directory / "replay.db").save(comparison)


def build_sessions_db(directory: Path, count: int = SESSIONS) -> None:
    """``count`` finished sessions over every app and task, with a few events each."""
    import workbench.apps as apps
    from workbench.events import ArmEvent, RequestStarted, RunFinished
    from workbench.session import fold_comparison
    from workbench.store import Store

    tasks = list(apps.TASKS.values())
    rng = random.Random(7)
    now = datetime.now(UTC)
    comparisons = []
    for number in range(count):
        task = tasks[number % len(tasks)]
        status = rng.choice(["completed", "completed", "completed", "failed", "cancelled"])
        events = [
            *(ArmEvent(arm, seq, seq * 0.1, RequestStarted(seq + 1)) for arm in ("tool", "code") for seq in range(5)),
            *(ArmEvent(arm, 5, 0.5, RunFinished(status, None, "")) for arm in ("tool", "code")),
        ]
        comparisons.append(
            fold_comparison(
                events, session_id=f"s{number:05d}", app=task.app, items=task.items, seed=number,
                prompt=task.prompt_for(), task=task.id, created=now - timedelta(minutes=number),
                model=rng.choice(["scripted", "openai:gpt-5-mini", "anthropic:claude-sonnet-4-5"]),
            )
        )  # fmt: skip
    Store(directory / "sessions.db").save_all(comparisons, pid=1, host="elsewhere")


# -- running the cases -----------------------------------------------------------------------------


def measure(case: str, directory: Path, *args: str) -> LoadResult:
    """Run one case in a fresh process and read its result."""
    completed = subprocess.run(
        child_command("load", case, str(directory), *args),
        capture_output=True,
        text=True,
        timeout=600,
        env=_clean_env(directory),
    )
    lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    if completed.returncode != 0 or not lines:
        return LoadResult(case, 0.0, None, problems=[f"exit {completed.returncode}: {completed.stderr.strip()[-300:]}"])
    data = json.loads(lines[-1])
    return LoadResult(**data)


def reads_during_sweep(directory: Path, runs: int = SWEEP_RUNS, *, stall_s: float | None = READ_STALL_S) -> LoadResult:
    """List, filter and load sessions in this process while another process runs a sweep into the same file.

    A read slower than ``stall_s`` counts as a problem (``None``: the latencies are only figures).
    """
    from workbench.store import Store

    db = directory / "sweep.db"
    Store(db)
    writer = subprocess.Popen(
        child_command("child", "sweep", str(db), str(runs)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_clean_env(directory),
    )
    reader = Store(db)
    latencies: list[float] = []
    started = time.perf_counter()
    while writer.poll() is None:
        for action in (
            lambda: reader.sessions(limit=50),
            lambda: reader.sessions(search="cart"),
            lambda: [reader.events(info.id) for info in reader.sessions(limit=1)],
        ):
            began = time.perf_counter()
            action()
            latencies.append(time.perf_counter() - began)
        time.sleep(0.01)
    seconds = time.perf_counter() - started
    _, stderr = writer.communicate()
    stored = reader.sessions()
    result = LoadResult(f"reads while a {runs}-run sweep writes", seconds, None)
    ordered = sorted(latencies) or [0.0]
    result.detail = {
        "reads": len(latencies),
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1] * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
        "stalls": sum(t > (stall_s or READ_STALL_S) for t in ordered),
    }
    if writer.returncode != 0:
        result.problems.append(f"the sweep failed: {stderr.strip()[-300:]}")
    if len(stored) != runs or any(info.status != "completed" for info in stored):
        result.problems.append(f"{len(stored)} of {runs} sweep sessions stored: {[i.status for i in stored]}")
    if stall_s is not None and result.detail["stalls"]:
        result.problems.append(f"{result.detail['stalls']} reads took over {stall_s} s")
    return result


def long_tasks() -> list[str]:
    """The long-horizon tasks that run at 500 items (the bench engineer's long tier), or a stand-in."""
    import workbench.apps as apps

    tasks = [task.id for task in apps.tasks_for(tier="long") if task.items >= LONG_ITEMS]
    return tasks or ["cart/remove-expensive"]


def run_all(
    directory: Path, *, tasks: list[str] | None = None, on_result: Callable[[LoadResult], None] | None = None
) -> list[LoadResult]:
    directory.mkdir(parents=True, exist_ok=True)
    build_replay_db(directory)
    build_sessions_db(directory)
    results = []
    jobs: list[Callable[[], LoadResult]] = [
        *[lambda task=task: measure("long", directory, task) for task in (tasks or long_tasks())],
        lambda: measure("replay", directory),
        lambda: measure("list", directory),
        lambda: reads_during_sweep(directory),
    ]
    for job in jobs:
        result = job()
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results


def _clean_env(directory: Path) -> dict[str, str]:
    env = child_env({key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")})
    env |= {
        "XDG_CONFIG_HOME": str(directory / "config"),
        "XDG_DATA_HOME": str(directory / "data"),
        "WORKBENCH_DB": str(directory / "default.db"),
    }
    return env


def main(argv: list[str]) -> None:
    import tracemalloc

    case, directory, *args = argv
    result = CASES[case](Path(directory), *args)
    result.seconds = round(result.seconds, 3)
    tracemalloc.start()
    CASES[case](Path(directory), *args)
    result.heap_mb = round(tracemalloc.get_traced_memory()[1] / 1024 / 1024, 1)
    tracemalloc.stop()
    print(json.dumps(asdict(result)))


if __name__ == "__main__":
    main(sys.argv[1:])
