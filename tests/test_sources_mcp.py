"""Your own tools as the app: real MCP servers (stdio and Streamable HTTP) and Python toolsets.

The servers are real processes speaking the real protocol (tests/mcp_servers/notes_server.py, a FastMCP
server keeping notes in a SQLite file in its working folder). The model is pydantic-ai's FunctionModel,
which plays the tools it is given: the scripted model only knows the demo apps.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import workbench
from tests.support.mcp_player import player
from workbench.cli import main
from workbench.events import EndState, Graded, RunFinished, RunStarted, ToolResult
from workbench.runner import AppUnavailable
from workbench.session import Comparison

pytest.importorskip("fastmcp.server", reason="the MCP extras are not installed here: pip install -e '.[test]'")

SERVER = Path(__file__).parent / "mcp_servers" / "notes_server.py"
NOTES = f"{sys.executable} {SERVER}"


def payloads(comparison: Comparison, arm: str, kind: type) -> list[Any]:
    return [event.payload for event in comparison.arms[arm].events if isinstance(event.payload, kind)]


def one(comparison: Comparison, arm: str, kind: type) -> Any:
    (found,) = payloads(comparison, arm, kind)
    return found


@pytest.fixture
def pids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The folder where every server started by a test records its process id; none may outlive the test."""
    folder = tmp_path / "pids"
    folder.mkdir()
    monkeypatch.setenv("NOTES_PIDS", str(folder))
    yield folder
    assert wait_until(lambda: not live(folder)), f"servers still running: {live(folder)}"


def live(folder: Path) -> list[int]:
    alive = []
    for entry in folder.iterdir():
        try:
            os.kill(int(entry.name), 0)
        except ProcessLookupError:
            continue
        alive.append(int(entry.name))
    return alive


def wait_until(condition: Any, bound_s: float = 30.0) -> bool:
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture
def template(tmp_path: Path) -> Path:
    """A working folder with a notes database holding one note, and a plain file."""
    folder = tmp_path / "template"
    folder.mkdir()
    with sqlite3.connect(folder / "notes.db") as connection:
        connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT)")
        connection.execute("INSERT INTO notes (title, body) VALUES ('groceries', 'eggs')")
    connection.close()
    (folder / "README.txt").write_text("notes live in notes.db\n")
    return folder


async def test_stdio_server_per_arm_with_row_level_diff(template: Path, pids: Path) -> None:
    calls = [("add_note", {"title": "milk"}), ("update_note", {"note_id": 1, "body": "eggs, ham"})]
    result = await workbench.compare("add milk", mcp=[NOTES], workdir=template, model=player(calls), db=False)
    for arm in ("tool", "code"):
        started = one(result, arm, RunStarted)
        assert started.app == "mcp:notes"  # the name the server gives itself
        listed = started.tools if arm == "tool" else started.sandboxed_tools
        assert {"list_notes", "add_note", "update_note", "delete_note"} <= set(listed)
        end = one(result, arm, EndState)
        assert end.created == [
            {"entity": "notes.db:notes", "id": "2", "record": {"id": 2, "title": "milk", "body": ""}}
        ]
        assert end.updated == [{"entity": "notes.db:notes", "id": "1", "changes": {"body": ["eggs", "eggs, ham"]}}]
        assert end.deleted == []
        grade = one(result, arm, Graded)
        assert (grade.verdict, grade.task, grade.mismatches) == ("agree", "arms agree", [])
        assert result.arms[arm].summary.passed is None  # agreement is not a pass
        assert one(result, arm, RunFinished).status == "completed"
    summary = result.to_dict()["arms"]
    assert [arm["diff"] for arm in summary] == [{"created": 1, "updated": 1, "deleted": 0}] * 2
    assert len(live(pids)) + len(list(pids.iterdir())) >= 2  # one server per arm
    with sqlite3.connect(template / "notes.db") as connection:  # the template is never written
        assert connection.execute("SELECT title, body FROM notes").fetchall() == [("groceries", "eggs")]
    connection.close()


