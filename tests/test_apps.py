"""The demo apps: seeding, pagination, errors, diffs, grading and the built-in tasks (references and plays)."""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Mapping
from typing import Any

import pytest
from pydantic_ai import ModelRetry

from workbench.apps import APPS, TASKS, DemoApp, Task, diff, grade, match_task, tasks_for
from workbench.apps.tasks import Call, ForEach, Let, Scan

APP_NAMES = list(APPS)

# Per app: a valid create call, an update call (tool, field, new value) applied to the first main record,
# and calls that must be refused. "ID" in an argument list stands for the first main record's id.
SPECS: dict[str, dict[str, Any]] = {
    "cart": {
        "create": (
            "create_cart_item",
            {
                "product": "Desk Lamp",
                "sku": "HOM-1234",
                "category": "Home",
                "color": "Black",
                "unit_price": 29.5,
                "quantity": 2,
            },
        ),
        "update": ("update_cart_item", "quantity", 42),
        "invalid": [
            ("update_cart_item", {"item_id": "ID", "quantity": 0}),
            ("update_cart_item", {"item_id": "ID"}),
        ],
    },
    "calendar": {
        "create": (
            "create_event",
            {
                "title": "Design review",
                "start": "2026-06-03T10:00",
                "end": "2026-06-03T11:00",
                "organizer": "Ada Okafor",
                "attendees": ["Ben Lindqvist"],
                "room": "Atlas",
            },
        ),
        "update": ("update_event", "title", "Renamed meeting"),
        "invalid": [
            ("update_event", {"event_id": "ID", "end": "2020-01-01T00:00"}),
            ("update_event", {"event_id": "ID", "room": "Nowhere"}),
            ("update_event", {"event_id": "ID", "start": "2026-13-01T10:00"}),
            (
                "create_event",
                {"title": "Sync", "start": "2026-06-03T10:00", "end": "2026-06-03T09:00", "organizer": "Ada Okafor"},
            ),
        ],
    },
    "chatroom": {
        "create": ("create_message", {"channel": "general", "author": "Ada Okafor", "text": "Hello there"}),
        "update": ("update_message", "text", "Edited text"),
        "invalid": [
            ("create_message", {"channel": "no-such-channel", "author": "Ada Okafor", "text": "Hi"}),
            ("create_message", {"channel": "general", "author": "Ada Okafor", "text": ""}),
            ("update_message", {"message_id": "ID"}),
            ("create_channel", {"name": "general"}),
        ],
    },
    "kanban": {
        "create": (
            "create_card",
            {"title": "Fix login flow", "column": "To do", "assignee": "Ada Okafor", "labels": ["bug"], "points": 3},
        ),
        "update": ("update_card", "title", "Something new"),
        "invalid": [
            ("update_card", {"card_id": "ID", "column": "Nowhere"}),
            ("update_card", {"card_id": "ID", "points": 4}),
            ("update_card", {"card_id": "ID", "due": "tomorrow"}),
            ("create_card", {"title": "X", "column": "Nowhere"}),
        ],
    },
    "inventory": {
        "create": (
            "create_product",
            {
                "sku": "HAR-99999",
                "name": "Hex Bolt M10",
                "category": "Hardware",
                "warehouse": "North",
                "supplier": "Acme Supply Co",
                "unit_cost": 0.4,
                "reorder_level": 50,
                "stock": 10,
            },
        ),
        "update": ("update_product", "stock", 123_456),
        "invalid": [
            ("update_product", {"product_id": "ID", "stock": -1}),
            ("update_product", {"product_id": "ID", "warehouse": "Moon"}),
            ("create_purchase_order", {"sku": "NOP-00001", "quantity": 10}),
            ("create_purchase_order", {"sku": "HAR-00001", "quantity": 0}),
        ],
    },
}

