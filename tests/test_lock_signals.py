"""SIGTERM and Ctrl+C (SIGINT) sent to a real ``workbench`` process while another process holds the SQLite
write lock (a separate ``sqlite3`` connection in ``BEGIN EXCLUSIVE``, under a busy timeout no test outlasts).

A stopped command ends with one line and 128 + N, whether the signal arrives while the store opens (a
migration waiting for the lock, before the command handles signals itself) or while a sweep's comparison waits
to store its events; nothing already stored is rewritten, and what waited comes back with ``workbench import``.
Each test waits for what the process has done (a file it holds open, rows it stored, the fallback file its
writer keeps during the wait), never for a time.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from reliability import child_env, crash
from reliability.storage import write_lock
from workbench.locations import fallback_dir
from workbench.store import Store

FIXTURE = Path(__file__).parent / "fixtures" / "schema1.db"
WAIT_S = 120.0
"""Hang guard for a condition polled on a busy machine (never a pace the test relies on)."""
LONG_WAIT_S = "3600"
"""The busy timeout: a process that ends while the lock is held ended because of the signal."""


def _start(*args: str) -> subprocess.Popen[str]:
    command = crash.workbench_command(*args)
    env = child_env({**os.environ, "WORKBENCH_STORE_BUSY_TIMEOUT_S": LONG_WAIT_S})
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, env=env
    )


def _poll(condition: Callable[[], bool], what: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if process.poll() is not None:
            _, err = process.communicate()
            pytest.fail(f"the workbench ended (exit {process.returncode}) before {what}: {err[-2000:]}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"timed out waiting until {what}")
        time.sleep(0.02)


def _holds_open(process: subprocess.Popen[str], path: Path) -> bool:
    """Whether the process has ``path`` open (its store has connected to the file)."""
    fds = Path(f"/proc/{process.pid}/fd")
    for fd in list(fds.iterdir()) if fds.exists() else []:
        try:
            if Path(os.readlink(fd)) == path.resolve():
                return True
        except OSError:  # closed meanwhile
            continue
    return False


def _ended(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"the workbench did not end after the signal: {err[-2000:]}")
    return process.returncode, out, err


def _schema(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as connection:
        return sorted(connection.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL"))


LINES = {signal.SIGTERM: "workbench: stopped by SIGTERM", signal.SIGINT: "workbench: interrupted"}


@pytest.mark.parametrize(
    ("command", "signum"),
    [
        (("bench", "--task", "cart/cap-quantity"), signal.SIGTERM),
        (("bench", "--task", "cart/cap-quantity"), signal.SIGINT),
        (("run", "--task", "cart/cap-quantity", "--json"), signal.SIGTERM),
        (("sessions",), signal.SIGTERM),
    ],
    ids=["bench-SIGTERM", "bench-SIGINT", "run-SIGTERM", "sessions-SIGTERM"],
)
def test_a_signal_while_the_store_open_waits_for_a_lock_ends_the_command_in_one_line(
    tmp_path: Path, command: tuple[str, ...], signum: int
) -> None:
    """A schema-1 file to migrate while another process holds the write lock: the open waits (the busy
    timeout is an hour), and the signal, before any handler of the command's own, ends it with its line."""
    db = tmp_path / "old.db"
    shutil.copyfile(FIXTURE, db)
    with sqlite3.connect(db) as connection:  # readers pass a lock in WAL mode, so only the migration waits
        connection.execute("PRAGMA journal_mode=WAL")
    before = _schema(db)
    with write_lock(db):
        process = _start(*command, "--db", str(db))
        _poll(lambda: _holds_open(process, db), "its store opened the file", process)
        os.kill(process.pid, signum)
        code, out, err = _ended(process)
    assert code == 128 + signum, err
    assert err.strip().splitlines() == [LINES[signum]] and out == ""
    assert _schema(db) == before  # the migration never started: the file is as it was


def _events(db: Path) -> int:
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT count(*) FROM events").fetchone()[0]


def _spilled() -> bool:
    return any(path.stat().st_size > 0 for path in fallback_dir().glob("*.jsonl"))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_a_sweep_whose_comparison_waits_for_a_lock_ends_it_and_import_brings_the_session_back(
    tmp_path: Path, signum: int
) -> None:
    """The sweep runs its (minute-long) comparison; once its events are being stored, another process takes
    the write lock and the session's writer waits (its fallback file appears); then the signal."""
    db = tmp_path / "bench.db"
    Store(db).close()
    process = _start("bench", "--model", crash.MODEL, "--task", crash.TASK, "--db", str(db))
    _poll(lambda: _events(db) > 0, "the sweep's comparison stored its first events", process)
    with write_lock(db):
        _poll(_spilled, "the session's writer waited on the lock", process)
        os.kill(process.pid, signum)
        code, _, err = _ended(process)
    assert code == 128 + signum, err
    why = "interrupted" if signum == signal.SIGINT else "stopped by SIGTERM"
    assert f"workbench: {why}; 0 finished runs are stored in sweep" in err, err
    assert "Traceback" not in err

    imported = _cli("import", "--db", str(db))
    assert imported.returncode == 0, imported.stderr
    assert list(fallback_dir().glob("*.jsonl")) == []
    (session,) = json.loads(_cli("sessions", "--json", "--db", str(db)).stdout)
    assert session["status"] == "cancelled"
    (sweep,) = json.loads(_cli("bench", "--list", "--json", "--db", str(db)).stdout)
    assert sweep["status"] == "interrupted"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        crash.workbench_command(*args), capture_output=True, text=True, env=child_env(), timeout=WAIT_S, check=False
    )
