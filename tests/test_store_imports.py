"""Imports that only add: a fallback file cannot change a stored result.

A forged file (one a person wrote, or dropped into the data directory's ``unsaved/`` folder) that names a
stored session is refused with one line and left in place, and the session's rows and events stay exactly
as they were, on SQLite and on PostgreSQL. A genuine file still brings back what its run could not store.
Malformed files get one line and exit code 2; a database that refuses the import, exit code 3.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import socket
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlmodel import Session, col, select

import workbench
from reliability import hostile
from reliability.hostile_imports import import_attacks
from reliability.storage import read_only_bind, write_lock
from tests.support.mounts import refused_mount_skips
from tests.support.store_backends import execute_sql, stored_events
from workbench.bench import BenchCase, Sweep, load_sweep
from workbench.cli import cli
from workbench.locations import fallback_dir
from workbench.session import Comparison
from workbench.store import Store
from workbench.store.fallback_read import MAX_FILE_BYTES, MAX_LINE_BYTES, read_unsaved
from workbench.store.schema import ArmRow, SessionRow, SweepRow, SweepRunRow

TASK = "cart/cap-quantity"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), prog_name="workbench")
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def completed_session(db: Path | str) -> Comparison:
    comparison = workbench.compare_sync(task=TASK, items=5, db=Store(db))
    assert comparison.stored and comparison.status == "completed"
    return comparison


def snapshot(db: Path | str, session_id: str) -> tuple[list[Any], ...]:
    """Every row of a session: its session row, its arm rows and its event rows, all columns."""
    return (
        execute_sql(db, "SELECT * FROM sessions WHERE id = :id", id=session_id),
        execute_sql(db, "SELECT * FROM arms WHERE session_id = :id ORDER BY name", id=session_id),
        execute_sql(db, "SELECT * FROM events WHERE session_id = :id ORDER BY id", id=session_id),
    )


def write_records(path: Path, *records: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def header_of(db: Path | str, session_id: str, *, pid: int | None = None) -> dict[str, Any]:
    """The first record a forger would write: the stored session's own rows, copied exactly."""
    store = Store(db, import_unsaved=False)
    with Session(store.engine) as session:
        row = session.get(SessionRow, session_id)
        assert row is not None
        arms = session.exec(select(ArmRow).where(col(ArmRow.session_id) == session_id)).all()
        fields = {key: getattr(row, key) for key in ("id", "app", "items", "seed", "prompt", "task", "model", "host")}
        fields.update(created=row.created.isoformat(), status="running", pid=row.pid if pid is None else pid)
        arm_fields = [
            {"name": arm.name, "mode": arm.mode, "model": arm.model, "status": "running", "position": arm.position}
            for arm in arms
        ]
    return {"record": "session", "db": store.key, "session": fields, "arms": arm_fields}


def forged_end(header: dict[str, Any]) -> dict[str, Any]:
    """An end that turns every arm into a failed one, with a cost, a grade and a model of the forger's choice."""
    arms = [
        {**arm, "status": "failed", "passed": False, "cost_usd": 999.0, "model": "forged-model"}
        for arm in header["arms"]
    ]
    return {"record": "finish", "status": "failed", "finished": datetime.now(UTC).isoformat(), "arms": arms}


def first_event(db: Path | str, session_id: str) -> list[Any]:
    ((arm, seq, t, kind, data),) = execute_sql(
        db, "SELECT arm, seq, t, kind, data FROM events WHERE session_id = :id ORDER BY id LIMIT 1", id=session_id
    )
    return [arm, seq, t, kind, data]


def one_error_line(err: str, *parts: str) -> None:
    assert err.count("\n") == 1 and err.startswith("workbench: error: "), err
    assert "Traceback" not in err
    for part in parts:
        assert part in err, (part, err)


# -- forged files for a stored session ---------------------------------------------------------------


