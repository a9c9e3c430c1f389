"""The task catalog: counts per tier, prompts that only match themselves, references that do something,
plays that reach the references on the host, and every task passed by the scripted model in both arms
through the real engine at a small item count."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Mapping
from functools import cache
from typing import Any

import pytest
from click.testing import CliRunner

import workbench
from workbench.apps import APPS, TASKS, DemoApp, Task, diff, grade, match_task, tasks_for
from workbench.apps.catalog import SCALING_SIZES, item_counts, task_rows
from workbench.apps.tasks import Call, ForEach, Let, Scan
from workbench.cli import cli
from workbench.scripted.player import evaluate

TASK_IDS = list(TASKS)
SMALL_COUNTS = (20, 40, 60, 100, 150, 200)
"""Item counts tried, smallest first, for the engine check: the first at which the task changes something."""

# Other parameters each new task's prompt template, filled in, must be understood as (and played with).
VARIATIONS: dict[str, list[dict[str, Any]]] = {
    "cart/save-category": [{"category": "Home"}],
    "cart/wrap-category": [{"category": "Toys"}],
    "cart/restore-saved": [{"price": 45.0}],
    "cart/remove-color": [{"color": "Navy"}],
    "cart/one-more": [{"category": "Kitchen"}],
    "cart/clear-old": [{"day": "2026-04-01"}],
    "cart/prune-saved": [{"day": "2026-05-01"}],
    "cart/trim-category": [{"limit": 3, "category": "Home"}],
    "cart/stale-to-saved": [{"day": "2026-05-01"}],
    "cart/wrap-pricey": [{"price": 75.0}],
    "calendar/confirm-window": [{"first": "2026-06-08", "last": "2026-06-14"}],
    "calendar/move-room": [{"room": "Birch", "day": "2026-06-10", "target": "Cedar"}],
    "calendar/push-back": [{"day": "2026-06-10"}],
    "calendar/add-attendee": [{"person": "Ben Lindqvist", "title": "Sprint planning"}],
    "calendar/cancel-organizer": [{"person": "Dev Patel", "day": "2026-06-15"}],
    "calendar/drop-attendee": [{"person": "Ada Okafor", "day": "2026-06-08"}],
    "calendar/rename-meetings": [{"old": "Retro", "new": "Retrospective"}],
    "calendar/book-roomless": [{"room": "Cedar", "day": "2026-06-10"}],
    "calendar/close-room": [{"room": "Cedar", "target": "Birch"}],
    "calendar/tidy-up": [{"day": "2026-06-05", "until": "2026-06-20"}],
    "calendar/offboard": [{"person": "Ines Silva", "day": "2026-06-10"}],
    "calendar/invite-upcoming": [{"person": "Ben Lindqvist", "day": "2026-06-10"}],
    "chatroom/unpin-old": [{"day": "2026-05-20"}],
    "chatroom/delete-from-person": [{"person": "Liam Costa"}],
    "chatroom/answer-questions": [
        {"person": "Grace Kim", "channel": "engineering", "day": "2026-05-25", "reply": "good question, checking now"}
    ],
    "chatroom/archive-quiet": [{"count": 3, "day": "2026-05-25"}],
    "chatroom/replace-word": [{"old": "Friday", "new": "Monday"}],
    "chatroom/delete-repeats": [{"channel": "random"}],
    "chatroom/announce": [{"text": "Lunch is on us today!", "person": "Grace Kim"}],
    "chatroom/redact": [{"word": "VPN", "replacement": "[removed]"}],
    "chatroom/retire-channel": [{"channel": "design", "target": "engineering"}],
    "chatroom/retention": [{"day": "2026-05-20", "keep": "incidents"}],
    "kanban/reassign": [{"person": "Chloe Moreau", "new": "Ada Okafor"}],
    "kanban/pull-due-soon": [{"day": "2026-06-08"}],
    "kanban/assign-unowned": [{"person": "Farid Haddad"}],
    "kanban/cap-points": [{"points": 5}],
    "kanban/archive-old-done": [{"day": "2026-05-20"}],
    "kanban/relabel": [{"old": "docs", "new": "documentation"}],
    "kanban/enforce-wip": [{"limit": 6}],
    "kanban/reschedule-overdue": [{"day": "2026-05-25", "new_day": "2026-06-30"}],
    "kanban/qa-column": [{"column": "Testing", "limit": 8}],
    "kanban/tag-open": [{"label": "q4"}],
    "inventory/move-warehouse": [{"category": "Safety", "source": "North", "target": "South"}],
    "inventory/switch-supplier": [{"old": "Maple & Co", "new": "Summit Parts"}],
    "inventory/raise-reorder-level": [{"category": "Office", "level": 100}],
    "inventory/send-drafts": [{"day": "2026-05-10"}],
    "inventory/new-cost": [{"name": "Packing Tape", "cost": 2.15}],
    "inventory/close-warehouse": [{"source": "East", "target": "West"}],
    "inventory/reconcile": [{"quantity": 150}],
    "inventory/supplier-exit": [{"old": "Summit Parts", "new": "Acme Supply Co"}],
    "inventory/reorder-floor": [{"level": 100}],
}


def changes(task: Task, items: int, params: Mapping[str, Any] | None = None) -> int:
    """How many records the task's reference creates, updates or deletes at this item count."""
    app_class = APPS[task.app]
    reference = app_class(items, task.seed)
    task.expected_state(reference, params)
    return sum(diff(app_class(items, task.seed).snapshot(), reference.snapshot()).counts().values())


