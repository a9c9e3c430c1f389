"""A session's events as JSON lines, for when its database cannot take them.

A writer that meets a fault it cannot wait out (disk full, read-only, damaged, locked for too long) puts
the session and every event not yet committed into ``<data dir>/unsaved/<session id>.jsonl``, and keeps
appending there until the run ends. ``workbench import`` (or the next open of that database) brings the
file back into the store and removes it. One record per line::

    {"record": "session", "db": ..., "session": {...}, "arms": [...]}
    {"record": "events", "events": [[arm, seq, t, kind, data-json], ...]}     (any number of these)
    {"record": "finish", "status": ..., "finished": iso-time, "arms": [...]}  (absent if the run was killed)

A bench sweep whose own rows (the sweep, which sessions it ran) cannot be stored keeps them the same way,
in ``<sweep id>.jsonl``, from the first row the database refused to the sweep's end; the sessions it ran
have their own files. ``workbench import`` stores the sessions first, then the sweep's rows::

    {"record": "sweep", "db": ..., "sweep_id": ..., "pid": ..., "host": ..., "row": {...} or null}
    {"record": "sweep_run", "row": {...}}                                      (one per run recorded)
    {"record": "sweep_finish", "status": ..., "finished": iso-time}            (absent if the sweep was killed)

(``row`` of the first record is null when the database took the sweep's own row before it failed.)

``workbench import`` reads these files as hostile input and only adds what the database lacks
(:mod:`workbench.store.fallback_read`, :mod:`workbench.store.imports`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

SUFFIX = ".jsonl"
EVENTS_LINE_BYTES = 1 << 19
"""The most characters of event data one line holds; written with ASCII escapes a line can be a few times
longer in bytes (about 3 MiB for non-ASCII text), still far below the longest line an import reads."""

EventTuple = tuple[str, int, float, str, str]
"""(arm, seq, t, kind, data as JSON) — an event as the store's events table holds it."""


@dataclass
class Unsaved:
    """What a fallback file holds."""

    path: Path
    db: str
    session: dict[str, Any]
    arms: list[dict[str, Any]]
    events: list[EventTuple] = field(default_factory=list)
    finish: dict[str, Any] | None = None
    damaged_lines: int = 0

    @property
    def session_id(self) -> str:
        return str(self.session["id"])

    @property
    def pid(self) -> int:
        return int(self.session.get("pid", 0))

    @property
    def host(self) -> str:
        return str(self.session.get("host", ""))

    @property
    def ended(self) -> bool:
        return self.finish is not None


@dataclass
class UnsavedSweep:
    """What a sweep's fallback file holds: rows of the bench's tables, with times as ISO strings."""

    path: Path
    db: str
    sweep_id: str
    pid: int
    host: str
    sweep: dict[str, Any] | None
    """The sweep's own row, when the database did not take it."""
    runs: list[dict[str, Any]] = field(default_factory=list)
    finish: dict[str, Any] | None = None
    damaged_lines: int = 0

    @property
    def ended(self) -> bool:
        return self.finish is not None


class FallbackFile:
    """Appends one session's records to its fallback file; every append reaches the disk before returning."""

    def __init__(self, directory: Path, session_id: str) -> None:
        self.path = directory / f"{session_id}{SUFFIX}"
        self._started = False

    def start(self, db: str, session: dict[str, Any], arms: list[dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._append({"record": "session", "db": db, "session": session, "arms": arms})
        self._started = True

    @property
    def started(self) -> bool:
        return self._started

    def events(self, events: list[EventTuple]) -> None:
        """Append events, in records of at most ``EVENTS_LINE_BYTES`` each (an import reads bounded lines)."""
        batch: list[EventTuple] = []
        size = 0
        for event in events:
            event_size = len(event[4]) + len(event[0]) + len(event[3]) + 64
            if batch and size + event_size > EVENTS_LINE_BYTES:
                self._append({"record": "events", "events": batch})
                batch, size = [], 0
            batch.append(event)
            size += event_size
        if batch:
            self._append({"record": "events", "events": batch})

    def finish(self, status: str, finished: datetime, arms: list[dict[str, Any]]) -> None:
        self._append({"record": "finish", "status": status, "finished": finished.isoformat(), "arms": arms})

    def remove(self) -> bool:
        """Remove the file (its events all reached the database); the next append starts a new one. When it
        cannot be removed it stays, to be appended to: its import adds only what the database lacks."""
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            return False
        self._started = False
        return True

    def _append(self, record: dict[str, Any]) -> None:
        _append(self.path, record)


class SweepFallbackFile:
    """Appends one sweep's rows to its fallback file; every append reaches the disk before returning."""

    def __init__(self, directory: Path, sweep_id: str) -> None:
        self.path = directory / f"{sweep_id}{SUFFIX}"
        self.sweep_id = sweep_id
        self.started = False

    def start(self, db: str, pid: int, host: str, sweep: dict[str, Any] | None) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        header = {"record": "sweep", "db": db, "sweep_id": self.sweep_id, "pid": pid, "host": host, "row": sweep}
        _append(self.path, header)
        self.started = True

    def run(self, row: dict[str, Any]) -> None:
        _append(self.path, {"record": "sweep_run", "row": row})

    def finish(self, status: str, finished: datetime) -> None:
        _append(self.path, {"record": "sweep_finish", "status": status, "finished": finished.isoformat()})


def _append(path: Path, record: dict[str, Any]) -> None:
    line = json.dumps(record, ensure_ascii=True, default=_jsonable) + "\n"
    with path.open("a", encoding="ascii") as handle:
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())


def _jsonable(value: object) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


def pending_files(directory: Path) -> list[Path]:
    try:
        return sorted(directory.glob(f"*{SUFFIX}"))
    except OSError:
        return []
