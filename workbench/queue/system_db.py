"""Where DBOS keeps a queued sweep's workflows: one answer for the enqueuer, every worker and every reader."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, create_engine
from sqlalchemy.engine import make_url

from workbench.store import Store

APP_NAME = "workbench"
"""The DBOS application name every workbench process uses (workflows, queues and versions are filed under it)."""
DBOS_SCHEMA = "dbos"
"""DBOS's own schema on PostgreSQL (SQLite has no schemas: the system database is a file of its own)."""
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
    raise ValueError(f"the queue needs a SQLite or PostgreSQL session store, not {url.get_backend_name()}")


def system_database_path(url: str) -> Path | None:
    """The file of an embedded (SQLite) system database, ``None`` on PostgreSQL."""
    parsed = make_url(url)
    return Path(parsed.database) if parsed.get_backend_name() == "sqlite" and parsed.database else None


def application_version() -> str:
    """The version workers and enqueuers agree on: DBOS only runs and recovers workflows of its own version
    (derived from the code itself, :mod:`workbench.queue.version`)."""
    from workbench.queue import version

    return version.application_version()


def system_engine(url: str) -> Engine:
    """A plain SQLAlchemy engine on the system database (for the workbench's own reads and its worker table)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        return create_engine(parsed.set(drivername="postgresql+psycopg"), pool_pre_ping=True, pool_size=2)
    return create_engine(parsed, connect_args={"timeout": 30})


def dbos_schema(engine: Engine) -> str | None:
    """The schema DBOS's tables live in on this engine (``None`` on SQLite)."""
    return DBOS_SCHEMA if engine.dialect.name == "postgresql" else None
