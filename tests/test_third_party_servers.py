"""Grades you can trust on tools nobody here wrote: real third-party MCP servers over the real protocol.

mcp-server-sqlite and mcp-server-git (PyPI, on the mcp 1.x SDK), the filesystem and memory servers (npm),
installed by tests/support/third_party_servers.py in environments of their own. Both arms are driven by one
pydantic-ai FunctionModel doing the same work (or, where the case says, different work), so each case has
the verdict it must give: identical work "arms agree", different work "arms differ" with the records that
differ, a failed arm "not compared", and nothing the servers start outlives the run.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic_ai.models.function import FunctionModel
from rich.console import Console

import workbench
from tests.support.mcp_player import Call, player
from tests.support.third_party_servers import Servers, install
from tests.test_sources_mcp import wait_until
from workbench.bench.export import export_session
from workbench.events import EndState, Graded
from workbench.printer import comparison_view
from workbench.runner import Comparison

INSERT = "INSERT INTO notes (id, title) VALUES (lower(hex(randomblob(8))), 'milk')"


@pytest.fixture(scope="session")
def servers() -> Servers:
    return install()


@pytest.fixture
def py(servers: Servers) -> Path:
    if servers.python_bin is None:
        _missing(servers.why_not_python)
    assert servers.python_bin is not None
    return servers.python_bin


@pytest.fixture
def npm(servers: Servers) -> Servers:
    if servers.node_modules is None:
        _missing(servers.why_not_node)
    return servers


def _missing(why: str) -> None:
    if os.environ.get("REQUIRE_MCP_SERVERS"):
        pytest.fail(f"the third-party MCP servers are required (REQUIRE_MCP_SERVERS is set): {why}")
    pytest.skip(why)


@pytest.fixture(autouse=True)
def arm_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The arms' folders go here, so a model can find its arm's copy (servers want absolute paths)."""
    folder = tmp_path / "arms"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def armdir(arm: str) -> str:
    """The arm's copy of the working folder (``<tmp>/workbench-<arm>-XXXX/t``)."""
    (found,) = Path(tempfile.gettempdir()).glob(f"workbench-{arm}-*/t")
    return str(found)


def same(*calls: Call) -> FunctionModel:
    return player(lambda arm: calls)


def grade(result: Comparison, arm: str) -> Graded:
    (found,) = [event.payload for event in result.arms[arm].events if isinstance(event.payload, Graded)]
    return found


def end_state(result: Comparison, arm: str) -> EndState:
    (found,) = [event.payload for event in result.arms[arm].events if isinstance(event.payload, EndState)]
    return found


def verdicts(result: Comparison) -> dict[str, str]:
    return {name: arm.summary.verdict for name, arm in result.arms.items()}


