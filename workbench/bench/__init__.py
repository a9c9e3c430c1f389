"""The bench: sweeps of both arms over the built-in task tiers, and honest reports of them.

```python
import asyncio

from workbench.bench import Sweep, plan, to_markdown
from workbench.store import Store

outcome = asyncio.run(Sweep(plan("scaling"), store=Store("bench.db"), concurrency=2).run())
report = outcome.report()          # a BenchReport: per tier and arm, paired deltas, scaling series
print(to_markdown(report))
```

Nothing here imports Textual or draws widgets: the CLI renders reports with Rich
(:mod:`workbench.bench.render`), and a TUI screen can render the same :class:`BenchReport`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from workbench.bench.manifest import SweepInfo, SweepStore
from workbench.bench.plan import CUSTOM_TIER, TIER_CHOICES, BenchCase, PlanError, plan, plan_custom
from workbench.bench.render import format_for, render, report_view, to_csv, to_json, to_markdown, write_report
from workbench.bench.report import BenchReport, ScalingSeries, TierReport, build_report
from workbench.bench.results import ArmFigures, RunResult
from workbench.bench.stats import Crossover, PairedDelta, crossover, paired_delta, payload_suppression

if TYPE_CHECKING:
    from workbench.bench.sweep import Progress, Sweep, SweepOutcome, load_sweep

__all__ = [
    "CUSTOM_TIER",
    "TIER_CHOICES",
    "ArmFigures",
    "BenchCase",
    "BenchReport",
    "Crossover",
    "PairedDelta",
    "PlanError",
    "Progress",
    "RunResult",
    "ScalingSeries",
    "Sweep",
    "SweepInfo",
    "SweepOutcome",
    "SweepStore",
    "TierReport",
    "build_report",
    "crossover",
    "format_for",
    "load_sweep",
    "paired_delta",
    "payload_suppression",
    "plan",
    "plan_custom",
    "render",
    "report_view",
    "to_csv",
    "to_json",
    "to_markdown",
    "write_report",
]
_LAZY = frozenset({"Progress", "Sweep", "SweepOutcome", "load_sweep"})
"""Names of :mod:`workbench.bench.sweep`, which drives the engine: loaded when first used, so reading a stored
sweep or exporting a session never imports pydantic-ai."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module("workbench.bench.sweep"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
