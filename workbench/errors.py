"""The workbench's errors: one base, and the exit code each kind ends the command line with.

Every error the workbench raises on purpose is a :class:`WorkbenchError`; the CLI maps the base once (its
message on one line, its ``exit_code``), the TUI shows its message, and the Python API lets it through.
Anything else that reaches the CLI is a bug (exit 1, "internal error"). Each kind also keeps the builtin
base it always had (``ValueError``, ``LookupError``, ``RuntimeError``), so code that catches those still
does. This module imports nothing, so every layer, the demo apps included, can use it.
"""

from __future__ import annotations

from typing import ClassVar

EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
EXIT_NOT_STORED = 3
EXIT_INTERRUPTED = 130


class WorkbenchError(Exception):
    """An error of the workbench's own: its message says what went wrong and what to do."""

    exit_code: ClassVar[int] = EXIT_INTERNAL


class UserError(WorkbenchError):
    """Something the user gave (an argument, a flag, the config file, a task or an app of their own) that
    cannot be used: exit 2."""

    exit_code: ClassVar[int] = EXIT_BAD_INPUT


class BadInput(UserError, ValueError):
    """An argument that cannot be used: an unknown app, task, arm or model, a bad item count, a config value out
    of range. What the Python API raises for bad arguments (the config's, the arms', the models' errors are
    kinds of it)."""


class InternalError(WorkbenchError):
    """A step of the workbench's own machinery that failed (a script the offline player cannot follow, a
    queued comparison to run again): exit 1 if it ever reaches the command line."""

    exit_code: ClassVar[int] = EXIT_INTERNAL


def one_line(error: BaseException) -> str:
    """An error's whole message on one line (views clip it; a stored event keeps all of it), or its type's
    name when it has no message."""
    return " ".join(str(error).split()) or type(error).__name__


def is_text(text: str) -> bool:
    """False for a string holding bytes that are not UTF-8 (Python passes an argument's on as lone
    surrogates): bad input, refused before anything is run or stored."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
