"""The per-case matrix's intervals over a case's repeats, checked by hand, and the bench report's case order
(verdict changes first, then by the size of the largest change)."""

from __future__ import annotations

import pytest

from workbench.bench.compare import case_matrix
from workbench.bench.plan import BenchCase
from workbench.bench.results import ArmFigures, RunResult
from workbench.bench.rows import case_intervals, interesting_first, matrix_rows, versus_text


def _arm(cost: float, *, passed: bool = True) -> ArmFigures:
    return ArmFigures(
        status="completed", passed=passed, cost_usd=cost, wall_s=1.0, requests=2, input_tokens=1000,
        output_tokens=10, tool_calls=1, app_calls=1, bytes_seen=0, bytes_produced=0,
        verdict="passed" if passed else "failed",
    )  # fmt: skip


def _run(task: str, repeat: int, tool: float, code: float, *, code_passed: bool = True) -> RunResult:
    case = BenchCase("everyday", task, 10, 0, repeat)
    return RunResult(case, "scripted", f"{task}-{repeat}", {"tool": _arm(tool), "code": _arm(code, passed=code_passed)})


def test_a_cases_interval_over_two_repeats_by_hand() -> None:
    # repeat 0: code costs 0.5 against 1.0 (-50%); repeat 1: 0.7 against 1.0 (-30%). Point: (-0.5 - 0.3) / 2.0 = -40%.
    # The bootstrap over two repeats draws (r0, r0), (r0, r1), (r1, r0) or (r1, r1): -50%, -40%, -40%, -30%,
    # a quarter of the mass at each end, so the 2.5% and 97.5% percentiles are the ends: [-50, -30].
    matrix = case_matrix([_run("a", 0, 1.0, 0.5), _run("a", 1, 1.0, 0.7)])
    key = ("a", 10, 0)
    cost = matrix.interval(key, "code", "cost_usd")
    assert cost is not None and cost.pairs == 2
    assert cost.relative == pytest.approx(-40.0)
    assert (cost.relative_low, cost.relative_high) == (pytest.approx(-50.0), pytest.approx(-30.0))
    text = versus_text(matrix.change(key, "code"), case_intervals(matrix, key, "code"))
    assert text.startswith("cost -40% [-50, -30]")
    assert "input -" not in text and "input +0% [+0, +0]" in text  # equal tokens: an interval of nothing
    assert matrix_rows(matrix)[0][-1] == text
    assert matrix.to_list()[0]["versus"]["code"]["interval"]["cost_usd"]["relative_low"] == pytest.approx(-50.0)


def test_one_repeat_has_no_interval() -> None:
    matrix = case_matrix([_run("a", 0, 1.0, 0.5)])
    assert matrix.interval(("a", 10, 0), "code", "cost_usd") is None
    assert "[" not in versus_text(matrix.change(("a", 10, 0), "code"), case_intervals(matrix, ("a", 10, 0), "code"))


def test_the_report_orders_cases_by_verdict_change_then_by_the_size_of_a_change() -> None:
    runs = [
        _run("small", 0, 1.0, 0.9),  # -10%
        _run("large", 0, 1.0, 0.2),  # -80%
        _run("worse", 0, 1.0, 1.0, code_passed=False),  # a regression: first whatever its size
        _run("middle", 0, 1.0, 0.5),  # -50%
    ]
    matrix = case_matrix(runs)
    assert [key[0] for key in interesting_first(matrix)] == ["worse", "small", "large", "middle"]
    assert [key[0] for key in interesting_first(matrix, by_size=True)] == ["worse", "large", "middle", "small"]


def test_sort_orders_the_cases_as_run_by_change_or_by_the_size_of_one_amount() -> None:
    from workbench.bench.compare import SORTS
    from workbench.bench.rows import ordered_cases
    from workbench.commands.options import CASE_SORTS

    assert CASE_SORTS == SORTS  # the CLI's spelling of the choices, kept without importing the bench
    runs = [
        _run("small", 0, 1.0, 0.9),  # cost -10%
        _run("large", 0, 1.0, 0.2),  # -80%
        _run("worse", 0, 1.0, 1.0, code_passed=False),  # a regression, cost +0%
        _run("dearer", 0, 1.0, 1.5),  # +50%: the size either way
    ]
    matrix = case_matrix(runs)
    order = {by: [key[0] for key in ordered_cases(matrix, by)] for by in SORTS}
    assert order["case"] == ["small", "large", "worse", "dearer"]
    assert order["change"] == ["worse", "large", "dearer", "small"]
    assert order["cost"] == ["large", "dearer", "small", "worse"]
    assert order["tokens"] == order["time"] == order["case"]  # no change in either: as run (a stable sort)
