"""``workbench bench``: sweeps over the task tiers (or a task file, a suite), with a report.

Heavy imports stay inside the commands, so ``workbench --help`` stays quick.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
from rich.console import Console

import workbench.apps as apps
from workbench.commands.export import sweep_page
from workbench.commands.options import (
    InputError,
    arm_choice,
    arms_option,
    base_url_option,
    case_sort_option,
    db_option,
    fail,
    json_option,
    max_tokens_option,
    model_option,
    open_store,
    otel_option,
    request_limit_option,
    stream_option,
)
from workbench.errors import EXIT_NOT_STORED
from workbench.signals import SignalStop, exit_code_for
from workbench.terminal import stdout_console

if TYPE_CHECKING:
    from workbench.bench import BenchCase, Sweep, SweepInfo, SweepOutcome
    from workbench.bench import Progress as SweepProgress
    from workbench.config import Settings
    from workbench.queue.enqueue import EnqueueInterrupted, QueuedSweep
    from workbench.queue.progress import SweepProgress as QueueProgress
    from workbench.runner import RunRequest
    from workbench.sources.taskfile import CustomTask
    from workbench.store import Store

TIERS = (*apps.TIERS, "all")
CHARTS = ("cost_usd", "wall_s", "input_tokens", "success", "all", "none")


@click.command()
@click.option("--tier", type=click.Choice(TIERS), default="all", show_default=True, help="Which tier to run.")
@click.option("--app", "app_name", type=str, help=f"Only this app's tasks: {', '.join(apps.APP_NAMES)}.")
@click.option("--task", "task_ids", multiple=True, metavar="ID", help="Only this task (repeatable).")
@click.option(
    "--tasks",
    "task_file",
    metavar="FILE",
    help="Run your own tasks instead of the tiers: a TOML (or .yaml) file of prompts on your MCP servers or toolset.",
)
@click.option("--suite", metavar="NAME", help="Run a suite's entries instead of the tiers: bfcl (`workbench suites`).")
@click.option(
    "--category",
    "categories",
    multiple=True,
    metavar="NAME",
    help="With --suite bfcl: the category to run (repeatable; default multi_turn_base).",
)
@click.option("--entries", metavar="RANGE", help="With --suite bfcl: entry numbers, e.g. 0-19 or 0-4,10 (default all).")
@model_option
@click.option("--tool-model", help="Model for the tool-calling arms (mode tool).")
@click.option("--code-model", help="Model for the code-mode arms (modes code and hybrid).")
@base_url_option
@arms_option
@click.option("--repeat", type=click.IntRange(1, 1000), default=1, show_default=True, help="Runs per task and size.")
@click.option("--seed", type=int, default=None, help="Seed for every task (default: each task's own).")
@click.option("--vary-seeds", is_flag=True, help="Repeat r runs on seed + r instead of the same data.")
@click.option("--items", type=int, default=None, help="Run every selected task at this item count.")
@click.option(
    "--concurrency", type=click.IntRange(1, 64), default=2, show_default=True, help="Comparisons run at once."
)
@request_limit_option
@stream_option
@max_tokens_option
@click.option(
    "--out", "out_path", type=str, metavar="FILE", help="Also write the report to FILE.md, .json, .csv or .html."
)
@click.option(
    "--resume",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[SWEEP_ID]",
    help="Skip runs that already finished (same task, items, seed, model, repeat). With --queue: --resume "
    "SWEEP_ID finishes enqueueing a sweep whose enqueue was interrupted (what is queued already stays once).",
)
@click.option(
    "--chart",
    type=click.Choice(CHARTS),
    default="cost_usd",
    show_default=True,
    help="What the scaling charts plot against item count (all: a grid of four).",
)
@click.option(
    "--bootstrap",
    "resamples",
    type=click.IntRange(100, 100_000),
    default=None,
    help="Bootstrap resamples for the confidence intervals (default: 2000; kept with the sweep, so its export "
    "and the TUI show the same intervals).",
)
@click.option("--list", "list_sweeps", is_flag=True, help="List stored sweeps instead of running one.")
@click.option(
    "--queue",
    "queued",
    is_flag=True,
    help="Enqueue the sweep's comparisons for `workbench worker` processes (on any machine with the same --db) "
    "and return at once, instead of running them here.",
)
@case_sort_option
@otel_option
@json_option
@db_option
def bench(
    tier: str,
    app_name: str | None,
    task_ids: tuple[str, ...],
    task_file: str | None,
    suite: str | None,
    categories: tuple[str, ...],
    entries: str | None,
    models: tuple[str, ...],
    tool_model: str | None,
    code_model: str | None,
    base_url: str | None,
    arms: str | None,
    repeat: int,
    seed: int | None,
    vary_seeds: bool,
    items: int | None,
    concurrency: int,
    request_limit: int | None,
    stream: bool | None,
    max_tokens: int | None,
    out_path: str | None,
    resume: str | None,
    chart: str,
    resamples: int | None,
    list_sweeps: bool,
    queued: bool,
    sort: str | None,
    otel: bool,
    as_json: bool,
    db: str | None,
) -> None:
    """Run the arms on every task of a tier, store every run, and print the report.

    Runs can be interrupted (Ctrl-C): finished runs are kept, and `--resume` skips them next time.
    """
    from workbench.bench import Sweep, format_for, plan, plan_custom, render
    from workbench.config import load_settings
    from workbench.runner import RunRequest
    from workbench.share.tracing import apply_otel_flag

    arm_names, model, arm_models = arm_choice(arms, models)
    resamples = resamples or default_resamples()
    if resume and not queued:
        raise InputError(
            f"--resume {resume} finishes enqueueing a queued sweep: give --queue too (for a sweep run here, "
            "give --resume alone with the same selection)"
        )
    settings = load_settings(base_url=base_url, request_limit=request_limit, stream=stream, max_tokens=max_tokens)
    store = open_store(db, settings)
    if list_sweeps:
        _list_sweeps(store, settings, as_json)
        return
    store.require_writable()
    if queued and resume is not None:
        _resume_enqueue(store, settings, resume, as_json)
        return
    if out_path is not None:
        format_for(out_path)  # a file name of no known format is refused before anything runs
    if sort is not None and as_json and (out_path is None or format_for(out_path) != "md"):
        raise InputError(f"--sort {sort} orders the case table of the terminal and Markdown reports; --json prints "
                         "the runs as data (give --out FILE.md, or drop --json)")  # fmt: skip
    custom_tasks: list[Any] = _custom_tasks(task_file, tier, app_name, task_ids, seed, vary_seeds, items)
    suite_manifest: dict[str, Any] = {}
    if suite is not None or categories or entries:
        custom_tasks, cases, suite_manifest = _suite_cases(suite, categories, entries, repeat, task_file)
    elif custom_tasks:
        cases = plan_custom([task.id for task in custom_tasks], repeat=repeat)
    else:
        cases = plan(tier, app=app_name, tasks=task_ids, repeat=repeat, seed=seed, vary_seeds=vary_seeds, items=items)
    apply_otel_flag(settings, otel)
    options = {
        "tier": tier, "app": app_name, "tasks": list(task_ids), "repeat": repeat, "seed": seed,
        "vary_seeds": vary_seeds, "items": items, "request_limit": settings.request_limit, "arms": list(arm_names),
        "resamples": resamples,
    }  # fmt: skip
    if task_file is not None:
        options = {"tasks_file": str(Path(task_file).expanduser().resolve()), "repeat": repeat,
                   "request_limit": settings.request_limit, "arms": list(arm_names)}  # fmt: skip
    if suite_manifest:
        options = {**suite_manifest, "repeat": repeat, "request_limit": settings.request_limit,
                   "arms": list(arm_names), "resamples": resamples}  # fmt: skip
    request = RunRequest(
        model=model or "scripted", arms=arm_names, arm_models=arm_models, tool_model=tool_model, code_model=code_model
    )
    err = Console(stderr=True, highlight=False)
    if queued:
        refused = {"--tasks": task_file, "--out": out_path, "--otel": otel, "--sort": sort}
        given = [name for name, value in refused.items() if value]
        if given:
            raise InputError(
                f"--queue returns before anything runs; {', '.join(given)} needs an in-process sweep "
                "(export a queued sweep's report with `workbench export SWEEP_ID`)"
            )
        flags = {"base_url": base_url, "request_limit": request_limit, "stream": stream, "max_tokens": max_tokens}
        _enqueue(store, cases, request, settings, options, flags, as_json, err, custom_tasks)
        return
    sweep = Sweep(
        cases, request=request, settings=settings, store=store, concurrency=concurrency, resume=resume == "",
        options=options, custom_tasks=custom_tasks,
    )  # fmt: skip
    stopper = SignalStop()
    outcome = _run_with_progress(sweep, err, stopper)  # BadInput (AppUnavailable: no arm could open an app) exits 2
    report = outcome.report(resamples=resamples)
    if as_json:
        click.echo(json.dumps(report.to_dict(), ensure_ascii=False))
    else:
        from workbench.bench import report_view

        out = stdout_console()
        out.print(
            report_view(report, chart_metric=chart, width=out.width, charts=chart != "none", sort=sort or "change")
        )
    if out_path is not None:
        target = Path(out_path).expanduser()
        target.parent.mkdir(parents=True, exist_ok=True)
        fmt = format_for(target)
        text = sweep_page(store, report) if fmt == "html" else render(report, fmt, sort=sort)
        target.write_text(text, encoding="utf-8")
        err.print(f"report written to {target}")
    if outcome.store_errors:
        others = len(outcome.store_errors) - 1
        more = f" (and {others} more)" if others else ""
        message = f"not everything was stored: {outcome.store_errors[0]}{more}"
        if not outcome.interrupted:
            fail(message, EXIT_NOT_STORED)
        with contextlib.suppress(OSError):  # a stopped sweep exits 130 / 143 / 129 all the same
            err.print(f"workbench: error: {message}", markup=False, highlight=False)
    if outcome.interrupted:
        left = len(cases) - len(outcome.results)
        why = "interrupted" if stopper.signum is None else f"stopped by {stopper.signal_name}"
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            err.print(
                f"workbench: {why}; {len(outcome.results)} finished runs are stored in sweep {outcome.sweep_id}, "
                f"{left} left: run the same command with --resume to finish them"
            )
        sys.exit(stopper.exit_code)


def _enqueue(
    store: Store,
    cases: list[BenchCase],
    request: RunRequest,
    settings: Settings,
    options: dict[str, object],
    flags: dict[str, object],
    as_json: bool,
    err: Console,
    suite_tasks: list[Any],
) -> None:
    from workbench.queue.enqueue import EnqueueInterrupted, QueueUnavailable, enqueue_sweep

    given = {key: value for key, value in flags.items() if value is not None}
    try:
        with _enqueue_progress(err) as on_enqueued:
            queued = enqueue_sweep(
                store, cases, request=request, settings=settings, options=options, flags=given,
                on_enqueued=on_enqueued, suite_tasks=suite_tasks,
            )  # fmt: skip
    except EnqueueInterrupted as stop:
        _interrupted(store, stop)
    except (QueueUnavailable, ValueError) as error:
        fail(str(error))
    _say_queued(store, queued, as_json, err)


def _say_queued(store: Store, queued: QueuedSweep, as_json: bool, err: Console) -> None:
    if as_json:
        click.echo(json.dumps({"sweep_id": queued.sweep_id, "model": queued.model, "planned": queued.planned,
                               "added": queued.added, "queues": queued.queues}))  # fmt: skip
        return
    db = _db_argument(store)
    queues = ", ".join(f"{name} ({count})" for name, count in sorted(queued.queues.items()))
    plural = "" if queued.planned == 1 else "s"
    already = queued.planned - queued.added
    note = f" ({already} of them already were, {queued.added} added)" if already else ""
    click.echo(f"{queued.sweep_id}: {queued.planned} comparison{plural} queued on {queues}{note}")
    err.print(
        f"start workers (on any machine that reaches the database): workbench worker{db}\n"
        f"watch it: workbench bench --list{db}\n"
        f"its report, partial until it finishes: workbench export {queued.sweep_id}{db} --format md",
        markup=False,
        soft_wrap=True,  # commands to copy: never broken across lines
    )


def _interrupted(store: Store, stop: EnqueueInterrupted) -> NoReturn:
    """The sweep is recorded and part of it queued: say so, and the command that queues the rest."""
    import signal

    why = "interrupted" if stop.signum == signal.SIGINT else f"stopped by {signal.Signals(stop.signum).name}"
    with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
        click.echo(
            f"workbench: {why}; sweep {stop.sweep_id} has {stop.queued} of {stop.planned} comparisons queued; "
            f"queue the rest with: workbench bench --queue --resume {stop.sweep_id}{_db_argument(store)}",
            err=True,
        )
    sys.exit(exit_code_for(stop.signum))


def _resume_enqueue(store: Store, settings: Settings, sweep_id: str, as_json: bool) -> None:
    """Enqueue what an interrupted ``bench --queue`` left out, from the sweep as recorded (its selection,
    models, arms and settings); the selection flags of the command line are not used, so none may be given."""
    from workbench.bench import PlanError, SweepStore, plan
    from workbench.config import ConfigError
    from workbench.queue.enqueue import REQUEST_OPTION, EnqueueInterrupted, QueueUnavailable, enqueue_sweep
    from workbench.runner import BadInput, RunRequest

    context = click.get_current_context()
    given = [
        f"--{name.replace('_', '-')}" for name, value in context.params.items()
        if name not in ("queued", "resume", "as_json", "db") and value not in (None, False, ())
        and context.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
    ]  # fmt: skip
    if not sweep_id:
        raise InputError("--queue --resume needs the sweep id, as the interrupted enqueue printed it: "
                         "workbench bench --queue --resume SWEEP_ID")  # fmt: skip
    if given:
        raise InputError(f"--queue --resume {sweep_id} enqueues the sweep as it was recorded; drop {', '.join(given)}")
    log = SweepStore(store)
    info = log.sweep(log.resolve_id(sweep_id))
    shared = info.options.get(REQUEST_OPTION)
    if not info.options.get("queued"):
        raise InputError(f"sweep {info.id} ran in its own process, not on the queue; bench --resume (without "
                         "--queue) and the same selection skip its finished runs")  # fmt: skip
    if not isinstance(shared, dict):
        raise InputError(f"sweep {info.id} was recorded by an earlier workbench that kept no record of its "
                         "request; enqueue its selection again as a new sweep")  # fmt: skip
    recorded_version, version = info.options.get("code_version"), _code_version()
    if recorded_version and recorded_version != version:
        raise InputError(f"sweep {info.id} was enqueued by code version {recorded_version} and this is {version}: "
                         "its comparisons would run on two versions' workers; resume it from that code")  # fmt: skip
    options = info.options
    suite_tasks: list[Any] = []
    try:
        if options.get("suite"):  # a suite's entries, chosen again as recorded
            suite_tasks, cases, _ = _suite_cases(
                str(options["suite"]), tuple(options.get("categories") or ()), options.get("entries"),
                options.get("repeat") or 1, None,
            )  # fmt: skip
        else:
            cases = plan(
                options.get("tier") or "all", app=options.get("app"), tasks=options.get("tasks") or (),
                repeat=options.get("repeat") or 1, seed=options.get("seed"),
                vary_seeds=bool(options.get("vary_seeds")), items=options.get("items"),
            )  # fmt: skip
        settings = settings.with_flags(**(shared.get("settings") or {}))
    except (PlanError, ConfigError) as error:
        raise InputError(f"sweep {info.id} cannot be planned again: {error}") from None
    if len(cases) != info.planned:
        raise InputError(f"sweep {info.id} was planned with {info.planned} comparisons; this workbench plans "
                         f"{len(cases)} from its selection, so it cannot finish enqueueing it")  # fmt: skip
    request = RunRequest.from_dict({key: value for key, value in shared.items() if key != "settings"})
    err = Console(stderr=True, highlight=False)
    try:
        with _enqueue_progress(err) as on_enqueued:
            queued = enqueue_sweep(
                store, cases, request=request, settings=settings, options=options,
                flags=shared.get("settings") or {}, sweep_id=info.id, on_enqueued=on_enqueued,
                suite_tasks=suite_tasks,
            )  # fmt: skip
    except BadInput as error:
        raise InputError(f"sweep {info.id} cannot be enqueued here: {error}") from None
    except EnqueueInterrupted as stop:
        _interrupted(store, stop)
    except (QueueUnavailable, ValueError) as error:
        fail(str(error))
    _say_queued(store, queued, as_json, err)


@contextlib.contextmanager
def _enqueue_progress(err: Console) -> Iterator[Callable[[int, int], None]]:
    """A transient bar on stderr while comparisons are put on the queue (thousands take a while)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if not err.is_terminal:
        yield lambda added, total: None
        return
    columns = (TextColumn("[bold]enqueue[/]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        bar = progress.add_task("enqueue", total=None)

        def on_enqueued(added: int, total: int) -> None:
            progress.update(bar, completed=added, total=total)

        yield on_enqueued


def _db_argument(store: Store) -> str:
    """`` --db TARGET`` for the commands a user runs next: a URL without its password (a ``***`` in its place
    would be sent as the password; without one, libpq takes PGPASSWORD or ~/.pgpass)."""
    return f" --db {store.path if store.path is not None else store.key}"


def _custom_tasks(
    task_file: str | None,
    tier: str,
    app_name: str | None,
    task_ids: tuple[str, ...],
    seed: int | None,
    vary_seeds: bool,
    items: int | None,
) -> list[CustomTask]:
    """The task file's tasks (none without ``--tasks``); the tier selection does not apply to them."""
    if task_file is None:
        return []
    selection = {
        "--tier": tier != "all", "--app": app_name, "--task": task_ids, "--seed": seed is not None,
        "--vary-seeds": vary_seeds, "--items": items is not None,
    }  # fmt: skip
    given = [name for name, value in selection.items() if value]
    if given:
        raise InputError(f"--tasks runs the file's tasks; {', '.join(given)} select(s) built-in tasks")
    from workbench.sources.taskfile import load_task_file

    return load_task_file(task_file)


def _suite_cases(
    suite: str | None,
    categories: tuple[str, ...],
    entries: str | None,
    repeat: int,
    task_file: str | None,
) -> tuple[list[Any], list[BenchCase], dict[str, Any]]:
    """``--suite bfcl [--category ...] [--entries ...]``: each entry as a task on its own source, one case per
    entry and repeat with the category as its tier (the report's per-category table), and the manifest."""
    from workbench.bench import BenchCase
    from workbench.suites import bfcl_plan

    if suite is None:
        raise InputError("--category and --entries choose a suite's entries: give --suite bfcl too")
    if task_file is not None:
        raise InputError(f"--suite {suite} runs the suite's own tasks; drop --tasks")
    bfcl_plan.check_suite(suite)
    selected = bfcl_plan.select(categories, entries)
    manifest = bfcl_plan.manifest(categories, entries)
    tasks = [bfcl_plan.suite_task(entry) for entry in selected]
    cases = [
        BenchCase(entry.category, task.id, 0, 0, index)
        for entry, task in zip(selected, tasks, strict=True)
        for index in range(repeat)
    ]
    return tasks, cases, manifest


def _run_with_progress(sweep: Sweep, err: Console, stopper: SignalStop) -> SweepOutcome:
    """Run the sweep under a Rich progress bar on stderr (stdout stays clean for --json); SIGTERM and SIGHUP
    interrupt it as Ctrl+C does."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    failed = 0
    columns = (
        SpinnerColumn(),
        TextColumn("[bold]bench[/] {task.description}", markup=True),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[note]}"),
    )
    with Progress(*columns, console=err, transient=True) as progress:
        bar = progress.add_task(f"{sweep.model_label}", total=len(sweep.cases), note="")

        def on_progress(step: SweepProgress) -> None:
            nonlocal failed
            if step.kind == "started":
                progress.update(bar, description=f"{sweep.model_label} · {step.case.label()}")
                return
            if step.result is not None and not all(arm.succeeded for arm in step.result.arms.values()):
                failed += 1
            reused = " (reused)" if step.kind == "reused" else ""
            progress.update(bar, completed=step.done, note=f"{failed} with a failed arm{reused}" if failed else reused)

        sweep.on_progress = on_progress
        outcome = stopper.run(sweep.run())
    err.print(
        f"sweep {outcome.sweep_id}: {len(outcome.results)} of {len(sweep.cases)} runs finished"
        + (f" ({outcome.reused} reused)" if outcome.reused else "")
    )
    return outcome


def _list_sweeps(store: Store, settings: Settings, as_json: bool) -> None:
    from rich.table import Table

    from workbench.bench import SweepStore

    infos = SweepStore(store).sweeps(limit=200)
    progress = _queue_progress(store, infos, settings)
    if as_json:
        listed = [
            {**info.to_dict(), **({"queue": progress[info.id].to_dict()} if info.id in progress else {})}
            for info in infos
        ]
        click.echo(json.dumps(listed, ensure_ascii=False))
        return
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for column in ("sweep", "created", "model", "tier", "runs", "status", "selection"):
        table.add_column(column, no_wrap=column == "sweep")
    for info in infos:
        hidden = {
            "concurrency": info.options.get("concurrency"), "request_limit": 50, "repeat": 1,
            "resamples": default_resamples(), "queued": True,
        }  # fmt: skip
        selection = " ".join(
            f"{key}={value}"
            for key, value in info.options.items()
            if value not in (None, [], False) and hidden.get(key, ...) != value and key not in (*_QUEUE_RECORD, "tier")
        )
        table.add_row(
            info.id, info.created.astimezone().strftime("%Y-%m-%d %H:%M"), info.model, _sweep_tier(info),
            f"{info.finished_runs}/{info.planned}", info.status, selection,
        )  # fmt: skip
    out = stdout_console()
    out.print(table)
    db = _db_argument(store)
    own = _code_version() if progress else ""
    for sweep_id, found in progress.items():
        enqueued = sum(found.counts.values())
        if enqueued < found.planned:
            out.print(
                f"{sweep_id}: {enqueued} of {found.planned} comparisons enqueued; if its enqueue was interrupted, "
                f"queue the rest with: workbench bench --queue --resume {sweep_id}{db}",
                markup=False, soft_wrap=True,
            )  # fmt: skip
        if found.counts["queued"] + found.counts["running"] == 0:
            continue
        version = next((info.options.get("code_version") for info in infos if info.id == sweep_id), None)
        code = f" · code {version}" if version else ""
        if version and version != own:
            code += f" (not this checkout's {own}: only workers of its version run it)"
        out.print(f"{sweep_id}: {found.line()}{code}", markup=False, soft_wrap=True)
        for line in found.worker_lines():
            out.print(f"  {line}", markup=False)


def _sweep_tier(info: SweepInfo) -> str:
    """The tier a sweep ran (``all``: every tier), or ``tasks file`` for a sweep of the user's own tasks."""
    if "tasks_file" in info.options:
        return "tasks file"
    return str(info.options.get("tier") or "–")


_QUEUE_RECORD = ("enqueue", "code_version")
"""Sweep options a queued sweep keeps for its workers and its resume, not part of its selection."""


def _code_version() -> str:
    from workbench.queue.system_db import application_version

    return application_version()


def _queue_progress(store: Store, infos: list[SweepInfo], settings: Settings) -> dict[str, QueueProgress]:
    """Queued sweeps' progress per state and worker (empty, without loading the queue, when none is queued)."""
    if not any(info.options.get("queued") for info in infos):
        return {}
    from workbench.queue.progress import queue_progress

    return queue_progress(store, infos, settings.queue)


def default_resamples() -> int:
    from workbench.bench.stats import DEFAULT_RESAMPLES

    return DEFAULT_RESAMPLES
