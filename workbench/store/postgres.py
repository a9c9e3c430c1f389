"""The session store on a PostgreSQL server (psycopg 3): the engine, the schema lock, text PostgreSQL refuses.

Imported only when a ``postgresql://`` database is opened, so ``import workbench`` never loads psycopg.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, func, text

CONNECT_TIMEOUT_S = 10
"""How long opening a connection waits for a server that does not answer (a wrong host, a firewall)."""
POOL_SIZE = 4
"""Connections a process keeps open: the session writer's thread, a reader, and room for a bench's runs."""
SCHEMA_LOCK = 0x776F726B62656E63
"""The advisory lock (a 64-bit key: b"workbenc") held while a process checks, creates or migrates the schema,
so many processes starting at once against a new database create it once."""
NUL_REPLACEMENT = "\ufffd"
"""PostgreSQL's text cannot hold NUL; a NUL in a stored string (a prompt, a model name) becomes U+FFFD, as a
lone surrogate does on every backend. Events are JSON, where NUL is already the escape ``\\u0000``."""


def postgres_engine(url: str, *, lock_timeout_s: float) -> Engine:
    """An engine whose pool checks a connection before lending it (a restarted server's connections are
    replaced, not failed on) and whose statements never carry NUL. A statement waits ``lock_timeout_s`` for a
    lock another session holds, then fails as busy (the store's write retries it, as it does on SQLite)."""
    engine = create_engine(
        url,
        pool_pre_ping=True,
        pool_size=POOL_SIZE,
        max_overflow=2 * POOL_SIZE,
        pool_recycle=1800,
        connect_args={
            "connect_timeout": CONNECT_TIMEOUT_S,
            "application_name": "workbench",
            "options": f"-c lock_timeout={max(1, round(lock_timeout_s * 1000))}",
        },
    )
    event.listen(engine, "before_cursor_execute", _without_nul, retval=True)
    return engine


def lock_schema(connection: Connection) -> None:
    """Hold the schema lock until the connection's transaction ends."""
    connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK})


def can_write(connection: Connection) -> bool:
    """Whether this login can store sessions: not a standby, not a read-only default, and allowed to insert
    into and update the store's tables (a reader's login may only select)."""
    query = text(
        "SELECT NOT pg_is_in_recovery() AND current_setting('default_transaction_read_only') = 'off' "
        "AND has_table_privilege('sessions', 'INSERT, UPDATE') AND has_table_privilege('arms', 'INSERT, UPDATE') "
        "AND has_table_privilege('events', 'INSERT')"
    )
    return bool(connection.execute(query).scalar())


def casefold(column: Any) -> Any:
    """SQL folding a column's text for the session search as ``str.casefold`` folds the query (lower() plus
    the folds that change letters: ß -> ss, final sigma -> sigma)."""
    return func.replace(func.replace(func.lower(column), "ß", "ss"), "ς", "σ")


def _without_nul(
    connection: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
) -> tuple[str, Any]:
    return statement, _clean(parameters)


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", NUL_REPLACEMENT) if "\x00" in value else value
    if isinstance(value, dict):
        if any(isinstance(item, str) and "\x00" in item for item in value.values()):
            return {key: _clean(item) for key, item in value.items()}
        return value
    if isinstance(value, (list, tuple)):
        cleaned = [_clean(item) for item in value]
        return type(value)(cleaned) if any(a is not b for a, b in zip(cleaned, value, strict=True)) else value
    return value