def assert_agree(result: Comparison) -> None:
    for name, arm in result.arms.items():
        assert arm.summary.status == "completed", arm.summary.error
        assert (arm.summary.verdict, arm.summary.passed, arm.summary.mismatches) == ("agree", None, []), name


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    """A working folder with a notes database whose ids are text the caller chooses."""
    folder = tmp_path / "t"
    folder.mkdir()
    with sqlite3.connect(folder / "notes.db") as connection:
        connection.execute("CREATE TABLE notes (id TEXT PRIMARY KEY, title TEXT)")
        connection.execute("INSERT INTO notes VALUES ('seed', 'groceries')")
    connection.close()
    return folder


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "README.txt").write_text("a folder\n")
    return folder


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A working folder holding a git repository with one commit."""
    folder = tmp_path / "t"
    repo = folder / "repo"
    repo.mkdir(parents=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.com",
           "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@example.com"}  # fmt: skip
    for command in (["init", "-q", "-b", "main"], ["add", "a.txt"], ["commit", "-qm", "first"]):
        if command[0] == "add":
            (repo / "a.txt").write_text("one\n")
        subprocess.run(["git", "-C", str(repo), *command], check=True, env=env, timeout=60)
    return folder


def sqlite_server(py: Path, database: str = "notes.db") -> str:
    return f"{py}/mcp-server-sqlite --db-path {{workdir}}/{database}"


# -- mcp-server-sqlite -----------------------------------------------------------------------------------


async def test_ids_the_server_chooses_do_not_make_identical_work_differ(py: Path, notes: Path) -> None:
    result = await workbench.compare("add milk", mcp=[sqlite_server(py)], workdir=notes, model=same(
        ("write_query", {"query": INSERT})), db=False)  # fmt: skip
    assert_agree(result)
    created = [end_state(result, arm).created[0] for arm in ("tool", "code")]
    assert [item["record"]["title"] for item in created] == ["milk", "milk"]
    assert created[0]["id"] != created[1]["id"]  # random hex ids: each arm's own


async def test_a_setup_keyed_by_arm_cancels_out(py: Path, notes: Path) -> None:
    setup = (f"{sys.executable} -c \"import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
             "c.execute('INSERT INTO notes VALUES (?, ?)', (sys.argv[2], 'mine')); c.commit()\" "
             "{workdir}/notes.db {arm}")  # fmt: skip
    update = ("write_query", {"query": "UPDATE notes SET title = 'bread' WHERE id = 'seed'"})
    result = await workbench.compare("bread", mcp=[sqlite_server(py)], workdir=notes, setup=setup,
                                     model=same(update), db=False)  # fmt: skip
    assert_agree(result)


async def test_different_work_differs_with_the_records_that_differ(py: Path, notes: Path) -> None:
    def plan(arm: str) -> list[Call]:
        title = "milk" if arm == "tool" else "bread"
        return [("write_query", {"query": f"INSERT INTO notes VALUES (lower(hex(randomblob(8))), '{title}')"})]

    result = await workbench.compare("add", mcp=[sqlite_server(py)], workdir=notes, model=player(plan), db=False)
    assert verdicts(result) == {"tool": "differ", "code": "differ"}
    tool = grade(result, "tool")
    assert tool.passed is False and result.arms["tool"].summary.passed is None  # no expectation: not a failure
    assert any('created here (title="milk")' in line and "not in the code arm" in line for line in tool.mismatches)
    assert any('created in the code arm (title="bread")' in line for line in tool.mismatches)


async def test_a_crashed_arm_is_not_compared_and_every_view_says_so(py: Path, notes: Path, tmp_path: Path) -> None:
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    command = (f"sh -c 'echo $$ > {pid_dir}/$WORKBENCH_ARM; "
               f"exec {py}/mcp-server-sqlite --db-path \"$WORKBENCH_WORKDIR/notes.db\"'")  # fmt: skip

    def crash(arm: str) -> None:  # the tool arm's server dies before its first call
        if arm == "tool":
            pid = int((pid_dir / "tool").read_text())
            os.kill(pid, signal.SIGKILL)
            assert wait_until(lambda: not alive(pid))

    update = ("write_query", {"query": "UPDATE notes SET title = 'bread' WHERE id = 'seed'"})
    result = await workbench.compare("bread", mcp=[command], workdir=notes, model=player(lambda arm: [update], crash),
                                     db=False)  # fmt: skip
    tool, code = result.arms["tool"].summary, result.arms["code"].summary
    assert (tool.status, code.status) == ("failed", "completed")
    reason = "not compared: the tool arm failed"
    for summary in (tool, code):
        assert (summary.verdict, summary.verdict_reason, summary.passed) == ("not graded", reason, None)
    assert code.diff["updated"] == 1  # the finished arm's own work is still shown
    assert "server/discover" not in (tool.error or "")  # the stderr tail is the server's, not the probe's noise
    console = Console(width=140, record=True)
    console.print(comparison_view(result))
    shown = console.export_text()
    assert reason in shown and "PASSED" not in shown and "arms agree" not in shown
    assert reason in export_session(result, "md")
    assert '"verdict_reason": "not compared: the tool arm failed"' in export_session(result, "json")


async def test_a_database_the_server_creates_is_one_change(py: Path, empty: Path) -> None:
    create = ("create_table", {"query": "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)"})
    result = await workbench.compare("table", mcp=[sqlite_server(py, "new.db")], workdir=empty, model=same(create),
                                     db=False)  # fmt: skip
    assert_agree(result)
    for arm in ("tool", "code"):
        state = end_state(result, arm)
        assert [(item["entity"], item["id"]) for item in state.created] == [("new.db", "items")]
        assert (state.updated, state.deleted) == ([], [])
        assert result.arms[arm].summary.diff == {"created": 1, "updated": 0, "deleted": 0}


async def test_nothing_a_server_starts_outlives_the_run(py: Path, notes: Path, tmp_path: Path) -> None:
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    command = (f"sh -c 'sleep 600 & echo $! > {pid_dir}/$WORKBENCH_ARM-helper; echo $$ > {pid_dir}/$WORKBENCH_ARM; "
               f"exec {py}/mcp-server-sqlite --db-path \"$WORKBENCH_WORKDIR/notes.db\"'")  # fmt: skip
    result = await workbench.compare("look", mcp=[command], workdir=notes, model=same(
        ("read_query", {"query": "SELECT count(*) FROM notes"})), db=False)  # fmt: skip
    assert_agree(result)
    pids = [int(path.read_text()) for path in pid_dir.iterdir()]
    assert len(pids) == 4  # a server and its helper per arm
    assert wait_until(lambda: not any(alive(pid) for pid in pids)), [pid for pid in pids if alive(pid)]


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_a_workbench_killed_mid_run_leaves_no_server_behind(py: Path, notes: Path, tmp_path: Path, how: int) -> None:
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    script = tmp_path / "hold.py"
    script.write_text(
        textwrap.dedent(f"""
        import asyncio, sys
        from pathlib import Path
        from pydantic_ai.messages import ModelResponse
        from pydantic_ai.models.function import FunctionModel
        import workbench

        async def respond(messages, info):
            Path({str(pid_dir)!r}, "ready").touch()
            await asyncio.sleep(600)
            return ModelResponse(parts=[])

        command = ("sh -c 'sleep 600 & echo $! > {pid_dir}/$WORKBENCH_ARM-helper; echo $$ > {pid_dir}/$WORKBENCH_ARM; "
                   "exec {py}/mcp-server-sqlite --db-path \\"$WORKBENCH_WORKDIR/notes.db\\"'")
        asyncio.run(workbench.compare("hold", mcp=[command], workdir={str(notes)!r}, arms=["tool"],
                                      model=FunctionModel(respond), db=False))
    """)
    )
    process = subprocess.Popen([sys.executable, str(script)], stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: (pid_dir / "ready").exists() or process.poll() is not None, 120)
        assert process.poll() is None, "the workbench ended before its arm started"
        pids = [int((pid_dir / name).read_text()) for name in ("tool", "tool-helper")]
        assert all(alive(pid) for pid in pids)
        process.send_signal(how)
        process.wait(timeout=60)
        assert wait_until(lambda: not any(alive(pid) for pid in pids)), [pid for pid in pids if alive(pid)]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=60)


async def test_a_banner_on_stdout_is_one_line_not_tracebacks(
    py: Path, notes: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    command = f"sh -c 'echo Starting notes v1; exec {py}/mcp-server-sqlite --db-path \"$WORKBENCH_WORKDIR/notes.db\"'"
    result = await workbench.compare("look", mcp=[command], workdir=notes, model=same(
        ("read_query", {"query": "SELECT 1"})), db=False)  # fmt: skip
    assert_agree(result)
    said = [record for record in caplog.records if record.name.startswith("mcp.")]
    assert [record.getMessage() for record in said] == [
        "MCP server sh writes lines that are not MCP to its stdout, such as 'Starting notes v1': they are ignored "
        "(a server should log to stderr)"
    ]
    assert not any(record.exc_info for record in said)
    assert "Traceback" not in capsys.readouterr().err


# -- mcp-server-git --------------------------------------------------------------------------------------


def commits(message: Callable[[str], str]) -> FunctionModel:
    def plan(arm: str) -> list[Call]:
        repo = f"{armdir(arm)}/repo"
        return [("git_add", {"repo_path": repo, "files": ["b.txt"]}),
                ("git_commit", {"repo_path": repo, "message": message(arm)})]  # fmt: skip

    return player(plan)


async def test_the_same_commit_in_both_arms_agrees(py: Path, repository: Path) -> None:
    setup = "echo two > {workdir}/repo/b.txt; echo {arm} > {workdir}/repo/untracked-{arm}.txt"
    server = f"{py}/mcp-server-git --repository {{workdir}}/repo"
    model = commits(lambda arm: "add b")
    result = await workbench.compare("commit b", mcp=[server], workdir=repository, setup=setup, model=model, db=False)
    assert_agree(result)
    changed = {item["entity"] for item in [*end_state(result, "tool").created, *end_state(result, "tool").updated]}
    assert changed == {"git:repo", "git:repo:staged"}  # refs and the index by content, no .git/ files


async def test_different_commits_differ_by_their_message(py: Path, repository: Path) -> None:
    result = await workbench.compare("commit b", mcp=[f"{py}/mcp-server-git --repository {{workdir}}/repo"],
                                     workdir=repository, setup="echo two > {workdir}/repo/b.txt",
                                     model=commits(lambda arm: f"b from {arm}"), db=False)  # fmt: skip
    assert verdicts(result) == {"tool": "differ", "code": "differ"}
    lines = grade(result, "tool").mismatches
    assert any(line.startswith("git:repo refs/heads/main: updated here") and "b from tool" in line for line in lines)
    assert not any(".git/" in line for line in lines)


# -- npm: server-filesystem, server-memory ---------------------------------------------------------------


async def test_filesystem_server_same_file_agrees_and_another_differs(npm: Servers, empty: Path) -> None:
    server = f"node {npm.script('server-filesystem')} {{workdir}}"
    write = player(lambda arm: [("write_file", {"path": f"{armdir(arm)}/note.txt", "content": "milk\n"})])
    assert_agree(await workbench.compare("note", mcp=[server], workdir=empty, model=write, db=False))
    other = player(lambda arm: [("write_file", {"path": f"{armdir(arm)}/note.txt", "content": f"{arm}\n"})])
    result = await workbench.compare("note", mcp=[server], workdir=empty, model=other, db=False)
    assert verdicts(result) == {"tool": "differ", "code": "differ"}
    assert any(line.startswith("files note.txt: created here") for line in grade(result, "tool").mismatches)


async def test_memory_server_same_entities_agree(npm: Servers, empty: Path) -> None:
    server = f"env MEMORY_FILE_PATH={{workdir}}/memory.jsonl node {npm.script('server-memory')}"
    entities = [{"name": "milk", "entityType": "item", "observations": ["cold"]}]
    result = await workbench.compare("remember", mcp=[server], workdir=empty, db=False,
                                     model=same(("create_entities", {"entities": entities})))  # fmt: skip
    assert result.arms["tool"].summary.app_tools and "create_entities" in result.arms["tool"].summary.app_tools
    assert_agree(result)
    assert [item["id"] for item in end_state(result, "code").created] == ["memory.jsonl"]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by its parent) is not running
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True