def test_a_forged_end_of_a_completed_session_changes_nothing_and_stays(store_db: Path | str) -> None:
    comparison = completed_session(store_db)
    session_id = comparison.session_id
    before = snapshot(store_db, session_id)
    header = header_of(store_db, session_id)
    forged = write_records(Path(str(fallback_dir())) / "elsewhere" / "forged.jsonl", header,
                           {"record": "events", "events": [first_event(store_db, session_id)]},
                           forged_end(header))  # fmt: skip

    code, out, err = invoke("import", str(forged), "--db", str(store_db))
    assert code == 2 and out == ""
    one_error_line(err, str(forged), f"session {session_id}", "status ('failed', stored 'completed')", "left in place")
    assert "passed (False, stored True); and 6 more" in err  # cost, grade and model of each arm too
    assert forged.exists() and snapshot(store_db, session_id) == before
    assert Store(store_db).session(session_id).status == "completed"


def test_a_forged_file_in_the_unsaved_folder_is_not_applied_on_open_nor_by_import(
    store_db: Path | str, caplog: pytest.LogCaptureFixture
) -> None:
    comparison = completed_session(store_db)
    session_id = comparison.session_id
    before = snapshot(store_db, session_id)
    header = header_of(store_db, session_id)
    dropped = write_records(fallback_dir() / f"{session_id}.jsonl", header, forged_end(header))

    opened = Store(store_db)  # every writable open imports what waits in unsaved/
    assert opened.opened_imports == []
    reports = [record.getMessage() for record in caplog.records if str(dropped) in record.getMessage()]
    assert len(reports) == 1 and "\n" not in reports[0] and f"session {session_id}" in reports[0]
    assert dropped.exists() and snapshot(store_db, session_id) == before

    code, out, err = invoke("import", "--db", str(store_db))
    assert code == 2 and "nothing to import" not in out
    one_error_line(err, str(dropped), f"session {session_id}", "differs")
    code, out, _ = invoke("sessions", "--db", str(store_db))
    assert code == 0 and session_id in out
    assert dropped.exists() and snapshot(store_db, session_id) == before


def test_a_forged_file_that_adds_or_changes_events_of_an_ended_session_is_not_applied(store_db: Path | str) -> None:
    comparison = completed_session(store_db)
    session_id = comparison.session_id
    before = snapshot(store_db, session_id)
    header = header_of(store_db, session_id, pid=0)  # a writer that is gone (its run is not still going)
    arm, seq, t, kind, data = first_event(store_db, session_id)
    extra = [arm, 10_000, t, kind, data]
    changed = [arm, seq, t + 1.0, kind, data]
    for event, says in ((extra, "adds 1 events to a session that has ended (completed)"), (changed, "differ")):
        forged = write_records(fallback_dir() / "forged.jsonl", header, {"record": "events", "events": [event]})
        code, _, err = invoke("import", str(forged), "--db", str(store_db))
        assert code == 2
        one_error_line(err, f"session {session_id}", says)
        assert forged.exists() and snapshot(store_db, session_id) == before


def test_a_file_for_a_session_still_written_on_another_host_waits(store_db: Path | str) -> None:
    """A session whose writer (another host, by its fresh heartbeat) still runs: nothing is applied, the
    file waits for that run's end, and the command is not an error."""
    session_id = "abcdef0123"
    store = Store(store_db, import_unsaved=False)
    session = {
        "id": session_id,
        "created": datetime.now(UTC),
        "app": "cart",
        "items": 5,
        "seed": 0,
        "prompt": "p",
        "task": None,
        "model": "m",
        "status": "running",
        "pid": 4242,
        "host": "another-host",
    }
    arms = [{"name": "tool", "mode": "tool", "model": "m", "status": "running", "position": 0}]  # fmt: skip
    store.insert_session(session, arms, beat=True)
    before = snapshot(store_db, session_id)
    end = {"record": "finish", "status": "failed", "finished": datetime.now(UTC).isoformat(),
           "arms": [{**arms[0], "status": "failed", "cost_usd": 1.0}]}  # fmt: skip
    header = {"record": "session", "db": store.key, "session": {**session, "created": session["created"].isoformat()},
              "arms": arms}  # fmt: skip
    path = write_records(fallback_dir() / f"{session_id}.jsonl", header, end)
    code, out, err = invoke("import", "--db", str(store_db))
    assert code == 0 and err == "" and f"session {session_id} is still being written (pid 4242 on another-host)" in out
    assert path.exists() and snapshot(store_db, session_id) == before


