"""The ``workbench`` command: the TUI by default, and headless subcommands.

Exit codes: 0 when the command did its job, 2 for bad input (one line on stderr, no traceback), 1 for an
internal failure, 3 when a run finished but its session could not be fully stored (its events went to a
fallback file that ``workbench import`` stores) or, for ``import``, when the database refused a file, 130
after Ctrl+C, 143 after SIGTERM and 129 after SIGHUP (the session saved as cancelled).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

import workbench.apps as apps
from workbench.commands.bench import bench, export
from workbench.commands.config import config_command, locate_command
from workbench.commands.decide import diff_command, gate_command
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
    otel_option,
    request_limit_option,
    stream_option,
    width_option,
)
from workbench.commands.serve_app import serve_app
from workbench.commands.sources import app_source_options
from workbench.commands.suites import suite_entry, suite_options, suites_command
from workbench.commands.worker import worker
from workbench.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_NOT_STORED, WorkbenchError, is_text
from workbench.signals import SignalStop, Stopped, exit_code_for, skip_final_collection
from workbench.terminal import own_the_terminal

if TYPE_CHECKING:
    from rich.console import Console

    from workbench.config import Settings
    from workbench.store.listing import Listing


def _stdout(width: int | None = None) -> Console:
    from workbench.terminal import stdout_console

    return stdout_console(width)


def _open_store(db: str | None, settings: Any = None) -> Any:
    from workbench import open_store

    return open_store(db, settings)


def _quick_listing(db: str | None, settings: Settings | None, **options: Any) -> Listing | None:
    """The sessions read straight from a current-schema SQLite file (no SQLAlchemy to import), or ``None``
    when the store must open the database: a URL, a file to create or migrate, a fault to report (a config
    that would not load, ``settings`` ``None``, is one)."""
    from workbench.locations import resolve_db
    from workbench.store.listing import quick_sessions

    if settings is None:
        return None
    location = resolve_db(db, settings)
    return None if location.path is None else quick_sessions(location.path, **options)


def _opens_cleanly(db: str | None, settings: Settings) -> bool:
    """Whether the database is a current-schema SQLite file that reads without SQLAlchemy and has no fallback
    files waiting for it (the quick listing's check): the TUI then opens the store behind its first screen."""
    return _quick_listing(db, settings, limit=1) is not None


SERVED_MODES = ("no-commands", "commands")
"""``--served``: a tab of ``workbench serve``, with the entries that start commands off or (``--allow-commands``) on."""

_DEVICE_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}
"""Write errors that say the device (or the terminal) cannot take the output."""


def _stdout_broken() -> bool:
    """Whether standard output cannot take what is buffered for it (it is then sent to /dev/null, so that
    Python's own flush at exit does not fail a second time)."""
    try:
        sys.stdout.flush()
    except OSError:
        _discard_stdout()
        return True
    return False


def _discard_stdout() -> None:
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