# Per task: other parameters that its prompt template, filled in, must be understood as.
VARIATIONS: dict[str, list[dict[str, Any]]] = {
    "cart/remove-expensive": [{"threshold": 75.0}, {"threshold": 19.99}],
    "cart/cap-quantity": [{"limit": 3}],
    "calendar/cancel-tentative": [{"day": "2026-06-22"}],
    "calendar/delete-cancelled": [{"day": "2026-05-20"}],
    "chatroom/pin-popular": [{"channel": "engineering", "reactions": 3}],
    "chatroom/clean-up-channel": [{"channel": "general", "day": "2026-05-20"}],
    "kanban/archive-done": [{"column": "Review", "person": "Ada Okafor"}, {"column": "In progress", "person": "Zoe"}],
    "kanban/label-overdue": [{"label": "late", "day": "2026-05-25"}],
    "inventory/reorder-low-stock": [{"quantity": 500}],
    "inventory/discontinue-low": [{"supplier": "Maple & Co", "threshold": 20}],
}

# Free-form rewordings: prompt -> (task id, parameters).
REWORDINGS = [
    ("Please cancel all tentative meetings before 2026-06-10", "calendar/cancel-tentative", {"day": "2026-06-10"}),
    ("remove all cancelled events that finished before 2026-05-25", "calendar/delete-cancelled", {"day": "2026-05-25"}),
    ("pin the messages in #support with 8 or more reactions", "chatroom/pin-popular", {"channel": "support"}),
    (
        "Delete every unpinned message in #design sent before 2026-05-10",
        "chatroom/clean-up-channel",
        {"day": "2026-05-10"},
    ),
    ("archive all cards assigned to Chloe Moreau in Done", "kanban/archive-done", {"person": "Chloe Moreau"}),
    ("Tag every card due before 2026-06-03 as at-risk", "kanban/label-overdue", {"label": "at-risk"}),
    ("Raise purchase orders of 150 units for every product below its reorder level", "inventory/reorder-low-stock", {}),
    ("discontinue all products supplied by Acme Supply Co with less than 10 units", "inventory/discontinue-low", {}),
]


def call(app: DemoApp, tool: str, *args: Any, **kwargs: Any) -> Any:
    tools = {function.__name__: function for function in app.tools()}
    return asyncio.run(tools[tool](*args, **kwargs))


def main_entity(app: DemoApp) -> str:
    return next(iter(app.entities))


def first_id(app: DemoApp, offset: int = 0) -> str:
    return list(app.rows[main_entity(app)])[offset]


# -- registry and seeding -------------------------------------------------------------------------


def test_registry_lists_every_app_in_order() -> None:
    assert APP_NAMES == ["cart", "calendar", "chatroom", "kanban", "inventory"]
    assert set(SPECS) == set(APPS)
    for name in APP_NAMES:
        assert len(tasks_for(name)) >= 2


@pytest.mark.parametrize("name", APP_NAMES)
def test_tools_are_single_item_and_typed(name: str) -> None:
    app = APPS[name](5)
    tools = app.tools()
    for function in tools:
        assert function.__name__.split("_")[0] in {"list", "get", "create", "update", "delete"}, function.__name__
        assert inspect.signature(function).return_annotation is not inspect.Signature.empty
        assert function.__doc__
    for entity in app.entities:
        assert f"list_{entity}" in app.tool_names()
    app.toolset()  # the schemas build


@pytest.mark.parametrize("name", APP_NAMES)
def test_seeding_is_deterministic(name: str) -> None:
    app_class = APPS[name]
    assert app_class(40, seed=1).snapshot() == app_class(40, seed=1).snapshot()
    assert app_class(40, seed=1).snapshot() != app_class(40, seed=2).snapshot()


@pytest.mark.parametrize("name", APP_NAMES)
@pytest.mark.parametrize("items", [1, 5, 500])
def test_seeding_counts(name: str, items: int) -> None:
    app = APPS[name](items)
    assert len(app.rows[main_entity(app)]) == items
    for entity, rows in app.rows.items():
        assert rows, f"{entity} is empty"
        assert all(record.id.startswith(app.id_prefixes[entity] + "-") for record in rows.values())