# -- genuine files -------------------------------------------------------------------------------------


def dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.mark.parametrize("writer", ["gone", "this process"])
def test_a_run_whose_database_failed_midway_gets_the_rest_of_its_events_and_its_end(
    store_db: Path | str, writer: str
) -> None:
    """The writer stored the session's rows and its first events, then the database failed: the file holds
    the rest and the end. Imported, the session is whole, whether its writer has exited or (the writer's
    own file, with its end) still runs."""
    store = Store(store_db, busy_timeout_s=0.2)
    with write_lock(store_db):
        comparison = workbench.compare_sync(task=TASK, items=5, db=store)
    path = fallback_dir() / f"{comparison.session_id}.jsonl"
    assert not comparison.stored and path.exists()
    if writer == "gone":
        records = [json.loads(line) for line in path.read_text().splitlines()]
        records[0]["session"]["pid"] = dead_pid()
        write_records(path, *records)
    unsaved = read_unsaved(path)
    half = len(unsaved.events) // 2
    fresh = Store(store_db, import_unsaved=False)
    fresh.insert_session(unsaved.session, unsaved.arms)
    fresh.insert_events(comparison.session_id, unsaved.events[:half])

    code, out, err = invoke("import", "--db", str(store_db))
    assert code == 0 and err == ""
    assert f"session {comparison.session_id}: {len(unsaved.events) - half} events stored" in out
    assert not path.exists() and stored_events(store_db, comparison.session_id) == len(comparison.events)
    again = Store(store_db).load(comparison.session_id)
    assert again.to_dict() == {**comparison.to_dict(), "stored": True, "store_error": None}


def test_a_copy_of_an_imported_file_adds_nothing_and_is_removed(db_path: Path) -> None:
    store = Store(db_path, busy_timeout_s=0.2)
    with write_lock(db_path):
        comparison = workbench.compare_sync(task=TASK, items=5, db=store)
    path = fallback_dir() / f"{comparison.session_id}.jsonl"
    copy = path.parent / "copy.jsonl.saved"
    copy.write_bytes(path.read_bytes())
    assert invoke("import", "--db", str(db_path))[0] == 0
    before = snapshot(db_path, comparison.session_id)
    code, out, err = invoke("import", str(copy), "--db", str(db_path))
    assert code == 0 and err == "" and "0 events stored" in out and not copy.exists()
    assert snapshot(db_path, comparison.session_id) == before


# -- malformed files -------------------------------------------------------------------------------------


def _header(**session: Any) -> dict[str, Any]:
    fields = {"id": "0123456789", "created": "2026-12-01T10:00:00+00:00", "app": "cart", "items": 5, "seed": 0,
              "prompt": "p", "task": None, "model": "m", "status": "running", "pid": 0, "host": ""}  # fmt: skip
    fields.update(session)
    arms = [{"name": "tool", "mode": "tool", "model": "m", "status": "running", "position": 0}]
    return {"record": "session", "db": "x", "session": fields, "arms": arms}


def _end(**arm: Any) -> str:
    record = {"record": "finish", "status": "completed", "finished": "2026-12-01T10:01:00+00:00",
              "arms": [{"name": "tool", "mode": "tool", "model": "m", "status": "completed", **arm}]}  # fmt: skip
    return json.dumps(record)


def _lines(*records: dict[str, Any] | str) -> str:
    return "".join((record if isinstance(record, str) else json.dumps(record)) + "\n" for record in records)


def _sweep() -> dict[str, Any]:
    return {"record": "sweep", "db": "x", "sweep_id": "sweep-0a1b2c3d", "pid": 0, "host": "", "row": None}


