"""Persistence has one facade: nothing outside ``workbench/store/`` imports SQLModel, SQLAlchemy or the store's
tables, so a change of schema or ORM is a change of ``workbench.store`` alone.

Every import counts, module-level and function-local; an import under ``if TYPE_CHECKING:`` does not (it
never runs: ``dbos_gateway`` names the type of the engine the store built for DBOS, and only hands it on).
"""

from __future__ import annotations

import ast
from pathlib import Path

from sqlmodel import SQLModel

from workbench.store import schema
from workbench.store.version import TABLES

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "workbench"
STORE = PACKAGE / "store"
ORM = ("sqlmodel", "sqlalchemy")
STORE_INSIDES = ("workbench.store.schema", "workbench.store.database", "workbench.store.sessions")
"""The store's modules that hold tables, engines or ORM sessions: reached only through ``Store``."""


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            name = node.test.id if isinstance(node.test, ast.Name) else getattr(node.test, "attr", "")
            if name == "TYPE_CHECKING":
                skipped.update(id(sub) for child in node.body for sub in ast.walk(child))
    return skipped


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of each import that runs, with ``from a import b`` as both ``a`` and ``a.b``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _reaches_in(name: str) -> bool:
    return name.split(".")[0] in ORM or any(name == inside or name.startswith(f"{inside}.") for inside in STORE_INSIDES)


def offenders(root: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.is_relative_to(STORE):
            continue
        for line, name in _imports(path):
            if _reaches_in(name):
                found.append(f"{path.relative_to(root.parent)}:{line} imports {name}")
    return found


def test_nothing_outside_the_store_imports_the_orm_or_the_tables() -> None:
    assert offenders() == []


def test_the_check_finds_an_import_of_the_orm(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from sqlalchemy import Engine\n"
        "def f():\n    from sqlmodel import Session\n"
        "from workbench.store.schema import SessionRow\n"
        "from workbench.store import Store\n"
    )
    found = offenders(tmp_path)
    assert sorted(entry.split(" imports ")[1] for entry in found) == [
        "sqlmodel",
        "sqlmodel.Session",
        "workbench.store.schema",
        "workbench.store.schema.SessionRow",
    ], found


def test_the_table_names_the_quick_listing_checks_are_the_schemas() -> None:
    assert schema.SCHEMA_VERSION >= 4
    assert set(SQLModel.metadata.tables) == TABLES
