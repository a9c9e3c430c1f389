"""Shared fixtures: every test gets its own database and user directories, never the real ones."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.support.headless_chromium import Chromium, chromium_path
from tests.support.postgres_cluster import PostgresCluster, postgres_bindir


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the default database and the config/data directories into the test's tmp dir."""
    monkeypatch.setenv("WORKBENCH_DB", str(tmp_path / "sessions.db"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in (
        "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY", "OPENAI_BASE_URL",
        "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    # A developer's own settings (WORKBENCH_MODEL, a config file, local servers) must not leak into tests.
    leaked = [key for key in os.environ if key.startswith("WORKBENCH_") and key != "WORKBENCH_DB"]
    for name in (*leaked, "GOOGLE_API_KEY", "OLLAMA_BASE_URL", "VLLM_BASE_URL", "ANTHROPIC_BASE_URL", "GROQ_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "sessions.db"


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """One real PostgreSQL cluster for the whole run (initdb in a temp dir, 127.0.0.1, a free port).

    Skipped where PostgreSQL is not installed, unless REQUIRE_POSTGRES is set (CI installs it in ``.ci/run``).
    """
    bindir = postgres_bindir()
    if bindir is None:
        if os.environ.get("REQUIRE_POSTGRES"):
            pytest.fail("PostgreSQL is required (REQUIRE_POSTGRES is set) but initdb is not installed")
        pytest.skip("PostgreSQL is not installed (apt-get install -y postgresql; .ci/run installs it)")
    with PostgresCluster(bindir) as cluster:
        yield cluster


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> str:
    """A fresh, empty database on the shared test cluster: ``postgresql://postgres@127.0.0.1:PORT/wb_...``."""
    return postgres_cluster.database()


@pytest.fixture(params=["sqlite", "postgres"])
def store_db(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """A new session database on each backend: a SQLite file, then a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return tmp_path / "sessions.db"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
async def chromium() -> AsyncIterator[Chromium]:
    """A real headless Chromium; skipped where none is installed, unless REQUIRE_CHROMIUM is set (CI)."""
    executable = chromium_path()
    if executable is None:
        if os.environ.get("REQUIRE_CHROMIUM"):
            pytest.fail("chromium is required (REQUIRE_CHROMIUM is set) but not installed")
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    browser = Chromium(executable)
    await browser.start()
    try:
        yield browser
    finally:
        await browser.close()


SLOW_FILES = frozenset({
    "test_queue.py", "test_store_postgres.py", "test_task_file.py", "test_share_html.py", "test_signals.py",
    "test_share_otel.py", "test_store_outage.py", "test_third_party_servers.py", "test_queue_outages.py",
    "test_share_serve.py", "test_share_serve_attacks.py", "test_sweep_html.py", "test_crash_safety.py",
})  # fmt: skip
"""Test files that start processes or servers: marked ``slow``, so ``pytest -m "not slow"`` is the quick loop."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)