def _run(**fields: Any) -> dict[str, Any]:
    row = {"sweep_id": "sweep-0a1b2c3d", "session_id": "0123456789", "position": 0, "tier": "everyday",
           "task": TASK, "items": 5, "seed": 0, "repeat": 0, "model": "m", "status": "completed",
           "reused": False, "finished": "2026-12-01T10:01:00+00:00"}  # fmt: skip
    return {"record": "sweep_run", "row": row | fields}


def _events(*events: list[Any]) -> dict[str, Any]:
    return {"record": "events", "events": list(events)}


MALFORMED: dict[str, tuple[str | bytes, str]] = {
    "not JSON": ("hello\nworld\n", "line 1: it is not JSON"),
    "a JSON list": ("[1, 2, 3]\n", "not a JSON object"),
    "deep nesting": ("[" * 200_000 + "\n", "not JSON"),
    "no session record": (_lines(_events()), "before the session or sweep record"),
    "an unknown record": (_lines(_header(), {"record": "drop_tables"}), "unknown kind 'drop_tables'"),
    "an unknown key": (_lines(_header(heartbeat="now")), "unknown keys 'heartbeat'"),
    "a wrong type": (_lines(_header(items="five")), "'items' is text, not a whole number"),
    "a bool for a number": (_lines(_header(items=True)), "'items' is true/false"),
    "a huge number": (_lines(_header(items=2**40)), "'items' is out of range"),
    "an id that is a path": (_lines(_header(id="../../etc/passwd")), "'id' is not a workbench id"),
    "an ended session header": (_lines(_header(status="completed")), "status is not 'running'"),
    "a NaN cost": (_lines(_header(), _end(cost_usd=math.nan)), "line 2: it is not JSON"),
    "an infinite cost": (_lines(_header(), _end(cost_usd=1.0).replace("1.0", "1e309")), "line 2: it is not JSON"),
    "a negative cost": (_lines(_header(), _end(cost_usd=-1.0)), "not a finite, non-negative"),
    "an unknown status": (_lines(_header(), _end(status="hacked")), "'status' is not one of"),
    "an unknown arm": (_lines(_header(), _end(name="other")), "names an arm the session does not"),
    "an unknown event kind": (_lines(_header(), _events(["tool", 0, 0.0, "rm_rf", "{}"])), "unknown kind 'rm_rf'"),
    "event data of the wrong shape": (
        _lines(_header(), _events(["tool", 0, 0.0, "run_started", "[]"])),
        "its data is not the fields of a run_started event",
    ),
    "a huge line": (b'{"record": "session", "db": "' + b"x" * (MAX_LINE_BYTES + 10) + b'"}\n', "longer than 32 MiB"),
    "a record after the end": (_lines(_header(), _end(), _end()), "after the file's last"),
    "not UTF-8": (b'{"record": "session", "db": "\xff\xfe"}\n', "not JSON"),
    "an empty file": ("", "not a workbench fallback file"),
    "a sweep run of another sweep": (_lines(_sweep(), _run(sweep_id="sweep-other")), "a run of another sweep"),
    "a sweep run with a forged status": (_lines(_sweep(), _run(status="hacked")), "'status' is not one of"),
    "a sweep run with an unknown key": (_lines(_sweep(), _run(owner="me")), "unknown keys 'owner'"),
    "a session record in a sweep's file": (_lines(_sweep(), _header()), "a session record in a sweep's file"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_file_is_one_line_exit_2_and_stays(db_path: Path, case: str) -> None:
    content, says = MALFORMED[case]
    path = fallback_dir() / "bad.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    for args in (("import", str(path)), ("import",)):  # named, and waiting in unsaved/
        code, out, err = invoke(*args, "--db", str(db_path))
        assert code == 2 and out == "", (case, out)
        one_error_line(err, str(path), says)
        assert path.exists()
    assert Store(db_path).count_sessions() == 0 and path.exists()


def test_a_pipe_or_a_file_too_large_is_refused_before_it_is_read(db_path: Path) -> None:
    pipe = fallback_dir() / "pipe.jsonl"
    pipe.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(pipe)  # opening it for reading would wait for a writer for ever
    large = fallback_dir() / "large.jsonl"
    with large.open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used
    code, out, err = invoke("import", "--db", str(db_path))
    assert code == 2 and out == "" and err.count("\n") == 2
    assert f"{pipe}: it is not a regular file" in err and f"{large}: it is larger than 128 MiB" in err
    assert pipe.exists() and large.exists()


# -- a database that refuses -----------------------------------------------------------------------------


def _genuine(db: Path | str) -> Path:
    """A fallback file as a writer leaves it when its database refused the session from the start."""
    store = Store(db, busy_timeout_s=0.2)
    with write_lock(db):
        comparison = workbench.compare_sync(task=TASK, items=5, db=store)
    store.engine.dispose()
    return fallback_dir() / f"{comparison.session_id}.jsonl"


def test_a_locked_database_keeps_the_file_and_exits_3(store_db: Path | str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _genuine(store_db)
    monkeypatch.setenv("WORKBENCH_STORE_BUSY_TIMEOUT_S", "0.3")
    with write_lock(store_db):
        code, out, err = invoke("import", "--db", str(store_db))
    assert code == 3 and out == ""
    one_error_line(err, f"{path} was kept", "stayed locked by another process for 0.3 s")
    assert path.exists()
    code, out, _ = invoke("import", "--db", str(store_db))
    assert code == 0 and f"session {path.stem}:" in out and not path.exists()


def test_the_import_an_open_does_waits_for_no_lock(store_db: Path | str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``sessions`` on a database another process holds locked, with a fallback file waiting for it: the
    listing is not kept waiting the busy timeout (600 s here) for an import nobody asked for; it says in one
    line that the file was kept, and ``workbench import`` stores it once the lock is gone. A real process
    holds the lock; the command runs in a process of its own, under a deadline far short of that wait."""
    import sys

    path = _genuine(store_db)
    monkeypatch.setenv("WORKBENCH_STORE_BUSY_TIMEOUT_S", "600")
    with write_lock(store_db):
        listed = subprocess.run(
            [sys.executable, "-m", "workbench", "sessions", "--db", str(store_db)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr.count("\n") == 1 and "Traceback" not in listed.stderr, listed.stderr
    assert f"{path} was kept" in listed.stderr and "is locked by another process" in listed.stderr
    assert path.exists()
    code, out, _ = invoke("import", "--db", str(store_db))
    assert code == 0 and f"session {path.stem}:" in out and not path.exists()


def test_a_read_only_database_keeps_the_file_and_exits_3(db_path: Path) -> None:
    path = _genuine(db_path)
    with refused_mount_skips(), read_only_bind(db_path):
        code, out, err = invoke("import", "--db", str(db_path))
        assert code == 3 and out == ""
        one_error_line(err, f"{path} was kept", "read-only")
        assert path.exists()
        code, _, err = invoke("import", str(path), "--db", str(db_path))
        assert code == 3 and f"{path} was kept" in err
    assert invoke("import", "--db", str(db_path))[0] == 0 and not path.exists()


def test_nothing_waiting_is_exit_0(db_path: Path) -> None:
    code, out, err = invoke("import", "--db", str(db_path))
    assert code == 0 and out.startswith("nothing to import") and err == ""


# -- sweeps -------------------------------------------------------------------------------------------------


def test_a_forged_sweep_file_does_not_change_a_finished_sweep(store_db: Path | str) -> None:
    store = Store(store_db)
    sweep = Sweep([BenchCase("everyday", TASK, 5, 0)], store=store)
    asyncio.run(sweep.run())
    before = load_sweep(Store(store_db), sweep.sweep_id).to_dict()
    rows = (
        execute_sql(store_db, "SELECT * FROM bench_runs ORDER BY id"),
        execute_sql(store_db, "SELECT * FROM bench_sweeps"),
    )
    with Session(store.engine) as session:
        sweep_row = session.get(SweepRow, sweep.sweep_id)
        (run,) = session.exec(select(SweepRunRow)).all()
        assert sweep_row is not None
        header = {"record": "sweep", "db": store.key, "sweep_id": sweep.sweep_id, "pid": 0, "host": "", "row": None}
        fields = run.model_dump(exclude={"id"}) | {"finished": run.finished.isoformat()}
    changed = {**fields, "status": "failed"}
    added = {**fields, "position": 7}
    end = {"record": "sweep_finish", "status": "interrupted", "finished": datetime.now(UTC).isoformat()}
    for records, says in (
        ([{"record": "sweep_run", "row": changed}], "run 0 status ('failed', stored 'completed')"),
        ([{"record": "sweep_run", "row": added}], "adds 1 runs to a sweep that has ended (completed)"),
        ([end], "status ('interrupted', stored 'completed')"),
    ):
        path = write_records(fallback_dir() / f"{sweep.sweep_id}.jsonl", header, *records)
        code, _, err = invoke("import", "--db", str(store_db))
        assert code == 2
        one_error_line(err, str(path), f"sweep {sweep.sweep_id}", says)
        assert path.exists()
        assert load_sweep(Store(store_db), sweep.sweep_id).to_dict() == before
        assert (execute_sql(store_db, "SELECT * FROM bench_runs ORDER BY id"),
                execute_sql(store_db, "SELECT * FROM bench_sweeps")) == rows  # fmt: skip


def test_a_sweep_whose_run_waits_for_its_session_ends_only_once_that_run_is_in(db_path: Path) -> None:
    session_file = _genuine(db_path)  # the session the sweep ran: not stored yet
    session_id = session_file.stem
    key = Store(db_path, import_unsaved=False).key  # (an open that imports would store the session now)
    now = datetime.now(UTC).isoformat()
    sweep_id = "sweep-00aa11bb"
    row = {"id": sweep_id, "created": now, "model": "m", "planned": 1, "options": "{}", "status": "running",
           "pid": os.getpid(), "host": socket.gethostname()}  # fmt: skip
    run = _run(sweep_id=sweep_id, session_id=session_id)
    header = {"record": "sweep", "db": key, "sweep_id": sweep_id, "pid": row["pid"],
              "host": row["host"], "row": row}  # fmt: skip
    end = {"record": "sweep_finish", "status": "completed", "finished": now}
    sweep_file = write_records(fallback_dir() / "held" / f"{sweep_id}.jsonl", header, run, end)

    code, out, err = invoke("import", str(sweep_file), "--db", str(db_path))
    assert code == 0 and err == "" and "1 wait for their sessions, kept in the file" in out
    assert sweep_file.exists() and session_file.exists()
    assert load_sweep(Store(db_path, import_unsaved=False), sweep_id).status == "running"  # not ended yet

    code, out, err = invoke("import", str(session_file), str(sweep_file), "--db", str(db_path))
    assert code == 0 and err == "" and f"sweep {sweep_id}: 1 runs recorded" in out
    report = load_sweep(Store(db_path), sweep_id)
    assert report.status == "completed" and report.finished == 1
    assert not sweep_file.exists() and not session_file.exists()


# -- the hostile row's fallback files ---------------------------------------------------------------------


@pytest.mark.parametrize("name", [attack.name for attack in import_attacks(Path("unused"))])
def test_the_hostile_rows_fallback_files_are_one_line_exit_2_and_change_no_result(name: str, tmp_path: Path) -> None:
    store = hostile.seeded_store(tmp_path / "store")
    (attack,) = [attack for attack in import_attacks(store) if attack.name == name]
    before = hostile.fingerprint(store)
    outcome = hostile.run_in_process(attack, tmp_path / "attack", tmp_path / "CANARY", store)
    assert outcome.problems == [], outcome.stderr
    assert hostile.fingerprint(store) == before
