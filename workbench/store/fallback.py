"""A session's events as JSON lines, for when its database cannot take them.

A writer that meets a fault it cannot wait out (disk full, read-only, damaged, locked for too long) puts
the session and every event not yet committed into ``<data dir>/unsaved/<session id>.jsonl``, and keeps
appending there until the run ends. ``workbench import`` (or the next open of that database) brings the
file back into the store and removes it. One record per line::

    {"record": "session", "db": ..., "session": {...}, "arms": [...]}
    {"record": "events", "events": [[arm, seq, t, kind, data-json], ...]}     (any number of these)
    {"record": "finish", "status": ..., "finished": iso-time, "arms": [...]}  (absent if the run was killed)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

SUFFIX = ".jsonl"

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
        if events:
            self._append({"record": "events", "events": events})

    def finish(self, status: str, finished: datetime, arms: list[dict[str, Any]]) -> None:
        self._append({"record": "finish", "status": status, "finished": finished.isoformat(), "arms": arms})

    def _append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=True, default=str) + "\n"
        with self.path.open("a", encoding="ascii") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())


def read_unsaved(path: Path) -> Unsaved:
    """The records of a fallback file; a line cut short (the run was killed mid-write) is counted, not fatal.

    Raises ``ValueError`` when the file does not start with a session record (not a fallback file).
    """
    unsaved: Unsaved | None = None
    damaged = 0
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = json.loads(line)
                kind = record["record"]
            except (ValueError, TypeError, KeyError):
                damaged += 1
                continue
            if unsaved is None:
                if kind != "session":
                    break
                unsaved = Unsaved(path, str(record["db"]), dict(record["session"]), list(record["arms"]))
            elif kind == "events":
                unsaved.events += [(str(a), int(s), float(t), str(k), str(d)) for a, s, t, k, d in record["events"]]
            elif kind == "finish":
                unsaved.finish = record
    if unsaved is None:
        raise ValueError(f"{path} is not a file of unsaved workbench events")
    unsaved.damaged_lines = damaged
    return unsaved


def pending_files(directory: Path) -> list[Path]:
    try:
        return sorted(directory.glob(f"*{SUFFIX}"))
    except OSError:
        return []
