"""Per-arm copies of a working folder, and its state as a snapshot: files, and rows of SQLite databases.

The snapshot needs no knowledge of the app. Files are records of the ``files`` entity keyed by their
path (size and a content hash). Every SQLite database in the folder contributes one entity per table,
``<database>:<table>``, keyed by the primary key (or the rowid), with the row's columns as fields. So
:func:`apps.diff` turns two snapshots into created / updated (field old -> new) / deleted records, as
for the demo apps. Database files themselves (and their journals) are left out of ``files``: their rows
say what changed.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from apps import Snapshot

FILES = "files"
SQLITE_MAGIC = b"SQLite format 3\x00"
SIDE_FILES = ("-journal", "-wal", "-shm")
MAX_ROWS_PER_TABLE = 100_000
"""Tables past this are read only this far (a diff of more rows than that is not read by anyone)."""


class Workdirs:
    """Fresh copies of a template folder, one per arm, under one temporary root removed by :meth:`cleanup`."""

    def __init__(self, template: Path) -> None:
        self.template = template
        self.root = Path(tempfile.mkdtemp(prefix="workbench-arms-"))

    def copy_for(self, arm: str) -> Path:
        target = self.root / arm
        shutil.copytree(self.template, target, symlinks=True)
        return target

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def check_template(path: Path) -> Path:
    """The template folder, resolved; raises ``ValueError`` with a one-line message when unusable."""
    resolved = path.expanduser().resolve()
    if not resolved.is_dir():
        raise ValueError(f"--workdir {path}: no such folder")
    return resolved


def snapshot_folder(folder: Path) -> Snapshot:
    """The folder's files and the rows of every SQLite database in it."""
    files: dict[str, dict[str, Any]] = {}
    state: Snapshot = {FILES: files}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        relative = path.relative_to(folder).as_posix()
        if relative.endswith(SIDE_FILES):
            continue
        if is_sqlite(path):
            state.update(_database_rows(path, relative))
            continue
        data = path.read_bytes()
        files[relative] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()[:16]}
    return state


def is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def _database_rows(path: Path, relative: str) -> Snapshot:
    state: Snapshot = {}
    connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        tables = [
            row[0]
            for row in connection.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        for table in tables:
            state[f"{relative}:{table}"] = _table_rows(connection, table)
    except sqlite3.DatabaseError as error:
        state[f"{relative}:(unreadable)"] = {"error": {"message": str(error)}}
    finally:
        connection.close()
    return state


def _table_rows(connection: sqlite3.Connection, table: str) -> dict[str, dict[str, Any]]:
    quoted = '"' + table.replace('"', '""') + '"'
    info = connection.execute(f"PRAGMA table_info({quoted})").fetchall()
    columns = [row[1] for row in info]
    key_columns = [row[1] for row in sorted(info, key=lambda row: row[5]) if row[5] > 0]
    without_rowid = bool(
        connection.execute("SELECT 1 FROM sqlite_schema WHERE name = ? AND sql LIKE '%WITHOUT ROWID%'", (table,))
        .fetchone()
    )  # fmt: skip
    selected = ", ".join('"' + column.replace('"', '""') + '"' for column in columns)
    if key_columns or without_rowid:
        cursor = connection.execute(f"SELECT {selected} FROM {quoted} LIMIT {MAX_ROWS_PER_TABLE}")
        positions = [columns.index(column) for column in key_columns]
        rows = {}
        for values in cursor:
            record = {column: _json_value(value) for column, value in zip(columns, values, strict=True)}
            rows[",".join(str(record[columns[i]]) for i in positions)] = record
        return rows
    cursor = connection.execute(f"SELECT rowid, {selected} FROM {quoted} LIMIT {MAX_ROWS_PER_TABLE}")
    return {
        str(values[0]): {column: _json_value(value) for column, value in zip(columns, values[1:], strict=True)}
        for values in cursor
    }


def _json_value(value: Any) -> Any:
    if isinstance(value, bytes):
        return "base64:" + base64.b64encode(value).decode()
    return value
