"""Storage faults, for real: a second process holding the write lock, a full file system, read-only file
systems and files, a damaged page, and text that is not valid Unicode from a provider.

Whatever the fault, a run keeps every event it produced: in the database, or in a fallback file that
``workbench import`` (or the next open) brings back, and the run says which. Mounts need root (as here and
in CI); where ``mount`` is refused the tests that need one are skipped, saying why.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

import workbench
from reliability import child_env, crash, storage
from reliability.storage import damage_events_root_page, fill, read_only_bind, remount, tmpfs, write_lock
from tests.support.fake_openai import fake_openai
from tests.support.mounts import refused_mount_skips
from tests.support.store_backends import execute_sql, stored_events
from workbench.bench import BenchCase, Progress, Sweep, load_sweep
from workbench.cli import cli
from workbench.config import load_settings
from workbench.locations import fallback_dir
from workbench.runner import ComparisonRun, prepare
from workbench.session import Comparison
from workbench.store import Store, StoreError

TASK = "cart/cap-quantity"
WAIT_S = 60.0
"""Generous bound for a condition polled on a busy machine (never a pace the test relies on)."""


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), prog_name="workbench")
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def run_into(store: Store, task: str = TASK, items: int = 5) -> Comparison:
    return workbench.compare_sync(task=task, items=items, db=store)


def poll(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.02)


# -- a busy database ------------------------------------------------------------------------------


def test_a_database_locked_by_another_process_is_waited_out(store_db: Path | str) -> None:
    store = Store(store_db)
    finished: list[Comparison] = []
    with write_lock(store_db) as release:
        runner = threading.Thread(target=lambda: finished.append(run_into(store)))
        runner.start()
        poll(lambda: store.busy_waited_s > 0.2, "the writer has waited on the lock")
        assert not finished, "the run must wait for its session to be stored"
        release()
        runner.join(timeout=WAIT_S)
    (comparison,) = finished
    assert comparison.stored and comparison.store_error is None
    assert stored_events(store_db, comparison.session_id) == len(comparison.events)
    assert Store(store_db).session(comparison.session_id).status == "completed"
    assert list(fallback_dir().glob("*.jsonl")) == []


def test_a_database_locked_too_long_keeps_the_run_in_a_fallback_file_that_import_brings_back(
    store_db: Path | str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    Store(store_db)
    monkeypatch.setenv("WORKBENCH_STORE_BUSY_TIMEOUT_S", "0.3")
    with write_lock(store_db):
        code, out, err = invoke("run", "--task", TASK, "--items", "5", "--json", "--db", str(store_db))
    assert code == 3, err
    shown = json.loads(out)  # the comparison is printed all the same
    assert shown["stored"] is False and "stayed locked by another process for 0.3 s" in shown["store_error"]
    unsaved = fallback_dir() / f"{shown['session_id']}.jsonl"
    assert err.count("\n") == 1 and str(unsaved) in err and "workbench import" in err
    assert unsaved.exists() and stored_events(store_db, shown["session_id"]) == 0
    copy = shutil.copyfile(unsaved, tmp_path / "copy.jsonl")

    code, out, _ = invoke("import", "--db", str(store_db))
    assert code == 0 and f"session {shown['session_id']}:" in out and not unsaved.exists()
    again = Store(store_db).load(shown["session_id"])
    assert again.to_dict() == {**shown, "stored": True, "store_error": None}
    assert Store(store_db).session(shown["session_id"]).status == "completed"
    count = stored_events(store_db, shown["session_id"])

    # Importing the same events again adds nothing.
    code, out, _ = invoke("import", str(copy), "--db", str(store_db))
    assert code == 0 and "0 events stored" in out and stored_events(store_db, shown["session_id"]) == count
    code, out, _ = invoke("import", "--db", str(store_db))
    assert code == 0 and out.startswith("nothing to import")


LONG_WAIT_S = "3600"
"""A busy timeout no test outlasts: a fallback file seen during the lock is the one kept while waiting, never
the one written when the wait gives up."""


def _start_locked_run(db: Path) -> subprocess.Popen[str]:
    """``workbench run`` as a user starts it, on a long task (over a minute at ``scripted:paced``)."""
    command = crash.workbench_command("run", "--model", crash.MODEL, "--task", crash.TASK, "--db", str(db), "--json")
    env = child_env({**os.environ, "WORKBENCH_STORE_BUSY_TIMEOUT_S": LONG_WAIT_S})
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, env=env
    )


def _events_in(unsaved: Path) -> list[tuple[str, int]]:
    """The (arm, seq) of each event a fallback file holds (a line still being written is skipped)."""
    found: list[tuple[str, int]] = []
    for line in unsaved.read_text(encoding="ascii").splitlines():
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if record.get("record") == "events":
                found.extend((arm, seq) for arm, seq, *_ in record["events"])
    return found


def _spilled(at_least: int) -> Path | None:
    """The one fallback file, once it holds at least ``at_least`` events."""
    files = list(fallback_dir().glob("*.jsonl"))
    return files[0] if len(files) == 1 and len(_events_in(files[0])) >= at_least else None


def _stored(db: Path, session_id: str) -> list[tuple[str, int]]:
    rows = execute_sql(db, "SELECT arm, seq FROM events WHERE session_id = :id ORDER BY arm, seq", id=session_id)
    return [(arm, seq) for arm, seq in rows]


def _assert_whole(events: list[tuple[str, int]]) -> None:
    """Each arm's events are one unbroken run of seqs: nothing lost before the newest, nothing twice."""
    for arm in {arm for arm, _ in events}:
        seqs = sorted(seq for name, seq in events if name == arm)
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), f"{arm}: seqs {seqs}"


