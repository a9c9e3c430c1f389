"""The store's schema version, table names and time format, readable without SQLAlchemy (the quick listing
checks the first two and reads times with :func:`stored_utc`).

:mod:`workbench.store.schema` defines the tables and migrates a store up to :data:`SCHEMA_VERSION`.
"""

from __future__ import annotations

from datetime import UTC, datetime

SCHEMA_VERSION = 4
"""1: sessions, arms, events (the bench's tables created on first use, outside the version).
2: the bench's tables are part of the schema; an event is unique per (session, arm, seq).
3: a session's writer refreshes its ``heartbeat`` (a shared database's readers on other hosts judge it by that).
4: the queue's workers and their leases (``queue_workers``), which were an unversioned table in DBOS's schema."""
TABLES = frozenset({"workbench_meta", "sessions", "arms", "events", "bench_sweeps", "bench_runs", "queue_workers"})
"""The tables of a current-schema store (:mod:`workbench.store.schema` defines them; a test holds them equal)."""


def stored_utc(value: str | datetime) -> datetime:
    """A stored time (naive UTC, as the store and its fallback files write it; an ISO string from a bare
    ``sqlite3`` read or a file) as an aware UTC datetime."""
    parsed = datetime.fromisoformat(value) if isinstance(value, str) else value
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
