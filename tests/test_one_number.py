"""One number everywhere: a session's figures read the same in every view, and a sweep's intervals are the same
wherever its report is shown."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console

import workbench
from workbench.bench import load_sweep
from workbench.bench.export import export_session
from workbench.cli import cli
from workbench.display import money
from workbench.printer import comparison_view, sessions_table
from workbench.store import Store
from workbench.tui.screens.sessions import arm_cell
from workbench.tui.widgets.figures import ArmCounters

TASK = "calendar/cancel-tentative"


def rendered(renderable: object, width: int = 160) -> str:
    console = Console(width=width, record=True)
    console.print(renderable)
    return console.export_text()


def table_row(text: str, label: str) -> list[str]:
    """The cells of the row starting with ``label`` in a Rich or Markdown table."""
    for line in text.splitlines():
        stripped = line.strip().strip("|").strip()
        if stripped.startswith(label):
            return [cell.strip() for cell in re.split(r"[│|]", stripped[len(label) :]) if cell.strip()]
    raise AssertionError(f"no row {label!r} in:\n{text}")


def test_one_session_reads_the_same_in_every_view(tmp_path: Path) -> None:
    db = tmp_path / "one.db"
    ran = workbench.compare_sync(task=TASK, items=60, db=db)
    store = Store(db)
    comparison = store.load(ran.session_id)
    tool, code = (comparison.arms[name].summary for name in ("tool", "code"))
    costs = [money(tool.cost_usd), money(code.cost_usd)]
    assert all(re.fullmatch(r"\$\d\.\d{4}", cost) for cost in costs)

    table = rendered(comparison_view(comparison))
    markdown = export_session(comparison, "md")
    for text, cost_label in ((table, "cost"), (markdown, "cost (USD)")):
        assert table_row(text, cost_label)[:2] == costs
        assert table_row(text, "requests")[:2] == [f"{tool.requests:,}", f"{code.requests:,}"]
        assert table_row(text, "input tokens")[:2] == [f"{tool.input_tokens:,}", f"{code.input_tokens:,}"]
        assert table_row(text, "inner calls")[:2] == ["–", f"{code.inner_calls:,}"]

    run_json = json.loads(CliRunner().invoke(cli, ["show", ran.session_id, "--json", "--db", str(db)]).stdout)
    exported_json = json.loads(export_session(comparison, "json"))
    rows = list(csv.DictReader(io.StringIO(export_session(comparison, "csv"))))
    for index, summary in enumerate((tool, code)):
        for data in (run_json["arms"][index], exported_json["arms"][index]):
            assert money(data["cost_usd"]) == costs[index]
            assert (data["requests"], data["input_tokens"]) == (summary.requests, summary.input_tokens)
        assert money(float(rows[index]["cost_usd"])) == costs[index]
        assert int(rows[index]["input_tokens"]) == summary.input_tokens

    for index, summary in enumerate((tool, code)):
        pane = ArmCounters(summary).render().plain
        assert f"Cost          {costs[index]}" in re.sub(r"Cost\s+", "Cost          ", pane)
        assert re.search(rf"Input tokens\s+{summary.input_tokens:,}\b", pane)
        inner = "–" if index == 0 else f"{summary.inner_calls:,}"
        assert re.search(rf"Inner calls\s+{inner}", pane)

    (info,) = store.sessions()
    cli_row = rendered(sessions_table([info], 160), 160)
    assert costs[0] in cli_row and costs[1] in cli_row
    tui_cells = [arm_cell(arm).plain for arm in info.arms]
    assert tui_cells == [f"✓ {costs[0]}", f"✓ {costs[1]}"]


def test_a_sweeps_intervals_are_the_same_in_the_cli_the_export_and_the_tui(tmp_path: Path) -> None:
    db = str(tmp_path / "bench.db")
    args = ["bench", "--task", "cart/cap-quantity", "--task", "cart/clear-old", "--repeat", "2", "--items", "8"]
    result = CliRunner().invoke(cli, [*args, "--bootstrap", "300", "--json", "--db", db])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout.strip().splitlines()[-1])
    exported = json.loads(CliRunner().invoke(cli, ["export", printed["sweep_id"], "--db", db]).stdout)
    in_the_tui = load_sweep(Store(db), printed["sweep_id"]).to_dict()  # what the bench screen shows
    paired = [report["tiers"][0]["paired"] for report in (printed, exported, in_the_tui)]
    assert paired[0] and paired[0] == paired[1] == paired[2]


def test_four_arms_read_whole_at_80_columns(tmp_path: Path) -> None:
    """At 80 columns four arms do not fit with a "vs" column each: the change moves under each arm's figure, and
    no figure, arm name or change is cut to an ellipsis. Wide, each change keeps its own column."""
    db = tmp_path / "four.db"
    arms = ("tool", "code", "code-eager", "hybrid")
    ran = workbench.compare_sync(task=TASK, items=60, db=db, arms=arms)
    comparison = Store(db).load(ran.session_id)
    summaries = [comparison.arms[name].summary for name in arms]
    narrow = rendered(comparison_view(comparison), width=80)
    assert "…" not in narrow
    assert all(len(line) <= 80 for line in narrow.splitlines())
    assert table_row(narrow, "cost") == [money(summary.cost_usd) for summary in summaries]
    lines = narrow.splitlines()
    under_cost = lines[next(i for i, line in enumerate(lines) if line.strip().startswith("cost")) + 1]
    assert len(re.findall(r"[+-]\d+%", under_cost)) == 3
    wide = rendered(comparison_view(comparison), width=160)
    assert len(re.findall(r"[+-]\d+%", " ".join(table_row(wide, "cost")))) == 3
    assert "vs tool" in wide.splitlines()[3]


def test_every_arm_that_writes_snippets_shows_its_inner_calls_in_every_view(tmp_path: Path) -> None:
    """A hybrid arm counts its inner calls like a code arm; only a tool-calling arm shows a dash."""
    db = tmp_path / "hybrid.db"
    ran = workbench.compare_sync(task=TASK, items=60, arms=["tool", "code", "hybrid"], db=db)
    comparison = Store(db).load(ran.session_id)
    code, hybrid = (comparison.arms[name].summary for name in ("code", "hybrid"))
    assert hybrid.mode == "hybrid" and hybrid.inner_calls > 0
    expected = ["–", f"{code.inner_calls:,}", f"{hybrid.inner_calls:,}"]
    assert table_row(export_session(comparison, "md"), "inner calls")[:3] == expected
    assert table_row(rendered(comparison_view(comparison), width=200), "inner calls")[:3] == expected
