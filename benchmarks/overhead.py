"""What the workbench costs on top of bare pydantic-ai, measured in one run.

Times a 200-item task with both arms through ``workbench.compare`` (streaming, recorder, translator,
SQLite recording on; the settings read once and passed in, as a caller running many comparisons does) against
bare runs of the same two agents (same scripted model, toolset, instructions and CodeMode limits, built inside
the timed region like the workbench builds them), run
concurrently the same way. Two bare baselines: ``Agent.run`` (no streaming at all) and
``Agent.run_stream_events`` drained without looking at the events (what any live UI must pay).
Rounds alternate between the variants so machine noise hits all of them; ratios are of medians, of wall
time and of this process's CPU time (which a busy machine moves far less; it leaves out the sandbox's worker
processes, the same work on both sides, so its ratio is the stricter one).
The workbench pauses ``MONTY_SETTLE_S`` after a code arm ends (see :mod:`workbench.runner`); the bare
runs pause the same way at the same place (after their code arm, inside the concurrent gather), so the
pause counts in both figures exactly where it lengthens the round and nowhere where the slower arm hides it.

With the instant ``scripted`` model everything but the sandbox is CPU work in one process, so the ratio
is the workbench's whole overhead laid bare (the worst case). ``--paced`` repeats the measurement with
``scripted:paced``, which waits like a real model (time to first token, prefill, output rate): the
realistic case. Finally it prices the recorder itself: the code arm alone, streamed, the same agent
(the workbench's sandbox launcher in both) with and without the recorder (wired and given a sink as the
runner does: see :mod:`workbench.recorder`), divided by the number of nested calls.

    python benchmarks/overhead.py [--items 200] [--rounds 9] [--paced]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai_harness import CodeMode

import workbench
import workbench.apps as apps
from workbench.arm_spec import ArmConfig
from workbench.arms import instructions_for
from workbench.config import load_settings
from workbench.events import Payload
from workbench.recorder import Recorded, Recorder, StreamBarrier
from workbench.runner import MONTY_SETTLE_S
from workbench.sandbox import local_pool
from workbench.scripted.model import Pace, ScriptedModel
from workbench.store import Store

TASK = "cart/remove-expensive"


def bare_agent(mode: str, app: apps.DemoApp, pace: Pace | None, *, launcher: bool = False,
               recorder: Recorder | None = None) -> Agent:  # fmt: skip
    """The arm as plain pydantic-ai builds it; ``launcher``: Monty workers started through the workbench's
    launcher (:func:`workbench.sandbox.local_pool`) as the workbench's own code arm starts them; ``recorder``:
    recorded, wired as :func:`workbench.arms.build_agent` wires it (around the toolset, CodeMode and model)."""
    limits = ArmConfig().sandbox
    capabilities: list[Any] = []
    toolset: Any = app.toolset()
    model: Any = ScriptedModel(pace=pace)
    if recorder is not None:
        toolset = recorder.toolset(toolset, nested=mode == "code")
        model = recorder.model(model)
    if mode == "code":
        sandbox = {"max_duration_secs": limits.max_duration_secs, "max_memory": limits.max_memory,
                   "max_suspensions": limits.max_suspensions}  # fmt: skip
        pool: dict[str, Any] = {"monty_sandbox": local_pool} if launcher else {}
        options = {"max_tool_calls": limits.max_tool_calls, "resource_limits": sandbox, **pool}
        capabilities.append(CodeMode(**options) if recorder is None else recorder.code_mode(**options))
    return Agent(model, toolsets=[toolset], instructions=instructions_for(app), capabilities=capabilities)


async def drain(agent: Agent, prompt: str) -> None:
    async with agent.run_stream_events(prompt) as events:
        async for _ in events:
            pass


async def drain_recorded(agent: Agent, prompt: str) -> None:
    """:func:`drain` for an agent with the recorder: lets a snippet's nested calls go to the sink as the runner
    does (it sets each barrier it reads)."""
    async with agent.run_stream_events(prompt) as events:
        async for event in events:
            if isinstance(event, StreamBarrier):
                event.reached.set()


def recorder(into: list[Payload], app: apps.DemoApp, mode: str) -> Recorder:
    """The recorder as the workbench's runner gives it to an arm: a snippet's nested calls go to a sink."""
    return Recorder(sandboxed=frozenset(app.tool_names()) if mode == "code" else frozenset(), sink=into.append)


async def settled(mode: str, run: Awaitable[Any]) -> Any:
    """One bare arm, then the settle pause the workbench takes after a code arm, at the same place."""
    result = await run
    if mode == "code":
        await asyncio.sleep(MONTY_SETTLE_S)
    return result


def bare(
    items: int, pace: Pace | None, *, stream: bool, launcher: bool = False, with_recorder: bool = False
) -> Callable[[], Awaitable[float]]:
    """Both arms as plain pydantic-ai; ``launcher`` / ``recorder``: with that one part of the workbench added."""

    async def round_() -> float:
        task = apps.get_task(TASK)
        app_type = apps.get_app(task.app)
        started = time.perf_counter()
        agents = []
        for mode in ("tool", "code"):
            app = app_type(items)
            recording = recorder([], app, mode) if with_recorder else None
            agents.append((mode, bare_agent(mode, app, pace, launcher=launcher, recorder=recording)))
        prompt = task.prompt_for()
        if stream:
            drained = drain_recorded if with_recorder else drain
            await asyncio.gather(*(settled(mode, drained(agent, prompt)) for mode, agent in agents))
        else:
            runs = (settled(mode, agent.run(prompt)) for mode, agent in agents)
            results = await asyncio.gather(*runs)
            assert all("Removed" in r.output for r in results), [r.output for r in results]
        return time.perf_counter() - started

    return round_


def recorded(items: int, model: str, db: Store | bool) -> Callable[[], Awaitable[float]]:
    settings = load_settings()  # read once, as a long-running caller reads them (and keeps its store open)

    async def round_() -> float:
        started = time.perf_counter()
        comparison = await workbench.compare(task=TASK, items=items, model=model, db=db, settings=settings)
        elapsed = time.perf_counter() - started
        assert all(arm.summary.passed for arm in comparison.arms.values())
        return elapsed

    return round_


async def measure(
    variants: dict[str, Callable[[], Awaitable[float]]], rounds: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall times and this process's CPU times per variant (the CPU figure leaves out the sandbox's worker
    processes, the same work on every side, and moves far less than wall time on a busy machine)."""
    for run in variants.values():  # warm imports, Monty's worker binary, token-count caches
        await run()
    times: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, run in variants.items():
            gc.collect()
            started = time.process_time()
            times[name].append(await run())
            cpu[name].append(time.process_time() - started)
    return times, cpu


