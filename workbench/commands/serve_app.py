"""``workbench serve-app``: a demo app as an MCP server, over stdio or Streamable HTTP."""

from __future__ import annotations

import click

import workbench.apps as apps


@click.command("serve-app")
@click.argument("app_name", metavar="APP")
@click.option("--items", type=int, help="Records to seed (default: the app's, 50).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for the demo data.")
@click.option("--page-size", type=int, default=apps.DEFAULT_PAGE_SIZE, show_default=True, help="Records per page.")
@click.option(
    "--http",
    "http_port",
    type=click.IntRange(0, 65535),
    metavar="PORT",
    help="Serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (0: any free port, printed).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on with --http.")
def serve_app(app_name: str, items: int | None, seed: int, page_size: int, http_port: int | None, host: str) -> None:
    """Serve demo APP as an MCP server (stdio by default), so any MCP client can use it.

    Reading tools carry readOnlyHint; the resource workbench://state is the app's whole state as JSON. One
    server is one app instance: every client of an HTTP server shares its state.
    """
    from workbench.mcp_server import serve

    app = apps.get_app(app_name)(items, seed, page_size=page_size)
    serve(app, http_port=http_port, host=host)
