"""The command-line contract: JSON shapes, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from workbench.cli import cli


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), prog_name="workbench")
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_run_json_prints_exactly_one_object(db_path: Path) -> None:
    code, out, _ = invoke("run", "--task", "cart/remove-expensive", "--items", "60", "--json", "--db", str(db_path))
    assert code == 0
    data = json.loads(out)
    assert data["task"] == "cart/remove-expensive" and data["items"] == 60
    assert [a["passed"] for a in data["arms"]] == [True, True]
    assert out.count("\n") == 1


def test_run_prints_a_side_by_side_summary(db_path: Path) -> None:
    code, out, _ = invoke("run", "--task", "kanban/archive-done", "--db", str(db_path))
    assert code == 0
    for text in ("Tool calling", "Code mode", "code vs tool", "input tokens", "passed", "priced as"):
        assert text in out


def test_show_prints_the_run_object_from_the_store(db_path: Path) -> None:
    _, out, _ = invoke("run", "--task", "calendar/cancel-tentative", "--items", "40", "--json", "--db", str(db_path))
    ran = json.loads(out)
    code, shown, _ = invoke("show", ran["session_id"][:6], "--json", "--db", str(db_path))
    assert code == 0 and json.loads(shown) == ran


def test_sessions_json_lists_newest_first(db_path: Path) -> None:
    first = json.loads(invoke("run", "--task", "cart/cap-quantity", "--items", "10", "--json", "--db", str(db_path))[1])
    second = json.loads(invoke("run", "Write a haiku", "--app", "chatroom", "--items", "5", "--json", "--db",
                               str(db_path))[1])  # fmt: skip
    code, out, _ = invoke("sessions", "--json", "--db", str(db_path))
    listed = json.loads(out)
    assert code == 0 and [s["session_id"] for s in listed] == [second["session_id"], first["session_id"]]
    assert set(listed[0]) >= {"session_id", "created", "app", "items", "model", "prompt", "arms"}
    assert listed[1]["arms"] == [
        {
            "name": name,
            "status": "completed",
            "passed": True,
            "cost_usd": arm["cost_usd"],
            "tool_calls": arm["tool_calls"],
        }
        for name, arm in zip(("tool", "code"), first["arms"], strict=True)
    ]
    assert listed[1]["comparable"] is True and listed[1]["not_comparable_reason"] is None
    assert listed[0]["arms"][0]["passed"] is None
    assert [arm["tool_calls"] for arm in listed[0]["arms"]] == [0, 0]
    assert listed[0]["not_comparable_reason"] == "neither arm called a tool"


def test_tasks_json_lists_id_app_tier_items_prompt() -> None:
    code, out, _ = invoke("tasks", "--json", "--app", "cart")
    rows = json.loads(out)
    assert code == 0 and rows
    assert all(set(row) == {"id", "app", "tier", "items", "prompt"} and row["app"] == "cart" for row in rows)
    worked = next(row for row in rows if row["id"] == "cart/remove-expensive")
    assert worked == {"id": "cart/remove-expensive", "app": "cart", "tier": "everyday", "items": 122,
                      "prompt": "Remove everything in the cart that costs more than $50 apiece."}  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "x", "--app", "nope"], "unknown app 'nope'"),
        (["run", "--task", "cart/nope"], "unknown task 'cart/nope'"),
        (["run", "--task", "cart/cap-quantity", "--items", "0"], "items must be between"),
        (["run", "--task", "cart/cap-quantity", "--items", "many"], "'many' is not a valid integer"),
        (["run", "--task", "cart/cap-quantity", "--model", "nosuchmodel"], "unknown model 'nosuchmodel'"),
        (["run", "--task", "cart/cap-quantity", "--model", "openai:gpt-5-mini"], "OPENAI_API_KEY"),
        (["run", "--task", "cart/cap-quantity", "--arms", "tool,robot"], "unknown arm robot"),
        (["run", "--app", "cart"], "give a prompt or a built-in task"),
        (["show", "nosuchsession"], "no session 'nosuchsession'"),
        (["tasks", "--tier", "weekly"], "unknown tier 'weekly'"),
        (["frobnicate"], "No such command"),
        (["--model", "nosuchmodel"], "unknown model 'nosuchmodel'"),  # the TUI's pre-flight, before it opens
        (["--model", "openai:gpt-5-mini"], "OPENAI_API_KEY"),
        (["--request-limit", "0"], "0 is not in the range"),
    ],
)
def test_bad_input_exits_2_with_one_line(db_path: Path, args: list[str], message: str) -> None:
    code, out, err = invoke(*args, "--db", str(db_path)) if args[0] in ("run", "show") else invoke(*args)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("workbench: error: ") and message in err
    assert "Traceback" not in out + err


def test_bad_input_leaves_no_half_session(db_path: Path) -> None:
    invoke("run", "--task", "cart/cap-quantity", "--model", "nosuchmodel", "--db", str(db_path))
    code, out, _ = invoke("sessions", "--json", "--db", str(db_path))
    assert code == 0 and json.loads(out) == []


def test_a_foreign_database_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "foreign.db"
    path.write_bytes(b"\x00not a database at all" * 10)
    code, _, err = invoke("sessions", "--db", str(path))
    assert code == 2 and "foreign.db is not a workbench database" in err and err.count("\n") == 1


def test_the_installed_command_runs_and_exits_cleanly(db_path: Path) -> None:
    process = subprocess.run(
        [sys.executable, "-m", "workbench", "run", "--task", "cart/remove-expensive", "--json", "--db", str(db_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert process.returncode == 0, process.stderr
    assert json.loads(process.stdout)["arms"][1]["snippets"] == 1
