"""Cancellation and limits, in process: models that never stop, and a run cancelled the way the TUI does it.

- A tool-calling model that calls a tool on every response is ended by the request limit.
- A code-mode model that submits a working snippet on every response is ended by the request limit too.
- A code-mode model that submits an endless loop every time is ended by the sandbox's time limit and then
  by CodeMode's retry budget.
- ``ComparisonRun.cancel()`` (what Escape in the TUI calls) stops both arms of a paced run within a second
  and the stored session reads as cancelled.

Each ends with a clear status and reason, never a hang or an exception (``problems``); how long the cancel
took is a figure whose goal, when missed, is in ``over_goal``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

import workbench
from workbench.arm_spec import ArmConfig, SandboxLimits
from workbench.events import ArmEvent, RequestStarted
from workbench.store import Store

TASK = "cart/remove-expensive"
REQUEST_LIMIT = 12
CANCEL_GOAL_S = 1.0
"""Escape must have stopped both arms within this long."""


@dataclass
class LimitReport:
    name: str
    seconds: float
    statuses: dict[str, str]
    errors: dict[str, str | None]
    problems: list[str] = field(default_factory=list)
    over_goal: list[str] = field(default_factory=list)
    """Timing figures past their goal (a cancel within CANCEL_GOAL_S)."""

    @property
    def held(self) -> bool:
        return not self.problems


def endless(call: Callable[[int], ToolCallPart]) -> FunctionModel:
    """A model that answers every request with another tool call."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[call(sum(isinstance(m, ModelResponse) for m in messages) + 1)])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        part = respond(messages, info).parts[0]
        assert isinstance(part, ToolCallPart)
        yield {0: DeltaToolCall(name=part.tool_name, json_args=json.dumps(part.args), tool_call_id=part.tool_call_id)}

    return FunctionModel(respond, stream_function=stream, model_name="endless")


async def tool_arm_never_stops() -> LimitReport:
    model = endless(lambda n: ToolCallPart("list_cart_items", {"page": 1}, tool_call_id=f"loop{n}"))
    return await _limited("tool arm calls a tool forever", model, arms=["tool"], expect_in_error="request limit")


async def code_arm_never_stops() -> LimitReport:
    model = endless(lambda n: ToolCallPart("run_code", {"code": "1 + 1"}, tool_call_id=f"loop{n}"))
    return await _limited("code arm runs snippets forever", model, arms=["code"], expect_in_error="request limit")


async def code_arm_loops_forever() -> LimitReport:
    model = endless(lambda n: ToolCallPart("run_code", {"code": "while True:\n    pass"}, tool_call_id=f"loop{n}"))
    config = ArmConfig(request_limit=REQUEST_LIMIT, sandbox=SandboxLimits(max_duration_secs=0.5))
    return await _limited(
        "code arm loops forever in every snippet", model, arms=["code"], config=config, expect_in_error="retries"
    )


async def _limited(
    name: str, model: FunctionModel, *, arms: list[str], expect_in_error: str, config: ArmConfig | None = None
) -> LimitReport:
    started = time.perf_counter()
    comparison = await asyncio.wait_for(
        workbench.compare(
            task=TASK, model=model, arms=arms, db=False, config=config or ArmConfig(request_limit=REQUEST_LIMIT)
        ),
        timeout=60,
    )
    report = _report(name, time.perf_counter() - started, comparison)
    for arm, summary in ((a, r.summary) for a, r in comparison.arms.items()):
        if summary.status != "failed" or expect_in_error not in (summary.error or ""):
            report.problems.append(f"{arm} ended {summary.status}: {summary.error}")
        if summary.requests > REQUEST_LIMIT:
            report.problems.append(f"{arm} made {summary.requests} requests, over the limit of {REQUEST_LIMIT}")
    return report


async def cancel_like_escape(directory: Path, *, after_events: int = 10) -> LimitReport:
    """Cancel a paced run in flight through ``ComparisonRun.cancel()``, as the TUI's Escape does, once both
    arms have sent their first request and ``after_events`` events happened."""
    store = Store(directory / "cancel.db")
    run = workbench.compare_stream(task=TASK, model="scripted:paced", db=store)
    seen: list[ArmEvent] = []
    under_way = asyncio.Event()

    def watch(event: ArmEvent) -> None:
        seen.append(event)
        requested = {e.arm for e in seen if isinstance(e.payload, RequestStarted)}
        if len(seen) >= after_events and requested >= set(run.comparison.arms):
            under_way.set()

    run.subscribe(watch)
    task = run.start()
    await asyncio.wait_for(under_way.wait(), timeout=120)
    cancelled_at = time.perf_counter()
    run.cancel()
    comparison = await asyncio.wait_for(task, timeout=60)
    stopped = time.perf_counter() - cancelled_at
    report = _report("Escape: ComparisonRun.cancel() mid-run", stopped, comparison)
    stored = store.session(comparison.session_id)
    if stopped > CANCEL_GOAL_S:
        report.over_goal.append(f"the arms took {stopped:.2f} s to stop")
    if stored.status != "cancelled" or any(arm.status not in ("cancelled", "completed") for arm in stored.arms):
        report.problems.append(f"stored as {stored.status} with arms {[a.status for a in stored.arms]}")
    if "cancelled" not in report.statuses.values():
        report.problems.append(f"no arm was cancelled: {report.statuses}")
    return report


def _report(name: str, seconds: float, comparison: workbench.Comparison) -> LimitReport:
    return LimitReport(
        name,
        round(seconds, 3),
        {arm: run.summary.status for arm, run in comparison.arms.items()},
        {arm: run.summary.error for arm, run in comparison.arms.items()},
    )


async def all_checks(directory: Path, on_report: Callable[[LimitReport], None] | None = None) -> list[LimitReport]:
    reports = []
    for check in (tool_arm_never_stops, code_arm_never_stops, code_arm_loops_forever):
        reports.append(await check())
        if on_report is not None:
            on_report(reports[-1])
    reports.append(await cancel_like_escape(directory))
    if on_report is not None:
        on_report(reports[-1])
    return reports