def _kill(process: subprocess.Popen[str]) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=WAIT_S)
    assert process.returncode == -signal.SIGKILL


def test_a_run_killed_while_another_process_holds_the_lock_keeps_its_events_in_the_fallback_file(
    tmp_path: Path,
) -> None:
    """The writer waits out the lock (30 s by default) with every event also in the fallback file, so a SIGKILL
    during the wait loses no more than it would on a healthy database."""
    db = tmp_path / "locked.db"
    Store(db).close()
    with write_lock(db):
        process = _start_locked_run(db)
        try:
            poll(lambda: _spilled(at_least=20) is not None, "the waiting writer keeps 20 events in its fallback file")
        finally:
            _kill(process)
        unsaved = _spilled(at_least=1)
        assert unsaved is not None
    in_file = _events_in(unsaved)
    assert len(in_file) == len(set(in_file))
    _assert_whole(in_file)

    code, out, err = invoke("import", "--db", str(db))
    assert code == 0, err
    session_id = unsaved.stem
    assert f"session {session_id}:" in out and not unsaved.exists()
    stored = _stored(db, session_id)
    assert sorted(stored) == sorted(in_file)
    assert Store(db).session(session_id).status == "interrupted"


def test_a_lock_released_before_the_kill_leaves_no_fallback_file_and_every_event_stored_once(tmp_path: Path) -> None:
    db = tmp_path / "released.db"
    Store(db).close()
    with write_lock(db) as release:
        process = _start_locked_run(db)
        try:
            poll(lambda: _spilled(at_least=10) is not None, "the waiting writer keeps events in its fallback file")
            unsaved = _spilled(at_least=10)
            assert unsaved is not None
            kept = _events_in(unsaved)
            copy = shutil.copyfile(unsaved, tmp_path / "copy.jsonl")  # as a kill just after the commit leaves it
            release()
            poll(lambda: not unsaved.exists(), "the writer removes its fallback file once the database took it")
            session_id = unsaved.stem
            poll(lambda: len(_stored(db, session_id)) > len(kept), "the run stores events past the lock again")
        finally:
            _kill(process)
    stored = _stored(db, session_id)
    assert set(kept) <= set(stored) and len(stored) == len(set(stored))
    _assert_whole(stored)
    assert list(fallback_dir().glob("*.jsonl")) == []
    code, out, _ = invoke("import", "--db", str(db))
    assert code == 0 and out.startswith("nothing to import")
    code, out, err = invoke("import", str(copy), "--db", str(db))  # its events are all stored: a copy
    assert code == 0 and "0 events stored" in out and not copy.exists(), err
    assert _stored(db, session_id) == stored


