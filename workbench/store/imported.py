"""What an import of a fallback file did, and the rules the session and sweep imports share.

Both imports only add (:mod:`workbench.store.imports`, :mod:`workbench.store.unsaved_sweeps`): a file that
disagrees with what the database holds is an :class:`ImportConflict`, reported and left in place.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlmodel import Session

from workbench.errors import UserError
from workbench.store.liveness import on_this_host, own_process
from workbench.store.postgres import NUL_REPLACEMENT

log = logging.getLogger(__name__)

_SHOWN_DIFFERENCES = 4
"""The differences a conflict's one line names (then how many more)."""


@dataclass(frozen=True)
class Imported:
    """What ``workbench import`` did with one session's fallback file."""

    path: Path
    session_id: str
    added_events: int
    skipped_events: int
    created_session: bool
    ended: bool = False
    """Whether the import recorded the session's end."""


@dataclass(frozen=True)
class ImportedSweep:
    """What ``workbench import`` did with one sweep's fallback file."""

    path: Path
    sweep_id: str
    added_runs: int
    skipped_runs: int
    """Runs already recorded in the database."""
    waiting_runs: int
    """Runs whose session is not in the database (the file is kept for them)."""
    created_sweep: bool


@dataclass(frozen=True)
class Waiting:
    """A fallback file left for later: its run still goes on, or it is for another database."""

    path: Path
    why: str


class ImportConflict(UserError):
    """A fallback file that disagrees with what the database holds; nothing of it was applied."""


def conflict(path: Path, what: str, differences: list[str]) -> ImportConflict:
    found = "; ".join(differences[:_SHOWN_DIFFERENCES])
    if len(differences) > _SHOWN_DIFFERENCES:
        found += f"; and {len(differences) - _SHOWN_DIFFERENCES} more"
    return ImportConflict(f"{path}: {what} differs: {found}; the file was left in place, nothing of it applied")


def lock_for_import(db: Session, key: str) -> None:
    """Hold the write lock (SQLite) or an advisory lock on ``key`` (PostgreSQL) until the transaction ends,
    so two processes importing the same file (each open imports) see each other's rows."""
    connection = db.connection()
    if connection.dialect.name == "sqlite":
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    elif connection.dialect.name == "postgresql":
        digest = hashlib.sha256(f"workbench import {key}".encode()).digest()
        lock = int.from_bytes(digest[:8], "big", signed=True)
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": lock})


def writers_own_end(file_pid: int, file_host: str, ended: bool, row_pid: int, row_host: str) -> bool:
    """Whether a file is a stored row's writer's own and that writer recorded its end there: it gave up on
    the database, though its process (this user's, on this host) still runs."""
    return ended and file_pid == row_pid and file_host == row_host and on_this_host(row_host) and own_process(row_pid)


def differences(file: dict[str, Any], row: Any, keys: tuple[str, ...], prefix: str = "") -> list[str]:
    """``keys`` on which a file's fields (only those it has) disagree with a stored row's, shown briefly."""
    return [
        f"{prefix}{key} ({shown(file[key])}, stored {shown(getattr(row, key))})"
        for key in keys
        if key in file and not same(file[key], getattr(row, key))
    ]


def same(value: Any, stored: Any) -> bool:
    """Whether a file's value is the stored one (PostgreSQL stores a NUL in text as U+FFFD)."""
    if isinstance(value, str) and isinstance(stored, str):
        return value.replace("\x00", NUL_REPLACEMENT) == stored.replace("\x00", NUL_REPLACEMENT)
    return bool(value == stored)


def shown(value: Any) -> str:
    text_ = value.isoformat() if isinstance(value, datetime) else repr(value)
    return text_ if len(text_) <= 40 else text_[:37] + "..."


def remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as error:
        log.warning("imported %s but could not remove it: %s", path, error)
