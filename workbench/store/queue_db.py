"""The queue's system database as SQLAlchemy sees it: which database DBOS keeps a store's queue in, its file
on SQLite, and an engine on it with the store's deadlines.

DBOS owns that database's schema (its ``workflow_status`` and queues); the workbench's own queue table, the
workers' leases, is in the session store (:mod:`workbench.store.workers`). This module is here so that
nothing outside ``workbench.store`` imports SQLAlchemy: :mod:`workbench.queue.system_db` names the
database, :mod:`workbench.queue.dbos_gateway` hands the engine to DBOS.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, create_engine
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
    replaced, not failed on, and a call under a deadline is cut when it passes)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        from workbench.store.postgres import bound_calls, connect_args

        engine = create_engine(
            parsed.set(drivername="postgresql+psycopg"), pool_size=pool_size, max_overflow=pool_size,
            pool_timeout=30, connect_args=connect_args(application_name="workbench-queue"),
        )  # fmt: skip
        bound_calls(engine)  # a frozen server's call is cut at its caller's deadline; a dead connection replaced
        return engine
    return create_engine(parsed, connect_args={"timeout": 30})
