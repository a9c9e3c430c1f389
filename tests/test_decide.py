"""Deciding across runs: McNemar's test, pass^k and pairs needed on hand-computed examples; `workbench diff`
and `workbench gate` on real sweeps of the scripted model, one of them made worse by a tight request limit."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from workbench.bench import Sweep, SweepStore, plan
from workbench.bench.significance import mcnemar_exact, pairs_needed, pass_hat_k, success_test
from workbench.cli import cli
from workbench.display import DEMO_LABEL
from workbench.store import Store

# -- the statistics, by hand --------------------------------------------------------------------------


def test_mcnemar_exact_against_hand_computed_values() -> None:
    # b=5, c=0: n=5, P(X<=0) = C(5,0)/2^5 = 1/32, two-sided 2/32 = 0.0625 (five flips one way is not enough)
    assert mcnemar_exact(5, 0) == pytest.approx(0.0625)
    # b=2, c=8: n=10, P(X<=2) = (1 + 10 + 45)/1024 = 56/1024, two-sided 112/1024 = 0.109375
    assert mcnemar_exact(2, 8) == pytest.approx(0.109375)
    # b=0, c=6: 2 * 1/64 = 0.03125, significant at 0.05
    assert mcnemar_exact(0, 6) == pytest.approx(0.03125)
    # b=1, c=4: (1 + 5)/32 = 6/32, two-sided 12/32 = 0.375
    assert mcnemar_exact(1, 4) == pytest.approx(0.375)
    # balanced flips and no flips cap at 1
    assert mcnemar_exact(3, 3) == 1.0 and mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(4, 1) == mcnemar_exact(1, 4), "two-sided: symmetric in b and c"


def test_pairs_needed_against_hand_computed_values() -> None:
    # Connor 1987: n = (z_.975 sqrt(psi) + z_.8 sqrt(psi - d^2))^2 / d^2, z_.975 = 1.959964, z_.8 = 0.841621
    # psi = 0.3, d = 0.1: (1.959964*0.547723 + 0.841621*0.538516)^2 / 0.01 = (1.073517 + 0.453227)^2 / 0.01
    #   = 1.526744^2 / 0.01 = 233.09 -> 234 pairs
    assert pairs_needed(0.1, 0.3) == 234
    # psi = 0.2, d = 0.2: (1.959964*0.447214 + 0.841621*0.4)^2 / 0.04 = 1.213172^2 / 0.04 = 36.79 -> 37
    assert pairs_needed(0.2, 0.2) == 37
    # no pair observed disagreeing: psi is taken as |d| (a difference of d needs that much disagreement)
    assert pairs_needed(-0.2, 0.0) == 37
    assert pairs_needed(0.0, 0.5) is None


def test_pass_hat_k_by_hand() -> None:
    # case a: 3 of 4 passed -> pass^2 = C(3,2)/C(4,2) = 3/6; case b: 4 of 4 -> 1; mean 0.75
    outcomes = [("a", True), ("a", True), ("a", True), ("a", False)] + [("b", True)] * 4
    found = pass_hat_k(outcomes)
    assert found["1"] == pytest.approx((0.75 + 1) / 2)
    assert found["2"] == pytest.approx((0.5 + 1) / 2)
    assert found["4"] == pytest.approx((0 + 1) / 2)


def test_success_test_says_no_difference_when_not_significant() -> None:
    # 12 pairs: 2 pass->fail, 1 fail->pass: p = 2 * (1 + 3)/8 = 1.0
    verdicts = [(True, False)] * 2 + [(False, True)] + [(True, True)] * 9
    test = success_test(verdicts)
    assert (test.pairs, test.regressed, test.improved) == (12, 2, 1)
    assert test.p_value == 1.0 and not test.significant
    assert test.describe().startswith("no significant difference in success (p = 1, 12 pairs")
    assert "✓" not in test.describe() and "better" not in test.describe()
    strong = success_test([(False, True)] * 6 + [(True, True)] * 6)
    assert strong.significant and strong.describe().startswith("success higher by 50 pts, significant at 0.05")


# -- real sweeps: a baseline and a candidate with a tight request limit ---------------------------------

TASKS = ("cart/remove-expensive", "cart/wrap-category", "cart/cap-quantity", "cart/prune-saved")
TIGHT_LIMIT = 4


def _bench(db: Path, out: Path, *extra: str) -> dict[str, Any]:
    args = ["bench", "--arms", "code,tool", "--chart", "none", "--concurrency", "2", "--db", str(db)]
    for task in TASKS:
        args += ["--task", task]
    result = CliRunner().invoke(cli, [*args, "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("decide")
    db = root / "bench.db"
    base = _bench(db, root / "base.json")
    worse = _bench(db, root / "worse.json", "--request-limit", str(TIGHT_LIMIT))
    return {"db": db, "root": root, "base": base, "worse": worse}


def _gate(sweeps: dict[str, Any], a: str, b: str, *extra: str, env: dict[str, str] | None = None) -> Any:
    args = ["gate", "--baseline", a, "--candidate", b, "--db", str(sweeps["db"]), *extra]
    return CliRunner().invoke(cli, args, env=env)


def _needing_more_requests(report: dict[str, Any]) -> set[str]:
    """The cases whose tool arm needed more requests than the tight limit allows (read from the baseline)."""
    return {run["task"] for run in report["runs"] if run["arms"]["tool"]["requests"] > TIGHT_LIMIT}


def test_gate_exits_1_naming_exactly_the_regressed_cases(sweeps: dict[str, Any], tmp_path: Path) -> None:
    expected = _needing_more_requests(sweeps["base"])
    assert expected and expected != set(TASKS), "the limit must break some cases, not all"
    summary, step = tmp_path / "comment.md", tmp_path / "step.md"
    result = _gate(sweeps, str(sweeps["root"] / "base.json"), sweeps["worse"]["sweep_id"][:10],
                   "--summary", str(summary), "--json", env={"GITHUB_STEP_SUMMARY": str(step)})  # fmt: skip
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    (finding,) = data["regressions"]
    assert (finding["arm"], finding["metric"]) == ("tool", "success")
    assert {case["task"] for case in finding["cases"]} == expected
    assert "drop of 50.0 pts > 5 pts allowed" in finding["reason"]
    body = summary.read_text()
    assert body.startswith("## ❌ Gate: regression")
    for task in expected:
        assert task in body
    for task in set(TASKS) - expected:
        assert task not in body.split("### Regressed cases")[1].split("###")[0]
    assert "Demonstration figures" in body and "### Reproduce" in body
    assert step.read_text().strip() == body.strip(), "the step summary gets the same body"
    linked = _gate(sweeps, str(sweeps["root"] / "base.json"), str(sweeps["root"] / "worse.json"),
                   "--summary", str(summary), "--session-url", "https://ci.example/s/{session}.html")  # fmt: skip
    assert linked.exit_code == 1
    for run in sweeps["worse"]["runs"]:
        if run["task"] in expected:
            assert f"[{run['session_id']}](https://ci.example/s/{run['session_id']}.html)" in summary.read_text()
    base = str(sweeps["root"] / "base.json")
    refused = _gate(sweeps, base, base, "--session-url", "no-placeholder")
    assert refused.exit_code == 2 and "has no {session}" in refused.output


def test_identical_sweeps_pass_and_a_flip_below_the_bound_is_listed_not_counted(sweeps: dict[str, Any]) -> None:
    base = str(sweeps["root"] / "base.json")
    same = _gate(sweeps, base, sweeps["base"]["sweep_id"])
    assert same.exit_code == 0, same.output
    assert same.output.startswith("Gate: pass")
    # the code arm never hits the limit: gating it alone passes; a 100-point allowance lets the tool arm pass
    assert _gate(sweeps, base, str(sweeps["root"] / "worse.json"), "--arm", "code").exit_code == 0
    loose = _gate(sweeps, base, str(sweeps["root"] / "worse.json"), "--max-success-drop", "100")
    assert loose.exit_code == 0, loose.output
    assert "not counted" in loose.output and "p = 0.5" in loose.output


def test_cost_is_gated_by_the_interval_bound(sweeps: dict[str, Any]) -> None:
    # the tool arm is cheaper when it stops early: its cost fell, so no cost bound fails; the code arm's cost is
    # identical (interval [0, 0]), so even a 0% bound passes
    base, worse = str(sweeps["root"] / "base.json"), str(sweeps["root"] / "worse.json")
    result = _gate(sweeps, base, worse, "--arm", "code", "--max-cost-increase", "0", "--json")
    assert result.exit_code == 0, result.output
    # swapped (B costlier by the early stops' savings): the tool arm's cost rise is gated
    swapped = _gate(sweeps, worse, base, "--arm", "tool", "--max-cost-increase", "1", "--max-success-drop", "100",
                    "--json")  # fmt: skip
    data = json.loads(swapped.output)
    rises = [f for f in data["regressions"] if f["metric"] == "cost_usd"]
    paired = data["diff"]["arms"][0]["paired"]["cost_usd"]
    assert (swapped.exit_code == 1) == (paired["relative_low"] > 1), swapped.output
    assert bool(rises) == (paired["relative_low"] > 1)


async def _interrupted_sweep(db: Path) -> str:
    store = Store(db)
    sweep = Sweep(plan("everyday", tasks=list(TASKS[:2])), store=store, concurrency=1)
    running: list[asyncio.Task[object]] = []

    def stop_after_first(step: object) -> None:
        if getattr(step, "kind", "") == "finished":
            running[0].cancel()

    sweep.on_progress = stop_after_first
    running.append(asyncio.ensure_future(sweep.run()))
    outcome = await running[0]
    assert outcome.interrupted  # type: ignore[attr-defined]
    return sweep.sweep_id


def test_incomplete_unknown_and_incomparable_exit_2(sweeps: dict[str, Any], tmp_path: Path) -> None:
    db = tmp_path / "cut.db"
    sweep_id = asyncio.run(_interrupted_sweep(db))
    assert SweepStore(Store(db)).sweep(sweep_id).status == "interrupted"
    cut = CliRunner().invoke(cli, ["export", sweep_id, "--db", str(db), "--out", str(tmp_path / "cut.json")])
    assert cut.exit_code == 0, cut.output
    base = str(sweeps["root"] / "base.json")
    for candidate in (str(tmp_path / "cut.json"),):
        result = _gate(sweeps, base, candidate)
        assert result.exit_code == 2, result.output
        assert "incomplete" in result.output and "interrupted" in result.output
    from_store = CliRunner().invoke(cli, ["gate", "--baseline", sweep_id, "--candidate", sweep_id, "--db", str(db)])
    assert from_store.exit_code == 2, from_store.output
    unknown = _gate(sweeps, base, "sweep-nothere")
    assert unknown.exit_code == 2 and "no sweep" in unknown.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    assert _gate(sweeps, base, str(bad)).exit_code == 2
    # a sweep of other tasks shares no case: not comparable
    other = tmp_path / "other.json"
    _bench_other = CliRunner().invoke(cli, ["bench", "--task", "cart/clear-old", "--arms", "code,tool", "--chart",
                                            "none", "--db", str(tmp_path / "o.db"), "--out", str(other)])  # fmt: skip
    assert _bench_other.exit_code == 0, _bench_other.output
    apart = _gate(sweeps, base, str(other))
    assert apart.exit_code == 2 and "no case ran on both sides" in apart.output


def test_diff_lists_flips_filters_and_formats(sweeps: dict[str, Any], tmp_path: Path) -> None:
    expected = _needing_more_requests(sweeps["base"])
    a, b = sweeps["base"]["sweep_id"], sweeps["worse"]["sweep_id"]
    db = ["--db", str(sweeps["db"])]
    result = CliRunner().invoke(cli, ["diff", a, b, "--only", "regressions", "--json", *db])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    by_arm = {arm["after"]: arm for arm in data["arms"]}
    assert {case["task"] for case in by_arm["tool"]["cases"]} == expected
    assert by_arm["code"]["cases"] == []
    assert by_arm["tool"]["success"]["regressed"] == len(expected)
    assert data["a"]["demo"] and data["b"]["demo"]
    text = CliRunner().invoke(cli, ["diff", a, b, "--filter", "wrap", *db])
    assert "cart/wrap-category" in text.output and "cart/cap-quantity" not in text.output
    assert "no significant difference in success" in text.output
    md = CliRunner().invoke(cli, ["diff", a, b, "--format", "md", *db])
    assert md.output.startswith("# Diff") and "| case | change |" in md.output
    page = tmp_path / "diff.html"
    html = CliRunner().invoke(cli, ["diff", a, b, "--format", "html", "--out", str(page), *db])
    assert html.exit_code == 0, html.output
    content = page.read_text()
    assert "<table" in content and "cart/remove-expensive" in content and "http" not in content.split("<body>")[1]
    # two sessions: the first case's run in each sweep
    sa, sb = sweeps["base"]["runs"][0]["session_id"], sweeps["worse"]["runs"][0]["session_id"]
    pair = CliRunner().invoke(cli, ["diff", sa, sb, "--json", *db])
    assert pair.exit_code == 0, pair.output
    assert [len(arm["cases"]) for arm in json.loads(pair.output)["arms"]] == [1, 1]


# -- the per-case matrix of one sweep --------------------------------------------------------------------


def test_the_bench_matrix_lists_exactly_the_worse_arms_cases(sweeps: dict[str, Any]) -> None:
    """In the limited sweep the tool arm (after the code baseline) loses exactly the cases that need more
    requests; the JSON matrix, the CSV columns and the Markdown all say so, and no winner is named on 4 pairs."""
    import csv
    import io

    from workbench.bench import BenchReport, to_csv, to_markdown

    expected = _needing_more_requests(sweeps["base"])
    data = sweeps["worse"]
    regressions = {row["task"] for row in data["matrix"] if row["versus"]["tool"]["kind"] == "regression"}
    assert regressions == expected
    for row in data["matrix"]:
        passed = "0/1" if row["task"] in expected else "1/1"
        assert row["arms"]["tool"]["verdict"] == passed and row["arms"]["code"]["verdict"] == "1/1"
    report = BenchReport.from_dict(data)
    (tier,) = report.tiers
    test = tier.versus["tool"].success_test
    assert test is not None and (test.pairs, test.regressed, test.improved) == (4, len(expected), 0)
    markdown = to_markdown(report)
    assert f"no significant difference (p = {test.p_value:.2g}, 4 pairs)" in markdown
    assert f"model scripted · {DEMO_LABEL}" in markdown
    cases = markdown.split("## Cases")[1].split("##")[0]
    assert cases.count("fewer passes") == len(expected)
    rows = list(csv.DictReader(io.StringIO(to_csv(report))))
    flagged = {row["task"] for row in rows if row["case_vs_baseline"] == "regression"}
    assert flagged == expected
    assert all(row["case_vs_baseline"] == "" for row in rows if row["arm"] == "code")


def test_the_sweep_html_has_a_row_per_case_marked_by_its_change(sweeps: dict[str, Any]) -> None:
    from workbench.bench import BenchReport
    from workbench.share.sweep_html import sweep_html

    page = sweep_html(BenchReport.from_dict(sweeps["worse"]))
    cases = page.split('<section id="cases">')[1].split("</section>")[0]
    assert cases.count("<tr data-change=") == len(TASKS)
    assert cases.count('data-change="regression"') == len(_needing_more_requests(sweeps["base"]))
    assert "no significant difference (p = 0.5, 4 pairs)" in page


def test_diff_sorts_by_change_and_by_the_size_of_a_delta(sweeps: dict[str, Any]) -> None:
    a, b = sweeps["base"]["sweep_id"], sweeps["worse"]["sweep_id"]
    db = ["--db", str(sweeps["db"])]
    expected = _needing_more_requests(sweeps["base"])
    by_change = json.loads(
        CliRunner().invoke(cli, ["diff", a, b, "--sort", "change", "--arm", "tool", "--json", *db]).output
    )
    kinds = [case["kind"] for case in by_change["arms"][0]["cases"]]
    assert kinds == ["regression"] * len(expected) + ["same"] * (len(TASKS) - len(expected))
    by_cost = json.loads(
        CliRunner().invoke(cli, ["diff", a, b, "--sort", "cost", "--arm", "tool", "--json", *db]).output
    )
    sizes = [abs(case["change_pct"]["cost_usd"] or 0) for case in by_cost["arms"][0]["cases"]]
    assert sizes == sorted(sizes, reverse=True)


async def test_the_sweep_and_diff_pages_in_chromium(sweeps: dict[str, Any], chromium: Any, tmp_path: Path) -> None:
    """Opened in a real headless Chromium: a row per case, the regressions marked, nothing fetched."""
    from workbench.bench import BenchReport
    from workbench.share.sweep_html import sweep_html

    expected = _needing_more_requests(sweeps["base"])
    sweep_page = tmp_path / "sweep.html"
    sweep_page.write_text(sweep_html(BenchReport.from_dict(sweeps["worse"])), encoding="utf-8")
    diff_page = tmp_path / "diff.html"
    a, b = str(sweeps["root"] / "base.json"), str(sweeps["root"] / "worse.json")
    made = CliRunner().invoke(cli, ["diff", a, b, "--format", "html", "--out", str(diff_page)])
    assert made.exit_code == 0, made.output
    for path in (sweep_page, diff_page):
        page = await chromium.new_page()
        await page.goto(path.as_uri())
        await page.evaluate("new Promise(resolve => requestAnimationFrame(() => resolve(true)))")
        assert page.requests == [path.as_uri()], f"the page fetched more than itself: {page.requests}"
        assert page.errors == []
        if path == sweep_page:
            marked = await page.evaluate(
                "[...document.querySelectorAll('#cases tr[data-change=\"regression\"] td:first-child')]"
                ".map(td => td.textContent)"
            )
            assert {text.split(" ×")[0] for text in marked} == expected
            assert await page.evaluate("document.querySelectorAll('#cases tbody tr').length") == len(TASKS)
        else:
            kinds = await page.evaluate(
                "[...document.querySelectorAll('table tbody tr')].map(tr => tr.children[1].textContent)"
            )
            assert kinds.count("regression") == len(expected)
    print(f"sweep page {sweep_page.stat().st_size:,} bytes, diff page {diff_page.stat().st_size:,} bytes")
