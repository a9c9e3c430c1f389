"""The store's schema version and table names, readable without SQLAlchemy (the quick listing checks them).

:mod:`workbench.store.schema` defines the tables and migrates a store up to :data:`SCHEMA_VERSION`.
"""

from __future__ import annotations

SCHEMA_VERSION = 4
"""1: sessions, arms, events (the bench's tables created on first use, outside the version).
2: the bench's tables are part of the schema; an event is unique per (session, arm, seq).
3: a session's writer refreshes its ``heartbeat`` (a shared database's readers on other hosts judge it by that).
4: the queue's workers and their leases (``queue_workers``), which were an unversioned table in DBOS's schema."""
TABLES = frozenset({"workbench_meta", "sessions", "arms", "events", "bench_sweeps", "bench_runs", "queue_workers"})
"""The tables of a current-schema store (:mod:`workbench.store.schema` defines them; a test holds them equal)."""