async def test_arms_that_end_differently_are_told_where(template: Path, pids: Path) -> None:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(part, ToolReturnPart) for message in messages for part in message.parts):
            return ModelResponse(parts=[TextPart("done")])
        if any(tool.name == "run_code" for tool in info.function_tools):
            return ModelResponse(parts=[ToolCallPart("run_code", {"code": "await delete_note(note_id=1)"})])
        return ModelResponse(parts=[ToolCallPart("add_note", {"title": "milk"})])

    result = await workbench.compare("tidy", mcp=[NOTES], workdir=template, model=FunctionModel(respond), db=False)
    tool, code = one(result, "tool", Graded), one(result, "code", Graded)
    assert (tool.verdict, tool.task, code.verdict) == ("differ", "arms differ", "differ")
    assert tool.mismatches == [
        'notes.db:notes 2: created here (title="milk", body=""), not in the code arm',
        "notes.db:notes 1: deleted in the code arm, not here",
    ]
    assert one(result, "code", EndState).deleted[0]["record"] == {"id": 1, "title": "groceries", "body": "eggs"}


async def test_setup_runs_before_each_arm_and_the_server_reads_workdir_from_its_environment(
    tmp_path: Path, pids: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    setup = (
        f"{sys.executable} -c \"import sqlite3, sys; c = sqlite3.connect(sys.argv[1] + '/notes.db'); "
        "c.execute('CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT)'); "
        "c.execute('INSERT INTO notes (title) VALUES (?)', (sys.argv[2],)); c.commit()\" {workdir} {arm}"
    )
    result = await workbench.compare(
        "list", mcp=[f"{NOTES} --db {{workdir}}/notes.db"], workdir=empty, setup=setup,
        model=player([("list_notes", {})]), db=False,
    )  # fmt: skip
    seen = one(result, "tool", ToolResult)
    assert json.loads(seen.content) == [{"id": 1, "title": "tool", "body": None}]
    assert one(result, "tool", EndState) == EndState([], [], [])


async def test_streamable_http_server_with_headers(tmp_path: Path, pids: Path) -> None:
    port_file = tmp_path / "port"
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--db", str(tmp_path / "shared.db"), "--http", str(port_file)],
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_until(lambda: port_file.exists() and port_file.read_text())
        url = f"http://127.0.0.1:{port_file.read_text()}/mcp"
        result = await workbench.compare(
            "who am I", mcp=[url], mcp_headers=["X-Team: blue"], model=player([("header", {"name": "X-Team"})]),
            db=False, arms=["tool"],
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert one(result, "tool", RunStarted).app == "mcp:notes"
    assert one(result, "tool", ToolResult).content == "blue"
    assert one(result, "tool", RunFinished).status == "completed"


async def test_servers_whose_tools_collide_are_prefixed(tmp_path: Path, pids: Path) -> None:
    servers = [f"{NOTES} --name alpha --db {tmp_path / 'a.db'}", f"{NOTES} --name beta --db {tmp_path / 'b.db'}"]
    calls = [("alpha_add_note", {"title": "a"}), ("beta_add_note", {"title": "b"})]
    result = await workbench.compare("add", mcp=servers, model=player(calls), db=False, arms=["tool"])
    tools = one(result, "tool", RunStarted).tools
    assert "alpha_add_note" in tools and "beta_list_notes" in tools and "add_note" not in tools
    assert [r.outcome for r in payloads(result, "tool", ToolResult)] == ["ok", "ok"]


async def test_a_server_that_starts_for_no_arm_is_refused_with_its_stderr(tmp_path: Path, pids: Path) -> None:
    with pytest.raises(AppUnavailable, match=r"(?s)could not start.*permission denied"):
        await workbench.compare("x", mcp=[f"{NOTES} --fail-start"], model=player([]), db=tmp_path / "s.db")
    assert workbench.Store(tmp_path / "s.db").sessions() == []


def test_cli_exits_2_when_no_server_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str], pids: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "x", "--mcp", f"{NOTES} --fail-start", "--db", str(tmp_path / "s.db")])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "permission denied" in error and "Traceback" not in error


