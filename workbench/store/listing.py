"""Sessions as listed: the one listing query, and a quick way to run it on a SQLite file with ``sqlite3``.

:func:`list_sessions` is the listing: one statement text (named parameters, which ``sqlite3`` and
SQLAlchemy's ``text()`` both take) run through whatever ``Execute`` it is given. The store runs it on its
engine's connection, for every backend (:meth:`workbench.store.sessions.Sessions.listing`).

``workbench sessions`` is among the first commands a person types, and importing SQLAlchemy and SQLModel
takes longer than the listing itself. :func:`quick_sessions` runs the same query, read-only, on a SQLite
file that is already at the current schema. For anything else (a URL, an older schema to migrate, a
damaged, locked or read-only file, fallback files waiting to be imported) it returns ``None`` and the
caller opens the :class:`~workbench.store.Store`, which handles each of those.

This module imports nothing of SQLAlchemy.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from workbench.events import ToolCall
from workbench.session import HeaderFields, SessionHeader
from workbench.store.fallback import pending_files
from workbench.store.faults import StoreError
from workbench.store.liveness import writer_alive
from workbench.store.version import SCHEMA_VERSION, TABLES, stored_utc
from workbench.verdict import session_comparability


@dataclass
class ArmListing:
    """An arm's figures as the listing shows them, read from its row alone (no events): how it ended, what
    it cost and how many calls it made. The full figures, folded from events, are
    :class:`~workbench.summary.ArmSummary`."""

    name: str
    mode: str
    model: str
    status: str
    passed: bool | None
    cost_usd: float | None
    tool_calls: int | None = None
    """Tool calls the arm made (``run_code`` counts as one); ``None`` where not known."""


@dataclass
class SessionInfo(HeaderFields):
    """One stored session as listed: its header (the domain's :class:`~workbench.session.SessionHeader`, the
    one shape of what ran and when), how it stands, and how each arm ended."""

    header: SessionHeader
    status: str
    arms: list[ArmListing] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.header.session_id

    def to_dict(self) -> dict[str, object]:
        verdict = session_comparability(self.arms)
        return {
            "session_id": self.id,
            "created": self.created.isoformat(),
            "app": self.app,
            "items": self.items,
            "model": self.model,
            "prompt": self.prompt,
            "task": self.task,
            "status": self.status,
            "comparable": verdict.comparable,
            "not_comparable_reason": verdict.reason or None,
            "arms": [
                {
                    "name": a.name,
                    "status": a.status,
                    "passed": a.passed,
                    "cost_usd": a.cost_usd,
                    "tool_calls": a.tool_calls,
                }
                for a in self.arms
            ],
        }


def settle(info: SessionInfo, still_running: Callable[[], bool]) -> SessionInfo:
    """A listed session whose "running" writer is gone reads as interrupted, and so do its running arms."""
    if info.status == "running" and not still_running():
        info.status = "interrupted"
        for arm in info.arms:
            if arm.status == "running":
                arm.status = "interrupted"
    return info


def search_pattern(search: str) -> str:
    """A LIKE pattern (escape ``\\``) that matches ``search`` literally, case folded: "50%" and "max_items"
    are text, not wildcards."""
    literal = search.casefold().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{literal}%"


def casefold(value: object) -> object:
    """SQL ``wb_casefold(x)``: Unicode case folding for the session search ("ÉTÉ" finds "été"); SQLite's
    ``lower()`` folds ASCII only."""
    return value.casefold() if isinstance(value, str) else value


@dataclass(frozen=True)
class Listing:
    """Sessions newest first, and how many matching bench runs were left out."""

    sessions: list[SessionInfo]
    hidden: int = 0


_SEARCHED = ("app", "model", "coalesce(task, '')", "prompt", "id")
_SESSION_COLUMNS = "id, created, app, items, seed, prompt, task, model, status, pid, host"
_FOLD = "replace(replace(lower({}), 'ß', 'ss'), 'ς', 'σ')"
"""A server's folding of a column's text as ``str.casefold`` folds the query (lower() plus the folds that change
letters: ß -> ss, final sigma -> sigma); on SQLite the connection has ``wb_casefold``, a Unicode casefold."""
_HEARTBEAT_AGE = {
    "sqlite": "(julianday('now') - julianday(heartbeat)) * 86400.0",
    "postgresql": "extract(epoch FROM timezone('UTC', now()) - heartbeat)",
}
"""Seconds since a session's heartbeat, by the database's clock (as :func:`workbench.store.database.seconds_since`)."""
_CHUNK = 500
"""Session ids per ``IN (...)`` (SQLite limits the parameters of one statement)."""

Row = Sequence[Any]
Execute = Callable[[str, Mapping[str, Any]], Sequence[Row]]
"""Runs one statement with named parameters and returns its rows (a ``sqlite3`` or SQLAlchemy connection's)."""


class DamagedRow(StoreError, ValueError):
    """A session or arm row that does not read as one (edited by hand or by another program)."""


def list_sessions(
    execute: Execute,
    dialect: str,
    *,
    limit: int | None = None,
    search: str | None = None,
    hide_bench: bool = False,
    session_id: str | None = None,
) -> Listing:
    """Sessions newest first: those whose app, model, task, prompt or id holds ``search`` (case folded, taken
    literally), without the ones bench sweeps ran with ``hide_bench`` (counted in ``hidden``), or the one
    ``session_id``. A "running" session whose writer is gone reads as interrupted.

    Raises :class:`DamagedRow` for a row that does not read as a session."""
    where: list[str] = []
    parameters: dict[str, Any] = {}
    if session_id is not None:
        where.append("id = :session_id")
        parameters["session_id"] = session_id
    if search:
        fold = "wb_casefold({})" if dialect == "sqlite" else _FOLD
        where.append("(" + " OR ".join(f"{fold.format(c)} LIKE :pattern ESCAPE '\\'" for c in _SEARCHED) + ")")
        parameters["pattern"] = search_pattern(search)
    hidden = 0
    if hide_bench:
        bench = "id IN (SELECT session_id FROM bench_runs)"
        hidden = execute(f"SELECT count(*) FROM sessions WHERE {' AND '.join([*where, bench])}", parameters)[0][0]
        where.append(f"NOT {bench}")
    age = _HEARTBEAT_AGE["postgresql" if dialect == "postgresql" else "sqlite"]
    query = f"SELECT {_SESSION_COLUMNS}, {age} FROM sessions"
    if where:
        query += f" WHERE {' AND '.join(where)}"
    query += " ORDER BY created DESC, id DESC"
    if limit is not None:
        query += f" LIMIT {int(limit)}"
    rows = execute(query, parameters)
    arms = _arms(execute, [row[0] for row in rows])
    infos = []
    try:
        for session_id, created, app, items, seed, prompt, task, model, status, pid, host, heartbeat_age in rows:
            when = stored_utc(created)
            header = SessionHeader(session_id, app, int(items), int(seed), prompt, task, model, when)
            info = SessionInfo(header, status, arms.get(session_id, []))
            infos.append(settle(info, _writer_check(execute, session_id, pid, host, when, heartbeat_age)))
    except (ValueError, TypeError) as error:
        raise DamagedRow(str(error)) from None
    return Listing(infos, hidden)


def quick_sessions(
    path: Path, *, limit: int | None = None, search: str | None = None, hide_bench: bool = False
) -> Listing | None:
    """The sessions :meth:`Store.sessions` would list from the SQLite file ``path`` (with ``hide_bench``,
    without the ones bench sweeps ran), or ``None`` when the store must open it instead."""
    if not path.is_file() or _fallback_waiting(path):
        return None
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, timeout=1.0)
    except (sqlite3.Error, OSError, ValueError):
        return None
    try:
        with closing(connection):
            connection.execute("PRAGMA query_only = ON")
            if not _current(connection):
                return None
            connection.create_function("wb_casefold", 1, casefold, deterministic=True)

            def execute(statement: str, parameters: Mapping[str, Any]) -> Sequence[Row]:
                return connection.execute(statement, parameters).fetchall()

            return list_sessions(execute, "sqlite", limit=limit, search=search, hide_bench=hide_bench)
    except (sqlite3.Error, ValueError, TypeError):  # damaged, locked, or rows another program wrote
        return None


