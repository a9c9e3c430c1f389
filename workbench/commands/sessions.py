"""``workbench sessions`` (the stored sessions), ``show`` (one of them printed) and ``replay`` (one in the TUI).

Reading a session loads no engine: the store gives :mod:`workbench.session` objects and the printer draws them.
"""

from __future__ import annotations

import json

import click

from workbench.commands.options import db_option, json_option, open_store, quick_listing, stdout, width_option


@click.command()
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
    listing = quick_listing(db, settings, limit=limit, search=search, hide_bench=not with_bench)
    if listing is not None:
        found, hidden = listing.sessions, listing.hidden
    elif not with_bench:
        from workbench.bench.manifest import sessions_without_sweeps

        found, hidden = sessions_without_sweeps(open_store(db, settings), limit=limit, search=search)
    else:
        found, hidden = open_store(db, settings).sessions(limit=limit, search=search), 0
    if as_json:
        click.echo(json.dumps([info.to_dict() for info in found], ensure_ascii=False))
    else:
        console = stdout(width)
        console.print(sessions_table(found, console.width))
        if hidden:
            console.print(f"{hidden} bench run{'s' if hidden != 1 else ''} left out (--bench lists them)", style="dim")


@click.command()
@click.argument("session_id")
@json_option
@width_option
@db_option
def show(session_id: str, as_json: bool, width: int | None, db: str | None) -> None:
    """Show a stored session (the same object as `run --json`)."""
    from workbench.printer import comparison_view

    store = open_store(db)
    comparison = store.load(store.resolve_id(session_id))
    if as_json:
        click.echo(json.dumps(comparison.to_dict(), ensure_ascii=False))
    else:
        stdout(width).print(comparison_view(comparison))


@click.command()
@click.argument("session_id")
@db_option
def replay(session_id: str, db: str | None) -> None:
    """Open a stored session in the workbench and replay it."""
    from workbench.commands.tui import run_tui

    run_tui(db=db, replay=session_id)
