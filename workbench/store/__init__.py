"""Persistence: sessions, their events and the bench's sweeps in SQLite (WAL) or PostgreSQL, behind one facade.

``Store(location)`` opens a database (:func:`workbench.locations.resolve_db` says which) and is what callers
hold; ``store.begin(comparison)`` returns the :class:`SessionWriter` that stores a run as it happens. Behind
it: ``schema`` (tables, create, migrate), ``database`` (engine, probe, the one read deadline and write
policy), ``sessions``, ``sweeps``, ``listing`` (the one listing query, which also runs on a bare ``sqlite3``
connection), ``imports`` (fallback files). Nothing outside this package imports SQLModel, SQLAlchemy or the
tables (``tests/test_store_seam.py``). The package loads SQLAlchemy only when one of its names needs it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from workbench.store.faults import StoreError, UnknownSession
from workbench.store.listing import ArmListing, SessionInfo
from workbench.store.version import SCHEMA_VERSION

if TYPE_CHECKING:
    from workbench.store.imported import Imported
    from workbench.store.store import Store
    from workbench.store.writer import SessionWriter

__all__ = [
    "SCHEMA_VERSION",
    "ArmListing",
    "Imported",
    "SessionInfo",
    "SessionWriter",
    "Store",
    "StoreError",
    "UnknownSession",
]
_LAZY = {
    "Imported": "workbench.store.imported",
    "Store": "workbench.store.store",
    "SessionWriter": "workbench.store.writer",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
