"""Where the workbench keeps things: the config file, the data directory, the session database.

Every entry point (``run``, ``sessions``, ``show``, ``replay``, ``export``, ``bench``, ``import``, the TUI,
``workbench locate`` and the Python API) asks :func:`resolve_db` for its database, so they all agree:
the ``--db`` flag (or ``db=`` argument) > ``$WORKBENCH_DB`` > ``db`` in the config file > ``sessions.db``
in the data directory. This module imports nothing of the workbench: the caller passes the settings it
loaded, whose ``db`` counts only when neither a flag nor the variable decides.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from platformdirs import user_config_path, user_data_path

if TYPE_CHECKING:
    from workbench.config import Settings

APP_DIR_NAME = "code-mode-workbench"
"""The directory name under the user's config and data directories."""
CONFIG_FILE_ENV = "WORKBENCH_CONFIG"
DB_ENV = "WORKBENCH_DB"


def config_file() -> Path:
    """``$WORKBENCH_CONFIG`` if set, else ``config.toml`` in the user's config directory (it need not exist)."""
    configured = os.environ.get(CONFIG_FILE_ENV)
    if configured:
        return Path(configured).expanduser()
    return user_config_path(APP_DIR_NAME, appauthor=False) / "config.toml"


def data_dir() -> Path:
    """Where the workbench keeps its data: the session database (by default), unsaved sessions, recent models."""
    return user_data_path(APP_DIR_NAME, appauthor=False)


def default_db_file() -> Path:
    return data_dir() / "sessions.db"


def fallback_dir() -> Path:
    """Where a run's events go (as JSON lines) when its database cannot take them; ``workbench import``
    brings them back."""
    return data_dir() / "unsaved"


def recent_models_file() -> Path:
    return data_dir() / "recent-models.json"


def recent_apps_file() -> Path:
    """The TUI's recent MCP servers and toolsets (header values are never written there)."""
    return data_dir() / "recent-apps.json"


POSTGRES_DRIVER = "postgresql+psycopg"
"""SQLAlchemy's name for PostgreSQL through psycopg 3 (the ``postgres`` extra); users write ``postgresql://``."""
_POSTGRES_SCHEMES = ("postgresql", "postgres", POSTGRES_DRIVER)


@dataclass(frozen=True)
class DbLocation:
    """A resolved session database: a file path or a SQLAlchemy URL, and which setting chose it.

    Printed (``str``), a URL shows its password as ``***``: messages, ``locate`` and fallback files never
    hold it."""

    target: Path | str
    source: str = "flag"
    """'flag', 'env WORKBENCH_DB', 'file' (the config file's ``db``) or 'default'."""

    @property
    def path(self) -> Path | None:
        return self.target if isinstance(self.target, Path) else None

    @property
    def url(self) -> str:
        """The SQLAlchemy URL (with the password, to connect)."""
        return f"sqlite:///{self.target}" if isinstance(self.target, Path) else self.target

    def __str__(self) -> str:
        return str(self.target) if isinstance(self.target, Path) else shown_url(self.target)


def db_location(value: str | Path) -> DbLocation:
    """A location given directly (a flag, an argument): a URL as is, a path with ``~`` expanded."""
    return DbLocation(_target(value), "flag")


def resolve_db(flag: str | Path | None, settings: Settings) -> DbLocation:
    """The session database: ``flag`` > ``$WORKBENCH_DB`` > the config file's ``db`` (in ``settings``, which
    the caller loaded: this module imports nothing of the workbench) > the default file."""
    if flag is not None and str(flag) != "":
        return db_location(flag)
    configured = os.environ.get(DB_ENV)
    if configured:
        return DbLocation(_target(configured), f"env {DB_ENV}")
    if settings.db:
        return DbLocation(_target(settings.db), settings.source("db"))
    return DbLocation(default_db_file(), "default")


def database_url(value: str) -> str:
    """A database URL as SQLAlchemy takes it: ``postgresql://`` and ``postgres://`` use psycopg 3."""
    scheme, separator, rest = value.partition("://")
    if scheme.lower() in _POSTGRES_SCHEMES:
        return f"{POSTGRES_DRIVER}{separator}{rest}"
    return value


def shown_url(url: str, *, password: str | None = "***") -> str:
    """``url`` as the workbench prints it: the user's scheme (``postgresql://``), the password as ``***``
    (or left out when ``password`` is None)."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        return url
    if scheme == POSTGRES_DRIVER:
        scheme = "postgresql"
    netloc, slash, tail = rest.partition("/")
    credentials, at, host = netloc.rpartition("@")
    if at and ":" in credentials:
        user = credentials.partition(":")[0]
        netloc = f"{user}:{password}@{host}" if password is not None else f"{user}@{host}"
    path, question, query = tail.partition("?")
    if query:
        kept = [
            f"password={password}" if part.lower().startswith("password=") else part
            for part in query.split("&")
            if password is not None or not part.lower().startswith("password=")
        ]
        query = "&".join(kept)
        question = question if query else ""
    return f"{scheme}{separator}{netloc}{slash}{path}{question}{query}"


def _target(value: str | Path) -> Path | str:
    if isinstance(value, str) and "://" in value:
        return database_url(value)
    try:
        return Path(value).expanduser()
    except RuntimeError:  # "Could not determine home directory." for ~unknown-user
        return Path(value)