async def test_a_baseline_arm_whose_server_never_started_has_no_change_against_it(tmp_path: Path, pids: Path) -> None:
    """The tool arm (the baseline) fails at start, after 0.00 s: the code arm's wall time is not a change of
    millions of percent against it (it was +4097187% against a baseline that ran for microseconds)."""
    from rich.console import Console

    from workbench.printer import comparison_view

    command = f"{NOTES} --fail-start --arm tool --db {tmp_path / 'n.db'}"
    result = await workbench.compare("add", mcp=[command], model=player([("list_notes", {})]), db=False)
    assert (result.arms["tool"].summary.status, result.arms["code"].summary.status) == ("failed", "completed")
    console = Console(width=140, record=True)
    console.print(comparison_view(result))
    (wall,) = [line for line in console.export_text().splitlines() if line.startswith("wall time")]
    assert wall.split()[-1] == "–" and "%" not in wall, wall


async def test_a_server_failing_in_one_arm_leaves_the_other_running(tmp_path: Path, pids: Path) -> None:
    command = f"{NOTES} --fail-start --arm code --db {tmp_path / 'n.db'}"
    result = await workbench.compare("add", mcp=[command], model=player([("list_notes", {})]), db=False)
    assert one(result, "tool", RunFinished).status == "completed"
    failed = one(result, "code", RunFinished)
    assert failed.status == "failed" and "could not start" in failed.error and "permission denied" in failed.error


async def test_a_server_that_crashes_mid_run_fails_its_arm_only(template: Path, pids: Path) -> None:
    command = f"{NOTES} --crash-on add_note --arm tool"
    model = player([("add_note", {"title": "x"})])
    result = await workbench.compare("add", mcp=[command], workdir=template, model=model, db=False)
    crashed = one(result, "tool", RunFinished)
    assert crashed.status == "failed"
    assert "exited mid-run" in crashed.error and "fatal error in add_note" in crashed.error
    assert one(result, "code", RunFinished).status == "completed"
    assert len(one(result, "code", EndState).created) == 1


async def test_a_hanging_call_times_out_and_the_model_is_told(tmp_path: Path, pids: Path) -> None:
    command = f"{NOTES} --hang-on list_notes --db {tmp_path / 'n.db'}"
    source_args = {"mcp": [command]}
    from workbench.runner import ComparisonRun, prepare
    from workbench.sources import make_source

    source = make_source(**source_args, call_timeout_s=0.5)
    setup = prepare("list", model=player([("list_notes", {})]), arms=["tool"], source=source)
    result = await ComparisonRun(setup, None).result()
    answer = one(result, "tool", ToolResult)
    assert answer.outcome == "retried" and "did not answer list_notes within 0.5 s" in answer.error
    assert one(result, "tool", RunFinished).status == "completed"
    # workbench.compare() takes the same bounds as the CLI and task files
    api = await workbench.compare("list", mcp=[command], arms=["tool"], model=player([("list_notes", {})]),
                                  startup_timeout=60, call_timeout=0.5, db=False)  # fmt: skip
    assert "did not answer list_notes within 0.5 s" in one(api, "tool", ToolResult).error
    with pytest.raises(workbench.BadInput):
        await workbench.compare("list", mcp=[command], model=player([]), startup_timeout=0, db=False)


async def test_tool_schemas_that_are_not_json_schema_are_refused(tmp_path: Path, pids: Path) -> None:
    with pytest.raises(AppUnavailable, match="tool 'broken' whose input schema is not valid JSON Schema"):
        await workbench.compare("x", mcp=[f"{NOTES} --bad-schema --db {tmp_path / 'n.db'}"], model=player([]), db=False)


async def test_a_result_that_does_not_validate_reaches_the_model_as_a_retry(tmp_path: Path, pids: Path) -> None:
    command = f"{NOTES} --bad-result --db {tmp_path / 'n.db'}"
    result = await workbench.compare("count", mcp=[command], model=player([("count_notes", {})]), db=False,
                                     arms=["tool"])  # fmt: skip
    answer = one(result, "tool", ToolResult)
    assert answer.outcome == "retried" and "count_notes" in answer.error and "'many' is not of type" in answer.error


