"""The bench: report maths on known inputs, report and export formats that parse back, sweeps that are
stored, interrupted and resumed, and the `bench` / `export` commands."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

import workbench
from workbench.bench import (
    ArmFigures,
    BenchCase,
    BenchReport,
    PlanError,
    RunResult,
    Sweep,
    SweepStore,
    build_report,
    load_sweep,
    plan,
    report_view,
    to_csv,
    to_json,
    to_markdown,
)
from workbench.bench.charts import scaling_chart, scaling_grid
from workbench.bench.export import export_session
from workbench.bench.stats import Pair, crossover, paired_delta, payload_suppression, quantile
from workbench.cli import cli
from workbench.display import percent_change
from workbench.events import ArmEvent
from workbench.store import Store
from workbench.summary import ArmSummary

# -- stats on known inputs -----------------------------------------------------------------------


def test_quantile_percent_change_and_suppression() -> None:
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.0) == 1.0
    assert quantile([1.0, 2.0, 3.0, 4.0], 1.0) == 4.0
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.25) == 1.75
    assert percent_change(50, 100) == -50
    assert percent_change(150, 100) == 50
    assert percent_change(1, 0) is None and percent_change(None, 1) is None
    assert payload_suppression(10, 1000) == pytest.approx(0.99)
    assert payload_suppression(1000, 1000) == 0
    assert payload_suppression(5, 0) is None


def test_paired_delta_of_a_constant_ratio_is_exact() -> None:
    pairs = [Pair("a", 10, 5), Pair("b", 20, 10), Pair("c", 30, 15)]
    delta = paired_delta("cost_usd", pairs, resamples=500)
    assert delta is not None
    assert (delta.pairs, delta.clusters) == (3, 3)
    assert delta.delta == pytest.approx(-10)
    assert -15 <= delta.low <= -10 <= delta.high <= -5
    # code is half of tool in every pair, so every resample's relative delta is -50%
    assert delta.relative == pytest.approx(-50)
    assert delta.relative_low == pytest.approx(-50) and delta.relative_high == pytest.approx(-50)
    assert delta.significant


def test_paired_delta_bootstrap_on_fixed_data() -> None:
    # two tasks with deltas -1 and +1: resampled means are -1, 0, +1 with chances 1/4, 1/2, 1/4
    pairs = [Pair("a", 2, 1), Pair("b", 2, 3)]
    delta = paired_delta("requests", pairs, resamples=2000, seed=7)
    assert delta is not None
    assert delta.delta == 0
    assert (delta.low, delta.high) == (-1, 1)
    assert not delta.significant
    assert paired_delta("requests", pairs, resamples=2000, seed=7) == delta, "the bootstrap is seeded"
    assert paired_delta("requests", [], resamples=10) is None


def test_paired_delta_resamples_tasks_then_repeats() -> None:
    # one task repeated three times with the same delta counts as one cluster: no spread between clusters
    pairs = [Pair("a", 10, 4)] * 3 + [Pair("b", 10, 4)]
    delta = paired_delta("input_tokens", pairs, resamples=300)
    assert delta is not None
    assert (delta.pairs, delta.clusters) == (4, 2)
    assert delta.low == delta.high == delta.delta == -6


def test_crossover_cases() -> None:
    sizes = [5, 20, 50]
    found = crossover("cost_usd", sizes, [1.0, 2.0, 3.0], [1.5, 1.5, 1.5])
    assert (found.kind, found.items, found.previous) == ("from", 20, 5)
    assert found.estimate == pytest.approx(12.5)
    assert "between 5 and 20" in found.describe()
    assert crossover("cost_usd", sizes, [2, 3, 4], [1, 1, 1]).kind == "always"
    assert crossover("cost_usd", sizes, [1, 1, 1], [2, 0.5, 2]).kind == "never"
    dip = crossover("cost_usd", sizes, [1, 1, 1], [0.5, 2, 0.5])
    assert (dip.kind, dip.items, dip.previous) == ("from", 50, 20), "lower from 50 on, not from 5"
    assert crossover("cost_usd", sizes, [None, None, None], [1, 1, 1]).kind == "unknown"


# -- the report on known runs ----------------------------------------------------------------------


def arm(*, passed: bool = True, status: str = "completed", cost: float | None = 0.01, tokens: int = 1000,
        seen: int = 100, produced: int = 100, calls: int = 10, code: bool = False) -> ArmFigures:  # fmt: skip
    return ArmFigures(
        status=status, passed=passed, cost_usd=cost, wall_s=1.0, requests=2 if code else 5, input_tokens=tokens,
        output_tokens=100, tool_calls=1 if code else calls, app_calls=calls, bytes_seen=seen, bytes_produced=produced,
        price_label="priced as test", error=None if status == "completed" else "boom",
        mismatches=[] if passed else ["cart_items line-0001: quantity is 3, expected 2"],
    )  # fmt: skip


def run(task: str, items: int, tier: str, tool: ArmFigures, code: ArmFigures, repeat: int = 0) -> RunResult:
    return RunResult(BenchCase(tier, task, items, 0, repeat), "test-model", f"s{task}{items}{repeat}",
                     {"tool": tool, "code": code})  # fmt: skip


def known_runs() -> list[RunResult]:
    return [
        run("cart/a", 50, "everyday", arm(cost=0.02, tokens=4000), arm(cost=0.01, tokens=1000, seen=10, code=True)),
        run("cart/b", 50, "everyday", arm(passed=False, cost=0.04), arm(cost=0.01, seen=30, produced=300, code=True)),
        run("cart/s", 5, "scaling", arm(cost=0.01, tokens=900), arm(cost=0.02, tokens=1000, code=True)),
        run("cart/s", 20, "scaling", arm(cost=0.03, tokens=3000), arm(cost=0.02, tokens=1000, code=True)),
        run("cart/s", 50, "scaling", arm(status="failed", passed=False, cost=0.05), arm(cost=0.02, code=True)),
    ]


def test_build_report_on_known_runs() -> None:
    report = build_report(known_runs(), sweep_id="sweep-test", planned=6, resamples=200)
    assert report.status == "interrupted" and (report.finished, report.planned) == (5, 6)
    everyday = report.tier("everyday")
    assert everyday is not None and (everyday.runs, everyday.tasks) == (2, 2)
    tool, code = everyday.arms["tool"], everyday.arms["code"]
    assert (tool.succeeded, tool.failed, code.failed) == (1, 1, 0)
    assert tool.means["cost_usd"] == pytest.approx(0.03) and code.means["cost_usd"] == pytest.approx(0.01)
    assert everyday.change_pct["cost_usd"] == pytest.approx(-200 / 3)
    assert everyday.change_pct["success"] == pytest.approx(50)
    assert everyday.paired["success"].delta == pytest.approx(50)
    assert tool.payload_suppression == 0
    assert code.payload_suppression == pytest.approx(1 - 40 / 400)
    assert [(f.task, f.arm) for f in report.failures] == [("cart/b", "tool"), ("cart/s", "tool")]
    assert "quantity is 3" in report.failures[0].reason and report.failures[1].reason == "boom"
    (series,) = report.scaling
    assert series.sizes == [5, 20, 50]
    assert series.values["tool"]["cost_usd"] == pytest.approx([0.01, 0.03, 0.05])
    assert series.values["tool"]["success"] == [1.0, 1.0, 0.0]
    assert series.ratio("input_tokens")[:2] == pytest.approx([1000 / 900, 1000 / 3000])
    assert series.crossovers["cost_usd"].kind == "from" and series.crossovers["cost_usd"].items == 20


def test_report_formats_parse_back() -> None:
    report = build_report(known_runs(), sweep_id="sweep-test", resamples=200)
    data = json.loads(to_json(report))
    again = BenchReport.from_dict(data)
    assert again.to_dict() == report.to_dict()

    rows = list(csv.DictReader(io.StringIO(to_csv(report))))
    assert len(rows) == 2 * len(report.runs)
    first = rows[0]
    assert (first["task"], first["arm"], first["tier"]) == ("cart/a", "tool", "everyday")
    assert float(first["cost_usd"]) == pytest.approx(0.02) and int(first["input_tokens"]) == 4000
    assert sum(row["succeeded"] == "True" for row in rows) == 8

    markdown = to_markdown(report)
    assert markdown.startswith("# Bench report: tool vs code")
    assert "| cost | $0.0300 | $0.0100 | -67% |" in markdown
    assert "| payload suppression | 0.0% | 90.0% |" in markdown
    assert "### cart/s" in markdown and "```" in markdown and "code mode pays" in markdown
    assert "## Failed runs (2)" in markdown

    console = Console(record=True, width=100, color_system=None)
    console.print(report_view(report, chart_metric="all"))
    shown = console.export_text()
    assert "paired Δ" in shown and "code/tool" in shown and "between 5 and 20" in shown


def test_charts_draw_both_arms() -> None:
    (series,) = build_report(known_runs(), resamples=100).scaling
    plain = scaling_chart(series, "input_tokens", width=60, height=12, color=False)
    assert "tool calling" in plain and "code mode" in plain and "\x1b[" not in plain
    assert "\x1b[" in scaling_chart(series, "cost_usd", width=60, height=12)
    grid = scaling_grid(series, width=100, height=24, color=False)
    assert "success rate" in grid and "wall time" in grid
    with pytest.raises(ValueError):
        scaling_chart(series, "nope")


# -- plans --------------------------------------------------------------------------------------------


def test_plan_selects_tiers_and_repeats() -> None:
    assert len(plan("all")) == 50 + 12 + 25
    scaling = plan("scaling", app="kanban")
    assert [case.items for case in scaling] == [5, 20, 50, 100, 200]
    repeated = plan("everyday", tasks=["cart/cap-quantity"], repeat=3, vary_seeds=True, seed=10)
    assert [(case.seed, case.repeat) for case in repeated] == [(10, 0), (11, 1), (12, 2)]
    same = plan("everyday", tasks=["cart/cap-quantity"], repeat=2)
    assert {case.seed for case in same} == {0}
    for bad in ({"tier": "weekly"}, {"app": "nope"}, {"tasks": ["cart/nope"]}, {"repeat": 0}):
        with pytest.raises(PlanError):
            plan(**bad)  # type: ignore[arg-type]
    with pytest.raises(PlanError):
        plan("long", tasks=["cart/cap-quantity"])


# -- sweeps: stored, interrupted, resumed ----------------------------------------------------------

CASES = plan("everyday", tasks=["cart/remove-expensive", "cart/cap-quantity", "cart/clear-old"], items=20)


async def test_sweep_stores_every_run(db_path: Path) -> None:
    store = Store(db_path)
    outcome = await Sweep(CASES, store=store, concurrency=2).run()
    assert not outcome.interrupted and len(outcome.results) == 3
    assert all(arm.succeeded for result in outcome.results for arm in result.arms.values())
    assert [result.case for result in outcome.results] == CASES
    assert store.count_sessions() == 3
    log = SweepStore(store)
    assert [member.case for member in log.members(outcome.sweep_id)] == CASES
    assert log.sweep(outcome.sweep_id).status == "completed"
    stored = load_sweep(store, outcome.sweep_id, resamples=200)
    live = outcome.report(resamples=200)
    assert stored.tiers[0].to_dict() == live.tiers[0].to_dict()


async def test_interrupted_sweep_keeps_finished_runs_and_resumes(db_path: Path) -> None:
    store = Store(db_path)
    sweep = Sweep(CASES, store=store, concurrency=1)
    running: list[asyncio.Task[object]] = []

    def stop_after_first(step: object) -> None:
        if getattr(step, "kind", "") == "finished":
            running[0].cancel()

    sweep.on_progress = stop_after_first
    running.append(asyncio.ensure_future(sweep.run()))
    outcome = await running[0]
    assert outcome.interrupted and len(outcome.results) == 1
    assert SweepStore(store).sweep(sweep.sweep_id).status == "interrupted"

    resumed = await Sweep(CASES, store=store, concurrency=2, resume=True).run()
    assert not resumed.interrupted and len(resumed.results) == 3
    assert [result.reused for result in resumed.results] == [True, False, False]
    assert resumed.results[0].session_id == outcome.results[0].session_id
    assert resumed.reused == 1

    again = await Sweep(CASES, store=store, resume=True).run()
    assert again.reused == 3, "a finished run is never run twice with --resume"
    other_model = await Sweep(CASES[:1], store=store, resume=True, model="scripted:paced").run()
    assert other_model.reused == 0, "runs are matched by model too"


# -- single-session export -----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "md", "csv"])
def test_session_export_parses_back(db_path: Path, fmt: str) -> None:
    store = Store(db_path)
    live = workbench.compare_sync(task="cart/remove-expensive", items=20, db=store)
    comparison = store.load(live.session_id)
    exported = export_session(comparison, fmt)
    if fmt == "json":
        data = json.loads(exported)
        assert data["session_id"] == live.session_id and data["task"] == "cart/remove-expensive"
        for arm_data in data["arms"]:
            events = [ArmEvent.from_dict(e) for e in data["events"] if e["arm"] == arm_data["name"]]
            assert ArmSummary.fold(arm_data["name"], events).to_dict() == {
                key: arm_data[key] for key in ArmSummary(name="x").to_dict()
            }
        assert data["arms"][1]["payload_suppression"] > 0.9
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(exported)))
        assert [row["arm"] for row in rows] == ["tool", "code"]
        for row, arm_run in zip(rows, live.arms.values(), strict=True):
            assert int(row["input_tokens"]) == arm_run.summary.input_tokens
            assert row["passed"] == "True"
    else:
        assert f"# Session {live.session_id}" in exported
        assert "| input tokens |" in exported and "```python" in exported and "delete_cart_item ×" in exported


# -- the commands ----------------------------------------------------------------------------------


def test_bench_command_runs_writes_and_resumes(tmp_path: Path) -> None:
    runner = CliRunner()
    db = str(tmp_path / "bench.db")
    out = tmp_path / "report.json"
    args = ["bench", "--task", "cart/cap-quantity", "--task", "cart/clear-old", "--items", "20", "--db", db]
    result = runner.invoke(cli, [*args, "--out", str(out), "--chart", "none"])
    assert result.exit_code == 0, result.output
    assert "everyday" in result.output and "paired Δ" in result.output
    report = BenchReport.from_dict(json.loads(out.read_text()))
    assert report.status == "completed" and report.finished == 2

    resumed = runner.invoke(cli, [*args, "--resume", "--json"])
    assert resumed.exit_code == 0, resumed.output
    data = json.loads(resumed.output.strip().splitlines()[-1])
    assert [run["reused"] for run in data["runs"]] == [True, True]

    listed = runner.invoke(cli, ["bench", "--list", "--json", "--db", db])
    sweeps = json.loads(listed.output)
    assert len(sweeps) == 2 and sweeps[0]["sweep_id"] == data["sweep_id"]

    exported = runner.invoke(cli, ["export", data["sweep_id"], "--format", "csv", "--db", db])
    assert exported.exit_code == 0, exported.output
    assert len(list(csv.DictReader(io.StringIO(exported.output)))) == 4

    session_id = data["runs"][0]["session_id"]
    markdown = tmp_path / "session.md"
    single = runner.invoke(cli, ["export", session_id[:6], "--out", str(markdown), "--db", db])
    assert single.exit_code == 0, single.output
    assert markdown.read_text().startswith(f"# Session {session_id}")


def test_bench_honours_the_config_and_its_flags_override_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """WORKBENCH_REQUEST_LIMIT=2 stops the tool arm of a five-request task; --request-limit 9 lifts it."""
    monkeypatch.setenv("WORKBENCH_REQUEST_LIMIT", "2")
    args = ["bench", "--task", "cart/remove-expensive", "--json", "--chart", "none", "--db", str(tmp_path / "b.db")]
    runs = []
    for extra in ([], ["--request-limit", "9"]):
        result = CliRunner().invoke(cli, [*args, *extra])
        assert result.exit_code == 0, result.output
        data = json.loads(result.output.strip().splitlines()[-1])
        runs.append(data["runs"][0]["arms"])
        assert data["options"]["request_limit"] == (int(extra[1]) if extra else 2)
    limited, lifted = runs
    assert limited["tool"]["status"] == "failed" and "request limit" in limited["tool"]["error"]
    assert limited["code"]["status"] == "completed"  # two requests: within the limit
    assert lifted["tool"]["status"] == lifted["code"]["status"] == "completed"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bench", "--tier", "weekly"], "weekly"),
        (["bench", "--app", "nope"], "unknown app"),
        (["bench", "--task", "cart/nope"], "unknown task"),
        (["bench", "--tier", "long", "--task", "cart/cap-quantity"], "no task matches"),
        (["bench", "--out", "report.txt"], "report format"),
        (["bench", "--model", "nonsense"], "unknown model"),
        (["export", "nope"], "no session"),
        (["export", "sweep-nope"], "no sweep"),
    ],
)
def test_bad_input_exits_2(args: list[str], message: str, db_path: Path) -> None:
    result = CliRunner().invoke(cli, [*args, "--db", str(db_path)])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_sort_orders_the_bench_and_export_case_tables_and_is_refused_where_nothing_is_sorted(tmp_path: Path) -> None:
    """``--sort`` as ``diff`` has it: the terminal report's case table, ``--out FILE.md`` and ``export SWEEP
    --format md`` list the cases in that order; with output that is data (JSON, CSV) or sorts itself (HTML), or
    with --queue, it is refused in one line."""
    from workbench.bench.compare import SORT_METRICS

    runner = CliRunner()
    db = str(tmp_path / "sort.db")
    tasks = ["--task", "cart/cap-quantity", "--task", "cart/clear-old", "--task", "cart/remove-expensive"]
    args = ["bench", *tasks, "--items", "20", "--chart", "none", "--db", db]
    out = tmp_path / "by-cost.md"
    ran = runner.invoke(cli, [*args, "--sort", "case", "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    sweep_id = json.loads(runner.invoke(cli, ["bench", "--list", "--json", "--db", db]).output)[0]["sweep_id"]
    data = json.loads(runner.invoke(cli, ["export", sweep_id, "--format", "json", "--db", db]).output)
    run_order = [row["task"] for row in data["matrix"]]
    assert [ran.output.index(task) for task in run_order] == sorted(ran.output.index(task) for task in run_order)

    def table_order(markdown: str) -> list[str]:
        rows = markdown.split("## Cases", 1)[1].split("\n## ", 1)[0]
        return [task for line in rows.splitlines() for task in run_order if line.startswith(f"| {task}")]

    assert table_order(out.read_text()) == run_order
    for by, metric in SORT_METRICS.items():
        size = {row["task"]: abs(row["versus"]["code"]["change_pct"][metric] or 0.0) for row in data["matrix"]}
        exported = runner.invoke(cli, ["export", sweep_id, "--format", "md", "--sort", by, "--db", db])
        assert exported.exit_code == 0, exported.output
        assert table_order(exported.output) == sorted(run_order, key=lambda task: -size[task]), by
    assert table_order(runner.invoke(cli, ["export", sweep_id, "--format", "md", "--db", db]).output) == run_order

    for refused in (
        ["export", sweep_id, "--format", "json", "--sort", "cost", "--db", db],
        ["export", sweep_id, "--format", "html", "--sort", "cost", "--db", db],
        [*args, "--json", "--sort", "cost"],
        [*args, "--queue", "--sort", "cost"],
    ):
        result = runner.invoke(cli, refused)
        assert result.exit_code == 2, (refused, result.output)
        assert "--sort" in result.output and len(result.output.strip().splitlines()) == 1, result.output
