"""The demo apps the two arms operate on, and their built-in tasks.

``APP_NAMES`` and ``TIERS`` are plain names; everything else loads the apps (pydantic models, the task
catalog) on first use, so a command that only needs the names does not pay for the catalog.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.apps.names import APP_NAMES, DEFAULT_PAGE_SIZE, TIERS
from workbench.lazy import lazy_attributes

if TYPE_CHECKING:
    from workbench.apps.base import MAX_ITEMS, MIN_ITEMS, DemoApp, Record, Snapshot
    from workbench.apps.registry import APPS, TASKS, UnknownName, get_app, get_task, match_task, tasks_for
    from workbench.apps.state import Grade, StateDiff, diff, grade
    from workbench.apps.tasks import Play, Task

_LAZY = {
    **dict.fromkeys(("MAX_ITEMS", "MIN_ITEMS", "DemoApp", "Record", "Snapshot"), "workbench.apps.base"),
    **dict.fromkeys(
        ("APPS", "TASKS", "UnknownName", "get_app", "get_task", "match_task", "tasks_for"), "workbench.apps.registry"
    ),
    **dict.fromkeys(("Grade", "StateDiff", "diff", "grade"), "workbench.apps.state"),
    **dict.fromkeys(("Play", "Task"), "workbench.apps.tasks"),
}


__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "APPS",
    "APP_NAMES",
    "DEFAULT_PAGE_SIZE",
    "MAX_ITEMS",
    "MIN_ITEMS",
    "TASKS",
    "TIERS",
    "DemoApp",
    "Grade",
    "Play",
    "Record",
    "Snapshot",
    "StateDiff",
    "Task",
    "UnknownName",
    "diff",
    "get_app",
    "get_task",
    "grade",
    "match_task",
    "tasks_for",
]
