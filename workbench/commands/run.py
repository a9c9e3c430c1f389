"""``workbench run`` (one comparison, headless, printed or as JSON) and ``workbench tasks`` (what it can run)."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any

import click

import workbench.apps as apps
from workbench.commands.options import (
    InputError,
    arm_choice,
    arms_option,
    base_url_option,
    db_option,
    fail,
    json_option,
    max_tokens_option,
    model_option,
    open_store,
    otel_option,
    request_limit_option,
    stdout,
    stream_option,
    width_option,
)
from workbench.commands.sources import app_source_options
from workbench.commands.suites import suite_entry, suite_options
from workbench.errors import EXIT_NOT_STORED
from workbench.signals import SignalStop, Stopped, skip_final_collection


@click.command()
@click.argument("prompt", required=False)
@click.option("--app", "app_name", type=str, help=f"Demo app: {', '.join(apps.APP_NAMES)}.")
@click.option("--items", type=int, help="Records to seed (default: the task's, or 50).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for the demo data.")
@click.option("--task", "task_id", type=str, help="Built-in task id (app/slug); its prompt is used when none is given.")
@click.option(
    "--turn",
    "turns",
    multiple=True,
    metavar="TEXT",
    help="A follow-up user turn after PROMPT (repeat for more; without PROMPT the first --turn opens the "
    "conversation). Each arm answers the turns in order on the same app state, keeping its history.",
)
@suite_options
@model_option
@click.option("--tool-model", help="Model for the tool-calling arms (mode tool).")
@click.option("--code-model", help="Model for the code-mode arms (modes code and hybrid).")
@base_url_option
@arms_option
@request_limit_option
@stream_option
@max_tokens_option
@app_source_options
@otel_option
@json_option
@width_option
@db_option
def run(
    prompt: str | None,
    app_name: str | None,
    items: int | None,
    seed: int,
    task_id: str | None,
    turns: tuple[str, ...],
    suite: str | None,
    entry_id: str | None,
    models: tuple[str, ...],
    tool_model: str | None,
    code_model: str | None,
    base_url: str | None,
    arms: str | None,
    request_limit: int | None,
    stream: bool | None,
    max_tokens: int | None,
    source: Any,
    otel: bool,
    as_json: bool,
    width: int | None,
    db: str | None,
) -> None:
    """Run PROMPT (or --task) against each arm, headless, and print the comparison.

    The app is a demo app (--app / --task) or your own: MCP servers (--mcp) or a Python toolset (--toolset).
    With --turn the run is a conversation: PROMPT, then each --turn, answered in order on the same state.
    """
    from workbench.config import load_settings
    from workbench.printer import comparison_view
    from workbench.runner import ComparisonRun, RunRequest, prepare
    from workbench.share.tracing import apply_otel_flag

    arm_names, model, arm_models = arm_choice(arms, models)
    conversation = ((prompt,) if prompt else ()) + turns if turns else ()
    entry: dict[str, Any] = {"prompt": None if conversation else prompt, "turns": conversation, "source": source}
    if suite is not None or entry_id is not None:
        given = {"PROMPT": prompt, "--turn": turns or None, "--app": app_name, "--task": task_id, "--items": items,
                 "--mcp/--toolset": source}  # fmt: skip
        entry = suite_entry(suite, entry_id, [name for name, value in given.items() if value is not None])
    settings = load_settings(
        model=model, base_url=base_url, request_limit=request_limit, stream=stream, max_tokens=max_tokens
    )
    apply_otel_flag(settings, otel)
    request = RunRequest(
        app=app_name, items=items, seed=seed, task=task_id, arms=arm_names, arm_models=arm_models,
        tool_model=tool_model, code_model=code_model, **entry,
    )  # fmt: skip
    setup = prepare(request, settings=settings)
    store = open_store(db, settings)
    store.require_writable()
    comparison_run = ComparisonRun(setup, store)
    stopper = SignalStop(on_second=comparison_run.abandon)
    try:
        comparison = stopper.run(comparison_run.result())
    except (KeyboardInterrupt, Stopped) as stop:
        why = str(stop) if isinstance(stop, Stopped) else "cancelled"
        stopped = comparison_run.comparison
        saved = f"not fully stored: {stopped.store_error}" if stopped.store_error is not None else "saved as cancelled"
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            click.echo(f"workbench: {why}; session {stopped.session_id} {saved}", err=True)
        skip_final_collection()
        sys.exit(stopper.exit_code)
    if as_json:
        click.echo(json.dumps(comparison.to_dict(), ensure_ascii=False))
    else:
        stdout(width).print(comparison_view(comparison))
    if comparison.store_error is not None:
        fail(f"session {comparison.session_id} was not fully stored: {comparison.store_error}", EXIT_NOT_STORED)


@click.command()
@click.option("--app", "app_name", type=str, help="Only this app's tasks.")
@click.option("--tier", type=str, help=f"Only this tier: {', '.join(apps.TIERS)}.")
@json_option
@width_option
def tasks(app_name: str | None, tier: str | None, as_json: bool, width: int | None) -> None:
    """List the built-in tasks."""
    from workbench.printer import tasks_table

    if app_name is not None and app_name not in apps.APP_NAMES:
        raise InputError(f"unknown app {app_name!r}; choose one of: {', '.join(apps.APP_NAMES)}")
    if tier is not None and tier not in apps.TIERS:
        raise InputError(f"unknown tier {tier!r}; choose one of: {', '.join(apps.TIERS)}")
    selected = apps.tasks_for(app_name, tier)
    if as_json:
        from workbench.apps.catalog import task_rows

        click.echo(json.dumps(task_rows(selected), ensure_ascii=False))
    else:
        stdout(width).print(tasks_table(selected))
