"""A task's expected end state for an app the workbench did not write: SQL checks, or an expected folder.

SQL checks run read-only against a SQLite database in the arm's copy of the working folder; each
passes when its first row's first value is true (``SELECT count(*) = 0 FROM notes WHERE ...``). An
expected folder is snapshotted like the arm's and compared record by record (:func:`apps.grade`:
existing records by key, created ones by content).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import workbench.apps as apps
from workbench.apps import Snapshot
from workbench.events import Graded
from workbench.sources.folder import ArmFolder
from workbench.sources.workdir import is_sqlite, snapshot_folder


@dataclass(frozen=True)
class Expectation:
    name: str
    """Shown on the grade, like a built-in task's id."""
    sql: tuple[str, ...] = ()
    database: str | None = None
    """The database the SQL checks run on, relative to the working folder (default: its only one)."""
    workdir: Path | None = None
    """A folder the arm's working folder should end up like."""

    def grade(self, folder: Path | None, start: Snapshot, end: Snapshot) -> Graded:
        mismatches: list[str] = []
        collateral: list[str] = []
        if self.workdir is not None:
            verdict = apps.grade(start, snapshot_folder(self.workdir), end)
            mismatches += verdict.mismatches
            collateral += verdict.collateral
        if self.sql:
            mismatches += self._check_sql(folder)
        return Graded(not mismatches, self.name, mismatches, collateral)

    def _check_sql(self, folder: Path | None) -> list[str]:
        if folder is None:
            return ["SQL checks need a working folder (workdir)"]
        if self.database is not None:
            database = folder / self.database
        else:
            found = sorted(path for path in folder.rglob("*") if path.is_file() and is_sqlite(path))
            if len(found) != 1:
                names = ", ".join(path.relative_to(folder).as_posix() for path in found) or "none"
                return [f"SQL checks need one database in the working folder or `database = ...` (found: {names})"]
            database = found[0]
        if not database.is_file():
            return [f"SQL checks: no database {self.database} in the working folder"]
        problems = []
        connection = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)
        try:
            for statement in self.sql:
                try:
                    row = connection.execute(statement).fetchone()
                except sqlite3.Error as error:
                    problems.append(f"SQL check failed to run: {statement} ({error})")
                    continue
                if not row:
                    problems.append(f"SQL check returned no row: {statement}")
                elif not row[0]:
                    shown = "" if row[0] in (0, None, False) else f" (it gave {row[0]!r})"
                    problems.append(f"SQL check was false: {statement}{shown}")
        finally:
            connection.close()
        return problems


def expectation_grader(
    expectation: Expectation | None, folder: ArmFolder
) -> Callable[[Snapshot, Snapshot], Awaitable[Graded]] | None:
    """The arm instance's grader for ``expectation`` (``None`` when there is none)."""
    if expectation is None:
        return None

    async def grade(start: Snapshot, end: Snapshot) -> Graded:
        return await asyncio.to_thread(expectation.grade, folder.workdir, start, end)

    return grade
