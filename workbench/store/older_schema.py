"""Reading a store of an older schema where it cannot be migrated (a read-only file, folder or file system).

Every SQLite connection gets temporary views named like the current tables; unqualified names find them
before the file's own tables. A table that lacks some of the current columns reads through a view that
adds them with the default the migration would have filled in; a table the older schema did not have
reads as empty. Nothing is written to the file.
"""

from __future__ import annotations

import sqlite3

from sqlalchemy import Column, Engine, Table, event, literal
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlmodel import SQLModel


def read_as_current_schema(engine: Engine) -> None:
    """Make every connection of ``engine`` (SQLite) see the file's older tables in the current shape."""
    event.listen(engine, "connect", _add_views)
    engine.dispose()  # a connection opened before the listener would read the older shape


def _add_views(connection: sqlite3.Connection, _record: object) -> None:
    for table in SQLModel.metadata.sorted_tables:
        existing = {row[1] for row in connection.execute(f'PRAGMA main.table_info("{table.name}")')}
        view = _current_shape(table, existing)
        if view is not None:
            connection.execute(view)


def _current_shape(table: Table, existing: set[str]) -> str | None:
    """A ``CREATE TEMP VIEW`` that reads ``table`` in its current shape, or None when it already has it."""
    if existing >= {column.name for column in table.columns}:
        return None
    if existing:
        columns = ", ".join(
            f'"{column.name}"' if column.name in existing else f'{_default(column)} AS "{column.name}"'
            for column in table.columns
        )
        return f'CREATE TEMP VIEW "{table.name}" AS SELECT {columns} FROM main."{table.name}"'
    columns = ", ".join(f'NULL AS "{column.name}"' for column in table.columns)
    return f'CREATE TEMP VIEW "{table.name}" AS SELECT {columns} WHERE 0'


def _default(column: Column[object]) -> str:
    """The column's scalar default as an SQL literal (NULL without one)."""
    default = getattr(column.default, "arg", None)
    if default is None or callable(default):
        return "NULL"
    return str(literal(default).compile(dialect=sqlite_dialect.dialect(), compile_kwargs={"literal_binds": True}))
