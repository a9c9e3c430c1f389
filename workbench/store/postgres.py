"""The session store on a PostgreSQL server (psycopg 3): the engine, the schema lock, text PostgreSQL refuses.

Imported only when a ``postgresql://`` database is opened, so ``import workbench`` never loads psycopg.
"""

from __future__ import annotations

import contextlib
import math
import time
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.exc import DisconnectionError

CONNECT_TIMEOUT_S = 10
"""How long opening a connection waits for a server that does not answer (a wrong host, a firewall, a stopped
server whose kernel still accepts the connection); psycopg enforces it on the client."""
STATEMENT_TIMEOUT_S = 60
"""The server cancels a statement running longer (no statement of the workbench, or of DBOS, needs a minute)."""
IDLE_IN_TRANSACTION_TIMEOUT_S = 60
"""The server ends a session left idle inside a transaction this long (a client frozen mid-transaction would
hold its locks for ever)."""
KEEPALIVE_IDLE_S, KEEPALIVE_INTERVAL_S, KEEPALIVE_COUNT = 10, 5, 3
"""TCP keepalives on every connection: a peer that stopped answering (a frozen VM, a dropped network path) is
found within idle + interval x count = 25 s even while the connection waits for a reply."""
TCP_USER_TIMEOUT_S = 30
"""Data sent but unacknowledged this long closes the connection (a dead peer while a statement is sent)."""
PING_TIMEOUT_S = 5.0
"""Most the check of a pooled connection waits for its answer before the connection is replaced."""
POOL_SIZE = 4
"""Connections a process keeps open: the session writer's thread, a reader, and room for a bench's runs."""
POOL_TIMEOUT_S = 10.0
"""Most a checkout waits for a free connection of the pool."""
SCHEMA_LOCK = 0x776F726B62656E63
"""The advisory lock (a 64-bit key: b"workbenc") held while a process checks, creates or migrates the schema,
so many processes starting at once against a new database create it once."""
NUL_REPLACEMENT = "\ufffd"
"""PostgreSQL's text cannot hold NUL; a NUL in a stored string (a prompt, a model name) becomes U+FFFD, as a
lone surrogate does on every backend. Events are JSON, where NUL is already the escape ``\\u0000``."""


def connect_args(
    *,
    lock_timeout_s: float | None = None,
    statement_timeout_s: float = STATEMENT_TIMEOUT_S,
    connect_timeout_s: float = CONNECT_TIMEOUT_S,
    application_name: str = "workbench",
) -> dict[str, Any]:
    """libpq connection parameters that bound every call on a connection, for every engine of the workbench
    (the store's, and a queue worker's): a deadline to connect, server-side statement, lock and
    idle-in-transaction timeouts, and TCP keepalives plus ``tcp_user_timeout`` so a peer that vanished is
    noticed. A server that is alive but frozen (SIGSTOP, a paused VM on the same host) still acknowledges
    TCP, so none of these fire for it: :mod:`workbench.store.deadline` cuts such a connection on the client.
    """
    options = [
        f"-c statement_timeout={_ms(statement_timeout_s)}",
        f"-c idle_in_transaction_session_timeout={_ms(IDLE_IN_TRANSACTION_TIMEOUT_S)}",
    ]
    if lock_timeout_s is not None:
        options.insert(0, f"-c lock_timeout={_ms(lock_timeout_s)}")
    return {
        "connect_timeout": max(2, round(connect_timeout_s)),  # libpq's least
        "application_name": application_name,
        "options": " ".join(options),
        "keepalives": 1,
        "keepalives_idle": KEEPALIVE_IDLE_S,
        "keepalives_interval": KEEPALIVE_INTERVAL_S,
        "keepalives_count": KEEPALIVE_COUNT,
        "tcp_user_timeout": _ms(TCP_USER_TIMEOUT_S),
    }


def postgres_engine(url: str, *, lock_timeout_s: float, wait_s: float = CONNECT_TIMEOUT_S) -> Engine:
    """An engine whose pool checks a connection before lending it (a restarted server's connections are
    replaced, not failed on) and whose statements never carry NUL. A statement waits ``lock_timeout_s`` for a
    lock another session holds, then fails as busy (the store's write retries it, as it does on SQLite).

    Every call is bounded (:func:`connect_args`); the check before lending is a ``SELECT 1`` that a
    :func:`workbench.store.deadline.attempt` around the caller cuts when the server does not answer in time,
    and a connection made inside such an attempt waits at most what the attempt has left (``wait_s`` caps
    both the connect and the wait for a free connection of the pool)."""
    connect_timeout_s = min(CONNECT_TIMEOUT_S, wait_s)
    engine = create_engine(
        url,
        pool_size=POOL_SIZE,
        max_overflow=2 * POOL_SIZE,
        pool_recycle=1800,
        pool_timeout=max(1.0, min(POOL_TIMEOUT_S, wait_s)),
        connect_args=connect_args(lock_timeout_s=lock_timeout_s, connect_timeout_s=connect_timeout_s),
    )
    event.listen(engine, "before_cursor_execute", _without_nul, retval=True)
    bound_calls(engine)
    return engine


def bound_calls(engine: Engine) -> None:
    """Put a psycopg engine's connections under :mod:`workbench.store.deadline`: a connection lent inside an
    attempt is watched by it (and checked with a ``SELECT 1`` the attempt's deadline bounds), and a connection
    made inside one waits at most what the attempt has left to connect."""
    from workbench.store import deadline

    @event.listens_for(engine, "do_connect")
    def _connect_within(dialect: Any, record: Any, cargs: Any, cparams: dict[str, Any]) -> None:
        left = deadline.time_left()
        if left is not None:
            cparams["connect_timeout"] = max(2, min(int(cparams.get("connect_timeout", CONNECT_TIMEOUT_S)),
                                                    math.ceil(left)))  # fmt: skip
        record.info["fresh"] = True

    @event.listens_for(engine, "checkout")
    def _watch_and_ping(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        deadline.watch(dbapi_connection)
        if record.info.pop("fresh", False):
            return
        left = deadline.time_left()
        try:  # a pooled connection that does not answer a ping within PING_TIMEOUT_S is replaced
            with (
                contextlib.nullcontext()
                if left is None
                else deadline.attempt(time.monotonic() + min(left, PING_TIMEOUT_S))
            ):
                deadline.watch(dbapi_connection)
                with dbapi_connection.cursor() as cursor:
                    cursor.execute("SELECT 1")
                if dbapi_connection.info.transaction_status != 0:  # psycopg.pq.TransactionStatus.IDLE
                    dbapi_connection.rollback()
        except Exception as error:
            if deadline.expired():
                raise  # the attempt is over: no fresh connection for it
            raise DisconnectionError(f"the pooled connection is gone ({error})") from error


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


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
