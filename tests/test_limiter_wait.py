"""Wall time leaves out the time an arm waited for the workbench's own concurrency limit (issue 26).

Two arms share one model capped at one request in flight: the arm that finds the slot taken waits, and
that wait is stored as a ``limiter_wait`` event, counted as ``waited`` and left out of its wall time in
every view that shows wall time.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel
from rich.console import Console

import workbench
from workbench.bench.export import session_csv, session_markdown
from workbench.events import ArmEvent, LimiterWait, RunFinished, RunStarted, TextDelta
from workbench.printer import comparison_view
from workbench.providers.factory import harden
from workbench.providers.limits import limiter_for
from workbench.providers.retry import RetryPolicy
from workbench.share.session_html import session_html
from workbench.store import Store
from workbench.summary import ArmSummary

DEADLINE_S = 60.0


def one_slot_model() -> FunctionModel:
    """A model whose first request holds the one slot until another request is queued behind it."""
    requests = 0

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        nonlocal requests
        requests += 1
        if requests == 1:
            limiter = limiter_for("function@default", 1)
            deadline = time.monotonic() + DEADLINE_S
            while limiter.waiting_count < 1 and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)  # the queued request waits at least this long
        yield "Nothing to change."

    return FunctionModel(stream_function=stream, model_name="one-slot")


async def test_the_arm_that_waited_for_the_limiter_does_not_count_the_wait(tmp_path: Path) -> None:
    model = harden(one_slot_model(), RetryPolicy(), concurrency=1, label="one-slot")
    db = tmp_path / "sessions.db"
    comparison = await workbench.compare("Look at the cart.", app="cart", model=model, db=db)
    summaries = {name: arm.summary for name, arm in comparison.arms.items()}
    waited = [name for name, summary in summaries.items() if summary.waited_s > 0]
    assert len(waited) == 1, {name: s.waited_s for name, s in summaries.items()}
    arm = comparison.arms[waited[0]]
    waits = [event.payload.waited_s for event in arm.events if isinstance(event.payload, LimiterWait)]
    assert waits and arm.summary.waited_s == sum(waits)
    clock = max(event.t for event in arm.events)
    assert abs(arm.summary.wall_s - (clock - arm.summary.waited_s)) < 1e-9
    other = next(s for name, s in summaries.items() if name != waited[0])
    assert other.waited_s == 0 and abs(other.wall_s - max(e.t for e in comparison.arms[other.name].events)) < 1e-9

    listed = {item["name"]: item for item in comparison.to_dict()["arms"]}
    assert listed[waited[0]]["waited_s"] == round(arm.summary.waited_s, 3)
    stored = Store(db).load(comparison.session_id)
    assert stored.arms[waited[0]].summary.waited_s == arm.summary.waited_s
    assert stored.arms[waited[0]].summary.wall_s == arm.summary.wall_s


def test_the_fold_takes_the_wait_out_of_wall_time() -> None:
    events = [
        ArmEvent("tool", 0, 0.0, RunStarted("tool", "m", "cart", 5, 0, "p", [])),
        ArmEvent("tool", 1, 2.5, LimiterWait(2.0)),
        ArmEvent("tool", 2, 3.0, TextDelta("done")),
        ArmEvent("tool", 3, 3.25, RunFinished("completed", None, "done")),
    ]
    summary = ArmSummary.fold("tool", events)
    assert (summary.waited_s, summary.wall_s) == (2.0, 1.25)
    assert summary.to_dict()["waited_s"] == 2.0


def test_every_view_of_wall_time_shows_the_wait(tmp_path: Path) -> None:
    from workbench.session import fold_comparison

    def arm(name: str, wait: float | None) -> list[ArmEvent]:
        payloads = [RunStarted(name, "m", "cart", 5, 0, "p", []), TextDelta("ok"), RunFinished("completed", None, "ok")]
        if wait is not None:
            payloads.insert(1, LimiterWait(wait))
        return [ArmEvent(name, seq, 1.5 * seq, payload) for seq, payload in enumerate(payloads)]

    comparison = fold_comparison(
        [*arm("tool", None), *arm("code", 1.75)], session_id="s1", app="cart", items=5, arms=["tool", "code"]
    )
    console = Console(width=160, record=True, color_system=None)
    console.print(comparison_view(comparison))
    rows = {line.split("  ")[0].strip(): line for line in console.export_text().splitlines()}
    assert "waited" in rows and "1.75 s" in rows["waited"] and "–" in rows["waited"], rows
    assert "3.00 s" in rows["wall time"] and "2.75 s" in rows["wall time"]  # code: 4.50 s on the clock, less 1.75 s
    assert "waited for a slot" in session_markdown(comparison)
    assert 'data-key="waited_s"' in session_html(comparison)
    rows_csv = {row["arm"]: row for row in csv.DictReader(io.StringIO(session_csv(comparison)))}
    assert (rows_csv["code"]["waited_s"], rows_csv["code"]["wall_s"]) == ("1.750", "2.750")
    listed = {item["name"]: item for item in json.loads(json.dumps(comparison.to_dict()))["arms"]}
    assert (listed["code"]["waited_s"], listed["tool"]["waited_s"]) == (1.75, 0.0)
