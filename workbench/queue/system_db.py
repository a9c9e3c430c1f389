"""Where DBOS keeps a queued sweep's workflows: one answer for the enqueuer, every worker and every reader.

The database itself (its URL for a store, its file, an engine with the store's deadlines) is the store's
business (:mod:`workbench.store.queue_db`); this module names the application DBOS files everything under.
"""

from __future__ import annotations

from workbench.store.queue_db import SYSTEM_DB_SUFFIX, system_database_path, system_database_url, system_engine

__all__ = [
    "APP_NAME",
    "SYSTEM_DB_SUFFIX",
    "application_version",
    "system_database_path",
    "system_database_url",
    "system_engine",
]

APP_NAME = "workbench"
"""The DBOS application name every workbench process uses (workflows, queues and versions are filed under it)."""


def application_version() -> str:
    """The version workers and enqueuers agree on: DBOS only runs and recovers workflows of its own version
    (derived from the code itself, :mod:`workbench.queue.version`)."""
    from workbench.queue import version

    return version.application_version()
