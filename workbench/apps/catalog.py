"""Helpers shared by the task catalogs (``workbench/apps/tasks_<app>.py``) and the listings of the catalog.

The catalog mirrors the published tiers: 10 everyday tasks per app, 12 long-horizon jobs, and one
scaling rule per app that is run at several item counts (:data:`SCALING_SIZES`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from workbench.apps.base import DemoApp, Record
from workbench.apps.tasks import Task

SCALING_SIZES = (5, 20, 50, 100, 200)
"""The item counts every scaling rule is applied at (5 apps x 5 counts = 25 runs per model)."""

DAY = r"\d{4}-\d{2}-\d{2}"
"""A date in a prompt; wrap it in a named group: ``rf"before (?P<day>{DAY})"``."""
NAME = r"[a-z][\w'-]*(?: [a-z][\w'-]*)?"
"""A first name, optionally with a last name (patterns are searched case-insensitively)."""


def money(group: str) -> str:
    """A dollar amount captured as ``group`` (the ``$`` is optional)."""
    return rf"\$?(?P<{group}>\d[\d,]*(?:\.\d+)?)"


def add_record(app: DemoApp, entity: str, **fields: Any) -> Record:
    """Create a record the way a ``create_*`` tool would (next id, validated), for reference functions."""
    model = app.entities[entity]
    return app.add(entity, model(id=app.new_id(entity), **fields))


def item_counts(task: Task) -> tuple[int, ...]:
    """The item counts a task is run at: every scaling size for a scaling rule, else its default count."""
    return tuple(task.sizes) if task.sizes else (task.items,)


def task_rows(tasks: Iterable[Task]) -> list[dict[str, Any]]:
    """The rows of ``workbench tasks --json``: one per task, and one per item count for a scaling rule."""
    rows = []
    for task in tasks:
        for items in item_counts(task):
            rows.append(
                {
                    "id": task.id,
                    "app": task.app,
                    "tier": task.tier,
                    "items": items,
                    "prompt": task.prompt_for(),
                }
            )
    return rows
