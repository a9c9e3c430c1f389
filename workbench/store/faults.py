"""What went wrong with a database, in one line a user can act on.

SQLite reports every storage fault as an exception with a result code; :func:`store_error` turns one into
a :class:`StoreError` whose ``kind`` says which fault it was, so a writer knows whether waiting can help
(``busy``) or not (everything else), and a command prints a message naming the file and what to do.
"""

from __future__ import annotations

import errno
import sqlite3
from typing import Literal

Fault = Literal["busy", "full", "read-only", "damaged", "foreign", "io", "unusable"]

_BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB, _PERM = 5, 6, 8, 10, 11, 13, 14, 26, 3
_KINDS: dict[int, Fault] = {
    _BUSY: "busy",
    _LOCKED: "busy",
    _FULL: "full",
    _READONLY: "read-only",
    _PERM: "read-only",
    _CORRUPT: "damaged",
    _NOTADB: "foreign",
    _IOERR: "io",
}
_ERRNO_KINDS: dict[int, Fault] = {errno.ENOSPC: "full", errno.EDQUOT: "full", errno.EROFS: "read-only",
                                  errno.EACCES: "read-only", errno.EPERM: "read-only", errno.EIO: "io"}  # fmt: skip


class StoreError(Exception):
    """The database cannot be used (or cannot take a write); the message names the file and says why."""

    def __init__(self, message: str, kind: Fault = "unusable") -> None:
        super().__init__(message)
        self.kind: Fault = kind


class UnknownSession(LookupError):
    pass


def fault_kind(error: BaseException) -> Fault:
    """Which storage fault an exception (SQLite's, SQLAlchemy's wrapping of it, or an OSError) reports."""
    cause = getattr(error, "orig", None) or error
    if isinstance(cause, StoreError):
        return cause.kind
    if isinstance(cause, OSError):
        return _ERRNO_KINDS.get(cause.errno or 0, "unusable")
    code = getattr(cause, "sqlite_errorcode", None)
    if isinstance(code, int):
        return _KINDS.get(code & 0xFF, "unusable")
    text = str(cause).lower()
    if isinstance(cause, sqlite3.Error):
        for needle, kind in (("locked", "busy"), ("full", "full"), ("readonly", "read-only"), ("malformed", "damaged")):
            if needle in text:
                return kind  # type: ignore[return-value]
    return "unusable"


def store_error(error: BaseException, name: str, doing: str = "") -> StoreError:
    """A one-line :class:`StoreError` for ``error`` met while ``doing`` something with database ``name``."""
    if isinstance(error, StoreError):
        return error
    kind = fault_kind(error)
    return StoreError(describe(kind, name, reason(error), doing), kind)


def describe(kind: Fault, name: str, why: str, doing: str = "") -> str:
    while_ = f" while {doing}" if doing else ""
    match kind:
        case "busy":
            return f"{name} is locked by another process{while_}; close the program holding it, or try again"
        case "full":
            return f"{name}: the disk is full{while_}; free some space, or choose another file with --db"
        case "read-only":
            return (
                f"{name} is read-only{while_} (file, folder or file system); sessions can be listed, shown, "
                "replayed and exported, but not written: choose another file with --db to run"
            )
        case "damaged":
            return (
                f"{name} is damaged ({why}){while_}; `sqlite3 {name} .recover` can save what is left, "
                "or choose another file with --db"
            )
        case "foreign":
            return f"{name} is not a workbench database (not an SQLite file); it was left untouched"
        case "io":
            return f"{name} cannot be read or written ({why}){while_}; check the disk it is on"
    return f"{name} is not a usable database ({why}){while_}"


def reason(error: BaseException) -> str:
    """The first line of what the driver said (SQLAlchemy appends the whole statement after it)."""
    cause = getattr(error, "orig", None) or error
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror
    return (str(cause).splitlines() or [type(cause).__name__])[0]
