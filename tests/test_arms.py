"""Arms as data: presets, config arms, --arms / --model, arm order everywhere, and sessions stored before."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.models.test import TestModel
from rich.console import Console

import workbench
from workbench.arm_spec import PRESETS, ArmConfig, ArmError, ArmSpec, parse_model_assignments
from workbench.arms import build_agent
from workbench.bench.plan import BenchCase
from workbench.bench.render import report_view, to_markdown
from workbench.bench.report import BenchReport, build_report, pass_hat_k
from workbench.bench.results import ArmFigures, RunResult
from workbench.cli import cli
from workbench.events import EagerProgress, InnerCall, RunStarted, Snippet, Speculation
from workbench.locations import config_file
from workbench.recorder import Recorder, RecordingCodeMode, RecordingModel, RecordingToolset
from workbench.runner import BadInput, RunRequest, prepare
from workbench.sources.base import AppInstance
from workbench.store import Store

TASK = "cart/remove-expensive"
ALL = ("tool", "code", "code-eager", "hybrid")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), prog_name="workbench")
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def write_config(text: str) -> None:
    path = config_file()
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
    config_file().unlink()
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
    with sqlite3.connect(db_path) as connection:  # the arms table as schema 1 had it, before positions
        connection.execute("ALTER TABLE arms DROP COLUMN position")
        connection.execute("UPDATE workbench_meta SET value = '1' WHERE key = 'schema_version'")
    store = Store(db_path)
    again = store.load(result.session_id)
    assert list(again.arms) == ["tool", "code"]
    assert again.to_dict() == before
    code, out, _ = invoke("show", result.session_id, "--db", str(db_path))
    assert code == 0 and "code vs tool" in out


# -- the bench with N arms ---------------------------------------------------------------------------


def _figures(*, passed: bool = True, cost: float = 0.01, tokens: int = 1000, cached: int = 0) -> ArmFigures:
    return ArmFigures(
        status="completed", passed=passed, cost_usd=cost, wall_s=1.0, requests=2, input_tokens=tokens,
        output_tokens=100, tool_calls=1, app_calls=5, bytes_seen=10, bytes_produced=100,
        cache_read_tokens=cached, cache_cost_usd=cached * 1e-6,
    )  # fmt: skip


def _run(task: str, repeat: int, **arms: ArmFigures) -> RunResult:
    return RunResult(BenchCase("everyday", task, 10, 0, repeat), "m", f"s-{task}-{repeat}", dict(arms))


def test_pass_hat_k_is_the_chance_that_all_k_repeats_pass() -> None:
    outcomes = [("a", True), ("a", True), ("a", False), ("b", True), ("b", True), ("b", True)]
    found = pass_hat_k(outcomes)
    assert list(found) == ["1", "2", "3"]
    assert found["1"] == pytest.approx((2 / 3 + 1) / 2)
    assert found["2"] == pytest.approx((1 / 3 + 1) / 2)  # C(2,2)/C(3,2) for a
    assert found["3"] == pytest.approx((0 + 1) / 2)
    assert pass_hat_k([]) == {}


def test_a_three_arm_report_compares_each_arm_with_the_first() -> None:
    runs = [
        _run(task, repeat, code=_figures(cost=0.01), tool=_figures(cost=0.04, tokens=4000, passed=repeat == 0),
             hybrid=_figures(cost=0.02, cached=500))
        for task in ("cart/a", "cart/b") for repeat in (0, 1)
    ]  # fmt: skip
    report = build_report(runs, resamples=200)
    (tier,) = report.tiers
    assert list(tier.arms) == ["code", "tool", "hybrid"] and tier.baseline == "code"
    assert list(tier.versus) == ["tool", "hybrid"]
    assert tier.versus["tool"].change_pct["cost_usd"] == pytest.approx(300)
    assert tier.versus["hybrid"].paired["cost_usd"].relative == pytest.approx(100)
    assert tier.change_pct == tier.versus["tool"].change_pct  # the two-arm fields: the second arm's
    tool = tier.arms["tool"]
    assert tool.pass_k == {"1": 0.5, "2": 0.0}
    assert tool.cost_per_success == pytest.approx(0.16 / 2)
    assert tier.arms["hybrid"].cache_read_tokens == 2000
    assert tier.arms["hybrid"].cache_cost_usd == pytest.approx(2000e-6)
    again = BenchReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again.to_dict() == report.to_dict()
    console = Console(record=True, width=200, color_system=None)
    console.print(report_view(report, charts=False))
    shown = console.export_text()
    assert "tool vs code paired Δ" in shown and "hybrid vs code paired Δ" in shown
    assert "pass^2" in shown and "cost per success" in shown and "cached input tokens" in shown
    assert "| | code | tool | hybrid | tool vs code |" in to_markdown(report)


def test_a_report_stored_before_n_arms_reads_its_second_arm_as_the_comparison() -> None:
    runs = [_run("cart/a", 0, tool=_figures(cost=0.02), code=_figures(cost=0.01))]
    data = build_report(runs, resamples=100).to_dict()
    for tier in data["tiers"]:
        del tier["versus"], tier["baseline"]
        for stats in tier["arms"].values():
            for key in ("pass_k", "cost_per_success", "cache_read_tokens", "cache_cost_usd"):
                del stats[key]
    (tier,) = BenchReport.from_dict(data).tiers
    assert list(tier.versus) == ["code"] and tier.versus["code"].change_pct["cost_usd"] == pytest.approx(-50)


def test_bench_with_three_arms_reports_three_arms(db_path: Path) -> None:
    code, out, err = invoke(
        "bench", "--task", "cart/remove-expensive", "--items", "20", "--arms", "tool,code,code-eager", "--json",
        "--db", str(db_path),
    )  # fmt: skip
    assert code == 0, err
    (tier,) = json.loads(out)["tiers"]
    assert list(tier["arms"]) == ["tool", "code", "code-eager"]
    assert list(tier["versus"]) == ["code", "code-eager"]
    assert all(stats["succeeded"] == 1 for stats in tier["arms"].values())


# -- speculation from the harness's own events ------------------------------------------------------

SPECULATED = 'a = await list_cart_items(page=1)\nb = await get_cart_item(item_id="line-0001")\n{"n": len(a["items"])}\n'


async def _snippet_in_pieces(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    if any(isinstance(m, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in m.parts) for m in messages):
        yield "done"
        return
    arguments = json.dumps({"code": SPECULATED})
    for start in range(0, len(arguments), 12):
        await asyncio.sleep(0.01)
        first = start == 0
        piece = arguments[start : start + 12]
        yield {0: DeltaToolCall("run_code" if first else None, piece, tool_call_id="c1" if first else None)}


async def test_speculative_reads_are_launched_while_the_snippet_streams_and_claimed() -> None:
    model = FunctionModel(stream_function=_snippet_in_pieces, model_name="pieces")
    result = await workbench.compare("look", app="cart", items=30, model=model, arms=["code-eager"], db=False)
    arm = result.arms["code-eager"]
    steps = [e.payload for e in arm.events if isinstance(e.payload, Speculation)]
    launched = [(s.name, s.args, s.line_start) for s in steps if s.phase == "launched"]
    assert launched == [("list_cart_items", {"page": 1}, 1), ("get_cart_item", {"item_id": "line-0001"}, 2)]
    claimed = [s for s in steps if s.phase == "claimed"]
    assert [s.name for s in claimed] == ["list_cart_items", "get_cart_item"]
    assert all(s.call_id == "c1" and s.hidden_ms is not None and s.hidden_ms >= 0 for s in claimed)
    assert all(s.name for s in steps)
    summary = arm.summary
    assert (summary.speculation_launched, summary.speculation_claimed, summary.speculation_missed) == (2, 2, 0)
    assert summary.status == "completed"


def test_sessions_list_every_arm_and_resume_reruns_a_case_stored_with_other_arms(db_path: Path) -> None:
    args = ("bench", "--task", "cart/remove-expensive", "--items", "10", "--db", str(db_path), "--json")
    assert invoke(*args, "--arms", "tool,code")[0] == 0
    code, out, _ = invoke(*args, "--arms", "code,hybrid", "--resume")
    assert code == 0
    (run,) = json.loads(out)["runs"]
    assert not run["reused"] and list(run["arms"]) == ["code", "hybrid"]
    code, out, _ = invoke(*args, "--arms", "code,hybrid", "--resume")
    assert json.loads(out)["runs"][0]["reused"]
    code, out, _ = invoke("sessions", "--bench", "--db", str(db_path))
    header = [cell.strip() for cell in out.splitlines()[0].split("┃")]
    assert {"tool", "code", "hybrid"} <= set(header)


@pytest.mark.parametrize("name", ALL)
def test_the_recorder_is_no_capability_of_the_arms_agent(name: str) -> None:
    """pydantic-ai calls every capability on every hook of every tool call, copying the run context for each,
    so the recorder wraps the arm's tools and model instead: the agent's capabilities are only CodeMode's."""
    spec = PRESETS[name]
    demo = workbench.apps.get_app("cart")(5)
    app = AppInstance(demo.toolset(), demo.tool_names(), "instructions")
    agent = build_agent(spec, TestModel(), app, Recorder(), ArmConfig())
    assert isinstance(agent.model, RecordingModel)
    assert isinstance(agent.toolsets[1], RecordingToolset)  # after the agent's own function toolset
    own = [type(cap) for cap in agent.root_capability.capabilities if cap.__module__.startswith("workbench")]
    assert own == ([RecordingCodeMode] if spec.sandboxed else [])


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_function_model_without_a_stream_function_runs_sync_or_async(asynchronous: bool) -> None:
    """A FunctionModel written with only a plain ``function`` (sync or async) streams each response in one
    piece: its tool call is made, and its final text is the arm's answer."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(part, ToolReturnPart) for message in messages for part in message.parts):
            return ModelResponse(parts=[TextPart("Listed the cart.")])
        return ModelResponse(parts=[ToolCallPart("list_cart_items", {}, tool_call_id="c1")])

    async def respond_async(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(0)
        return respond(messages, info)

    model = FunctionModel(respond_async if asynchronous else respond)
    run = workbench.compare(prompt="list the cart", app="cart", db=False, arms=["tool"], model=model)
    comparison = asyncio.run(run)
    events = comparison.arms["tool"].events
    assert [e.payload.name for e in events if e.kind == "tool_call"] == ["list_cart_items"]
    assert comparison.arms["tool"].summary.status == "completed"
