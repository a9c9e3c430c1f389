"""The demo apps and their built-in tasks, by name."""

from __future__ import annotations

import functools
import inspect
import re

from workbench.apps import calendar, cart, chatroom, inventory, kanban
from workbench.apps.base import DemoApp
from workbench.apps.tasks import Task
from workbench.errors import BadInput

_MODULES = (cart, calendar, chatroom, kanban, inventory)
APPS: dict[str, type[DemoApp]] = {module.APP.name: module.APP for module in _MODULES}
TASKS: dict[str, Task] = {task.id: task for module in _MODULES for task in module.TASKS}


class UnknownName(BadInput, LookupError):
    """An app or task name that does not exist; the message lists the ones that do."""


def get_app(name: str) -> type[DemoApp]:
    try:
        return APPS[name]
    except KeyError:
        raise UnknownName(f"unknown app {name!r}; choose one of: {', '.join(APPS)}") from None


def get_task(task_id: str) -> Task:
    try:
        return TASKS[task_id]
    except KeyError:
        raise UnknownName(f"unknown task {task_id!r}; run `workbench tasks` to list them") from None


def tasks_for(app: str | None = None, tier: str | None = None) -> list[Task]:
    return [t for t in TASKS.values() if (app is None or t.app == app) and (tier is None or t.tier == tier)]


def match_task(app: str, prompt: str) -> tuple[Task, dict[str, object]] | None:
    """The built-in task (and its parameters) that this prompt asks for on this app, if any."""
    for task in tasks_for(app):
        params = task.match(prompt)
        if params is not None:
            return task, params
    return None


@functools.cache
def checked_fields(task_id: str) -> tuple[str, ...]:
    """The record fields a built-in task's rule reads (``unit_price`` for cart/remove-expensive), in the order the
    rule first names them: what a diff of its end state shows first. Read from the rule's own source (its
    attribute accesses), so it never drifts from what is graded; ``()`` for a task that is not built in."""
    task = TASKS.get(task_id)
    if task is None:
        return ()
    try:
        source = inspect.getsource(task.expected)
    except (OSError, TypeError):
        return ()
    names = re.findall(r"\.([a-z_][a-z0-9_]*)\b(?!\s*\()", source)
    return tuple(dict.fromkeys(name for name in names if name not in ("id", "rows")))
