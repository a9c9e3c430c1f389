"""Honest verdicts: a stopped arm is not graded, and no view names a better arm when the arms are not comparable."""

from __future__ import annotations

import asyncio
import contextvars
import json
from pathlib import Path

from click.testing import CliRunner

import workbench
from workbench.bench.export import export_session
from workbench.cli import cli
from workbench.events import ArmEvent, Graded, RunFinished, RunStarted, ToolCall
from workbench.printer import comparison_view, sessions_table
from workbench.scripted import SURFACE
from workbench.scripted.model import HELP_REPLIES
from workbench.session import Comparison
from workbench.store import ArmInfo, Store
from workbench.summary import ArmSummary
from workbench.verdict import comparability, grade_note, session_comparability

TASK = "cart/remove-expensive"


def summary(name: str, status: str, tool_calls: int = 3) -> ArmSummary:
    return ArmSummary(name=name, status=status, tool_calls=tool_calls)  # type: ignore[arg-type]


def test_arms_that_both_ran_to_their_end_and_did_work_are_comparable() -> None:
    verdict = comparability(summary("tool", "completed"), summary("code", "completed", tool_calls=1))
    assert verdict and verdict.note == ""


def test_an_arm_that_did_not_finish_makes_the_pair_not_comparable_and_says_which() -> None:
    for status in ("cancelled", "interrupted", "failed"):
        verdict = comparability(summary("tool", status), summary("code", "completed"))
        assert not verdict and verdict.note == f"not comparable: tool arm {status}"
    assert comparability(summary("tool", "completed"), summary("code", "running")).reason == "code arm still running"


def test_no_arm_calling_a_tool_is_not_comparable() -> None:
    verdict = comparability(summary("tool", "completed", 0), summary("code", "completed", 0))
    assert verdict.reason == "neither arm called a tool"
    assert comparability(summary("tool", "completed", 0), summary("code", "completed", 1))


def test_any_arm_compares_against_the_first_and_stored_arms_compare_by_status() -> None:
    arms = [summary("tool", "completed"), summary("code", "completed"), summary("hybrid", "cancelled")]
    assert session_comparability(arms).reason == "hybrid arm cancelled"
    assert session_comparability(arms[:1])
    stored = [
        ArmInfo("tool", "tool", "scripted", "completed", True, 0.1),
        ArmInfo("code", "code", "x", "failed", None, 0),
    ]
    assert session_comparability(stored).reason == "code arm failed"


def test_grade_note_names_what_happened_to_a_stopped_arm() -> None:
    assert grade_note("cancelled", 5.14) == "cancelled after 5.1 s: not graded"
    assert grade_note("interrupted", 0.2) == "interrupted after 0.2 s: not graded"
    assert grade_note("failed", 3) is None and grade_note("completed", 3) is None


def test_a_stored_grade_of_a_cancelled_arm_is_dropped_when_folded() -> None:
    events = [
        ArmEvent("tool", 0, 0.0, RunStarted("tool", "scripted", "cart", 5, 0, "p", ["list_lines"])),
        ArmEvent("tool", 1, 0.1, ToolCall("c1", "list_lines", {})),
        ArmEvent("tool", 2, 5.1, Graded(False, TASK, ["line-0001 still there"] * 71, [])),
        ArmEvent("tool", 3, 5.1, RunFinished("cancelled", "cancelled by the user", "")),
    ]
    folded = ArmSummary.fold("tool", events)
    assert folded.passed is None and folded.mismatches == [] and folded.to_dict()["passed"] is None


async def cancelled_mid_run(db: Path) -> Comparison:
    """The tool arm cancelled once it has made a call; the code arm (instant) has long finished by then."""
    run = workbench.compare_stream(task=TASK, model="scripted:paced", db=db)
    async for arm, event in run:
        if arm == "tool" and event.kind == "tool_result":
            break
    run.cancel()
    return await asyncio.wait_for(run.result(), timeout=60)


def test_a_cancelled_arm_is_not_graded_and_no_view_names_a_winner(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    comparison = asyncio.run(cancelled_mid_run(db))
    tool = comparison.arms["tool"]
    assert tool.summary.status == "cancelled"
    assert tool.summary.passed is None and tool.summary.mismatches == []
    assert not any(event.kind == "grade" for event in tool.events)

    data = comparison.to_dict()
    assert data["arms"][0]["passed"] is None and data["arms"][0]["mismatches"] == []

    exported = json.loads(export_session(comparison, "json"))
    assert exported["comparable"] is False and exported["not_comparable_reason"].startswith("tool arm ")
    assert "Not comparable: tool arm" in export_session(comparison, "md")
    csv_rows = export_session(comparison, "csv").splitlines()
    assert csv_rows[1].endswith(",False,tool arm cancelled")

    from rich.console import Console

    console = Console(width=120, record=True, color_system="truecolor")
    console.print(comparison_view(comparison))
    text = console.export_text(clear=False)
    assert "not comparable: tool arm cancelled" in text and "not graded" in text
    figures = console.export_text(styles=True).split("requests", 1)[1].split("not comparable")[0]
    assert "\x1b[32m" not in figures and "\x1b[31m" not in figures  # no change coloured better or worse

    console = Console(width=120, record=True)
    console.print(sessions_table(Store(db).sessions()))
    assert "partial" in console.export_text()


def test_a_declined_prompt_is_not_comparable_everywhere(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["run", "Write me a poem about carts", "--app", "cart", "--db", str(tmp_path / "d")]
    )
    assert result.exit_code == 0
    assert "not comparable: neither arm called a tool" in result.stdout


def test_the_scripted_reply_to_an_unknown_prompt_names_what_to_do_where_the_run_started() -> None:
    cli_run = workbench.compare_sync("Write me a poem about carts", app="cart", items=5, db=False)
    assert "--model" in cli_run.arms["code"].summary.output

    def in_the_tui() -> Comparison:
        SURFACE.set("tui")
        return workbench.compare_sync("Write me a poem about carts", app="cart", items=5, db=False)

    tui_run = contextvars.copy_context().run(in_the_tui)
    for arm in tui_run.arms.values():
        assert arm.summary.output == HELP_REPLIES["tui"].format(app="cart")
        assert "Task list" in arm.summary.output and "Model field" in arm.summary.output
        assert "--model" not in arm.summary.output
