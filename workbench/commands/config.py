"""``workbench config`` (the effective settings and where each came from) and ``workbench locate`` (paths)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from workbench.locations import (
    CONFIG_FILE_ENV,
    config_file,
    data_dir,
    fallback_dir,
    recent_apps_file,
    recent_models_file,
    resolve_db,
)

if TYPE_CHECKING:
    from workbench.config import Settings


def _settings() -> Settings:
    """The effective settings (pydantic-settings is imported here, not when ``--help`` lists this command)."""
    from workbench.config import load_settings

    return load_settings()


def _shown(key: str, value: Any, settings: Settings) -> Any:
    if key == "db":
        return str(resolve_db(None, settings))
    return value


@click.command("config")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: every setting with its value, source and meaning.")
@click.option("--template", "as_template", is_flag=True, help="Print a config file with every setting documented.")
@click.option("--init", "init", is_flag=True, help="Write that documented file to the config path (if none is there).")
def config_command(as_json: bool, as_template: bool, init: bool) -> None:
    """Print the effective settings and where each came from (default, file, env, flag).

    Precedence: defaults < the config file < WORKBENCH_* environment variables < command-line flags.
    """
    from rich.console import Console
    from rich.table import Table

    from workbench.config import template

    if as_template:
        click.echo(template(), nl=False)
        return
    if init:
        _write_template(config_file())
        return
    settings = _settings()
    rows = [(key, _shown(key, value, settings), source, doc) for key, value, source, doc in settings.rows()]
    path = settings.file
    if as_json:
        data = {
            "config_file": str(path),
            "config_file_exists": path.is_file(),
            "settings": [
                {"key": key, "value": value, "source": source, "description": doc} for key, value, source, doc in rows
            ],
        }
        click.echo(json.dumps(data, ensure_ascii=False))
        return
    console = Console(highlight=False, soft_wrap=False)
    state = "" if path.is_file() else " (not found: every value is a default, an env variable or a flag)"
    click.echo(f"config file: {path}{state}")
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("setting")
    table.add_column("value", overflow="fold")
    table.add_column("from")
    for key, value, source, _ in rows:
        table.add_row(key, "(unset)" if value is None else str(value), source)
    console.print(table)
    console.print("`workbench config --template` prints every setting with what it does.", style="dim")


def _write_template(path: Path) -> None:
    from workbench.commands.options import InputError
    from workbench.config import template

    if path.exists():
        raise InputError(f"{path} already exists; `workbench config --template` prints the documented settings")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template(), encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot write {path}: {error.strerror or error}") from None
    click.echo(f"wrote {path}: every setting is commented out at its default; uncomment what you change")


@click.command("locate")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def locate_command(as_json: bool) -> None:
    """Print where the workbench keeps its config file, data and session database."""
    settings = _settings()
    path = config_file()
    location = resolve_db(None, settings)
    database = location.target
    places: dict[str, Any] = {
        "config_file": str(path),
        "config_file_exists": path.is_file(),
        "config_file_from": f"env {CONFIG_FILE_ENV}" if os.environ.get(CONFIG_FILE_ENV) else "default",
        "data_dir": str(data_dir()),
        "database": str(location),
        "database_from": location.source,
        "unsaved_sessions": str(fallback_dir()),
        "recent_models": str(recent_models_file()),
        "recent_apps": str(recent_apps_file()),
    }
    if as_json:
        click.echo(json.dumps(places, ensure_ascii=False))
        return
    exists = "" if places["config_file_exists"] else "  (none yet: `workbench config --template > FILE` writes one)"
    database_note = "" if not isinstance(database, Path) or database.exists() else "; created on first run"
    click.echo(f"config file    {path}{exists}")
    click.echo(f"data dir       {places['data_dir']}")
    click.echo(f"database       {location}  (from {places['database_from']}{database_note})")
    click.echo(f"unsaved        {places['unsaved_sessions']}  (runs whose database failed; `workbench import`)")
    click.echo(f"recent models  {places['recent_models']}")
    click.echo(f"recent apps    {places['recent_apps']}  (MCP servers and toolsets; no header values)")
