"""Hostile fallback files for the ``hostile`` row: each given to ``workbench import`` against the seeded store.

Forged files name the stored session and copy its rows, as someone who can read a shared database would;
they try to rewrite its end (failed, a cost, a grade and a model of their choice) or add events to it. The
rest are malformed: NaN, an unknown key, a 200 MB file, a FIFO. Each must be one line and exit 2, and the
row's fingerprint of the store must not change (:func:`reliability.hostile.run_file_attacks`).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reliability.hostile import Attack

Build = Callable[[Path, Path], tuple[list[str], dict[str, str]]]


def import_attacks(db: Path) -> list[Attack]:
    """Every hostile fallback file, against the one session stored in ``db`` (a SQLite store)."""
    return [
        Attack("a forged end of a stored session", "fallback file", _forged(db, "end"), "differs: status"),
        Attack(
            "forged events for a stored session", "fallback file", _forged(db, "events"), "a session that has ended"
        ),
        Attack("NaN cost in a fallback file", "fallback file", _forged(db, "nan"), "not JSON"),
        Attack("unknown key in a fallback file", "fallback file", _forged(db, "key"), "unknown keys 'owner'"),
        Attack("200 MB fallback file", "fallback file", _made("big.jsonl", _sparse), "larger than 128 MiB"),
        Attack("a FIFO as the fallback file", "fallback file", _made("fifo.jsonl", os.mkfifo), "not a regular file"),
    ]


def _forged(db: Path, how: str) -> Build:
    def build(folder: Path, canary: Path) -> tuple[list[str], dict[str, str]]:
        header, event = _stored(db)
        records: list[dict[str, Any] | str] = [header]
        end_arms = [
            {**arm, "status": "failed", "passed": False, "cost_usd": 999.0, "model": "x"} for arm in header["arms"]
        ]
        end = {"record": "finish", "status": "failed", "finished": datetime.now(UTC).isoformat(), "arms": end_arms}
        if how == "end":
            records.append(end)
        elif how == "events":
            header["session"]["pid"] = 0  # a writer that is gone
            records.append({"record": "events", "events": [[event[0], 100_000, *event[2:]]]})
        elif how == "nan":
            records.append(json.dumps(end).replace("999.0", "NaN"))
        else:
            header["session"]["owner"] = "me"
        path = folder / "forged.jsonl"
        path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
        return ["import", str(path)], {}

    return build


def _stored(db: Path) -> tuple[dict[str, Any], list[Any]]:
    """The first record a forger would write for the store's session (its rows copied), and one stored event."""
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        keys = ("id", "created", "app", "items", "seed", "prompt", "task", "model", "pid", "host")
        row = connection.execute(f"SELECT {', '.join(keys)} FROM sessions LIMIT 1").fetchone()
        session = dict(zip(keys, row, strict=True)) | {"status": "running"}
        session["created"] = datetime.fromisoformat(session["created"]).replace(tzinfo=UTC).isoformat()
        arms = [
            {"name": name, "mode": mode, "model": model, "status": "running", "position": position}
            for name, mode, model, position in connection.execute(
                "SELECT name, mode, model, position FROM arms WHERE session_id = ?", (session["id"],)
            )
        ]
        event = list(connection.execute("SELECT arm, seq, t, kind, data FROM events LIMIT 1").fetchone())
    finally:
        connection.close()
    return {"record": "session", "db": str(db.resolve()), "session": session, "arms": arms}, event


def _made(name: str, make: Callable[[Path], None]) -> Build:
    def build(folder: Path, canary: Path) -> tuple[list[str], dict[str, str]]:
        make(folder / name)
        return ["import", str(folder / name)], {}

    return build


def _sparse(path: Path) -> None:
    path.write_text('{"record": "session"}\n')
    os.truncate(path, 200 * 1024 * 1024)  # a hole: the refusal must not read it
