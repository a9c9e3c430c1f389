"""Session storage: SQLModel on SQLite (WAL), written while a run happens.

``Store(location)`` opens a database (:func:`workbench.locations.resolve_db` says which);
``store.begin(comparison)`` returns the :class:`SessionWriter` that stores a run as it happens.
"""

from workbench.store.faults import StoreError, UnknownSession
from workbench.store.store import ArmInfo, Imported, SessionInfo, Store
from workbench.store.tables import SCHEMA_VERSION
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
