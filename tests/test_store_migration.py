"""A database written by an earlier release opens, migrates and reads back after an upgrade.

``fixtures/schema1.db`` was written by the release with schema 1 (main at d10efad): one
``workbench run --task cart/remove-expensive`` and a two-task ``bench`` sweep at 5 items.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

import workbench
from reliability.storage import read_only_bind
from tests.support.mounts import refused_mount_skips
from workbench.bench import SweepStore, load_sweep
from workbench.cli import cli
from workbench.store import SCHEMA_VERSION, Store

FIXTURE = Path(__file__).parent / "fixtures" / "schema1.db"
SWEEP = "sweep-cb0188dc"
RUN = "5e9f1c"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), prog_name="workbench")
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def schema1(tmp_path: Path) -> Path:
    path = tmp_path / "schema1.db"
    shutil.copyfile(FIXTURE, path)
    return path


def _tables_and_version(path: Path) -> tuple[set[str], str]:
    with sqlite3.connect(path) as connection:
        names = {name for (name,) in connection.execute("SELECT name FROM sqlite_master")}
        (version,) = connection.execute("SELECT value FROM workbench_meta WHERE key = 'schema_version'").fetchone()
    return names, version


def test_the_fixture_is_a_schema_1_store() -> None:
    names, version = _tables_and_version(FIXTURE)
    assert version == "1" and "ix_events_session_arm_seq" not in names


def test_a_schema_1_store_migrates_and_lists_shows_replays_and_exports(schema1: Path) -> None:
    code, out, err = invoke("sessions", "--json", "--bench", "--db", str(schema1))
    assert code == 0, err
    listed = json.loads(out)
    assert len(listed) == 3 and all(info["status"] == "completed" for info in listed)
    names, version = _tables_and_version(schema1)
    assert version == str(SCHEMA_VERSION) == "4" and "ix_events_session_arm_seq" in names and "queue_workers" in names

    store = Store(schema1)
    session_id = store.resolve_id(RUN)
    shown = store.load(session_id)
    assert shown.task == "cart/remove-expensive" and shown.created.tzinfo is not None
    assert [arm.summary.status for arm in shown.arms.values()] == ["completed", "completed"]
    assert all(arm.summary.passed for arm in shown.arms.values())
    replayed = store.events_by_time(session_id)
    assert len(replayed) == len(shown.events) > 20
    code, out, _ = invoke("show", RUN, "--json", "--db", str(schema1))
    assert code == 0 and json.loads(out)["session_id"] == session_id

    sweep = SweepStore(store).sweep(SWEEP)
    assert sweep.status == "completed" and sweep.finished_runs == 2 and sweep.created.tzinfo is not None
    report = load_sweep(store, SWEEP)
    assert report.finished == 2 and report.status == "completed"
    code, out, _ = invoke("export", SWEEP, "--format", "md", "--db", str(schema1))
    assert code == 0 and "bench report" in out.lower()

    # The upgraded store takes new runs, and opening it again changes nothing.
    comparison = workbench.compare_sync(task="cart/cap-quantity", items=5, db=schema1)
    assert comparison.stored and Store(schema1).count_sessions() == 4


def test_a_schema_1_store_without_the_bench_tables_gains_them(schema1: Path) -> None:
    with sqlite3.connect(schema1) as connection:
        connection.execute("DROP TABLE bench_runs")
        connection.execute("DROP TABLE bench_sweeps")
    store = Store(schema1)
    assert _tables_and_version(schema1)[1] == str(SCHEMA_VERSION)
    assert SweepStore(store).sweeps() == []
    assert store.count_sessions() == 3


def test_a_failed_migration_leaves_the_schema_1_store_as_it_was(schema1: Path) -> None:
    """The migration is one transaction: a store it cannot finish stays at schema 1, every row in place."""
    with sqlite3.connect(schema1) as connection:
        connection.execute("CREATE TABLE ix_events_session_arm_seq (x)")  # the new index's name, taken
    before = schema1.read_bytes()
    with pytest.raises(workbench.store.StoreError):
        Store(schema1)
    with sqlite3.connect(schema1) as connection:
        connection.execute("DROP TABLE ix_events_session_arm_seq")
    assert _tables_and_version(schema1)[1] == "1"
    assert len(before) == schema1.stat().st_size
    assert Store(schema1).count_sessions() == 3


# -- a schema 1 store that cannot be migrated --------------------------------------------------------


def test_a_read_only_schema_1_store_is_read_as_it_is_and_refuses_runs(schema1: Path) -> None:
    """Nothing can migrate it, so it is read in its own shape (arms without positions, sweeps without hosts)."""
    before = hashlib.sha256(schema1.read_bytes()).hexdigest()
    with refused_mount_skips(), read_only_bind(schema1):
        code, out, err = invoke("sessions", "--json", "--bench", "--db", str(schema1))
        assert code == 0, err
        assert len(json.loads(out)) == 3
        store = Store(schema1)
        assert store.read_only and store.schema_version() == 1
        session_id = store.resolve_id(RUN)
        shown = store.load(session_id)
        assert list(shown.arms) == ["tool", "code"] and all(arm.summary.passed for arm in shown.arms.values())
        assert len(store.events_by_time(session_id)) == len(shown.events) > 20  # what a replay reads
        code, out, err = invoke("show", RUN, "--json", "--db", str(schema1))
        assert code == 0 and json.loads(out)["session_id"] == session_id, err
        code, out, err = invoke("export", RUN, "--format", "md", "--db", str(schema1))
        assert code == 0 and session_id in out, err
        sweep = SweepStore(store).sweep(SWEEP)
        assert sweep.status == "completed" and sweep.finished_runs == 2
        assert load_sweep(store, SWEEP).finished == 2
        code, out, err = invoke("export", SWEEP, "--format", "md", "--db", str(schema1))
        assert code == 0 and "bench report" in out.lower(), err
        code, out, err = invoke("bench", "--list", "--db", str(schema1))
        assert code == 0 and SWEEP in out, err
        for command in (["run", "--task", "cart/cap-quantity"], ["bench", "--task", "cart/cap-quantity"]):
            code, out, err = invoke(*command, "--items", "5", "--db", str(schema1))
            assert code == 2 and err.count("\n") == 1 and "is read-only" in err and "choose another file" in err
        store.engine.dispose()
    assert hashlib.sha256(schema1.read_bytes()).hexdigest() == before
    assert _tables_and_version(schema1)[1] == "1"


def test_a_read_only_schema_1_store_that_never_ran_a_sweep_lists_none(schema1: Path) -> None:
    with sqlite3.connect(schema1) as connection:
        connection.execute("DROP TABLE bench_runs")
        connection.execute("DROP TABLE bench_sweeps")
    with refused_mount_skips(), read_only_bind(schema1):
        store = Store(schema1)
        assert SweepStore(store).sweeps() == [] and store.count_sessions() == 3
        code, _, err = invoke("bench", "--list", "--db", str(schema1))
        assert code == 0, err
        store.engine.dispose()
