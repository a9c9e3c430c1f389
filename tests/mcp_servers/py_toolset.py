"""A Python toolset for the tests: a factory giving each arm tools over a SQLite file in its workdir."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pydantic_ai import ModelRetry
from pydantic_ai.toolsets import FunctionToolset


def make(workdir: Path) -> FunctionToolset[None]:
    database = workdir / "todo.db"
    toolset: FunctionToolset[None] = FunctionToolset()

    @toolset.tool_plain(metadata={"read_only": True})
    def list_todos() -> list[str]:
        """Every todo."""
        with sqlite3.connect(database) as connection:
            return [row[0] for row in connection.execute("SELECT text FROM todos ORDER BY id")]

    @toolset.tool_plain
    def add_todo(text: str) -> str:
        """Add a todo."""
        if not text:
            raise ModelRetry("text is empty")
        with sqlite3.connect(database) as connection:
            connection.execute("INSERT INTO todos (text) VALUES (?)", (text,))
        return "added"

    return toolset


def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


TOOLS = [shout]
