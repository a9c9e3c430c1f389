"""``workbench serve``: the workbench in web browsers, one TUI process per tab, behind a token."""

from __future__ import annotations

import os
from typing import Any

import click

from workbench.commands.options import (
    InputError,
    arms_option,
    base_url_option,
    db_option,
    max_tokens_option,
    otel_option,
    request_limit_option,
    stream_option,
)
from workbench.commands.sources import app_source_options
from workbench.commands.tui import preflight


@click.command()
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

    preflight(
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
