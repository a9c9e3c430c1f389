"""What the workbench costs on top of bare pydantic-ai, measured in one run.

Times a 200-item task with both arms through ``workbench.compare`` (streaming, recorder, translator,
SQLite recording on) against bare ``Agent.run`` calls of the same two agents (same scripted model,
toolset and instructions; the code arm with the same CodeMode limits), run concurrently the same way.
Rounds alternate between the two so machine noise hits both; the ratio of medians is the figure.
Then it prices the recorder itself: the code arm alone with and without the recorder capability,
divided by the number of nested calls the snippet made.

    python benchmarks/overhead.py [--items 200] [--rounds 7]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai_harness import CodeMode

import apps
import workbench
from workbench.arms import ArmConfig, build_agent, instructions_for
from workbench.recorder import Recorder
from workbench.runner import MONTY_SETTLE_S
from workbench.scripted.model import ScriptedModel

TASK = "cart/remove-expensive"


def bare_agent(mode: str, app: apps.DemoApp) -> Agent:
    limits = ArmConfig().sandbox
    capabilities = []
    if mode == "code":
        capabilities.append(
            CodeMode(
                max_tool_calls=limits.max_tool_calls,
                resource_limits={
                    "max_duration_secs": limits.max_duration_secs,
                    "max_memory": limits.max_memory,
                    "max_suspensions": limits.max_suspensions,
                },
            )
        )
    return Agent(ScriptedModel(), toolsets=[app.toolset()], instructions=instructions_for(app),
                 capabilities=capabilities)  # fmt: skip


async def bare_round(items: int) -> float:
    task = apps.get_task(TASK)
    app_type = apps.get_app(task.app)
    started = time.perf_counter()
    agents = [bare_agent(mode, app_type(items)) for mode in ("tool", "code")]
    results = await asyncio.gather(*(agent.run(task.prompt_for()) for agent in agents))
    elapsed = time.perf_counter() - started
    assert all("Removed" in r.output for r in results), [r.output for r in results]
    await asyncio.sleep(MONTY_SETTLE_S)  # the workbench pays the same settle; keep it out of both figures
    return elapsed


async def workbench_round(items: int, db: Path) -> float:
    started = time.perf_counter()
    comparison = await workbench.compare(task=TASK, items=items, db=db)
    elapsed = time.perf_counter() - started - MONTY_SETTLE_S
    assert all(arm.summary.passed for arm in comparison.arms.values())
    return elapsed


async def code_arm_only(items: int, *, record: bool) -> tuple[float, int]:
    task = apps.get_task(TASK)
    app = apps.get_app(task.app)(items)
    recorder = Recorder()
    if record:
        agent = build_agent("code", ScriptedModel(), app, recorder, ArmConfig())
    else:
        agent = bare_agent("code", app)
    started = time.perf_counter()
    async with agent.run_stream_events(task.prompt_for()) as events:
        inner = 0
        async for event in events:
            inner += type(event).__name__ == "Recorded" and event.payload.kind == "inner_call"
    elapsed = time.perf_counter() - started
    await asyncio.sleep(MONTY_SETTLE_S)
    return elapsed, inner


async def main(items: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "bench.db"
        await bare_round(items)  # warm imports, Monty's worker binary, token-count caches
        await workbench_round(items, db)
        bare, wb = [], []
        for _ in range(rounds):
            bare.append(await bare_round(items))
            wb.append(await workbench_round(items, db))
        bare_median, wb_median = statistics.median(bare), statistics.median(wb)
        print(f"task {TASK} at {items} items, both arms concurrently, {rounds} alternating rounds")
        print(f"  bare pydantic-ai     median {bare_median * 1000:8.1f} ms  (min {min(bare) * 1000:.1f}, max {max(bare) * 1000:.1f})")
        print(f"  workbench (recorded) median {wb_median * 1000:8.1f} ms  (min {min(wb) * 1000:.1f}, max {max(wb) * 1000:.1f})")
        print(f"  ratio workbench / bare = {wb_median / bare_median:.3f}   (goal <= 1.10)")

        with_recorder, without_recorder, inner_calls = [], [], 0
        for _ in range(rounds):
            elapsed, inner_calls = await code_arm_only(items, record=True)
            with_recorder.append(elapsed)
            without_recorder.append((await code_arm_only(items, record=False))[0])
        extra = statistics.median(with_recorder) - statistics.median(without_recorder)
        print(f"code arm alone: {inner_calls} inner calls; with recorder median "
              f"{statistics.median(with_recorder) * 1000:.1f} ms, without {statistics.median(without_recorder) * 1000:.1f} ms")
        print(f"  recorder cost per inner call = {extra / max(inner_calls, 1) * 1e6:.0f} us")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.items, arguments.rounds))
