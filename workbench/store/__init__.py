"""Session storage: SQLModel on SQLite (WAL), written while a run happens."""

from workbench.store.store import (
    ArmInfo,
    SessionInfo,
    Store,
    StoreError,
    UnknownSession,
    default_db_path,
)
from workbench.store.tables import SCHEMA_VERSION
from workbench.store.writer import EventWriter

__all__ = [
    "SCHEMA_VERSION",
    "ArmInfo",
    "EventWriter",
    "SessionInfo",
    "Store",
    "StoreError",
    "UnknownSession",
    "default_db_path",
]