def test_bad_source_options_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        (["--mcp", "x {workdir}"], "{workdir} needs --workdir"),
        (["--mcp", "x", "--toolset", "json:dumps"], "exclude each other"),
        (["--workdir", str(tmp_path)], "need --mcp or --toolset"),
        (["--mcp", "x", "--workdir", str(tmp_path / "nope")], "no such folder"),
        (["--mcp", "http://h/mcp", "--mcp-header", "nocolon"], 'expected "Name: value"'),
        (["--toolset", "no_such_module_here:x"], "cannot import"),
        (["--toolset", "json:__name__"], "expected a pydantic-ai toolset"),
        (["--mcp", "x", "--app", "cart"], "exclude each other"),
    ]
    for args, message in cases:
        with pytest.raises(SystemExit) as exit_info:
            main(["run", "prompt", *args, "--db", str(tmp_path / "s.db")])
        assert exit_info.value.code == 2, args
        assert message in capsys.readouterr().err, args


async def test_python_toolset_factory_gets_each_arm_its_own_workdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(SERVER.parent))
    template = tmp_path / "todo"
    template.mkdir()
    with sqlite3.connect(template / "todo.db") as connection:
        connection.execute("CREATE TABLE todos (id INTEGER PRIMARY KEY, text TEXT)")
    connection.close()
    calls = [("add_todo", {"text": "water plants"}), ("list_todos", {})]
    result = await workbench.compare(
        "plants", toolset="py_toolset:make", workdir=template, model=player(calls), db=False
    )
    for arm in ("tool", "code"):
        assert one(result, arm, RunStarted).app == "toolset:make"
        assert one(result, arm, RunStarted).read_only_tools == ["list_todos"]
        assert one(result, arm, EndState).created == [
            {"entity": "todo.db:todos", "id": "1", "record": {"id": 1, "text": "water plants"}}
        ]
        assert one(result, arm, Graded).verdict == "agree"


async def test_python_list_of_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(SERVER.parent))
    result = await workbench.compare("shout", toolset="py_toolset:TOOLS", model=player([("shout", {"text": "hi"})]),
                                     db=False, arms=["tool"])  # fmt: skip
    assert one(result, "tool", ToolResult).content == "HI"
    assert payloads(result, "tool", Graded) == []  # one arm, no state: nothing to compare with


SERVE_APP = f"{sys.executable} -m workbench serve-app"


async def test_a_built_in_task_through_serve_app_grades_and_diffs_as_in_process() -> None:
    task = "cart/remove-expensive"
    served = await workbench.compare(task=task, mcp=[f"{SERVE_APP} cart --items 122"], db=False)
    local = await workbench.compare(task=task, db=False)
    assert served.app == "mcp:cart"
    for arm in ("tool", "code"):
        assert one(served, arm, RunFinished).status == "completed"
        assert one(served, arm, Graded) == one(local, arm, Graded)
        assert one(served, arm, Graded).passed
        assert one(served, arm, EndState) == one(local, arm, EndState)
        assert len(one(served, arm, EndState).deleted) == 35
    reading = set(one(served, "tool", RunStarted).read_only_tools)
    assert reading == {"list_cart_items", "get_cart_item", "list_saved_items", "get_saved_item"}


