"""BFCL entries through the workbench's arms: the ground-truth player in every arm, graded by BFCL's own checker
on the calls each arm made (the code arm's from inside ``run_code`` included); a broken player fails at the
right turn; ``run --suite bfcl --entry`` and ``bench --suite bfcl``; the real provider path over HTTP.

Skipped where bfcl-eval is not installed, unless REQUIRE_BFCL is set (``.ci/run`` installs it). The
benchmark script (``benchmarks/bfcl_arms.py``) runs whole categories; this runs a fixed sample.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.fake_openai import FakeOpenAI
from workbench.cli import cli
from workbench.config import load_settings
from workbench.events import Graded
from workbench.runner import ComparisonRun, RunRequest, prepare
from workbench.scripted.model import ScriptedModel
from workbench.session import Comparison
from workbench.store import Store
from workbench.suites import bfcl, bfcl_plan
from workbench.suites.bfcl_player import GroundTruthPlayer, keyword_calls, snippet
from workbench.suites.bfcl_source import BfclSource, json_ready, records

if not bfcl.status().installed:
    if os.environ.get("REQUIRE_BFCL"):
        pytest.fail(f"bfcl-eval is required (REQUIRE_BFCL is set): {'; '.join(bfcl.status().missing)}", pytrace=False)
    pytestmark = pytest.mark.skip(reason="bfcl-eval is not installed (workbench suites install bfcl)")

ALL_ARMS = ("tool", "code", "code-eager", "hybrid")
SAMPLE = [f"multi_turn_base_{number}" for number in range(0, 200, 20)]
"""A fixed sample of multi_turn_base, 2 to 6 turns each (the benchmark script runs all 200 in every arm)."""


def compare(
    entry_id: str, arms: tuple[str, ...] = ALL_ARMS, model: Any = "scripted", base_url: str | None = None
) -> Comparison:
    task = bfcl_plan.suite_task(bfcl_plan.find_entry(entry_id))
    request = RunRequest(arms=arms, model=model, **task.request_fields())
    setup = prepare(request, settings=load_settings(base_url=base_url))
    return asyncio.run(ComparisonRun(setup, None).result())


def grades(comparison: Comparison) -> dict[str, Graded]:
    return {
        name: next(event.payload for event in arm.events if isinstance(event.payload, Graded))
        for name, arm in comparison.arms.items()
    }


@pytest.mark.parametrize("arms", [("tool", "code"), ("code-eager", "hybrid")])
def test_the_ground_truth_player_passes_bfcls_checker_in_every_arm(arms: tuple[str, ...]) -> None:
    passed = dict.fromkeys(arms, 0)
    for entry_id in SAMPLE:
        comparison = compare(entry_id, arms)
        assert max(len(arm.summary.turns) for arm in comparison.arms.values()) == len(
            bfcl_plan.find_entry(entry_id).turns
        )
        assert comparison.task == f"bfcl/{entry_id}"
        assert comparison.app == f"bfcl@{bfcl.PINNED_VERSION}"  # the version that ran, in every session
        for name, graded in grades(comparison).items():
            assert graded.task == f"bfcl/{entry_id}"
            passed[name] += graded.passed
    for arm, count in passed.items():
        assert count / len(SAMPLE) >= 0.99, (arm, count)


def test_the_code_arms_inner_calls_are_what_bfcl_grades() -> None:
    comparison = compare("multi_turn_base_46", arms=("tool", "code"))
    tool, code = (comparison.arms[name].summary for name in ("tool", "code"))
    calls = len(bfcl_plan.find_entry("multi_turn_base_46").ground_truth[0])
    assert (tool.tool_calls, tool.inner_calls) == (calls, 0)
    assert (code.tool_calls, code.inner_calls) == (1, calls)  # one run_code, the entry's calls inside it
    assert code.requests < tool.requests
    for summary in (tool, code):
        assert summary.passed is True
        assert summary.diff == {"created": 0, "updated": 0, "deleted": 2}  # a file and its folder


@pytest.mark.parametrize(
    ("entry_id", "turn", "call"),
    [
        ("multi_turn_base_46", 0, "rm(file_name='NotThere.txt')"),  # the wrong file: turn 0's state differs
        ("multi_turn_base_0", 2, "cd(folder='..')"),  # turn 2 sorts nothing: its result is missing
    ],
)
def test_a_broken_player_fails_the_checker_in_both_arms_at_that_turn(entry_id: str, turn: int, call: str) -> None:
    entry = bfcl_plan.find_entry(entry_id)
    broken = [list(calls) for calls in entry.ground_truth]
    broken[turn][-1] = call
    model = ScriptedModel(policy=GroundTruthPlayer(entry, broken))
    for name, graded in grades(compare(entry.id, arms=("tool", "code"), model=model)).items():
        assert graded.passed is False, name
        assert graded.mismatches[0].startswith(f"BFCL turn {turn} (from 0): "), (name, graded.mismatches)


def test_the_player_names_positional_arguments_and_writes_one_snippet_per_turn() -> None:
    entry = bfcl_plan.find_entry("multi_turn_base_0")
    turns = keyword_calls(entry)
    assert turns[2] == [("sort", {"file_name": "final_report.pdf"})]  # the ground truth says sort('final_report.pdf')
    code = snippet(turns[0])
    assert code.splitlines() == [
        "r0 = await cd(folder='document')",
        "r1 = await mkdir(dir_name='temp')",
        "r2 = await mv(source='final_report.pdf', destination='temp')",
        "[r0, r1, r2]",
    ]


def test_the_end_state_is_the_classes_state_as_records() -> None:
    entry = bfcl_plan.find_entry("multi_turn_base_0")
    world = bfcl.World(entry)
    before = records(world)
    assert set(before) == {"TwitterAPI", "GorillaFileSystem"}
    assert before["GorillaFileSystem"]["/workspace/document/final_report.pdf"]["kind"] == "file"
    world.call("cd", {"folder": "document"})
    world.call("mkdir", {"dir_name": "temp"})
    world.call("mv", {"source": "final_report.pdf", "destination": "temp"})
    after = records(world)
    assert "/workspace/document/final_report.pdf" not in after["GorillaFileSystem"]
    assert after["GorillaFileSystem"]["/workspace/document/temp/final_report.pdf"]["kind"] == "file"
    json.dumps(after)


def test_miss_func_offers_a_held_back_function_only_from_its_turn() -> None:
    entry = bfcl_plan.find_entry("multi_turn_miss_func_0")

    async def offered() -> list[list[str]]:
        found = []
        async with BfclSource(entry).open("tool") as app:
            assert app.begin_turn is not None
            for turn in range(1, len(entry.turns) + 1):
                await app.begin_turn(turn)
                found.append(list(app.tool_names))
        return found

    names = asyncio.run(offered())
    assert "sort" not in names[2] and "sort" in names[3]


def run_cli(*args: str, db: Path) -> Any:
    return CliRunner().invoke(cli, [*args, "--db", str(db)])


def test_run_entry_cli(db_path: Path) -> None:
    result = run_cli(
        "run", "--suite", "bfcl", "--entry", "multi_turn_base_46", "--arms", "tool,code", "--json", db=db_path
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["app"], data["task"]) == (f"bfcl@{bfcl.PINNED_VERSION}", "bfcl/multi_turn_base_46")
    assert [(arm["name"], arm["passed"]) for arm in data["arms"]] == [("tool", True), ("code", True)]
    stored = Store(db_path).load(data["session_id"])
    assert stored.app == f"bfcl@{bfcl.PINNED_VERSION}"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--entry", "multi_turn_base_999"], "multi_turn_base has entries 0-199"),
        (["--entry", "nothing"], "unknown BFCL entry 'nothing'"),
        (["--suite", "bfcl"], "--suite bfcl needs --entry"),
        (["--suite", "other", "--entry", "multi_turn_base_0"], "unknown suite 'other'"),
        (["--entry", "multi_turn_base_0", "--app", "cart"], "drop --app"),
        (["hello", "--entry", "multi_turn_base_0"], "drop PROMPT"),
    ],
)
def test_run_entry_bad_input(args: list[str], words: str, db_path: Path) -> None:
    result = run_cli("run", *args, db=db_path)
    assert result.exit_code == 2, result.output
    assert words in result.output and "Traceback" not in result.output


def test_bench_suite_reports_per_category_with_the_version(db_path: Path) -> None:
    result = run_cli(
        "bench", "--suite", "bfcl", "--category", "multi_turn_base", "--category", "multi_turn_long_context",
        "--entries", "0,46", "--arms", "tool,code", "--json", db=db_path,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [tier["tier"] for tier in report["tiers"]] == ["multi_turn_base", "multi_turn_long_context"]
    assert report["options"]["suite"] == "bfcl" and report["options"]["bfcl_version"] == bfcl.PINNED_VERSION
    assert any("BFCL's own ground truth" in note for note in report["notes"])
    for tier in report["tiers"]:
        assert tier["runs"] == 2
        for arm in tier["arms"].values():
            assert arm["success_rate"] == 1.0
            assert arm["means"]["turns"] == 2.5  # entry 0 has 4 turns, entry 46 one
            assert arm["means"]["requests"] > 0 and arm["means"]["input_tokens"] > 0
    markdown = run_cli("export", report["sweep_id"], "--format", "md", db=db_path)
    assert markdown.exit_code == 0, markdown.output
    assert "multi_turn_long_context" in markdown.output and "| turns |" in markdown.output


def test_mathapi_numbers_reach_both_arms_as_json() -> None:
    """MathAPI answers in mpmath numbers, which neither pydantic nor the sandbox can serialize."""
    import mpmath

    assert json_ready({"result": mpmath.mpf("2.5"), "list": (1, True, None)}) == {
        "result": 2.5,
        "list": [1, True, None],
    }
    for name, graded in grades(compare("multi_turn_base_32", arms=("tool", "code"))).items():
        assert graded.passed is True, (name, graded.mismatches)


def test_an_ill_typed_ground_truth_is_refused_by_the_code_arms_sandbox_only() -> None:
    """BFCL's multi_turn_*_173 call close_ticket(ticket_id='ticket_001') where the function doc says integer:
    the tool arm's schema-less call runs it, the code arm's type-checked sandbox refuses it (docs/bfcl.md lists
    it)."""
    comparison = compare("multi_turn_base_173", arms=("tool", "code"))
    found = grades(comparison)
    assert found["tool"].passed is True
    assert found["code"].passed is False and found["code"].mismatches[0].startswith("BFCL turn 3 (from 0): ")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--category", "multi_turn_base"], "give --suite bfcl too"),
        (["--suite", "bfcl", "--category", "multi_turn_nothing"], "unknown BFCL category"),
        (["--suite", "bfcl", "--entries", "5-2"], "runs backwards"),
        (["--suite", "bfcl", "--entries", "0-200"], "entries 0-199"),
        (["--suite", "bfcl", "--entries", "x"], "expected numbers and ranges"),
    ],
)
def test_bench_suite_bad_input(args: list[str], words: str, db_path: Path) -> None:
    result = run_cli("bench", *args, db=db_path)
    assert result.exit_code == 2, result.output
    assert words in result.output and "Traceback" not in result.output


def test_bfcl_turns_over_a_real_provider_path(db_path: Path) -> None:
    """The real openai client over HTTP to the fake OpenAI-compatible server, which answers every turn with the
    player (it reads the turn from the user messages the client sends)."""
    entry = bfcl_plan.find_entry("multi_turn_base_0")
    with FakeOpenAI(policy=GroundTruthPlayer(entry)) as server:
        comparison = compare(entry.id, arms=("tool", "code"), model="openai-chat:gpt-4o-mini", base_url=server.url)
    for name, graded in grades(comparison).items():
        assert graded.passed is True, (name, graded.mismatches)
    for arm in comparison.arms.values():
        assert arm.summary.input_tokens > 0 and len(arm.summary.turns) == len(entry.turns)
