"""BFCL v4 multi-turn: ground truth through the workbench's toolset, graded by BFCL's own checker; a broken
call sequence fails for the right turn; ``workbench suites`` installed and not installed.

Skipped where bfcl-eval is not installed, unless REQUIRE_BFCL is set (``.ci/run`` installs it with
``workbench suites install bfcl``). The benchmark script runs all 800 entries; this runs a fixed sample.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.suites import bfcl

ROOT = Path(__file__).resolve().parent.parent

if not bfcl.status().installed:
    if os.environ.get("REQUIRE_BFCL"):
        pytest.fail(f"bfcl-eval is required (REQUIRE_BFCL is set): {'; '.join(bfcl.status().missing)}", pytrace=False)
    pytestmark = pytest.mark.skip(reason="bfcl-eval is not installed (workbench suites install bfcl)")

SAMPLE = range(0, 200, 25)


def _play(entry: bfcl.Entry, wrong=None) -> dict:
    world = asyncio.run(bfcl.play_ground_truth(entry, wrong))
    return bfcl.grade(entry, world.calls)


@pytest.mark.parametrize("category", bfcl.CATEGORIES)
def test_ground_truth_through_the_toolset_passes_bfcls_checker(category: str) -> None:
    entries = bfcl.load_entries(category)
    assert len(entries) == 200
    for index in SAMPLE:
        entry = entries[index]
        result = _play(entry)
        assert result == {"valid": True}, (entry.id, result.get("error_message"))


def test_the_calls_recorded_are_the_ones_made_through_the_tools() -> None:
    entry = bfcl.load_entries("multi_turn_base")[0]
    world = asyncio.run(bfcl.play_ground_truth(entry))
    assert [len(turn) for turn in world.calls] == [len(turn) for turn in entry.ground_truth]
    assert world.calls[0][0].startswith(bfcl.parse_call(entry.ground_truth[0][0])[0] + "(")
    before = bfcl.World(entry).snapshot()
    assert before != world.snapshot()  # the ground truth moves a file: the state diff sees it
    assert set(before) == set(entry.involved_classes) - bfcl.STATELESS
    json.dumps(world.snapshot())


def test_a_changed_argument_fails_the_checker_at_that_turn() -> None:
    entry = bfcl.load_entries("multi_turn_base")[0]
    turn = 1

    def wrong(at: int, call: str) -> str | None:
        if at == turn and call == entry.ground_truth[turn][-1]:
            return "cd(folder='nowhere')"  # a call the ground truth never makes, instead of the turn's last
        return call

    result = _play(entry, wrong)
    assert result["valid"] is False
    assert bfcl.failed_turn(result) == turn, result.get("error_message")


def test_a_dropped_turn_fails_the_checker_at_that_turn() -> None:
    entry = bfcl.load_entries("multi_turn_base")[10]
    turn = len(entry.ground_truth) - 1
    result = _play(entry, lambda at, call: None if at == turn else call)
    assert result["valid"] is False
    assert result["error_type"] == "multi_turn:empty_turn_model_response"
    assert bfcl.failed_turn(result) == turn


def test_miss_func_holds_functions_back_until_their_turn() -> None:
    entry = next(e for e in bfcl.load_entries("multi_turn_miss_func") if e.id == "multi_turn_miss_func_0")
    assert entry.held_back == {3: [doc for doc in bfcl.function_docs("GorillaFileSystem") if doc["name"] == "sort"]}
    world = bfcl.World(entry)
    names = [set(bfcl.toolset(world, turn).tools) for turn in range(len(entry.turns))]
    assert "sort" not in names[2] and "sort" in names[3]
    assert entry.user_messages(3) == [{"role": "user", "content": bfcl.HOLDOUT_PROMPT}]


def test_function_docs_become_json_schema() -> None:
    doc = next(doc for doc in bfcl.function_docs("GorillaFileSystem") if doc["name"] == "mv")
    schema = bfcl.json_schema(doc["parameters"])
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert set(schema["required"]) == {"source", "destination"}
    assert bfcl.call_string("mv", {"source": "a", "destination": "b's"}) == "mv(source='a', destination=\"b's\")"


def _suites(hide: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """``workbench suites --json`` in a fresh interpreter where the ``hide`` modules (and, for bfcl_eval,
    its distribution) cannot be found, as on a machine that never installed them."""
    code = (
        "import sys, importlib.abc, importlib.metadata as md\n"
        f"hide = {hide!r}\n"
        "class Hide(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in hide: raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "real = md.version\n"
        "def version(name):\n"
        "    if 'bfcl_eval' in hide and name == 'bfcl-eval': raise md.PackageNotFoundError(name)\n"
        "    return real(name)\n"
        "md.version = version\n"
        "from workbench.cli import main\n"
        "main(['suites', '--json'])\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_suites_lists_tiers_and_bfcl_installed() -> None:
    done = _suites()
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    import workbench.apps as apps

    assert [tier["name"] for tier in listing["tiers"]] == list(apps.TIERS)
    for tier in listing["tiers"]:
        assert tier["tasks"] == len(apps.tasks_for(None, tier["name"])) > 0
    (suite,) = listing["suites"]
    assert suite["installed"] is True and suite["missing"] == []
    assert suite["version"] == suite["pinned"] == bfcl.PINNED_VERSION
    assert suite["entries"] == dict.fromkeys(bfcl.CATEGORIES, 200)


def test_suites_says_what_is_missing() -> None:
    (suite,) = json.loads(_suites(("bfcl_eval", "mpmath")).stdout)["suites"]
    assert suite["installed"] is False and suite["version"] is None
    assert suite["missing"] == ["bfcl-eval is not installed"] and suite["entries"] == {}
    (suite,) = json.loads(_suites(("mpmath",)).stdout)["suites"]
    assert suite["missing"] == ["module mpmath is not importable"]


def test_suites_text_and_bad_suite_name() -> None:
    from click.testing import CliRunner

    from workbench.cli import cli

    shown = CliRunner().invoke(cli, ["suites"])
    assert shown.exit_code == 0
    assert "multi_turn_base 200" in shown.output and "run --suite bfcl --entry multi_turn_base_0" in shown.output
    bad = CliRunner().invoke(cli, ["suites", "install", "nope"])
    assert bad.exit_code == 2 and "unknown suite 'nope'" in bad.output
