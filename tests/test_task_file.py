"""A person's own tasks: a TOML (or YAML) task file on their own MCP server, run by ``workbench bench --tasks``."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from tests.test_sources_mcp import SERVER, player
from workbench.bench import Sweep, plan_custom
from workbench.cli import main
from workbench.sources.agreement import Rules
from workbench.sources.taskfile import load_task_file

pytest.importorskip("fastmcp.server", reason="the MCP extras are not installed here: pip install -e '.[test]'")


def make_fixture(folder: Path) -> Path:
    folder.mkdir(parents=True)
    with sqlite3.connect(folder / "notes.db") as connection:
        connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT)")
        connection.execute("INSERT INTO notes (title, body) VALUES ('groceries', 'eggs')")
    connection.close()
    return folder


YAML_TASKS = """
defaults:
  mcp: ["{python} notes_server.py --db {{workdir}}/notes.db"]
  workdir: fixture
tasks:
  - id: add-milk
    prompt: "Add a note: milk."
    expect: {{workdir: expected}}
  - id: clear
    prompt: Delete every note.
    expect:
      sql: SELECT count(*) = 0 FROM notes
  - id: free
    prompt: Tidy up.
"""


@pytest.fixture(params=["toml", "yaml"])
def task_file(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """The same three tasks, written in TOML and in YAML."""
    make_fixture(tmp_path / "fixture")
    expected = make_fixture(tmp_path / "expected")
    with sqlite3.connect(expected / "notes.db") as connection:
        connection.execute("INSERT INTO notes (title, body) VALUES ('milk', '')")
    connection.close()
    (tmp_path / "notes_server.py").write_text(SERVER.read_text())
    if request.param == "yaml":
        path = tmp_path / "mine.yaml"
        path.write_text(YAML_TASKS.format(python=sys.executable))
        return path
    path = tmp_path / "mine.toml"
    path.write_text(
        f"""
[defaults]
mcp = ["{sys.executable} notes_server.py --db {{workdir}}/notes.db"]
workdir = "fixture"

[[tasks]]
id = "add-milk"
prompt = "Add a note: milk."
[tasks.expect]
workdir = "expected"

[[tasks]]
id = "clear"
prompt = "Delete every note."
[tasks.expect]
sql = ["SELECT count(*) = 0 FROM notes"]

[[tasks]]
id = "free"
prompt = "Tidy up."
"""
    )
    return path


async def test_a_sweep_over_a_task_file_grades_by_expected_folder_sql_and_agreement(task_file: Path) -> None:
    tasks = load_task_file(task_file)
    assert [task.id for task in tasks] == ["mine/add-milk", "mine/clear", "mine/free"]
    calls = [("add_note", {"title": "milk"})]
    sweep = Sweep(plan_custom([task.id for task in tasks]), model=player(calls), custom_tasks=tasks, store=None)
    outcome = await sweep.run()
    passed = {result.case.task: {name: arm.passed for name, arm in result.arms.items()} for result in outcome.results}
    assert passed == {
        "mine/add-milk": {"tool": True, "code": True},  # the expected folder has the new note
        "mine/clear": {"tool": False, "code": False},  # a note is left: the SQL check is false
        "mine/free": {"tool": None, "code": None},  # no expectation: nothing passes or fails
    }
    verdicts = {
        result.case.task: {name: arm.verdict for name, arm in result.arms.items()} for result in outcome.results
    }
    assert verdicts["mine/free"] == {"tool": "agree", "code": "agree"}  # the arms did the same
    assert verdicts["mine/clear"] == {"tool": "failed", "code": "failed"}
    clear = next(result for result in outcome.results if result.case.task == "mine/clear")
    assert clear.arms["tool"].mismatches == ["SQL check was false: SELECT count(*) = 0 FROM notes"]
    report = outcome.report(resamples=200)
    assert [tier.tier for tier in report.tiers] == ["custom"]
    tool = report.tiers[0].arms["tool"]  # agreement is counted apart from success: 1 of 2 expectations met
    assert (tool.runs, tool.succeeded, tool.failed, tool.agreed, tool.differed) == (3, 1, 1, 1, 0)
    assert tool.success_rate == 0.5


def test_a_task_file_names_the_columns_to_ignore_or_match_on(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(f"""
[defaults]
mcp = ["{sys.executable} server.py"]
compare = {{ ignore = ["created_at", "notes.db:notes.uid"], match_on = "title" }}

[[tasks]]
id = "one"
prompt = "Do it."
""")
    (task,) = load_task_file(path)
    assert task.source.rules == Rules(("created_at", "notes.db:notes.uid"), ("title",))
    path.write_text(path.read_text().replace('match_on = "title"', "match_on = 3"))
    with pytest.raises(ValueError, match=r"task one: compare\.match_on must be a column name or a list of them"):
        load_task_file(path)


def test_cli_bench_runs_a_task_file(task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["bench", "--tasks", str(task_file), "--json", "--db", str(tmp_path / "s.db"), "--bootstrap", "100"])
    report = json.loads(capsys.readouterr().out)
    assert [tier["tier"] for tier in report["tiers"]] == ["custom"]
    assert report["tiers"][0]["runs"] == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[tasks]]\nprompt = 'x'\nmcp = ['s']", "needs an id"),
        ("[[tasks]]\nid = 'a'\nmcp = ['s']", "needs a prompt"),
        ("[[tasks]]\nid = 'a'\nprompt = 'x'", "needs an app"),
        ("[[tasks]]\nid = 'a'\nprompt = 'x'\nmcp = ['s']\ncolour = 1", "unknown key(s) colour"),
        ("[[tasks]]\nid = 'a'\nprompt = 'x'\nmcp = ['s']\n[tasks.expect]\nsql = 3", "expect.sql must be"),
        ("[[tasks]]\nid = 'a'\nprompt = 'x'\nmcp = ['s']\n[[tasks]]\nid = 'a'\nprompt = 'y'\nmcp = ['s']", "unique"),
        ("[[tasks]\n", "not valid TOML"),
        ("title = 'x'", "unknown table(s) title"),
    ],
)
def test_bad_task_files_are_one_line_errors(
    text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "--tasks", str(path), "--db", str(tmp_path / "s.db")])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1


def test_tasks_and_a_tier_selection_exclude_each_other(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "--tasks", "x.toml", "--tier", "long", "--db", str(tmp_path / "s.db")])
    assert exit_info.value.code == 2
    assert "--tier select(s) built-in tasks" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tasks: [\n", "not valid YAML: did not find expected node content (line 2, column 1)"),
        ("- id: a", "expected a mapping with defaults: and tasks:"),
        ("tasks:\n  - id: a\n    prompt: x\n    mcp: s\n    on: 1", "unknown key(s) True"),
        ("tasks:\n  - id: a\n    prompt: 2026-01-01\n    mcp: s", "needs a prompt (text)"),
        ("defaults: {}\n", "no tasks (a list under tasks:)"),
        ("title: x\ntasks: []", "unknown table(s) title; use defaults: and tasks:"),
    ],
)
def test_bad_yaml_task_files_are_one_line_errors(
    text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yml"
    path.write_text(text)
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "--tasks", str(path), "--db", str(tmp_path / "s.db")])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1
