"""Reading a fallback file (:mod:`workbench.store.fallback`) as the hostile input it may be.

Anyone who can put a file in the data directory's ``unsaved/`` folder, or hand one to ``workbench import``,
chooses every byte of it, so nothing in it is trusted: the read is bounded (the file and each line), every
record has a known shape, and every field is on an allow-list with its type and range checked before any
of it reaches the store. A file that fails any check is refused whole with one line (:class:`BadFallbackFile`)
naming the file and what is wrong; nothing of it is applied. Only its last line may be cut short: that is
what a run killed in the middle of a write leaves.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from workbench.errors import UserError
from workbench.events import Status, payload_from, payload_kinds
from workbench.store.fallback import EventTuple, Unsaved, UnsavedSweep
from workbench.store.version import stored_utc

MAX_FILE_BYTES = 128 * 2**20
"""The largest fallback file read (a session of 10,000 events is a few MB; each event's content is clipped)."""
MAX_LINE_BYTES = 32 * 2**20
"""The longest line read; the writer splits a batch of events into lines well below it."""
SHORT_TEXT = 1_000
"""Names, models, modes, hosts, statuses and the database key."""
LONG_TEXT = 1_000_000
"""A prompt, a task, a sweep's options."""
MAX_ARMS = 64
INT32 = 2**31 - 1
"""Integer columns are 32-bit on PostgreSQL."""
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
"""Session and sweep ids: what the workbench makes (hex, ``sweep-`` + hex), never a path."""
STATUSES: frozenset[str] = frozenset(Status.__args__)  # type: ignore[attr-defined]
"""Session, arm and run statuses a workbench writes."""
SWEEP_STATUSES = frozenset({"running", "queued", "completed", "interrupted", "failed"})


class BadFallbackFile(UserError, ValueError):
    """Not a workbench fallback file, or one holding what no workbench writes; the message is one line that
    names the file and what is wrong."""


class _Wrong(ValueError):
    """What is wrong with one value (the reader adds the file and line)."""


# -- values ---------------------------------------------------------------------------------------

Check = Callable[[Any], Any]


def text(limit: int = SHORT_TEXT) -> Check:
    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise _Wrong(f"is {_kind(value)}, not text")
        if len(value) > limit:
            raise _Wrong(f"is longer than {limit:,} characters")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _Wrong("holds text that is not valid Unicode") from None
        return value

    return check


def ident(value: Any) -> str:
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise _Wrong("is not a workbench id (letters, digits, '.', '_', ':' or '-', at most 128)")
    return value


def count(value: Any, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Wrong(f"is {_kind(value)}, not a whole number")
    if not low <= value <= INT32:
        raise _Wrong(f"is out of range ({low} to {INT32})")
    return value


def signed(value: Any) -> int:
    return count(value, low=-INT32 - 1)


def amount(value: Any) -> float:
    """A finite, non-negative number (a cost, seconds since an arm started)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Wrong(f"is {_kind(value)}, not a number")
    if not math.isfinite(value) or value < 0:
        raise _Wrong("is not a finite, non-negative number")
    return float(value)


def flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Wrong(f"is {_kind(value)}, not true or false")
    return value


def one_of(allowed: frozenset[str]) -> Check:
    def check(value: Any) -> str:
        if value not in allowed:
            raise _Wrong(f"is not one of {', '.join(sorted(allowed))}")
        return str(value)

    return check


def when(value: Any) -> datetime:
    """An ISO moment (the writer's ``isoformat()``), as an aware UTC datetime."""
    if not isinstance(value, str) or len(value) > 64:
        raise _Wrong("is not an ISO date and time")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise _Wrong("is not an ISO date and time") from None
    return stored_utc(parsed)


def json_object_text(value: Any) -> str:
    checked = text(LONG_TEXT)(value)
    try:
        if not isinstance(_loads(checked), dict):
            raise _Wrong("is not a JSON object")
    except (ValueError, RecursionError):
        raise _Wrong("is not a JSON object") from None
    return checked


def nullable(check: Check) -> Check:
    return lambda value: None if value is None else check(value)


# -- rows: the allow-lists ----------------------------------------------------------------------------

Fields = dict[str, tuple[Check, bool]]
"""A row's allowed keys: each one's check, and whether the row must have it."""

SESSION_FIELDS: Fields = {
    "id": (ident, True),
    "created": (when, True),
    "app": (text(), True),
    "items": (count, True),
    "seed": (signed, True),
    "prompt": (text(LONG_TEXT), True),
    "task": (nullable(text(LONG_TEXT)), False),
    "model": (text(), True),
    "status": (one_of(STATUSES), False),
    "pid": (count, False),
    "host": (text(), False),
}
"""The session row of a file's first record (what ``session_record`` writes); nothing else reaches a row."""
ARM_FIELDS: Fields = {
    "name": (text(), True),
    "mode": (text(), True),
    "model": (text(), True),
    "status": (one_of(STATUSES), False),
    "position": (count, False),
    "passed": (nullable(flag), False),
    "cost_usd": (nullable(amount), False),
}
"""An arm row, in the first record and in the finish record."""
ARM_END_FIELDS = ("mode", "status", "passed", "cost_usd")
"""What a finish record may set on an arm the database holds (its name, model and place never change)."""
SWEEP_FIELDS: Fields = {
    "id": (ident, True),
    "created": (when, True),
    "model": (text(), True),
    "planned": (count, True),
    "options": (json_object_text, False),
    "status": (one_of(SWEEP_STATUSES), False),
    "finished": (nullable(when), False),
    "pid": (count, False),
    "host": (text(), False),
}
SWEEP_RUN_FIELDS: Fields = {
    "sweep_id": (ident, True),
    "session_id": (ident, True),
    "position": (count, True),
    "tier": (text(), True),
    "task": (text(), True),
    "items": (count, True),
    "seed": (signed, True),
    "repeat": (count, True),
    "model": (text(), True),
    "status": (one_of(STATUSES), True),
    "reused": (flag, False),
    "finished": (when, True),
}
_RECORDS: dict[str, frozenset[str]] = {
    "session": frozenset({"record", "db", "session", "arms"}),
    "events": frozenset({"record", "events"}),
    "finish": frozenset({"record", "status", "finished", "arms"}),
    "sweep": frozenset({"record", "db", "sweep_id", "pid", "host", "row"}),
    "sweep_run": frozenset({"record", "row"}),
    "sweep_finish": frozenset({"record", "status", "finished"}),
}
_KINDS = frozenset(payload_kinds())


def checked_row(value: Any, allowed: Fields, what: str) -> dict[str, Any]:
    """``value`` as a row of ``allowed`` keys, each value checked; refused with what is wrong."""
    if not isinstance(value, dict):
        raise _Wrong(f"{what} is {_kind(value)}, not an object")
    unknown = [key for key in value if key not in allowed]
    if unknown:
        raise _Wrong(f"{what} has unknown keys {_names(unknown)}")
    row = {}
    for key, (check, required) in allowed.items():
        if key not in value:
            if required:
                raise _Wrong(f"{what} has no {key!r}")
            continue
        try:
            row[key] = check(value[key])
        except _Wrong as wrong:
            raise _Wrong(f"{what}'s {key!r} {wrong}") from None
    return row


def _arms(value: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_ARMS:
        raise _Wrong(f"{what} is not a list of 1 to {MAX_ARMS} arms")
    arms = [checked_row(arm, ARM_FIELDS, f"{what}[{number}]") for number, arm in enumerate(value)]
    names = [arm["name"] for arm in arms]
    if len(set(names)) != len(names):
        raise _Wrong(f"{what} names an arm twice")
    return arms


def _event(value: Any, arms: set[str]) -> EventTuple:
    if not isinstance(value, list) or len(value) != 5:
        raise _Wrong("an event is not [arm, seq, t, kind, data]")
    arm, seq, t, kind, data = value
    if arm not in arms:
        raise _Wrong(f"an event is of arm {_cut(arm)}, which the session does not have")
    try:
        seq, t = count(seq), amount(t)
    except _Wrong as wrong:
        raise _Wrong(f"event {_cut(arm)} #{_cut(seq)}: its seq or t {wrong}") from None
    if kind not in _KINDS:
        raise _Wrong(f"event {arm} #{seq} is of an unknown kind {_cut(kind)}")
    data = text(MAX_LINE_BYTES)(data) if isinstance(data, str) else data
    try:
        fields = _loads(data) if isinstance(data, str) else None
        if not isinstance(fields, dict):
            raise ValueError
        payload_from(kind, fields)
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        raise _Wrong(f"event {arm} #{seq}: its data is not the fields of a {kind} event") from None
    return (arm, seq, t, kind, data)


# -- the file -------------------------------------------------------------------------------------


def read_unsaved(path: Path) -> Unsaved | UnsavedSweep:
    """The records of a fallback file (a session's or a sweep's), every value checked.

    Raises :class:`BadFallbackFile` (one line naming the file and what is wrong) for anything a workbench
    does not write; only a last line cut short (the run was killed mid-write) is counted, not refused.
    """
    unsaved: Unsaved | UnsavedSweep | None = None
    seen: dict[tuple[str, int], tuple[float, str, str]] = {}  # each event read so far, by (arm, seq)
    lines = _Lines(path)
    try:
        for record in lines:
            if record is None:
                if unsaved is not None:
                    unsaved.damaged_lines = 1
                break
            kind = record.get("record")
            if kind not in _RECORDS:
                raise _Wrong(f"a record of an unknown kind {_cut(kind)}")
            unknown = [key for key in record if key not in _RECORDS[kind]]
            if unknown:
                raise _Wrong(f"the {kind} record has unknown keys {_names(unknown)}")
            if unsaved is None:
                unsaved = _first(path, kind, record)
            elif unsaved.finish is not None:
                raise _Wrong(f"a {kind} record after the file's last (finish) record")
            elif isinstance(unsaved, Unsaved):
                _session_record(unsaved, kind, record, seen)
            else:
                _sweep_record(unsaved, kind, record)
    except _Wrong as wrong:
        where = f"line {lines.number}: " if lines.number else ""
        raise BadFallbackFile(f"{path}: {where}{wrong}") from None
    except OSError as error:
        raise BadFallbackFile(f"{path} cannot be read ({error.strerror or error})") from None
    if unsaved is None:
        raise BadFallbackFile(f"{path} is not a workbench fallback file (it has no session or sweep record)")
    return unsaved


def _first(path: Path, kind: str, record: dict[str, Any]) -> Unsaved | UnsavedSweep:
    if kind == "session":
        session = checked_row(record.get("session"), SESSION_FIELDS, "the session")
        if session.get("status", "running") != "running":
            raise _Wrong("the session record's status is not 'running' (a writer starts every session running)")
        return Unsaved(path, text()(record.get("db")), session, _arms(record.get("arms"), "the session's arms"))
    if kind == "sweep":
        sweep_id = ident(record.get("sweep_id"))
        row = record.get("row")
        sweep = None if row is None else checked_row(row, SWEEP_FIELDS, "the sweep's row")
        if sweep is not None and sweep["id"] != sweep_id:
            raise _Wrong("the sweep's row is of another sweep")
        pid, host = count(record.get("pid", 0)), text()(record.get("host", ""))
        return UnsavedSweep(path, text()(record.get("db")), sweep_id, pid, host, sweep)
    raise _Wrong(f"a {kind} record before the session or sweep record")


def _session_record(
    unsaved: Unsaved, kind: str, record: dict[str, Any], seen: dict[tuple[str, int], tuple[float, str, str]]
) -> None:
    names = {arm["name"] for arm in unsaved.arms}
    if kind == "events":
        events = record.get("events")
        if not isinstance(events, list):
            raise _Wrong("the events record holds no list of events")
        for value in events:
            event = _event(value, names)
            rest = event[2:]
            earlier = seen.setdefault(event[:2], rest)
            if earlier != rest:
                raise _Wrong(f"event {event[0]} #{event[1]} is in the file twice, differently")
            if earlier is rest:
                unsaved.events.append(event)
    elif kind == "finish":
        status = one_of(STATUSES)(record.get("status"))
        arms = _arms(record.get("arms"), "the finish record's arms")
        if {arm["name"] for arm in arms} - names:
            raise _Wrong("the finish record names an arm the session does not have")
        unsaved.finish = {"status": status, "finished": when(record.get("finished")), "arms": arms}
    else:
        raise _Wrong(f"a {kind} record in a session's file")


def _sweep_record(unsaved: UnsavedSweep, kind: str, record: dict[str, Any]) -> None:
    if kind == "sweep_run":
        run = checked_row(record.get("row"), SWEEP_RUN_FIELDS, "the run")
        if run["sweep_id"] != unsaved.sweep_id:
            raise _Wrong("a run of another sweep")
        unsaved.runs.append(run)
    elif kind == "sweep_finish":
        status = one_of(SWEEP_STATUSES)(record.get("status"))
        unsaved.finish = {"status": status, "finished": when(record.get("finished"))}
    else:
        raise _Wrong(f"a {kind} record in a sweep's file")


class _Lines:
    """Each line's record; ``None`` for a last line cut short. Bounded: the file and each line; a pipe or
    device is refused before it is read (it could block for ever). ``number`` is the line being read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.number = 0

    def __iter__(self) -> Iterator[dict[str, Any] | None]:
        descriptor = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(descriptor, "rb") as handle:
            status = os.fstat(handle.fileno())
            if not stat.S_ISREG(status.st_mode):
                raise _Wrong("it is not a regular file")
            if status.st_size > MAX_FILE_BYTES:
                raise _Wrong(f"it is larger than {MAX_FILE_BYTES // 2**20} MiB")
            read = 0
            while True:
                line = handle.readline(MAX_LINE_BYTES + 1)
                if not line:
                    return
                self.number += 1
                read += len(line)
                if len(line) > MAX_LINE_BYTES:
                    raise _Wrong(f"the line is longer than {MAX_LINE_BYTES // 2**20} MiB")
                if read > MAX_FILE_BYTES:
                    raise _Wrong(f"the file grew larger than {MAX_FILE_BYTES // 2**20} MiB")
                if not line.strip():
                    continue
                try:
                    record = _loads(line.decode("utf-8"))
                except (ValueError, RecursionError):
                    if not line.endswith(b"\n"):
                        yield None  # the last line, cut short
                        return
                    raise _Wrong("it is not JSON (or holds NaN or an infinite number)") from None
                if not isinstance(record, dict):
                    raise _Wrong("it is not a JSON object")
                yield record


def _loads(line: str) -> Any:
    """JSON without NaN or infinities (``1e309`` reads as infinity: refused too)."""
    return json.loads(line, parse_constant=_not_finite, parse_float=_finite)


def _not_finite(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise ValueError(f"{literal[:20]} is too large")
    return value


def _kind(value: Any) -> str:
    return {type(None): "null", bool: "true/false", int: "a number", float: "a number", str: "text",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)  # fmt: skip


def _cut(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _names(keys: list[str]) -> str:
    return ", ".join(_cut(key) for key in keys[:3]) + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")
