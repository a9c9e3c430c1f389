"""Reaching behind the store's back on either backend: the tests that edit rows a user or another program
could have edited."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text

from workbench.locations import db_location


def execute_sql(db: Path | str, statement: str, **params: Any) -> list[tuple[Any, ...]]:
    """Run one SQL statement on database ``db`` (a file or a URL) in its own connection; its rows, if any."""
    engine = create_engine(db_location(db).url)
    try:
        with engine.begin() as connection:
            result = connection.execute(text(statement), params)
            return [tuple(row) for row in result] if result.returns_rows else []
    finally:
        engine.dispose()


def stored_events(db: Path | str, session_id: str) -> int:
    """How many events of a session database ``db`` holds."""
    ((count,),) = execute_sql(db, "SELECT count(*) FROM events WHERE session_id = :id", id=session_id)
    return int(count)


def all_at_once(action: Callable[[int], object], count: int) -> list[BaseException]:
    """Run ``action(0)`` ... ``action(count - 1)`` in threads released together; the errors they raised."""
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def one(number: int) -> None:
        barrier.wait()
        try:
            action(number)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=one, args=(number,)) for number in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


@contextmanager
def open_transaction(db: Path | str, *statements: str, write: bool = False) -> Iterator[None]:
    """Another connection inside an open transaction that ran ``statements`` (SQLite: ``BEGIN IMMEDIATE``
    when ``write``, else a read snapshot; PostgreSQL: its row locks or its snapshot), rolled back at the end."""
    if isinstance(db, Path):
        connection: Any = sqlite3.connect(db, timeout=10, check_same_thread=False)
        connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    else:
        import psycopg

        connection = psycopg.connect(db)
        connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    try:
        for statement in statements:
            cursor = connection.execute(statement)
            if statement.lstrip().upper().startswith("SELECT"):
                cursor.fetchall()
        yield
    finally:
        connection.rollback()
        connection.close()
