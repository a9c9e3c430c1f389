"""The demo apps and their built-in tasks, by name."""

from __future__ import annotations

from apps import calendar, cart, chatroom, inventory, kanban
from apps.base import DemoApp
from apps.tasks import Task
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