@cache
def small_count(task_id: str) -> int:
    """The smallest item count at which the task changes something (scaling rules: their smallest size)."""
    task = TASKS[task_id]
    candidates = task.sizes or (*(n for n in SMALL_COUNTS if n < task.items), task.items)
    return next(n for n in candidates if changes(task, n))


def play_on_host(task: Task, app: DemoApp, params: Mapping[str, Any]) -> str:
    """Run a play straight against the tools, with the scripted model's own expression evaluator."""
    tools = {function.__name__: function for function in app.tools()}
    env: dict[str, Any] = dict(params)
    loop = asyncio.new_event_loop()

    def invoke(tool: str, args: Mapping[str, str], **extra: Any) -> Any:
        values = {key: evaluate(expr, {**env, **extra}) for key, expr in args.items()}
        return loop.run_until_complete(tools[tool](**values)).model_dump(mode="json")

    try:
        for step in task.play.steps:
            if isinstance(step, Scan):
                rows, page, more = [], 1, True
                while more:
                    result = loop.run_until_complete(tools[step.tool](page=page))
                    rows += [item.model_dump(mode="json") for item in result.items]
                    more, page = result.has_more, page + 1
                env[step.into] = rows
            elif isinstance(step, Let):
                env[step.name] = evaluate(step.expr, env)
            elif isinstance(step, Call):
                env[step.into] = invoke(step.tool, step.args)
            elif isinstance(step, ForEach):
                env[step.into] = [invoke(step.tool, step.args, it=it) for it in evaluate(step.over, env)]
        report = {name: evaluate(expression, env) for name, expression in task.play.report.items()}
    finally:
        loop.close()
    return task.play.answer.format(**{**params, **report})


# -- counts and listings ---------------------------------------------------------------------------


def test_catalog_counts_per_tier() -> None:
    tiers = Counter(task.tier for task in TASKS.values())
    assert tiers == {"everyday": 50, "long": 12, "scaling": 5}
    for app in APPS:
        assert len(tasks_for(app, "everyday")) == 10, app
        assert len(tasks_for(app, "scaling")) == 1, app
        assert len(tasks_for(app, "long")) >= 2, app
    runs = sum(len(item_counts(task)) for task in tasks_for(tier="scaling"))
    assert runs == 25
    for task in tasks_for(tier="scaling"):
        assert task.sizes == SCALING_SIZES and task.items in task.sizes
    for task in tasks_for(tier="long"):
        assert 60 <= task.items <= 500, task.id
    assert len({task.prompt_for() for task in TASKS.values()}) == len(TASKS)