def report(title: str, measured: tuple[dict[str, list[float]], dict[str, list[float]]]) -> None:
    times, cpu = measured
    print(title)
    medians = {name: statistics.median(values) for name, values in times.items()}
    cpu_medians = {name: statistics.median(values) for name, values in cpu.items()}
    for name, values in times.items():
        print(f"  {name:28s} median {medians[name] * 1000:8.1f} ms  (min {min(values) * 1000:.1f}, "
              f"max {max(values) * 1000:.1f})  cpu {cpu_medians[name] * 1000:7.1f} ms")  # fmt: skip
    workbench_median = medians["workbench (recorded, stored)"]
    for name in ("bare Agent.run", "bare run_stream_events"):
        print(f"  ratio workbench / {name:22s} = {workbench_median / medians[name]:.3f}   (goal <= 1.10)"
              f"   cpu {cpu_medians['workbench (recorded, stored)'] / cpu_medians[name]:.3f}")  # fmt: skip
    streamed, streamed_cpu = medians["bare run_stream_events"], cpu_medians["bare run_stream_events"]
    for name in (name for name in times if name not in ("bare Agent.run", "bare run_stream_events")):
        if name != "workbench (recorded, stored)":
            print(f"  {name.strip():28s} / bare run_stream_events = {medians[name] / streamed:.3f}"
                  f"   cpu {cpu_medians[name] / streamed_cpu:.3f}")  # fmt: skip


async def code_arm_alone(items: int, *, record: bool) -> tuple[float, int]:
    task = apps.get_task(TASK)
    app = apps.get_app(task.app)(items)
    sunk: list[Payload] = []
    agent = bare_agent("code", app, None, launcher=True, recorder=recorder(sunk, app, "code") if record else None)
    started = time.perf_counter()
    inner = 0
    async with agent.run_stream_events(task.prompt_for()) as events:
        async for event in events:
            if isinstance(event, StreamBarrier):
                event.reached.set()
            inner += isinstance(event, Recorded) and event.payload.kind == "inner_call"
    elapsed = time.perf_counter() - started
    await asyncio.sleep(MONTY_SETTLE_S)
    return elapsed, inner + sum(payload.kind == "inner_call" for payload in sunk)


async def main(items: int, rounds: int, paced: bool) -> None:
    # One store for every round, as a long-running caller keeps it: a path would open (probe, migrate) it each round.
    with tempfile.TemporaryDirectory() as scratch, Store(Path(scratch) / "bench.db") as db:
        instant = {
            "bare Agent.run": bare(items, None, stream=False),
            "bare run_stream_events": bare(items, None, stream=True),
            "  + the sandbox launcher": bare(items, None, stream=True, launcher=True),
            "  + launcher and recorder": bare(items, None, stream=True, launcher=True, with_recorder=True),
            "workbench, not stored": recorded(items, "scripted", False),
            "workbench (recorded, stored)": recorded(items, "scripted", db),
        }
        report(f"{TASK} at {items} items, both arms at once, scripted model (instant), {rounds} rounds",
               await measure(instant, rounds))  # fmt: skip
        if paced:
            slow = {
                "bare Agent.run": bare(items, Pace(), stream=False),
                "bare run_stream_events": bare(items, Pace(), stream=True),
                "workbench (recorded, stored)": recorded(items, "scripted:paced", db),
            }
            paced_rounds = max(3, rounds // 3)
            report(f"same with scripted:paced (waits like a real model), {paced_rounds} rounds",
                   await measure(slow, paced_rounds))  # fmt: skip

        with_recorder, without_recorder, inner_calls = [], [], 0
        for _ in range(rounds):
            elapsed, inner_calls = await code_arm_alone(items, record=True)
            with_recorder.append(elapsed)
            without_recorder.append((await code_arm_alone(items, record=False))[0])
        extra = statistics.median(with_recorder) - statistics.median(without_recorder)
        with_ms, without_ms = statistics.median(with_recorder) * 1000, statistics.median(without_recorder) * 1000
        print(
            f"code arm alone, streamed: {inner_calls} inner calls; with the recorder median {with_ms:.1f} ms, "
            f"without {without_ms:.1f} ms"
        )
        print(f"  recorder cost per inner call = {extra / max(inner_calls, 1) * 1e6:.0f} us")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--paced", action="store_true", help="also measure with scripted:paced")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.items, arguments.rounds, arguments.paced))
