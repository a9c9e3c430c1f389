"""A demo app served as an MCP server (FastMCP), so any MCP client can use it: ``workbench serve-app``.

The app's tools keep their names, signatures and docstrings; reading tools (``list_*``, ``get_*``) carry
the ``readOnlyHint`` annotation. The resource ``workbench://state`` is the app's whole state as JSON,
which the workbench reads to diff and grade an arm that ran on the server.
"""

from __future__ import annotations

import json
import logging
import socket
import sys
from typing import Any

from workbench.apps import DemoApp
from workbench.sources.mcp import STATE_URI


def build_server(app: DemoApp) -> Any:
    """A FastMCP server over ``app`` (one instance: every client of this server shares its state)."""
    from fastmcp import FastMCP

    server = FastMCP(app.name, instructions=f"The {app.title} demo app: {app.about}.")
    read_only = set(app.read_only_tool_names())
    for tool in app.tools():
        server.tool(tool, annotations={"readOnlyHint": True} if tool.__name__ in read_only else None)

    @server.resource(STATE_URI, mime_type="application/json", description="The app's whole state")
    def state() -> str:
        return json.dumps(app.snapshot(), ensure_ascii=False)

    return server


class _OneLine(logging.Filter):
    """A failed call is one line (``get_cart_item failed: no cart item with id 'x'``), not a traceback box: a
    bad id is a retry for the model, not a server error."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            record.msg = f"{record.getMessage()}: {' '.join(str(error).split()) or type(error).__name__}"
            record.args, record.exc_info, record.exc_text = (), None, None
        return True


def quiet_logs() -> None:
    """FastMCP's logs as plain lines on stderr, warnings and worse only: no start-up banner ("Starting MCP
    server ...", which also is no business of a stdio client) and one line per failed call."""
    import fastmcp

    fastmcp.settings.log_enabled = False  # FastMCP's own Rich handler, and its resets of the level, off
    logger = logging.getLogger("fastmcp")
    logger.handlers.clear()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("serve-app: %(message)s"))
    handler.addFilter(_OneLine())
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False


def serve(app: DemoApp, *, http_port: int | None = None, host: str = "127.0.0.1") -> None:
    """Serve ``app`` over stdio, or over Streamable HTTP at ``http://HOST:PORT/mcp`` (port 0: any free port;
    the address is printed on stderr once the server listens)."""
    quiet_logs()
    server = build_server(app)
    if http_port is None:
        server.run("stdio", show_banner=False)
        return
    listener = socket.create_server((host, http_port))
    bound_host, bound_port = listener.getsockname()[:2]
    print(f"serving {app.name} at http://{bound_host}:{bound_port}/mcp", file=sys.stderr, flush=True)
    server.run("http", sockets=[listener], show_banner=False, log_level="warning")