# -- pagination -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", APP_NAMES)
@pytest.mark.parametrize("items", [0, 1, 50, 51, 122])
def test_pagination(name: str, items: int) -> None:
    app = APPS[name](max(items, 1), page_size=50)
    entity = main_entity(app)
    if items == 0:
        app.rows[entity].clear()
    tool = f"list_{entity}"
    first = call(app, tool, page=1)
    assert (first.total, first.page, first.page_size) == (items, 1, 50)
    assert len(first.items) == min(items, 50)
    assert first.has_more == (items > 50)
    last_page = max(1, -(-items // 50))
    last = call(app, tool, page=last_page)
    assert not last.has_more
    assert len(last.items) == items - (last_page - 1) * 50
    seen = [item.id for page in range(1, last_page + 1) for item in call(app, tool, page=page).items]
    assert seen == list(app.rows[entity])
    for bad_page in (0, last_page + 1):
        with pytest.raises(ModelRetry):
            call(app, tool, page=bad_page)


# -- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", APP_NAMES)
def test_bad_ids_raise_model_retry(name: str) -> None:
    app = APPS[name](5)
    before = app.snapshot()
    checked = 0
    for function in app.tools():
        if function.__name__.split("_")[0] not in {"get", "update", "delete"}:
            continue
        id_param = next(iter(inspect.signature(function).parameters))
        assert id_param.endswith("_id")
        with pytest.raises(ModelRetry):
            asyncio.run(function(**{id_param: "missing-9999"}))
        checked += 1
    assert checked >= 2 * len(app.entities)
    assert app.snapshot() == before


@pytest.mark.parametrize("name", APP_NAMES)
def test_invalid_values_raise_model_retry(name: str) -> None:
    app = APPS[name](5)
    before = app.snapshot()
    for tool, kwargs in SPECS[name]["invalid"]:
        kwargs = {key: first_id(app) if value == "ID" else value for key, value in kwargs.items()}
        with pytest.raises(ModelRetry):
            call(app, tool, **kwargs)
    assert app.snapshot() == before


# -- diffs and grading ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", APP_NAMES)
def test_diff_reports_created_updated_deleted(name: str) -> None:
    app = APPS[name](5)
    entity = main_entity(app)
    start = app.snapshot()
    create_tool, create_args = SPECS[name]["create"]
    created = call(app, create_tool, **create_args)
    update_tool, field, value = SPECS[name]["update"]
    target, victim = first_id(app, 0), first_id(app, 1)
    id_param = next(iter(inspect.signature({f.__name__: f for f in app.tools()}[update_tool]).parameters))
    call(app, update_tool, **{id_param: target, field: value})
    call(app, f"delete_{create_tool.removeprefix('create_')}", **{id_param: victim})

    result = diff(start, app.snapshot())
    assert result.counts() == {"created": 1, "updated": 1, "deleted": 1}
    (new,) = result.created
    assert new["id"] == created.id
    assert {key: new["record"][key] for key in create_args} == create_args
    (changed,) = result.updated
    assert (changed["entity"], changed["id"]) == (entity, target)
    assert changed["changes"][field] == [start[entity][target][field], value]
    (gone,) = result.deleted
    assert (gone["entity"], gone["id"], gone["record"]) == (entity, victim, start[entity][victim])


@pytest.mark.parametrize("name", APP_NAMES)
def test_grade_flags_collateral_damage(name: str) -> None:
    task = tasks_for(name)[0]
    app_class = APPS[name]
    start = app_class(task.items, task.seed).snapshot()
    reference = app_class(task.items, task.seed)
    task.expected_state(reference)
    expected = reference.snapshot()
    assert grade(start, expected, expected).passed

    lazy = grade(start, expected, start)
    assert not lazy.passed and lazy.mismatches and not lazy.collateral

    changed = {record_id for change in diff(start, expected).to_dict().values() for record_id in _ids(change)}
    entity = main_entity(reference)
    bystander = next(record_id for record_id in start[entity] if record_id not in changed)
    del reference.rows[entity][bystander]
    careless = grade(start, expected, reference.snapshot())
    assert not careless.passed
    assert any(bystander in line for line in careless.collateral)


def _ids(changes: list[dict[str, Any]]) -> list[str]:
    return [change["id"] for change in changes]


# -- built-in tasks -------------------------------------------------------------------------------

TASK_IDS = list(TASKS)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_a_copy_of_a_seeded_app_is_a_fresh_instance_of_its_own(task_id: str) -> None:
    """The arms' instances and the expected end state are copies of one seeded app: a task played on a copy (it
    changes records and their lists in place, and creates records) ends as on a freshly seeded instance, and
    leaves the original as seeded."""
    task = TASKS[task_id]
    app_class = APPS[task.app]
    seeded = app_class(task.items, task.seed)
    fresh, copied = app_class(task.items, task.seed), seeded.copy()
    task.expected_state(fresh)
    task.expected_state(copied)
    assert copied.snapshot() == fresh.snapshot()
    assert seeded.snapshot() == app_class(task.items, task.seed).snapshot()
    assert copied.page_size == seeded.page_size and copied.seed == seeded.seed


@pytest.mark.parametrize("name", APP_NAMES)
def test_a_copy_shares_no_mutable_value_with_its_original(name: str) -> None:
    seeded = APPS[name](30)
    copied = seeded.copy()
    for records in copied.rows.values():
        for record in records.values():
            for value in vars(record).values():
                if isinstance(value, list):
                    value.append("changed in place")
        records.clear()
    assert seeded.snapshot() == APPS[name](30).snapshot()


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_reference_changes_the_start(task_id: str) -> None:
    task = TASKS[task_id]
    app_class = APPS[task.app]
    reference = app_class(task.items, task.seed)
    task.expected_state(reference)
    counts = diff(app_class(task.items, task.seed).snapshot(), reference.snapshot()).counts()
    assert sum(counts.values()) > 0


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_patterns_match_own_prompt_only(task_id: str) -> None:
    task = TASKS[task_id]
    prompt = task.prompt_for()
    found = next((m for p in task.patterns if (m := re.search(p, prompt, flags=re.IGNORECASE))), None)
    assert found is not None, "no pattern matches the default prompt"
    assert found.groupdict().keys() <= task.defaults.keys()
    for other in tasks_for(task.app):
        if other is not task:
            assert other.match(prompt) is None, f"{other.id} also matches"
    for params in VARIATIONS.get(task_id, []):
        assert task.match(task.prompt_for(params)) == {**task.defaults, **params}
        assert match_task(task.app, task.prompt_for(params)) == (task, {**task.defaults, **params})


@pytest.mark.parametrize(("prompt", "task_id", "params"), REWORDINGS)
def test_rewordings_are_understood(prompt: str, task_id: str, params: dict[str, Any]) -> None:
    task = TASKS[task_id]
    found = match_task(task.app, prompt)
    assert found is not None and found[0] is task
    assert params.items() <= found[1].items()


def run_play(task: Task, app: DemoApp, params: Mapping[str, Any]) -> str:
    """A tiny host-side runner of a task's play (what the scripted model does in the tool-calling arm)."""
    tools = {function.__name__: function for function in app.tools()}
    env: dict[str, Any] = dict(params)

    def value(expression: str, **extra: Any) -> Any:
        return eval(expression, {"__builtins__": __builtins__, **env, **extra})

    def invoke(tool: str, args: Mapping[str, str], **extra: Any) -> Any:
        result = asyncio.run(tools[tool](**{key: value(expr, **extra) for key, expr in args.items()}))
        return result.model_dump(mode="json")

    for step in task.play.steps:
        if isinstance(step, Scan):
            rows, page, more = [], 1, True
            while more:
                result = asyncio.run(tools[step.tool](page=page))
                rows += [item.model_dump(mode="json") for item in result.items]
                more, page = result.has_more, page + 1
            env[step.into] = rows
        elif isinstance(step, Let):
            env[step.name] = value(step.expr)
        elif isinstance(step, Call):
            env[step.into] = invoke(step.tool, step.args)
        elif isinstance(step, ForEach):
            env[step.into] = [invoke(step.tool, step.args, it=it) for it in value(step.over)]
    report = {name: value(expression) for name, expression in task.play.report.items()}
    return task.play.answer.format(**{**params, **report})


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_play_reaches_the_reference(task_id: str) -> None:
    task = TASKS[task_id]
    app_class = APPS[task.app]
    for params in [{}, *VARIATIONS.get(task_id, [])]:
        params = {**task.defaults, **params}
        start = app_class(task.items, task.seed).snapshot()
        reference = app_class(task.items, task.seed)
        task.expected_state(reference, params)
        played = app_class(task.items, task.seed)
        answer = run_play(task, played, params)
        result = grade(start, reference.snapshot(), played.snapshot())
        assert result.passed, result.mismatches[:5]
        assert answer