@pytest.mark.parametrize("tier", ["everyday", "long", "scaling"])
def test_tasks_command_lists_a_tier(tier: str) -> None:
    result = CliRunner().invoke(cli, ["tasks", "--tier", tier, "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert rows == task_rows(tasks_for(tier=tier))
    assert {row["tier"] for row in rows} == {tier}
    expected = {"everyday": 50, "long": 12, "scaling": 25}[tier]
    assert len(rows) == expected
    if tier == "scaling":
        by_task = Counter(row["id"] for row in rows)
        assert set(by_task.values()) == {5}
        assert sorted({row["items"] for row in rows}) == list(SCALING_SIZES)


# -- prompts ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_prompt_matches_itself_only(task_id: str) -> None:
    task = TASKS[task_id]
    prompt = task.prompt_for()
    assert any(re.search(pattern, prompt, flags=re.IGNORECASE) for pattern in task.patterns), "no pattern matches"
    for other in tasks_for(task.app):
        if other is not task:
            assert other.match(prompt) is None, f"{other.id} also matches"
    assert match_task(task.app, prompt) == (task, dict(task.defaults))
    for params in VARIATIONS.get(task_id, []):
        wanted = {**task.defaults, **params}
        assert match_task(task.app, task.prompt_for(params)) == (task, wanted)


FIRST_TASKS = {
    "cart/remove-expensive", "cart/cap-quantity", "calendar/cancel-tentative", "calendar/delete-cancelled",
    "chatroom/pin-popular", "chatroom/clean-up-channel", "kanban/archive-done", "kanban/label-overdue",
    "inventory/reorder-low-stock", "inventory/discontinue-low",
}  # fmt: skip
"""The first built-in tasks, whose variations and rewordings tests/test_apps.py checks."""


def test_every_parameterised_task_has_a_variation() -> None:
    for task in TASKS.values():
        if task.defaults and task.id not in FIRST_TASKS:
            assert task.id in VARIATIONS, task.id


# -- references and plays --------------------------------------------------------------------------


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reference_changes_the_start_at_every_count(task_id: str) -> None:
    task = TASKS[task_id]
    for items in item_counts(task):
        assert changes(task, items) > 0, f"nothing to do at {items} items"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_play_reaches_the_reference_on_the_host(task_id: str) -> None:
    task = TASKS[task_id]
    app_class = APPS[task.app]
    counts = sorted({small_count(task_id), *item_counts(task)})
    cases = [(items, {}) for items in counts] + [(task.items, params) for params in VARIATIONS.get(task_id, [])]
    for items, extra in cases:
        params = {**task.defaults, **extra}
        start = app_class(items, task.seed).snapshot()
        reference = app_class(items, task.seed)
        task.expected_state(reference, params)
        played = app_class(items, task.seed)
        answer = play_on_host(task, played, params)
        verdict = grade(start, reference.snapshot(), played.snapshot())
        assert verdict.passed, (items, extra, verdict.mismatches[:5])
        assert answer and "{" not in answer


# -- through the real engine ---------------------------------------------------------------------


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_scripted_model_passes_both_arms(task_id: str) -> None:
    items = small_count(task_id)
    comparison = workbench.compare_sync(task=task_id, items=items, db=False)
    for name, arm in comparison.arms.items():
        summary = arm.summary
        assert summary.status == "completed", (name, summary.error)
        assert summary.passed, (name, items, summary.mismatches[:5], summary.output)
    tool, code = comparison.arms["tool"].summary, comparison.arms["code"].summary
    assert code.snippets == 1 and code.inner_calls == tool.tool_calls
    assert tool.output == code.output
