"""What every ``workbench`` command shares: exit codes, the one-line error, and the common options.

The top-level group (:mod:`workbench.cli`) and the command modules under :mod:`workbench.commands` both
import from here, so neither imports the other's internals.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click

from workbench.errors import EXIT_BAD_INPUT, UserError

if TYPE_CHECKING:
    from rich.console import Console

    from workbench.config import Settings
    from workbench.store import Store
    from workbench.store.listing import Listing


class InputError(UserError):
    """Bad input found after parsing; reported as one line with exit code 2."""


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """``workbench: error: <message on one line>`` on stderr, and exit with ``code``."""
    text = " ".join(str(message).split())
    click.echo(f"workbench: error: {text}", err=True)
    sys.exit(code)


db_option = click.option(
    "--db",
    "db",
    type=str,
    default=None,
    metavar="PATH|URL",
    help="Session database: a SQLite file or postgresql://user@host:port/dbname (default: $WORKBENCH_DB, "
    "the config's db, or sessions.db in the user data dir).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
CASE_SORTS = ("case", "change", "cost", "tokens", "time")
"""``--sort`` of the case tables: :data:`workbench.bench.compare.SORTS`, spelled here so that a command's module
does not import the bench to declare its options (a test checks they agree)."""
case_sort_option = click.option(
    "--sort",
    type=click.Choice(CASE_SORTS),
    default=None,
    help="Order of the per-case table: as run (case), verdict changes first (change), or by the size of the "
    "change in cost, tokens or time against the first arm. Default: changes first on the terminal, as run in "
    "Markdown.",
)
width_option = click.option(
    "--width",
    type=click.IntRange(20, 1_000),
    metavar="N",
    help="Lay the output out for N columns (default: the terminal's; piped, lines are not wrapped).",
)
base_url_option = click.option(
    "--base-url",
    metavar="URL",
    help="Endpoint of a local OpenAI-compatible server (vLLM, LM Studio, llama.cpp, Ollama) for openai-chat:, "
    "openai:, ollama: and vllm: models; no key needed.",
)
request_limit_option = click.option(
    "--request-limit",
    type=click.IntRange(1, 10_000),
    help="Model requests per arm before it is stopped (default: from config, 50).",
)
arms_option = click.option(
    "--arms",
    default=None,
    metavar="NAMES",
    help="Arms to run, comma-separated, in display order (the first is the baseline): tool, code, code-eager, "
    "hybrid, or an [arms.NAME] from the config file. Default: tool,code.",
)
model_option = click.option(
    "--model",
    "models",
    multiple=True,
    metavar="SPEC|NAME=SPEC",
    help="Model for every arm: scripted, scripted:paced, or provider:model (default: from config, scripted). "
    "NAME=SPEC gives one arm its own model; repeatable.",
)


def arm_choice(arms: str | None, models: tuple[str, ...]) -> tuple[tuple[str, ...], str | None, dict[str, str]]:
    """``--arms`` and ``--model`` values as (arm names, shared model, per-arm models); bad input exits 2."""
    from workbench.arm_spec import parse_arm_names, parse_model_assignments
    from workbench.events import DEFAULT_ARMS

    names = tuple(parse_arm_names(arms)) if arms is not None else DEFAULT_ARMS
    if arms is not None and not names:
        raise InputError("--arms is empty; give arm names such as tool,code,code-eager,hybrid")
    shared, per_arm = parse_model_assignments(models)
    return names, shared, per_arm


stream_option = click.option(
    "--stream/--no-stream",
    "stream",
    default=None,
    help="Stream model responses (default: from config, on). --no-stream sends every request through the "
    "provider's non-streaming API: for local servers that cannot stream tool calls.",
)
max_tokens_option = click.option(
    "--max-tokens",
    type=click.IntRange(1, 10_000_000),
    help="Most tokens the model may write in one response (default: from config, the provider's).",
)
otel_option = click.option(
    "--otel",
    is_flag=True,
    help="Export every comparison as OpenTelemetry traces: to otel_endpoint from the config, else "
    "$OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318 (needs the otel extra).",
)


def stdout(width: int | None = None) -> Console:
    """The console a command prints its tables on (Rich is imported here, not with the command)."""
    from workbench.terminal import stdout_console

    return stdout_console(width)


def open_store(db: str | None, settings: Settings | None = None, *, import_unsaved: bool = True) -> Store:
    """The session store ``--db`` names (SQLAlchemy is imported here, by the commands that need it), closed
    when the command ends (opened outside a command, e.g. on the TUI's thread, its caller closes it)."""
    from workbench import open_store as open_named_store

    store = open_named_store(db, settings, import_unsaved=import_unsaved)
    assert store is not None  # only ``db=False`` opens none
    command = click.get_current_context(silent=True)
    if command is not None:
        command.call_on_close(store.close)
    return store


def quick_listing(db: str | None, settings: Settings | None, **options: Any) -> Listing | None:
    """The sessions read straight from a current-schema SQLite file (no SQLAlchemy to import), or ``None``
    when the store must open the database: a URL, a file to create or migrate, a fault to report (a config
    that would not load, ``settings`` ``None``, is one)."""
    from workbench.locations import resolve_db
    from workbench.store.listing import quick_sessions

    if settings is None:
        return None
    location = resolve_db(db, settings)
    return None if location.path is None else quick_sessions(location.path, **options)
