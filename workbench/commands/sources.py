"""The options that put the arms on an app of the user's own: MCP servers or a Python toolset."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

SOURCE_OPTIONS = ("mcp", "mcp_headers", "toolset", "workdir", "setup", "startup_timeout", "call_timeout")


def app_source_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--mcp``, ``--mcp-header``, ``--toolset``, ``--workdir``, ``--setup`` and the server timeouts,
    handed to the command as one ``source`` argument (``None`` for a demo app)."""

    @functools.wraps(command)
    def with_source(*args: Any, **kwargs: Any) -> Any:
        chosen = {name: kwargs.pop(name) for name in SOURCE_OPTIONS}
        return command(*args, **kwargs, source=source_from_options(**chosen))

    options = [
        click.option(
            "--mcp",
            "mcp",
            multiple=True,
            metavar="COMMAND|URL",
            help="An MCP server as the app: a command (stdio, started once per arm) or an http(s):// URL "
            "(Streamable HTTP). Repeatable; tools are prefixed by server name only where names collide.",
        ),
        click.option(
            "--mcp-header", "mcp_headers", multiple=True, metavar='"NAME: VALUE"', help="HTTP header for --mcp URLs."
        ),
        click.option(
            "--toolset",
            metavar="MODULE:ATTR",
            help="A Python toolset as the app: a pydantic-ai toolset, a list of functions, or a factory of either.",
        ),
        click.option(
            "--workdir",
            metavar="DIR",
            help="Copied once per arm; {workdir} in --mcp / --setup and $WORKBENCH_WORKDIR name the copy. "
            "Its files and SQLite rows are diffed.",
        ),
        click.option("--setup", metavar="COMMAND", help="Shell command run before each arm ({workdir}, {arm})."),
        click.option(
            "--startup-timeout",
            type=click.IntRange(1, 86_400),
            metavar="SECONDS",
            help="Most seconds an MCP server or --setup may take to start (default 30).",
        ),
        click.option(
            "--call-timeout",
            type=click.IntRange(1, 86_400),
            metavar="SECONDS",
            help="Most seconds one MCP tool call may take (default 60).",
        ),
    ]
    for option in reversed(options):
        with_source = option(with_source)
    return with_source


def source_from_options(
    *,
    mcp: tuple[str, ...],
    mcp_headers: tuple[str, ...],
    toolset: str | None,
    workdir: str | None,
    setup: str | None,
    startup_timeout: int | None,
    call_timeout: int | None,
) -> Any:
    """The app source for these options (``None``: a demo app); raises :class:`InputError`.

    With none of them given (every command but the few that use them), nothing is imported: the sources
    package pulls in pydantic-ai, which would cost every ``workbench`` command a third of a second."""
    if not (mcp or mcp_headers or toolset or workdir or setup or startup_timeout or call_timeout):
        return None
    from workbench.sources import make_source

    return make_source(
        mcp=mcp, mcp_headers=mcp_headers, toolset=toolset, workdir=workdir, setup=setup,
        startup_timeout_s=startup_timeout, call_timeout_s=call_timeout,
    )  # fmt: skip
