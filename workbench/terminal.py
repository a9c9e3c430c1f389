"""The workbench's terminal output is its own: no third-party first-run banners."""

from __future__ import annotations

import io
import os
import re
import sys
from typing import TextIO

from rich.console import Console


def own_the_terminal() -> None:
    """Switch off pydantic-ai's first-run (Logfire) banner the supported way, without importing pydantic-ai.

    The banner goes to stderr before an agent's first run in any process attached to a terminal or a coding
    agent; ``PYDANTIC_AI_NO_BANNER`` is read at that moment, so setting it here covers the CLI, the TUI and
    the processes they start.
    """
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")


PIPED_WIDTH = 1_000
"""The layout width of output that goes to a pipe or a file with no ``--width`` and no ``COLUMNS``: tables take
the width their content needs and text lines are not wrapped (a reader's pager or editor wraps them, if at all)."""

_TRAILING_SPACES = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$")
"""Blanks at the end of a line, before the style resets Rich writes there."""


class _TrimmedLines(io.TextIOBase):
    """Standard output with the blanks at the end of each line taken off: Rich pads table cells to their
    column, which a terminal hides and a pipe (``grep``, ``diff``, a file) keeps."""

    def __init__(self, target: TextIO) -> None:
        self._target = target
        self._partial = ""

    def write(self, text: str) -> int:
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        if lines:
            self._target.write("".join(_TRAILING_SPACES.sub(r"\1", line) + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self._partial:
            self._target.write(self._partial)
            self._partial = ""
        self._target.flush()

    def isatty(self) -> bool:
        return self._target.isatty()

    def fileno(self) -> int:
        return self._target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._target, "encoding", None) or "utf-8"


def output_width(width: int | None = None) -> int | None:
    """The width to lay output out for: ``--width``, else the terminal's (``None``: Rich asks it), else
    ``COLUMNS`` when set, else :data:`PIPED_WIDTH` (not a terminal: nothing is wrapped to a width nobody has)."""
    if width is not None:
        return width
    if sys.stdout.isatty():
        return None
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else PIPED_WIDTH


def stdout_console(width: int | None = None) -> Console:
    """The console a command prints its result on: laid out for :func:`output_width`, with no blanks at the
    ends of lines, and (piped with no width given) text that is never wrapped."""
    chosen = output_width(width)
    return Console(file=_TrimmedLines(sys.stdout), width=chosen, highlight=False, soft_wrap=chosen == PIPED_WIDTH)