def _fallback_waiting(path: Path) -> bool:
    """Whether a fallback file in the data directory may be meant for this database (the store imports it
    on opening): one naming it, or one whose first record cannot be read. Another database's are not."""
    from workbench.locations import fallback_dir

    key = str(path.resolve())
    for pending in pending_files(fallback_dir()):
        try:
            with pending.open(encoding="utf-8") as lines:
                if json.loads(lines.readline()).get("db") != key:
                    continue
        except (OSError, ValueError, AttributeError):
            pass
        return True
    return False


def _current(connection: sqlite3.Connection) -> bool:
    tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables >= TABLES:
        return False
    row = connection.execute("SELECT value FROM workbench_meta WHERE key = 'schema_version'").fetchone()
    return row is not None and row[0] == str(SCHEMA_VERSION)


def _writer_check(
    execute: Execute, session_id: str, pid: int, host: str, created: datetime, heartbeat_age: float | None
) -> Callable[[], bool]:
    def last_event_t() -> float | None:
        return execute("SELECT max(t) FROM events WHERE session_id = :session_id", {"session_id": session_id})[0][0]

    age = None if heartbeat_age is None else float(heartbeat_age)
    return lambda: writer_alive(pid, host, created, lambda: age, last_event_t)


def _arms(execute: Execute, session_ids: Sequence[str]) -> dict[str, list[ArmListing]]:
    """Each session's arms in the comparison's order (``position``, then name descending for sessions stored
    before positions), with the tool calls each made."""
    arms: dict[str, list[ArmListing]] = {}
    for start in range(0, len(session_ids), _CHUNK):
        chunk = {f"s{index}": session_id for index, session_id in enumerate(session_ids[start : start + _CHUNK])}
        marks = ", ".join(f":{name}" for name in chunk)
        query = (
            f"SELECT session_id, arm, count(*) FROM events WHERE session_id IN ({marks}) AND kind = :kind "
            "GROUP BY session_id, arm"
        )
        calls = {
            (session_id, arm): count for session_id, arm, count in execute(query, {**chunk, "kind": ToolCall.kind})
        }
        query = (
            "SELECT session_id, name, mode, model, status, passed, cost_usd FROM arms "
            f"WHERE session_id IN ({marks}) ORDER BY position, name DESC"
        )
        for session_id, name, mode, model, status, passed, cost in execute(query, chunk):
            passed = None if passed is None else bool(passed)
            cost = None if cost is None else float(cost)
            count = calls.get((session_id, name), 0)
            arms.setdefault(session_id, []).append(ArmListing(name, mode, model, status, passed, cost, count))
    return arms
