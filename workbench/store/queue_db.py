"""The queue's system database as SQLAlchemy sees it: which database DBOS keeps a store's queue in, its file
on SQLite, and an engine on it with the store's deadlines.

DBOS owns that database's schema (its ``workflow_status`` and queues); the workbench's own queue table, the
workers' leases, is in the session store (:mod:`workbench.store.workers`). This module is here so that
nothing outside ``workbench.store`` imports SQLAlchemy: :mod:`workbench.queue.system_db` names the
database, :mod:`workbench.queue.dbos_gateway` hands the engine to DBOS.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

from workbench.errors import BadInput

if TYPE_CHECKING:
    from workbench.store.store import Store

SYSTEM_DB_SUFFIX = ".dbos.sqlite"


def system_database_url(store: Store, configured: str | None = None) -> str:
    """DBOS's system database for a session store: ``configured`` (``[queue] system_database``) if set, else
    the store's own PostgreSQL database (DBOS keeps its own schema), else an embedded SQLite file beside the
    store's file (``sessions.db`` -> ``sessions.db.dbos.sqlite``)."""
    if configured:
        return make_url(configured).set(drivername="postgresql").render_as_string(hide_password=False)
    if store.path is not None:
        return f"sqlite:///{store.path.resolve()}{SYSTEM_DB_SUFFIX}"
    url = make_url(store.url)
    if url.get_backend_name() == "postgresql":
        return url.set(drivername="postgresql").render_as_string(hide_password=False)
    raise BadInput(f"the queue needs a SQLite or PostgreSQL session store, not {url.get_backend_name()}")


def system_database_path(url: str) -> Path | None:
    """The file of an embedded (SQLite) system database, ``None`` on PostgreSQL."""
    parsed = make_url(url)
    return Path(parsed.database) if parsed.get_backend_name() == "sqlite" and parsed.database else None


def system_engine(url: str, *, pool_size: int = 2) -> Engine:
    """A SQLAlchemy engine on the system database: DBOS's own in a worker, a reader's or a client's.

    On PostgreSQL every connection has the store's deadlines (:func:`workbench.store.postgres.connect_args`:
    connect, statement and idle-in-transaction timeouts, TCP keepalives and ``tcp_user_timeout``) and is
    checked before use (:func:`~workbench.store.postgres.bound_calls`: a restarted server's connections are
    replaced, not failed on, and a call under a deadline is cut when it passes).

    On SQLite every transaction takes the file's write lock when it begins (:func:`serialized`), so a
    worker's DBOS counts a queue's running comparisons and claims the next ones in one serialized
    transaction, as its PostgreSQL isolation level makes it there."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        from workbench.store.postgres import bound_calls, connect_args

        engine = create_engine(
            parsed.set(drivername="postgresql+psycopg"), pool_size=pool_size, max_overflow=pool_size,
            pool_timeout=30, connect_args=connect_args(application_name="workbench-queue"),
        )  # fmt: skip
        bound_calls(engine)  # a frozen server's call is cut at its caller's deadline; a dead connection replaced
        return engine
    engine = create_engine(
        parsed, pool_size=pool_size, max_overflow=pool_size, pool_timeout=30, connect_args={"timeout": 30}
    )
    serialized(engine)
    return engine


SQLITE_BUSY_TIMEOUT_MS = 30_000
"""How long a transaction waits for another one's write lock (DBOS's own engine waits as long)."""


def serialized(engine: Engine) -> None:
    """Every transaction on this SQLite engine begins with ``BEGIN IMMEDIATE``: it holds the write lock from its
    first statement to its commit, so what it read cannot change before it writes.

    Python's sqlite3 driver begins a transaction by itself only before an INSERT, UPDATE, DELETE or REPLACE,
    so a transaction's SELECTs before its first write run outside it. DBOS 3.4's engine on SQLite relies on
    that driver's ``BEGIN IMMEDIATE`` (``isolation_level = "IMMEDIATE"``), and its claim of queued workflows
    (``start_queued_workflows``) first counts the queue's PENDING workflows and selects the ENQUEUED ones,
    then marks them PENDING: two workers could both count none running before either claimed, and a queue of
    concurrency 1 ran two comparisons at once (seen in ``test_a_provider_limit_holds_across_workers`` under
    load: two workflows claimed in the same second by two executors, both PENDING for 5 s). SQLAlchemy's
    recipe for pysqlite (the driver's own BEGIN off, one emitted at every begin) makes the SELECTs part of
    the transaction. Upstream request: the same in DBOS's own SQLite engine."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # the driver begins nothing itself; the "begin" hook does
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")  # as DBOS's own engine has it
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
