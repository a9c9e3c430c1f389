"""What went wrong with a database, in one line a user can act on.

SQLite reports every storage fault as an exception with a result code, PostgreSQL (psycopg) with an SQLSTATE
or, when it cannot connect, a message; :func:`store_error` turns one into a :class:`StoreError` whose ``kind``
says which fault it was, so a writer knows whether waiting can help (:data:`WAITABLE`) or not (everything
else), and a command prints a message naming the database and what to do.
"""

from __future__ import annotations

import errno
import sqlite3
from typing import ClassVar, Literal

from workbench.errors import EXIT_BAD_INPUT, UserError, WorkbenchError

Fault = Literal[
    "busy", "full", "read-only", "damaged", "foreign", "io", "unusable",
    "transient", "unreachable", "denied", "missing", "driver",
]  # fmt: skip
WAITABLE: frozenset[Fault] = frozenset({"busy", "transient", "unreachable"})
"""Faults a write waits out (for ``store_busy_timeout_s``): a lock, a dropped connection, a server restarting."""
POSTGRES_EXTRA = "pip install 'code-mode-workbench[postgres]'"

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
_SQLSTATE_KINDS: dict[str, Fault] = {
    "40001": "transient",  # serialization_failure
    "40P01": "transient",  # deadlock_detected
    "55P03": "busy",  # lock_not_available
    "57P01": "transient",  # admin_shutdown
    "57P02": "transient",  # crash_shutdown
    "57P03": "transient",  # cannot_connect_now (starting up, shutting down)
    "57014": "transient",  # query_canceled (statement_timeout: a server too slow to answer)
    "25P03": "transient",  # idle_in_transaction_session_timeout
    "53300": "transient",  # too_many_connections
    "53200": "transient",  # out_of_memory
    "53100": "full",  # disk_full
    "25006": "read-only",  # read_only_sql_transaction (a standby)
    "42501": "denied",  # insufficient_privilege
    "3D000": "missing",  # invalid_catalog_name
    "XX001": "damaged",  # data_corrupted
    "XX002": "damaged",  # index_corrupted
}
_SQLSTATE_CLASS_KINDS: dict[str, Fault] = {"08": "transient", "28": "denied", "58": "io"}
_CONNECT_MESSAGES: tuple[tuple[str, Fault], ...] = (
    ("password authentication failed", "denied"),
    ("no pg_hba.conf entry", "denied"),
    ('role "', "denied"),
    ("no password supplied", "denied"),
    ('database "', "missing"),
    ("the database system is", "transient"),
    ("too many clients", "transient"),
)
_ERRNO_KINDS: dict[int, Fault] = {errno.ENOSPC: "full", errno.EDQUOT: "full", errno.EROFS: "read-only",
                                  errno.EACCES: "read-only", errno.EPERM: "read-only", errno.EIO: "io"}  # fmt: skip


class StoreError(WorkbenchError):
    """The database cannot be used (or cannot take a write); the message names the file and says why.

    Exit 2: the database the user named (or its disk) is what to fix. A run whose session could not be
    stored whole ends with exit 3 instead, after it finished (``EXIT_NOT_STORED``)."""

    exit_code: ClassVar[int] = EXIT_BAD_INPUT

    def __init__(self, message: str, kind: Fault = "unusable") -> None:
        super().__init__(message)
        self.kind: Fault = kind


class UnknownSession(UserError, LookupError):
    pass


def fault_kind(error: BaseException) -> Fault:
    """Which storage fault an exception (SQLite's, SQLAlchemy's wrapping of it, or an OSError) reports."""
    cause = getattr(error, "orig", None) or error
    if isinstance(cause, StoreError):
        return cause.kind
    if isinstance(cause, OSError):
        return _ERRNO_KINDS.get(cause.errno or 0, "unusable")
    if isinstance(cause, ImportError):
        return "driver"
    if type(cause).__module__ == "sqlalchemy.exc" and type(cause).__name__ == "TimeoutError":
        return "busy"  # every connection of the pool in use (as long as the pool's own wait)
    code = getattr(cause, "sqlite_errorcode", None)
    if isinstance(code, int):
        return _KINDS.get(code & 0xFF, "unusable")
    if type(cause).__module__.startswith("psycopg"):
        return _postgres_kind(cause, getattr(error, "connection_invalidated", False))
    text = str(cause).lower()
    if isinstance(cause, sqlite3.Error):
        for needle, kind in (("locked", "busy"), ("full", "full"), ("readonly", "read-only"), ("malformed", "damaged")):
            if needle in text:
                return kind  # type: ignore[return-value]
    return "unusable"


def _postgres_kind(error: BaseException, connection_lost: bool) -> Fault:
    state = getattr(error, "sqlstate", None)
    if isinstance(state, str):
        return _SQLSTATE_KINDS.get(state) or _SQLSTATE_CLASS_KINDS.get(state[:2], "unusable")
    text = str(error)
    if type(error).__name__ == "ConnectionTimeout":  # no answer within connect_timeout
        return "unreachable"
    if text.startswith("connection failed"):  # psycopg could not connect: the server said why, or nothing
        return next((kind for needle, kind in _CONNECT_MESSAGES if needle in text), "unreachable")
    if connection_lost or type(error).__name__ == "OperationalError":  # the server went away mid-statement
        return "transient"
    return "unusable"


def store_error(error: BaseException, name: str, doing: str = "") -> StoreError:
    """A one-line :class:`StoreError` for ``error`` met while ``doing`` something with database ``name``."""
    if isinstance(error, StoreError):
        return error
    kind = fault_kind(error)
    return StoreError(describe(kind, name, reason(error), doing), kind)


def describe(kind: Fault, name: str, why: str, doing: str = "") -> str:
    while_ = f" while {doing}" if doing else ""
    if "://" in name:  # a database server: no file to free space on, copy or recover
        match kind:
            case "full":
                return f"{name}: the server's disk is full ({why}){while_}; ask its administrator for space"
            case "read-only":
                because = f" ({why})" if why else ""
                return (
                    f"{name} takes no writes{because}{while_} (a standby, a read-only default, or a login without "
                    "INSERT rights); sessions can be listed, shown, replayed and exported, but not written: point "
                    "--db at the primary, or log in as a user who may write, to run"
                )
            case "damaged":
                return f"{name} reports damaged data ({why}){while_}; ask its administrator to check the server"
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
        case "unreachable":
            return f"{name} cannot be reached ({why}){while_}; is the server running, and are host and port right?"
        case "transient":
            return f"{name} dropped the connection ({why}){while_}; try again once the server is back"
        case "denied":
            return (
                f"{name} refused the login or the request ({why}){while_}; check the user and its password "
                "(PGPASSWORD or ~/.pgpass) and its rights on the database"
            )
        case "missing":
            return f"{name}: {why}; create it (createdb) or fix the database name in the URL"
        case "driver":
            return f"{name} needs the PostgreSQL driver, which is not installed: `{POSTGRES_EXTRA}` installs it"
        case "io":
            return f"{name} cannot be read or written ({why}){while_}; check the disk it is on"
    return f"{name} is not a usable database ({why}){while_}"


def reason(error: BaseException) -> str:
    """The first line of what the driver said (SQLAlchemy appends the whole statement after it)."""
    cause = getattr(error, "orig", None) or error
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror
    first = (str(cause).splitlines() or [type(cause).__name__])[0]
    if first.startswith("connection failed: "):  # psycopg: "connection failed: connection to server at ... failed: X"
        first = first.rpartition("failed: ")[2].removeprefix("FATAL:").strip()
    return first
