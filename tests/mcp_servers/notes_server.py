"""A small MCP server for the tests: notes kept in a SQLite file in its working folder.

Run as ``python notes_server.py [--db PATH] [--http PORTFILE] [--crash-on TOOL] [--hang-on TOOL]
[--bad-schema] [--bad-result] [--fail-start] [--slow-start SECONDS] [--odd-names]``. Without ``--db`` the database is
``$WORKBENCH_WORKDIR/notes.db``. With ``$NOTES_PIDS`` set, every start writes its process id as a
file into that folder, so a test can check that no server outlives its run.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
import sys
import time
from pathlib import Path
from typing import Annotated, Any

from fastmcp import FastMCP
from fastmcp.tools import Tool
from fastmcp.tools.base import ToolResult
from mcp.types import TextContent
from pydantic import Field


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db")
    parser.add_argument("--name", default="notes")
    parser.add_argument("--http", metavar="PORTFILE")
    parser.add_argument("--crash-on")
    parser.add_argument("--hang-on")
    parser.add_argument("--bad-schema", action="store_true")
    parser.add_argument("--bad-result", action="store_true")
    parser.add_argument("--fail-start", action="store_true")
    parser.add_argument("--slow-start", type=float, default=0, metavar="SECONDS", help="Sleep before answering.")
    parser.add_argument("--odd-names", action="store_true", help="Offer tools named as providers refuse.")
    parser.add_argument("--arm", help="Fail, crash or hang only in this arm ($WORKBENCH_ARM).")
    options = parser.parse_args()
    if options.arm and options.arm != os.environ.get("WORKBENCH_ARM"):
        options.fail_start, options.crash_on, options.hang_on = False, None, None
    if options.fail_start:
        print("notes: cannot open the database: permission denied", file=sys.stderr)
        sys.exit(3)
    db = Path(options.db or Path(os.environ["WORKBENCH_WORKDIR"]) / "notes.db")
    if os.environ.get("NOTES_PIDS"):
        (Path(os.environ["NOTES_PIDS"]) / str(os.getpid())).touch()
    time.sleep(options.slow_start)
    server = build(db, options)
    if options.http:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        Path(options.http).write_text(str(sock.getsockname()[1]))
        server.run("http", show_banner=False, sockets=[sock], log_level="warning")
    else:
        server.run("stdio", show_banner=False)


def build(db: Path, options: argparse.Namespace) -> FastMCP:
    server = FastMCP(options.name)
    connection = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    connection.execute("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT)")

    def trap(tool: str) -> None:
        if tool == options.crash_on:
            print(f"notes: fatal error in {tool}", file=sys.stderr, flush=True)
            os._exit(7)
        if tool == options.hang_on:
            while True:
                time.sleep(1)

    @server.tool(annotations={"readOnlyHint": True})
    def list_notes() -> list[dict[str, Any]]:
        """All notes, in id order."""
        trap("list_notes")
        rows = connection.execute("SELECT id, title, body FROM notes ORDER BY id").fetchall()
        return [{"id": row[0], "title": row[1], "body": row[2]} for row in rows]

    @server.tool
    def add_note(title: Annotated[str, Field(min_length=1)], body: str = "") -> dict[str, Any]:
        """Add a note; returns it with its id."""
        trap("add_note")
        cursor = connection.execute("INSERT INTO notes (title, body) VALUES (?, ?)", (title, body))
        return {"id": cursor.lastrowid, "title": title, "body": body}

    @server.tool
    def update_note(note_id: int, body: str) -> dict[str, Any]:
        """Replace a note's body."""
        trap("update_note")
        if connection.execute("UPDATE notes SET body = ? WHERE id = ?", (body, note_id)).rowcount == 0:
            raise ValueError(f"no note with id {note_id}")
        return {"id": note_id, "body": body}

    @server.tool
    def delete_note(note_id: int) -> str:
        """Delete a note."""
        trap("delete_note")
        if connection.execute("DELETE FROM notes WHERE id = ?", (note_id,)).rowcount == 0:
            raise ValueError(f"no note with id {note_id}")
        return f"deleted note {note_id}"

    if options.bad_schema:

        def broken(x: int = 0) -> str:
            return "never"

        tool = Tool.from_function(broken, name="broken")
        server.add_tool(tool.model_copy(update={"parameters": {"type": "object", "properties": {"x": {"type": 5}}}}))

    @server.tool
    def header(name: str) -> str:
        """The value of an HTTP request header (empty over stdio)."""
        from fastmcp.server.dependencies import get_http_headers

        return get_http_headers(include_all=True).get(name.lower(), "")

    if options.odd_names:
        for tool in odd_tools(connection):
            server.add_tool(tool)

    if options.bad_result:

        @server.tool(output_schema={"type": "object", "properties": {"count": {"type": "integer"}},
                                    "required": ["count"]})  # fmt: skip
        def count_notes() -> Any:
            """How many notes there are."""
            return {"count": "many"}

    return server


RELATION = {"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
            "required": ["from", "to"]}  # fmt: skip


def odd_tools(connection: sqlite3.Connection) -> list[Tool]:
    """Tools named and shaped as providers and Python refuse: ``get weather.v2`` (a space and a dot), and
    ``create_relations`` whose arguments are named ``from`` at the top and inside its list of relations (as in
    the npm server-memory). Each adds a note, so the arms' end states show what reached the server."""

    class Raw(Tool):
        """A tool whose arguments reach it as the client sent them (no Python signature in between)."""

        async def run(self, arguments: dict[str, Any]) -> ToolResult:
            if self.name == "get weather.v2":
                title = f"weather in {arguments['city']}"
            else:
                pairs = [arguments["from"], *(f"{item['from']}>{item['to']}" for item in arguments["relations"])]
                title = "relations " + " ".join(pairs)
            connection.execute("INSERT INTO notes (title, body) VALUES (?, ?)", (title, json.dumps(arguments)))
            return ToolResult(content=[TextContent(type="text", text=f"added {title}")])

    weather = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    relations = {
        "type": "object",
        "properties": {"from": {"type": "string"}, "relations": {"type": "array", "items": RELATION}},
        "required": ["from", "relations"],
    }
    return [
        Raw(name="get weather.v2", description="The weather in a city (noted).", parameters=weather),
        Raw(name="create_relations", description="Relate entities (noted).", parameters=relations),
    ]


if __name__ == "__main__":
    main()