class WorkbenchGroup(click.Group):
    """Click group whose errors are one line on stderr with exit code 2, never a traceback."""

    def main(self, args: Sequence[str] | None = None, **kwargs: Any) -> Any:  # type: ignore[override]
        for arg in sys.argv[1:] if args is None else args:
            if not is_text(arg):
                fail(f'argument "{arg.encode("utf-8", "backslashreplace").decode()}" is not valid UTF-8 text')
        try:
            result = super().main(args=args, standalone_mode=False, **kwargs)
            sys.stdout.flush()  # a full device or a dead terminal fails here, not at interpreter exit
            return result
        except click.exceptions.NoArgsIsHelpError as help_error:
            click.echo(help_error.ctx.get_help() if help_error.ctx else str(help_error))
            sys.exit(0)
        except click.UsageError as error:
            fail(error.format_message())
        except click.exceptions.Abort:
            click.echo("workbench: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except click.ClickException as error:
            fail(error.format_message())
        except WorkbenchError as error:
            fail(str(error), error.exit_code)
        except KeyboardInterrupt:
            click.echo("workbench: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except Stopped as stop:
            with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
                click.echo(f"workbench: {stop}", err=True)
            sys.exit(stop.exit_code)
        except BrokenPipeError:
            sys.stderr.close()
            sys.exit(0)
        except Exception as error:
            if isinstance(error, OSError) and error.filename not in (None, ""):
                # A path the user gave (--out, --db) that cannot be written or read: bad input, not a crash.
                fail(f"cannot use {error.filename}: {error.strerror or error}")
            if isinstance(error, OSError) and (error.errno in _DEVICE_FULL or _stdout_broken()):
                # Output redirected to a full device (or a terminal that went away): the environment, not a crash.
                _discard_stdout()
                fail(f"cannot write the output: {error.strerror or error}")
            if os.environ.get("WORKBENCH_DEBUG"):
                raise
            fail(
                f"internal error: {type(error).__name__}: {error} (set WORKBENCH_DEBUG=1 for a traceback)",
                EXIT_INTERNAL,
            )


@click.group(cls=WorkbenchGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--model", help="Model for the TUI's first comparison (default: from config, scripted).")
@arms_option
@base_url_option
@request_limit_option
@stream_option
@max_tokens_option
@otel_option
@app_source_options
@db_option
@click.option("--served", type=click.Choice(SERVED_MODES), hidden=True, help="Set by `workbench serve` for its tabs.")
@click.pass_context
def cli(
    ctx: click.Context,
    model: str | None,
    arms: str | None,
    base_url: str | None,
    request_limit: int | None,
    stream: bool | None,
    max_tokens: int | None,
    otel: bool,
    source: Any,
    db: str | None,
    served: str | None,
) -> None:
    """Code Mode Workbench: one prompt, side by side on several arms (tool calling, code mode, eager, hybrid).

    With no command, opens the terminal workbench.
    """
    if ctx.invoked_subcommand is None:
        _run_tui(
            db=db, model=model, arms=arms, base_url=base_url, request_limit=request_limit, stream=stream,
            max_tokens=max_tokens, otel=otel, source=source, allow_commands=served != "no-commands",
        )  # fmt: skip


def _preflight(
    *,
    model: str | None,
    arms: str | None,
    base_url: str | None,
    request_limit: int | None,
    otel: bool,
    stream: bool | None = None,
    max_tokens: int | None = None,
) -> tuple[Settings, tuple[str, ...]]:
    """The settings and arms a workbench opens with, checked before it opens: an unknown model or arm, a missing
    key, a config error or tracing without its extra is a one-line error, not a broken screen."""
    from workbench.arm_spec import arm_catalog, choose_arms
    from workbench.config import load_settings
    from workbench.scripted import SCRIPTED_MODELS
    from workbench.share.tracing import apply_otel_flag, resolve_tracing

    names, _, _ = arm_choice(arms, ())
    settings = load_settings(
        model=model, base_url=base_url, request_limit=request_limit, stream=stream, max_tokens=max_tokens
    )
    apply_otel_flag(settings, otel)
    resolve_tracing(settings.otel_endpoint)
    choose_arms(names, arm_catalog(settings))
    if settings.model not in SCRIPTED_MODELS:  # pre-flight: an unknown model or a missing key, before the TUI
        from workbench.models import resolve_model

        resolve_model(settings.model, settings.model_options())
    return settings, names


def _run_tui(
    *,
    db: str | None,
    model: str | None = None,
    arms: str | None = None,
    base_url: str | None = None,
    request_limit: int | None = None,
    stream: bool | None = None,
    max_tokens: int | None = None,
    replay: str | None = None,
    otel: bool = False,
    source: Any = None,
    allow_commands: bool = True,
) -> None:
    """The TUI; ``allow_commands=False`` (a tab of ``workbench serve``) keeps off every entry by which keystrokes
    would start a command or import code."""
    from workbench.tui.app import make_app

    settings, names = _preflight(
        model=model, arms=arms, base_url=base_url, request_limit=request_limit, otel=otel, stream=stream,
        max_tokens=max_tokens,
    )  # fmt: skip
    if replay is None and _opens_cleanly(db, settings):  # SQLAlchemy and the open wait for the first paint
        store, open_later = None, functools.partial(_open_store, db, settings)
    else:  # a new, old, damaged or server database: opened (or refused, one line) before anything shows
        store, open_later = _open_store(db, settings), None
    session_id = store.resolve_id(replay) if replay and store is not None else None
    app = make_app(
        store=store, open_store=open_later, model=settings.model, settings=settings, replay=session_id,
        arms=names, source=source, allow_commands=allow_commands,
    )  # fmt: skip
    app.run()
    if app.stopped_by is not None:  # SIGTERM or SIGHUP (a closed terminal): 143 / 129
        sys.exit(exit_code_for(app.stopped_by))


@cli.command()
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
    store = _open_store(db, settings)
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
        _stdout(width).print(comparison_view(comparison))
    if comparison.store_error is not None:
        fail(f"session {comparison.session_id} was not fully stored: {comparison.store_error}", EXIT_NOT_STORED)


@cli.command()
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
        _stdout(width).print(tasks_table(selected))


@cli.command()
@click.option(
    "--limit", type=click.IntRange(1, 1_000_000), default=50, show_default=True, help="Most sessions to list."
)
@click.option("--search", help="Only sessions whose app, model, task or prompt contains this text.")
@click.option(
    "--bench/--no-bench",
    "with_bench",
    default=False,
    help="Also list the sessions bench sweeps ran (left out by default, as in the TUI).",
)
@json_option
@width_option
@db_option
def sessions(
    limit: int, search: str | None, with_bench: bool, as_json: bool, width: int | None, db: str | None
) -> None:
    """List stored sessions, newest first (without bench runs unless --bench)."""
    from workbench.config import ConfigError, load_settings
    from workbench.printer import sessions_table

    try:
        settings = load_settings()
    except ConfigError:  # the store says so, or opens a --db that needs no config
        settings = None
    listing = _quick_listing(db, settings, limit=limit, search=search, hide_bench=not with_bench)
    if listing is not None:
        found, hidden = listing.sessions, listing.hidden
    elif not with_bench:
        from workbench.bench.manifest import sessions_without_sweeps

        found, hidden = sessions_without_sweeps(_open_store(db, settings), limit=limit, search=search)
    else:
        found, hidden = _open_store(db, settings).sessions(limit=limit, search=search), 0
    if as_json:
        click.echo(json.dumps([info.to_dict() for info in found], ensure_ascii=False))
    else:
        console = _stdout(width)
        console.print(sessions_table(found, console.width))
        if hidden:
            console.print(f"{hidden} bench run{'s' if hidden != 1 else ''} left out (--bench lists them)", style="dim")


@cli.command()
@click.argument("session_id")
@json_option
@width_option
@db_option
def show(session_id: str, as_json: bool, width: int | None, db: str | None) -> None:
    """Show a stored session (the same object as `run --json`)."""
    from workbench.printer import comparison_view

    store = _open_store(db)
    comparison = store.load(store.resolve_id(session_id))
    if as_json:
        click.echo(json.dumps(comparison.to_dict(), ensure_ascii=False))
    else:
        _stdout(width).print(comparison_view(comparison))


@cli.command()
@click.argument("session_id")
@db_option
def replay(session_id: str, db: str | None) -> None:
    """Open a stored session in the workbench and replay it."""
    _run_tui(db=db, replay=session_id)


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every interface).")
@click.option("--port", type=click.IntRange(1, 65_535), default=8000, show_default=True, help="Port to listen on.")
@click.option("--public-url", metavar="URL", help="The address browsers open, when not http://HOST:PORT (a proxy).")
@click.option(
    "--allow-commands",
    is_flag=True,
    help="Let the tabs' App field start MCP servers and import toolsets: whoever opens the URL can then run any "
    "command as you.",
)
@click.option("--model", help="Model for each tab's first comparison (default: from config, scripted).")
@arms_option
@base_url_option
@request_limit_option
@stream_option
@max_tokens_option
@otel_option
@app_source_options
@db_option
def serve(
    host: str,
    port: int,
    public_url: str | None,
    allow_commands: bool,
    model: str | None,
    arms: str | None,
    base_url: str | None,
    request_limit: int | None,
    stream: bool | None,
    max_tokens: int | None,
    otel: bool,
    source: Any,
    db: str | None,
) -> None:
    """Serve the workbench to web browsers: each tab runs its own workbench, with these options.

    The URL printed holds a token (a password: anyone with it can use the workbench as you). Without
    --allow-commands, the tabs cannot start commands or import code, except the app given here (--mcp, ...).
    """
    from workbench.share.serve import check_port, make_server
    from workbench.share.serve_guard import TOKEN_ENV, new_token

    _preflight(
        model=model, arms=arms, base_url=base_url, request_limit=request_limit, otel=otel, stream=stream,
        max_tokens=max_tokens,
    )  # fmt: skip
    token = new_token(os.environ.pop(TOKEN_ENV, None))  # popped: the tabs (and their servers) do not inherit it
    if public_url is not None and not public_url.startswith(("http://", "https://")):
        raise InputError(f"--public-url must start with http:// or https://, got {public_url!r}")
    options: list[str] = []
    flags = (
        ("--model", model), ("--arms", arms), ("--base-url", base_url), ("--request-limit", request_limit),
        ("--max-tokens", max_tokens),
    )  # fmt: skip
    for flag, value in flags:
        if value is not None:
            options += [flag, str(value)]
    if stream is not None:
        options.append("--stream" if stream else "--no-stream")
    if otel:
        options.append("--otel")
    if source is not None:
        options += _source_options(click.get_current_context().params)
    if db is not None and "://" in db:
        os.environ["WORKBENCH_DB"] = db  # each tab's process inherits it: a password stays out of `ps`
    elif db is not None:
        options += ["--db", os.path.abspath(os.path.expanduser(db))]
    try:
        check_port(host, port)
    except (OSError, TypeError, ValueError) as error:  # refused, taken, unknown, or not a host name at all
        reason = getattr(error, "strerror", None) or error
        raise InputError(f"cannot listen on {host.encode('unicode_escape').decode()}:{port}: {reason}") from None
    server = make_server(options, host=host, port=port, token=token, url=public_url, allow_commands=allow_commands)
    server.serve()


def _source_options(params: dict[str, Any]) -> list[str]:
    """``serve``'s own app options (already checked) as the tabs' command line: the app is the user's, given
    here, so it runs whether or not --allow-commands is given."""
    options: list[str] = []
    for flag, name in (("--mcp", "mcp"), ("--mcp-header", "mcp_headers")):
        for value in params[name]:
            options += [flag, value]
    for flag, name in (("--toolset", "toolset"), ("--setup", "setup"), ("--startup-timeout", "startup_timeout"),
                       ("--call-timeout", "call_timeout")):  # fmt: skip
        if params[name] is not None:
            options += [flag, str(params[name])]
    if params["workdir"] is not None:
        options += ["--workdir", os.path.abspath(os.path.expanduser(params["workdir"]))]
    return options


@cli.command("import")
@click.argument("files", nargs=-1)
@db_option
def import_command(files: tuple[str, ...], db: str | None) -> None:
    """Store the sessions of runs whose database failed (FILES, or every one waiting in the data dir).

    A run that could not store its session saves its events to a file in the data dir's `unsaved` folder
    and says so (a bench sweep its rows too); this adds what the database lacks (doing it twice adds
    nothing) and removes the file. A file never changes what is stored: one that disagrees with the
    database (a session that has ended, an event stored differently) is reported and left in place.

    Exit codes: 0 when everything waiting was imported (or nothing waits); 2 when a file is not a workbench
    fallback file or disagrees with the database; 3 when the database refused a file (import it again later).
    """
    from workbench.store.imports import EXIT_BAD_FILE, ImportReport, Refused, import_file, import_waiting, outcome
    from workbench.store.unsaved_sweeps import ImportedSweep

    store = _open_store_without_imports(db)
    if files:
        report = ImportReport()
        for name in files:
            # click.Path would stat the name, and a NUL in it raises ValueError there (not OSError).
            path = Path(name.replace("\x00", "\\x00"))
            if "\x00" in name or not path.exists():
                report.refused.append(Refused(path, f"{path} does not exist", EXIT_BAD_FILE))
            elif path.is_dir():
                report.refused.append(Refused(path, f"{path} is a directory, not a fallback file", EXIT_BAD_FILE))
            else:
                outcome(report, path, lambda path=path: import_file(store, path))
    else:
        report = import_waiting(store)
    for done in report.imported:
        if isinstance(done, ImportedSweep):
            kept = f"; {done.waiting_runs} wait for their sessions, kept in the file" if done.waiting_runs else ""
            click.echo(f"sweep {done.sweep_id}: {done.added_runs} runs recorded from {done.path}{kept}")
        else:
            click.echo(f"session {done.session_id}: {done.added_events} events stored from {done.path}")
    for waiting in report.waiting:
        click.echo(waiting.why)
    if not report.imported and not report.waiting and not report.refused:
        click.echo(f"nothing to import into {store.name}")
    for refused in report.refused:
        click.echo(f"workbench: error: {' '.join(refused.message.split())}", err=True)
    if report.exit_code:
        sys.exit(report.exit_code)


def _open_store_without_imports(db: str | None) -> Any:
    from workbench import open_store

    return open_store(db, import_unsaved=False)


for command in (
    config_command,
    locate_command,
    bench,
    export,
    diff_command,
    gate_command,
    serve_app,
    worker,
    suites_command,
):
    cli.add_command(command)


def main(argv: Sequence[str] | None = None) -> None:
    own_the_terminal()
    for stream in (sys.stdout, sys.stderr):
        # Text that is not valid Unicode (a lone surrogate in a model's answer) prints as a visible "?",
        # instead of ending the command; it is stored with U+FFFD in its place.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    cli.main(args=list(argv) if argv is not None else None, prog_name="workbench")