def test_a_sweep_whose_database_stays_locked_reports_it_and_keeps_its_sessions_and_membership(
    store_db: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    Store(store_db)
    monkeypatch.setenv("WORKBENCH_STORE_BUSY_TIMEOUT_S", "0.2")
    with write_lock(store_db):
        code, out, err = invoke("bench", "--task", TASK, "--items", "5", "--json", "--db", str(store_db))
    ran = json.loads(out)
    assert code == 3 and ran["finished"] == 1
    assert err.splitlines()[-1].startswith("workbench: error: not everything was stored: session ")
    sweep_file = fallback_dir() / f"{ran['sweep_id']}.jsonl"
    (session_file,) = set(fallback_dir().glob("*.jsonl")) - {sweep_file}
    assert sweep_file.exists()
    code, out, _ = invoke("import", "--db", str(store_db))
    assert code == 0 and f"session {session_file.stem}:" in out and f"sweep {ran['sweep_id']}: 1 runs recorded" in out
    assert list(fallback_dir().glob("*.jsonl")) == []
    store = Store(store_db)
    assert store.count_sessions() == 1
    report = load_sweep(store, ran["sweep_id"])
    assert report.status == "completed" and report.finished == ran["finished"] == 1
    assert report.to_dict()["runs"] == ran["runs"]  # the sweep's report is whole again
    code, out, _ = invoke("bench", "--list", "--db", str(store_db))
    assert code == 0 and ran["sweep_id"] in out and "1/1" in out and "completed" in out


def test_a_sweep_whose_database_fails_midway_keeps_the_rest_of_its_membership(store_db: Path | str) -> None:
    """The database takes the sweep and its first run, then another process locks it for good: the second
    run's session and membership and the sweep's end go to fallback files, and import makes the sweep whole."""
    store = Store(store_db, busy_timeout_s=0.2)
    cases = [BenchCase("everyday", TASK, 5, 0), BenchCase("everyday", "cart/remove-expensive", 5, 0)]
    with contextlib.ExitStack() as stack:

        def lock_after_the_first_run(progress: Progress) -> None:
            if progress.kind == "finished" and progress.done == 1:
                stack.enter_context(write_lock(store_db))

        sweep = Sweep(cases, store=store, concurrency=1, on_progress=lock_after_the_first_run)
        outcome = asyncio.run(sweep.run())
    assert [result.finished for result in outcome.results] == [True, True]
    assert outcome.store_errors and f"{sweep.sweep_id}.jsonl" in outcome.store_errors[-1]
    assert execute_sql(store_db, "SELECT count(*) FROM bench_runs") == [(1,)]

    code, out, _ = invoke("import", "--db", str(store_db))
    assert code == 0 and f"sweep {sweep.sweep_id}: 1 runs recorded" in out
    report = load_sweep(Store(store_db), sweep.sweep_id)
    assert report.status == "completed" and report.finished == 2
    assert report.to_dict()["runs"] == outcome.report().to_dict()["runs"]
    code, out, _ = invoke("import", "--db", str(store_db))
    assert code == 0 and out.startswith("nothing to import")


def test_a_sweep_whose_fallback_file_cannot_be_written_either_says_so(db_path: Path, tmp_path: Path) -> None:
    """The database locked and the fallback folder impossible (under a plain file): the sweep still ends, and
    its error says the rows were kept nowhere; no file without its first record is left behind."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    store = Store(db_path, busy_timeout_s=0.2, unsaved_dir=blocker / "unsaved")
    with write_lock(db_path):
        outcome = asyncio.run(Sweep([BenchCase("everyday", TASK, 5, 0)], store=store).run())
    assert [result.finished for result in outcome.results] == [True]
    assert "the sweep's rows could not be saved to" in outcome.store_errors[-1]
    assert "were saved to" not in outcome.store_errors[-1]


def test_a_sweep_on_a_full_disk_keeps_its_rows_until_import(tmp_path: Path) -> None:
    with refused_mount_skips(), tmpfs(tmp_path / "small") as mount:
        db = mount / "sessions.db"
        opened = Store(db)  # the database and its WAL files exist; nothing more fits
        filler = fill(mount)
        code, out, err = invoke("bench", "--task", TASK, "--items", "5", "--json", "--db", str(db))
        ran = json.loads(out)
        assert code == 3 and "the disk is full" in err and ran["finished"] == 1
        assert (fallback_dir() / f"{ran['sweep_id']}.jsonl").exists()
        opened.engine.dispose()
        filler.unlink()
        code, out, _ = invoke("import", "--db", str(db))
        assert code == 0 and f"sweep {ran['sweep_id']}: 1 runs recorded" in out
        store = Store(db)
        report = load_sweep(store, ran["sweep_id"])
        assert report.status == "completed" and report.to_dict()["runs"] == ran["runs"]
        store.engine.dispose()


def test_the_next_open_of_the_database_imports_what_a_failed_run_left(store_db: Path | str) -> None:
    store = Store(store_db, busy_timeout_s=0.2)
    with write_lock(store_db):
        comparison = run_into(store)
    assert not comparison.stored and comparison.store_error
    reopened = Store(store_db)
    assert [done.session_id for done in reopened.opened_imports] == [comparison.session_id]
    assert stored_events(store_db, comparison.session_id) == len(comparison.events)


# -- a full disk, read-only places ----------------------------------------------------------------


def test_a_full_disk_is_reported_at_once_and_the_run_keeps_its_events(tmp_path: Path) -> None:
    with refused_mount_skips(), tmpfs(tmp_path / "small") as mount:
        db = mount / "sessions.db"
        store = Store(db)
        filler = fill(mount)
        comparison = run_into(store, "cart/remove-expensive", 122)
        assert not comparison.stored and store.busy_waited_s == 0
        assert f"{db}: the disk is full" in (comparison.store_error or "")
        code, _, err = invoke("run", "--task", TASK, "--items", "5", "--db", str(db))
        assert code == 3 and "the disk is full" in err and err.count("\n") == 1
        store.engine.dispose()
        filler.unlink()
        reopened = Store(db)
        assert {done.session_id for done in reopened.opened_imports} >= {comparison.session_id}
        assert stored_events(db, comparison.session_id) == len(comparison.events)
        expected = {**comparison.to_dict(), "stored": True, "store_error": None}
        assert reopened.load(comparison.session_id).to_dict() == expected
        reopened.engine.dispose()


def _read_only_checks(db: Path, session_id: str, events: int) -> None:
    code, out, err = invoke("sessions", "--json", "--db", str(db))
    assert code == 0, err
    assert [info["session_id"] for info in json.loads(out)] == [session_id]
    code, out, err = invoke("show", session_id, "--json", "--db", str(db))
    assert code == 0 and json.loads(out)["session_id"] == session_id, err
    code, out, err = invoke("export", session_id, "--format", "md", "--db", str(db))
    assert code == 0 and session_id in out, err
    store = Store(db)
    assert store.read_only and len(store.events_by_time(session_id)) == events  # what a replay reads
    code, _, err = invoke("run", "--task", TASK, "--items", "5", "--db", str(db))
    assert code == 2 and "is read-only" in err and err.count("\n") == 1
    with pytest.raises(StoreError, match="is read-only") as refused:
        store.delete_session(session_id)
    assert refused.value.kind == "read-only"
    store.engine.dispose()


def test_a_database_on_a_read_only_file_system_can_be_listed_shown_replayed_and_exported(tmp_path: Path) -> None:
    with refused_mount_skips(), tmpfs(tmp_path / "media") as mount:
        db = mount / "sessions.db"
        store = Store(db)
        comparison = run_into(store)
        store.engine.dispose()
        remount(mount, read_only=True)
        _read_only_checks(db, comparison.session_id, len(comparison.events))


def test_a_read_only_database_file_can_be_listed_shown_replayed_and_exported(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    store = Store(db)
    comparison = run_into(store)
    store.engine.dispose()
    with refused_mount_skips(), read_only_bind(db):
        _read_only_checks(db, comparison.session_id, len(comparison.events))


# -- a damaged page ---------------------------------------------------------------------------------


def test_a_damaged_page_is_one_line_and_a_run_into_it_keeps_its_events(db_path: Path) -> None:
    store = Store(db_path)
    first = run_into(store, "cart/remove-expensive", 122)
    store.engine.dispose()
    damage_events_root_page(db_path)
    code, _, err = invoke("show", first.session_id, "--db", str(db_path))
    assert code == 2 and err.count("\n") == 1
    assert f"{db_path} is damaged (database disk image is malformed)" in err and ".recover" in err
    comparison = run_into(Store(db_path))
    assert not comparison.stored and "is damaged" in (comparison.store_error or "")
    assert (fallback_dir() / f"{comparison.session_id}.jsonl").exists()


# -- hostile text -------------------------------------------------------------------------------------


def test_a_lone_surrogate_from_the_provider_is_stored_visibly_and_the_session_is_whole(store_db: Path | str) -> None:
    with fake_openai() as server:
        settings = load_settings(base_url=server.url, timeout_s=60.0)
        setup = prepare(task=TASK, items=5, model="openai-chat:gpt-4o-mini-surrogate", settings=settings)
        comparison = asyncio.run(ComparisonRun(setup, Store(store_db)).result())
    answer = comparison.arms["tool"].summary.output
    assert "\ud800" in answer and comparison.stored
    assert stored_events(store_db, comparison.session_id) == len(comparison.events)
    again = Store(store_db).load(comparison.session_id)
    assert again.arms["tool"].summary.output == answer.replace("\ud800", "\ufffd")
    assert [arm.summary.status for arm in again.arms.values()] == ["completed", "completed"]
    code, out, _ = invoke("show", comparison.session_id, "--db", str(store_db))
    assert code == 0 and "\ufffd" in out


def test_each_fault_has_its_own_message() -> None:
    from workbench.store.faults import describe

    kinds = ("busy", "full", "read-only", "damaged", "foreign", "io")
    messages = {describe(kind, "x.db", "why") for kind in kinds}  # type: ignore[arg-type]
    assert len(messages) == len(kinds) and all("\n" not in message for message in messages)


def test_the_busy_timeout_is_a_validated_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().store_busy_timeout_s == 30.0
    for bad in ("0", "-1", "inf", "nan"):
        monkeypatch.setenv("WORKBENCH_STORE_BUSY_TIMEOUT_S", bad)
        code, _, err = invoke("config")
        assert code == 2 and "store_busy_timeout_s" in err, bad
    monkeypatch.delenv("WORKBENCH_STORE_BUSY_TIMEOUT_S")
    assert os.environ.get("WORKBENCH_STORE_BUSY_TIMEOUT_S") is None


# -- the reliability suite's storage row --------------------------------------------------------------


def test_the_storage_row_of_the_reliability_suite_loses_no_session(tmp_path: Path) -> None:
    """``python -m reliability --only storage`` runs these faults for its figures; every one holds here too."""
    reports = storage.all_checks(tmp_path, hold_s=0.5)
    skipped = {report.fault for report in reports if not report.tried}
    assert skipped in (set(), {"disk full (tmpfs)", "read-only file system"})  # both need mount, or neither runs
    stored_directly = {
        "locked 0.5 s (wait 30 s)": True,
        "locked for the whole run (wait 1 s)": False,
        "disk full (tmpfs)": False,
        "read-only file system": False,
        "damaged page": False,
        "lone surrogate in an answer": True,
    }
    assert {report.fault: report.stored for report in reports if report.tried} == {
        fault: stored for fault, stored in stored_directly.items() if fault not in skipped
    }
    assert all(report.held for report in reports), [report.problems for report in reports]
    assert sum(report.emitted for report in reports) == sum(report.recovered for report in reports) > 0
