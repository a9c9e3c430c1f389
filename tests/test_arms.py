"""Arms as data: presets, config arms, --arms / --model, arm order everywhere, and sessions stored before."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

import workbench
from workbench.arms import PRESETS, ArmError, ArmSpec, parse_model_assignments
from workbench.cli import cli
from workbench.config import config_path
from workbench.events import EagerProgress, InnerCall, RunStarted, Snippet
from workbench.runner import BadInput, RunRequest, prepare
from workbench.sessions import load_comparison
from workbench.store import Store

TASK = "cart/remove-expensive"
ALL = ("tool", "code", "code-eager", "hybrid")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), prog_name="workbench")
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def write_config(text: str) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_four_presets_run_in_the_order_given_and_all_pass_with_the_same_deletions(db_path: Path) -> None:
    code, out, _ = invoke(
        "run", "--task", TASK, "--arms", "hybrid,tool,code-eager,code", "--json", "--db", str(db_path)
    )
    assert code == 0
    arms = json.loads(out)["arms"]
    assert [(arm["name"], arm["mode"]) for arm in arms] == [
        ("hybrid", "hybrid"), ("tool", "tool"), ("code-eager", "code"), ("code", "code"),
    ]  # fmt: skip
    assert all(arm["passed"] for arm in arms)
    assert {arm["diff"]["deleted"] for arm in arms} == {35}
    eager = arms[2]
    assert eager["options"] == {"eager": True, "speculate": "reads"}
    assert eager["inner_calls"] == arms[3]["inner_calls"] > 0  # eager nested calls are recorded as inner calls
    assert eager["eager_statements"] > 0 and arms[3]["eager_statements"] == 0
    session_id = json.loads(out)["session_id"]
    shown = json.loads(invoke("show", session_id, "--json", "--db", str(db_path))[1])
    assert [arm["name"] for arm in shown["arms"]] == ["hybrid", "tool", "code-eager", "code"]
    assert [arm.name for arm in Store(db_path).session(session_id).arms] == ["hybrid", "tool", "code-eager", "code"]
    assert list(dict.fromkeys(event.arm for event in Store(db_path).events(session_id))) == [
        "hybrid", "tool", "code-eager", "code",
    ]  # fmt: skip


def test_the_printed_table_compares_every_arm_with_the_first(db_path: Path) -> None:
    code, out, _ = invoke("run", "--task", TASK, "--items", "40", "--arms", "code,tool,hybrid", "--db", str(db_path))
    assert code == 0
    header = next(line for line in out.splitlines() if "┃" in line)
    assert [cell.strip() for cell in header.split("┃")][1:] == ["code", "tool", "vs code", "hybrid", "vs code"]


def test_eager_arm_records_eager_progress_and_its_inner_calls_belong_to_the_snippet() -> None:
    result = workbench.compare_sync(task=TASK, items=40, arms=["code-eager"], db=False)
    events = result.arms["code-eager"].events
    started = events[0].payload
    assert isinstance(started, RunStarted) and started.options == {"eager": True, "speculate": "reads"}
    progress = [e.payload for e in events if isinstance(e.payload, EagerProgress)]
    snippet = next(e.payload for e in events if isinstance(e.payload, Snippet))
    assert progress and all(p.call_id == snippet.call_id for p in progress)
    counts = [p.closed_statements for p in progress]
    assert counts == sorted(counts) and len(set(counts)) == len(counts)
    assert all(0 < p.closed_lines <= snippet.code.count("\n") + 1 for p in progress)
    inner = [e.payload for e in events if isinstance(e.payload, InnerCall)]
    assert inner and {call.parent_id for call in inner} == {snippet.call_id}


def test_hybrid_offers_run_code_and_every_tool_directly() -> None:
    result = workbench.compare_sync(task=TASK, items=20, arms=["hybrid"], db=False)
    started = result.arms["hybrid"].events[0].payload
    assert isinstance(started, RunStarted) and started.mode == "hybrid"
    assert started.tools[0] == "run_code"
    assert {f"direct_{name}" for name in started.sandboxed_tools} == set(started.tools[1:])


def test_unknown_arm_or_option_is_exit_2_listing_the_valid_ones(db_path: Path) -> None:
    code, _, err = invoke("run", "--task", TASK, "--arms", "tool,turbo", "--db", str(db_path))
    assert code == 2 and "unknown arm turbo" in err and "code-eager" in err and "hybrid" in err
    assert "Traceback" not in err
    write_config('[arms.fast]\nmode = "code"\nturbo = true\n')
    code, _, err = invoke("run", "--task", TASK, "--arms", "tool,fast", "--db", str(db_path))
    assert code == 2 and "arms.fast.turbo" in err and "unknown setting" in err
    config_path().unlink()
    code, _, err = invoke("bench", "--task", TASK, "--arms", "tool,tool", "--db", str(db_path))
    assert code == 2 and "listed twice" in err
    with pytest.raises(ArmError, match="options are: none for mode tool"):
        ArmSpec("plain", "tool", options={"eager": True})
    with pytest.raises(ArmError, match="eager, speculate, max_tool_calls"):
        ArmSpec("x", "code", options={"eagre": True})


def test_config_arms_are_chosen_by_name_with_their_model_and_options(db_path: Path) -> None:
    write_config('[arms.paced-eager]\nmode = "code"\nmodel = "scripted:paced"\neager = true\nmax_tool_calls = 500\n')
    setup = prepare(task=TASK, arms=["tool", "paced-eager"])
    assert [arm.name for arm in setup.arms] == ["tool", "paced-eager"]
    assert setup.models["paced-eager"].label == "scripted:paced" and setup.models["tool"].label == "scripted"
    assert setup.arms[1].sandbox_limits(setup.config.sandbox).max_tool_calls == 500
    write_config('[arms.code]\nmode = "tool"\n')
    with pytest.raises(BadInput, match="reuses a built-in arm"):
        prepare(task=TASK)


def test_model_assignments_per_arm_and_the_tool_and_code_flags() -> None:
    assert parse_model_assignments(["scripted", "code-eager=scripted:paced"]) == (
        "scripted", {"code-eager": "scripted:paced"},
    )  # fmt: skip
    assert parse_model_assignments(["openai:gpt-5-mini"]) == ("openai:gpt-5-mini", {})
    request = RunRequest(task=TASK, arms=ALL, arm_models={"code-eager": "scripted:paced"}, code_model="scripted")
    setup = prepare(request)
    labels = {name: model.label for name, model in setup.models.items()}
    assert labels == {"tool": "scripted", "code": "scripted", "code-eager": "scripted:paced", "hybrid": "scripted"}
    setup = prepare(task=TASK, arms=ALL, tool_model="scripted:paced")
    assert [setup.models[name].label for name in ALL] == ["scripted:paced", "scripted", "scripted", "scripted"]
    with pytest.raises(BadInput, match="no arm 'hybrid' in this comparison"):
        prepare(task=TASK, arm_models={"hybrid": "scripted"})
    code, _, err = invoke("run", "--task", TASK, "--model", "code=")
    assert code == 2 and "give a model after '='" in err


def test_presets_are_data() -> None:
    assert list(PRESETS) == list(ALL)
    assert PRESETS["code-eager"].eager and not PRESETS["code"].eager
    assert PRESETS["code-eager"].speculate(["list_a", "get_a", "delete_a"]) == ["list_a", "get_a"]


def test_a_session_stored_before_arm_positions_opens_and_shows_tool_first(db_path: Path) -> None:
    result = workbench.compare_sync(task=TASK, items=30, db=db_path)
    before = result.to_dict()
    workbench._open_stores.clear()
    with sqlite3.connect(db_path) as connection:  # the arms table as main wrote it before positions
        connection.execute("ALTER TABLE arms DROP COLUMN position")
    store = Store(db_path)
    again = load_comparison(store, result.session_id)
    assert list(again.arms) == ["tool", "code"]
    assert again.to_dict() == before
    code, out, _ = invoke("show", result.session_id, "--db", str(db_path))
    assert code == 0 and "code vs tool" in out
