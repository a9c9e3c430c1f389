"""What a sweep runs: one case per (task, item count, seed, repeat), in catalog order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import workbench.apps as apps
from workbench.apps.catalog import item_counts
from workbench.errors import BadInput

TIER_CHOICES = (*apps.TIERS, "all")
CUSTOM_TIER = "custom"
"""The tier of the tasks of a person's own task file (``bench --tasks FILE``)."""


class PlanError(BadInput):
    """A selection that names no task, or an unknown tier, app or task; the message says which."""


@dataclass(frozen=True, order=True)
class BenchCase:
    """One comparison of a sweep. ``repeat`` counts from 0; the seed is part of the case."""

    tier: str
    task: str
    items: int
    seed: int
    repeat: int = 0

    @property
    def app(self) -> str:
        return self.task.split("/", 1)[0]

    @property
    def cluster(self) -> str:
        """The unit the bootstrap resamples: one task at one item count (repeats and seeds inside it)."""
        return f"{self.task}@{self.items}"

    def key(self, model: str) -> tuple[str, int, int, str, int]:
        """What identifies a finished run for ``--resume``: task, items, seed, model, repeat."""
        return (self.task, self.items, self.seed, model, self.repeat)

    def label(self) -> str:
        extra = f" r{self.repeat + 1}" if self.repeat else ""
        return f"{self.task} ×{self.items}{extra}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BenchCase:
        return cls(data["tier"], data["task"], int(data["items"]), int(data["seed"]), int(data.get("repeat", 0)))


def plan(
    tier: str = "all",
    *,
    app: str | None = None,
    tasks: Sequence[str] = (),
    repeat: int = 1,
    seed: int | None = None,
    vary_seeds: bool = False,
    items: int | None = None,
) -> list[BenchCase]:
    """The cases of a sweep.

    ``tier`` is ``everyday``, ``long``, ``scaling`` or ``all``; ``app`` and ``tasks`` narrow it down.
    Scaling rules run at every scaling size, other tasks at their default count (``items`` overrides
    both). Each case runs ``repeat`` times: on the same data (a model's run-to-run variance), or with
    ``vary_seeds`` on seeds ``seed, seed + 1, ...`` (the data's variance too). ``seed`` defaults to
    each task's own seed.
    """
    if tier not in TIER_CHOICES:
        raise PlanError(f"unknown tier {tier!r}; choose one of: {', '.join(TIER_CHOICES)}")
    if app is not None and app not in apps.APPS:
        raise PlanError(f"unknown app {app!r}; choose one of: {', '.join(apps.APPS)}")
    if repeat < 1:
        raise PlanError(f"repeat must be at least 1, got {repeat}")
    if items is not None and not apps.MIN_ITEMS <= items <= apps.MAX_ITEMS:
        raise PlanError(f"items must be between {apps.MIN_ITEMS} and {apps.MAX_ITEMS}, got {items}")
    for task_id in tasks:
        if task_id not in apps.TASKS:
            raise PlanError(f"unknown task {task_id!r}; run `workbench tasks` to list them")
    tiers = apps.TIERS if tier == "all" else (tier,)
    selected = [task for tier_name in tiers for task in apps.tasks_for(app, tier_name) if not tasks or task.id in tasks]
    if not selected:
        raise PlanError("no task matches this selection; run `workbench tasks` to list them")
    cases = []
    for task in selected:
        counts = (items,) if items is not None else item_counts(task)
        base = task.seed if seed is None else seed
        for count in counts:
            for index in range(repeat):
                cases.append(BenchCase(task.tier, task.id, count, base + index if vary_seeds else base, index))
    return cases


def plan_custom(task_ids: Sequence[str], *, repeat: int = 1) -> list[BenchCase]:
    """The cases of a sweep over a task file's tasks (their ids), each run ``repeat`` times."""
    if repeat < 1:
        raise PlanError(f"repeat must be at least 1, got {repeat}")
    return [BenchCase(CUSTOM_TIER, task_id, 0, 0, index) for task_id in task_ids for index in range(repeat)]
