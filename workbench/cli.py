"""The ``workbench`` command: the TUI by default, and headless subcommands.

Exit codes: 0 when the command did its job, 2 for bad input (one line on stderr, no traceback), 1 for an
internal failure, 3 when a run finished but its session could not be fully stored (its events went to a
fallback file that ``workbench import`` stores) or, for ``import``, when the database refused a file, 130
after Ctrl+C, 143 after SIGTERM and 129 after SIGHUP (the session saved as cancelled).
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import sys
from collections.abc import Iterator, MutableMapping, Sequence
from typing import Any

import click

from workbench.commands.options import (
    arms_option,
    base_url_option,
    db_option,
    fail,
    max_tokens_option,
    otel_option,
    request_limit_option,
    stream_option,
)
from workbench.commands.sources import app_source_options
from workbench.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, WorkbenchError, is_text
from workbench.signals import Stopped, StoppedEarly, default_stops, restore, stop_early
from workbench.terminal import own_the_terminal

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
        except (Stopped, StoppedEarly) as stop:
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


COMMANDS = {
    "bench": "workbench.commands.bench:bench",
    "config": "workbench.commands.config:config_command",
    "diff": "workbench.commands.decide:diff_command",
    "export": "workbench.commands.export:export",
    "gate": "workbench.commands.decide:gate_command",
    "import": "workbench.commands.export:import_command",
    "locate": "workbench.commands.config:locate_command",
    "replay": "workbench.commands.sessions:replay",
    "run": "workbench.commands.run:run",
    "serve": "workbench.commands.serve:serve",
    "serve-app": "workbench.commands.serve_app:serve_app",
    "sessions": "workbench.commands.sessions:sessions",
    "show": "workbench.commands.sessions:show",
    "suites": "workbench.commands.suites:suites_command",
    "tasks": "workbench.commands.run:tasks",
    "worker": "workbench.commands.worker:worker",
}
"""Each subcommand and where it lives (``module:attribute``): a command's module, and what it imports, loads
only when that command runs (or ``--help`` lists them all), so the TUI and each command pay for their own."""


class LazyCommands(MutableMapping[str, click.Command]):
    """The group's name -> command mapping, importing a command's module the first time it is looked up."""

    def __init__(self, where: dict[str, str]) -> None:
        self._where = dict(where)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            module, _, attribute = self._where[name].partition(":")
            self._loaded[name] = getattr(importlib.import_module(module), attribute)
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self._where and name not in self._loaded:
            raise KeyError(name)
        self._where.pop(name, None)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._where, *self._loaded]))

    def __len__(self) -> int:
        return len(self._where.keys() | self._loaded.keys())


@click.group(
    cls=WorkbenchGroup,
    commands=LazyCommands(COMMANDS),
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
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
    if ctx.invoked_subcommand in SERVERS:
        default_stops()
    if ctx.invoked_subcommand is None:
        from workbench.commands.tui import run_tui

        run_tui(
            db=db, model=model, arms=arms, base_url=base_url, request_limit=request_limit, stream=stream,
            max_tokens=max_tokens, otel=otel, source=source, allow_commands=served != "no-commands",
        )  # fmt: skip


SERVERS = ("serve", "serve-app")
"""Commands that keep SIGTERM's and SIGHUP's default action: a server its parent stops ends at once, silently."""


def main(argv: Sequence[str] | None = None) -> None:
    replaced = stop_early()  # a SIGTERM while the store opens says so and exits 143, as one during a run does
    try:
        _main(argv)
    finally:
        restore(replaced)  # called inside another program (a test), its signals are its own again


def _main(argv: Sequence[str] | None) -> None:
    own_the_terminal()
    for stream in (sys.stdout, sys.stderr):
        # Text that is not valid Unicode (a lone surrogate in a model's answer) prints as a visible "?",
        # instead of ending the command; it is stored with U+FFFD in its place.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    cli.main(args=list(argv) if argv is not None else None, prog_name="workbench")
