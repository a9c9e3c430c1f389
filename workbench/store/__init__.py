"""Session storage: SQLModel on SQLite (WAL), written while a run happens.

``Store(location)`` opens a database (:func:`workbench.locations.resolve_db` says which);
``store.begin(comparison)`` returns the :class:`SessionWriter` that stores a run as it happens.
:mod:`workbench.store.listing` lists sessions without SQLAlchemy, so this package loads the store only when
one of its names is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from workbench.store.faults import StoreError, UnknownSession
from workbench.store.listing import ArmInfo, SessionInfo
from workbench.store.version import SCHEMA_VERSION

if TYPE_CHECKING:
    from workbench.store.imported import Imported
    from workbench.store.store import Store
    from workbench.store.writer import SessionWriter

__all__ = [
    "SCHEMA_VERSION",
    "ArmInfo",
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
