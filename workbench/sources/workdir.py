"""Per-arm copies of a working folder, and its state as a snapshot: files, and rows of SQLite databases.

The snapshot needs no knowledge of the app. Files are records of the ``files`` entity keyed by their
path (size and a content hash). Every SQLite database in the folder contributes one entity per table,
``<database>:<table>``, keyed by the primary key (or the rowid), with the row's columns as fields. So
:func:`apps.diff` turns two snapshots into created / updated (field old -> new) / deleted records, as
for the demo apps. Database files themselves (and their journals) are left out of ``files``: their rows
say what changed, and entity ``<database>`` has one record per table (its ``CREATE`` statement), so a
table created empty is a change too. A file with no bytes yet and a database's name (``*.db``,
``*.sqlite``...) is an empty database, as SQLite itself takes it: a server that creates its database at
start makes one change (its tables), not a deleted file and a created table.

A git repository in the folder is read as a person using it means it, not as the files under ``.git``
(whose index holds each copy's file times, whose objects and logs differ by commit time): entity
``git:<repo>`` has one record per ref (``HEAD``, ``refs/heads/main``) with the tree of the commit it
points to, the commit's message and how many commits lead to it; ``git:<repo>:staged`` has one record
per staged path with its content's hash. The working tree's files are files like any other.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from workbench.apps import Snapshot
from workbench.errors import BadInput

FILES = "files"
SQLITE_MAGIC = b"SQLite format 3\x00"
SIDE_FILES = ("-journal", "-wal", "-shm")
DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3", ".db3")
GIT = "git:"
GIT_TIMEOUT_S = 30.0
"""Most seconds one git command reading a repository may take."""
MAX_ROWS_PER_TABLE = 100_000
"""Tables past this are read only this far (a diff of more rows than that is not read by anyone)."""


def check_template(path: Path) -> Path:
    """The template folder, resolved; raises ``BadInput`` with a one-line message when unusable."""
    if "\0" in str(path):  # the file system's calls refuse it (ValueError: embedded null byte)
        raise BadInput(f"--workdir {str(path)!r}: a folder name cannot hold a NUL character")
    resolved = path.expanduser().resolve()
    if not resolved.is_dir():
        raise BadInput(f"--workdir {path}: no such folder")
    return resolved


def snapshot_folder(folder: Path) -> Snapshot:
    """The folder's files and the rows of every SQLite database in it."""
    files: dict[str, dict[str, Any]] = {}
    state: Snapshot = {FILES: files}
    repositories = _repositories(folder) if shutil.which("git") else []
    for repository in repositories:
        state.update(_git_state(repository, repository.relative_to(folder).as_posix()))
    git_dirs = [repository / ".git" for repository in repositories]
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        if any(path.is_relative_to(git_dir) for git_dir in git_dirs):
            continue
        relative = path.relative_to(folder).as_posix()
        if relative.endswith(SIDE_FILES):
            continue
        if is_sqlite(path):
            state.update(_database_rows(path, relative))
            continue
        data = path.read_bytes()
        if not data and path.suffix.lower() in DATABASE_SUFFIXES:
            state[relative] = {}  # an empty database, as SQLite reads a file with no bytes: no tables yet
            continue

        files[relative] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()[:16]}
    return state


def _repositories(folder: Path) -> list[Path]:
    """Folders under ``folder`` (itself included) that hold a git repository (a ``.git`` folder)."""
    found = [path.parent for path in folder.rglob(".git") if path.is_dir() and (path / "HEAD").is_file()]
    return sorted(found)


def _git(repository: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(repository), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT_S,
        stdin=subprocess.DEVNULL, env=dict(os.environ, GIT_OPTIONAL_LOCKS="0"),
    )  # fmt: skip
    # (no optional locks: reading a repository must not rewrite its index)
    return result.stdout if result.returncode == 0 else ""


def _git_state(repository: Path, relative: str) -> Snapshot:
    """The repository's refs (by the tree of their commit) and staged files, at the level a user means."""
    name = f"{GIT}{relative if relative != '.' else '.'}"
    refs: dict[str, dict[str, Any]] = {}
    try:
        listing = _git(repository, "for-each-ref", "--format=%(refname)%00%(objectname)")
        head = _git(repository, "symbolic-ref", "-q", "HEAD").strip()
        targets = [line.split("\0") for line in listing.splitlines() if "\0" in line]
        head_commit = _git(repository, "rev-parse", "-q", "--verify", "HEAD^{commit}").strip()
        if head or head_commit:
            targets.append(["HEAD", head_commit])
        for ref, commit in targets:
            record: dict[str, Any] = {}
            if ref == "HEAD" and head:
                record["branch"] = head
            if commit:
                tree, _, message = _git(repository, "show", "-s", "--format=%T%x00%B", commit).partition("\0")
                count = _git(repository, "rev-list", "--count", commit).strip()
                record |= {"tree": tree.strip(), "message": message.strip(), "commits": int(count or 0)}
            refs[ref] = record
        staged = {}
        for line in _git(repository, "ls-files", "--stage", "-z").split("\0"):
            meta, tab, path = line.partition("\t")
            if tab:
                mode, blob, stage = meta.split()
                staged[path] = {"mode": mode, "blob": blob} | ({"stage": int(stage)} if stage != "0" else {})
    except (OSError, subprocess.SubprocessError, ValueError) as error:
        return {name: {"(unreadable)": {"error": str(error)}}}
    return {name: refs, f"{name}:staged": staged}


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
        tables = {
            name: {"sql": sql}
            for name, sql in connection.execute(
                "SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        }
        state[relative] = tables  # the database's tables: a table created (even empty) is a change
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