def test_serve_app_over_http_prints_its_address_and_serves(tmp_path: Path) -> None:
    import asyncio

    process = subprocess.Popen(
        [*SERVE_APP.split(), "kanban", "--items", "7", "--http", "0"], stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert line.startswith("serving kanban at http://127.0.0.1:"), line
        url = line.split(" at ")[1].strip()
        from fastmcp import Client

        async def read_state() -> Any:
            async with Client(url) as client:
                names = {tool.name for tool in await client.list_tools()}
                state = json.loads((await client.read_resource("workbench://state"))[0].text)
                return names, state

        names, state = asyncio.run(read_state())
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert "list_cards" in names or any(name.startswith("list_") for name in names)
    assert sum(len(records) for records in state.values()) >= 7


async def test_a_server_that_hangs_before_reporting_its_end_state_fails_its_arm_with_no_made_up_diff(
    tmp_path: Path,
) -> None:
    """A real ``workbench serve-app`` per arm; the tool arm's is SIGSTOPped after its one delete, so it cannot
    report its end state. Its arm fails saying so, with no diff and no made-up grade (an empty state read as every
    record deleted); the code arm, on its own server, runs to its end."""
    import signal

    pids = tmp_path / "pids"
    pids.mkdir()
    serve = f"{sys.executable} -m workbench serve-app cart --items 20"
    command = f"sh -c 'echo $$ > {pids}/$WORKBENCH_ARM; exec {serve}'"
    stopped: list[int] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        code = any(tool.name == "run_code" for tool in info.function_tools)
        done = any(isinstance(part, ToolReturnPart) for message in messages for part in message.parts)
        if done:
            if not code:
                stopped.append(int((pids / "tool").read_text()))
                os.kill(stopped[-1], signal.SIGSTOP)
            return ModelResponse(parts=[TextPart("done")])
        if code:
            snippet = "await delete_cart_item(item_id='line-0001')"
            return ModelResponse(parts=[ToolCallPart("run_code", {"code": snippet})])
        return ModelResponse(parts=[ToolCallPart("delete_cart_item", {"item_id": "line-0001"})])

    try:
        result = await workbench.compare(
            "remove line 1", mcp=[command], model=FunctionModel(respond), startup_timeout=120, call_timeout=2, db=False
        )
    finally:
        resume(stopped)
    assert stopped, "the tool arm never reached its answer"
    hung = one(result, "tool", RunFinished)
    assert hung.status == "failed"
    assert hung.error == "cannot read the end state: MCP server cart did not report its state within 2 s"
    assert payloads(result, "tool", EndState) == []
    (graded,) = payloads(result, "tool", Graded)
    assert (graded.reason, graded.mismatches) == ("not compared: the tool arm failed", [])
    assert one(result, "code", RunFinished).status == "completed"
    assert [record["id"] for record in one(result, "code", EndState).deleted] == ["line-0001"]
    assert wait_until(lambda: not live_pids(stopped)), f"a stopped server outlived the run: {stopped}"


def resume(pids: list[int]) -> None:
    """SIGCONT the servers a test SIGSTOPped (those still alive), so none stays frozen after it."""
    import signal

    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def live_pids(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        alive.append(pid)
    return alive


async def test_a_stop_while_the_server_hangs_ends_the_arm_cancelled_within_seconds(tmp_path: Path) -> None:
    """The tool arm's real ``workbench serve-app`` is SIGSTOPped during the arm's second call, then the
    comparison is cancelled (what SIGTERM and Ctrl+C do): the arm ends cancelled, its unknown end state left
    out, without waiting its 600 s call timeout for the state of a server that cannot answer."""
    import signal

    from workbench.runner import ComparisonRun, prepare
    from workbench.sources import make_source

    pids = tmp_path / "pids"
    pids.mkdir()
    command = f"sh -c 'echo $$ > {pids}/$WORKBENCH_ARM; exec {sys.executable} -m workbench serve-app cart --items 20'"
    stopped: list[int] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done = sum(isinstance(part, ToolReturnPart) for message in messages for part in message.parts)
        if done == 1 and not stopped:
            stopped.append(int((pids / "tool").read_text()))
            os.kill(stopped[-1], signal.SIGSTOP)
        return ModelResponse(parts=[ToolCallPart("list_cart_items", {"page": done + 1})])

    source = make_source(mcp=[command], call_timeout_s=600, startup_timeout_s=120)
    run = ComparisonRun(prepare("list", model=FunctionModel(respond), arms=["tool"], source=source), None)
    task = asyncio.ensure_future(run.result())
    try:
        while not stopped and not task.done():
            await asyncio.sleep(0.05)
        run.cancel()
        result = await asyncio.wait_for(task, 120)  # a deadline far short of the call timeout
    finally:
        resume(stopped)
    assert stopped, "the arm never made its second call"
    ended = one(result, "tool", RunFinished)
    assert (ended.status, ended.error) == ("cancelled", "cancelled by the user")
    assert payloads(result, "tool", EndState) == [] and payloads(result, "tool", Graded) == []
    assert wait_until(lambda: not live_pids(stopped)), f"a stopped server outlived the run: {stopped}"
