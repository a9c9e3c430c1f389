"""An MCP server as the app with a real provider path as the model: the real ``openai`` client over HTTP to the
fake OpenAI-compatible server on 127.0.0.1 (Responses API), both arms, every token count the server's.

Two shapes: a built-in task through ``workbench serve-app`` (graded against the task's expected end state),
and a server the workbench knows nothing of, with its SQLite file in a per-arm workdir (row-level diff,
graded by the arms' agreement)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_sources_mcp import NOTES, live, pids, player, template  # noqa: F401 (fixtures)

from tests.support.fake_openai import FakeOpenAI, Recorded
from workbench.cli import cli
from workbench.events import EndState, Graded
from workbench.sources.agreement import AGREE
from workbench.store import Store

pytest.importorskip("fastmcp.server", reason="the MCP extras are not installed here: pip install -e '.[test]'")

MODEL = "openai:gpt-5-mini"
SERVE_CART = f"{sys.executable} -m workbench serve-app cart --items 122"
CART_TOOLS = {"list_cart_items", "get_cart_item", "create_cart_item", "update_cart_item", "delete_cart_item"}


def run_json(*args: str, db: Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["run", *args, "--model", MODEL, "--json", "--db", str(db)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def by_arm(requests: list[Recorded]) -> dict[str, list[Recorded]]:
    """The server's requests by the arm that sent them (a code arm offers run_code and nothing else)."""
    arms: dict[str, list[Recorded]] = {"tool": [], "code": []}
    for request in requests:
        names = {tool.get("name") or tool.get("function", {}).get("name") for tool in request.body.get("tools", [])}
        arms["code" if names == {"run_code"} else "tool"].append(request)
    return arms


def offered(request: Recorded) -> set[str]:
    return {tool.get("name") or tool.get("function", {}).get("name") for tool in request.body.get("tools", [])}


def test_a_built_in_task_through_serve_app_with_a_model_over_http(db_path: Path) -> None:
    with FakeOpenAI() as server:
        data = run_json("--task", "cart/remove-expensive", "--mcp", SERVE_CART, "--base-url", server.url, db=db_path)
    assert data["app"] == "mcp:cart"
    sent = by_arm(server.requests)
    assert all(request.path.endswith("/responses") for request in server.requests)  # openai: is the Responses API
    assert offered(sent["tool"][0]) >= CART_TOOLS  # the server's tools, by their own names
    assert "list_cart_items" in json.dumps(sent["code"][0].body)  # in run_code's catalog
    for arm in data["arms"]:
        assert (arm["status"], arm["passed"], arm["mismatches"]) == ("completed", True, [])
        assert arm["diff"] == {"created": 0, "updated": 0, "deleted": 35}
        assert arm["requests"] == len(sent[arm["name"]])
        assert arm["input_tokens"] == sum(request.input_tokens for request in sent[arm["name"]])
        assert arm["output_tokens"] == sum(request.output_tokens for request in sent[arm["name"]])
    tool, code = data["arms"]
    assert (tool["tool_calls"], code["inner_calls"]) == (38, 38)
    assert code["input_tokens"] < tool["input_tokens"] / 3


def test_your_own_server_and_sqlite_workdir_with_a_model_over_http(db_path: Path, template: Path, pids: Path) -> None:  # noqa: F811
    calls = [("add_note", {"title": "milk"}), ("update_note", {"note_id": 1, "body": "eggs, ham"})]
    with FakeOpenAI(policy=player(calls).function) as server:
        data = run_json("add milk", "--mcp", NOTES, "--workdir", str(template), "--base-url", server.url, db=db_path)
    sent = by_arm(server.requests)
    assert {"list_notes", "add_note", "update_note", "delete_note"} <= offered(sent["tool"][0])
    assert [arm["diff"] for arm in data["arms"]] == [{"created": 1, "updated": 1, "deleted": 0}] * 2
    for arm in data["arms"]:
        assert (arm["status"], arm["passed"], arm["verdict"]) == ("completed", None, "agree")
        assert arm["input_tokens"] == sum(request.input_tokens for request in sent[arm["name"]]) > 0
    events = Store(db_path).events(data["session_id"])
    for arm in ("tool", "code"):
        (end,) = [event.payload for event in events if event.arm == arm and isinstance(event.payload, EndState)]
        assert end.created == [
            {"entity": "notes.db:notes", "id": "2", "record": {"id": 2, "title": "milk", "body": ""}}
        ]
        assert end.updated == [{"entity": "notes.db:notes", "id": "1", "changes": {"body": ["eggs", "eggs, ham"]}}]
        (grade,) = [event.payload for event in events if event.arm == arm and isinstance(event.payload, Graded)]
        assert (grade.verdict, grade.task) == ("agree", AGREE)
