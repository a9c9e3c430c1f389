"""Honest verdicts: a stopped arm is not graded, and no view names a better arm when the arms are not comparable."""

from __future__ import annotations

import asyncio
import contextvars
import csv
import io
import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from click.testing import CliRunner

import workbench
from workbench.apps import Snapshot
from workbench.bench.export import export_session
from workbench.cli import cli
from workbench.events import ArmEvent, Graded, RunFinished, RunStarted, ToolCall
from workbench.printer import comparison_view, sessions_table
from workbench.scripted import SURFACE
from workbench.scripted.model import HELP_REPLIES
from workbench.session import Comparison
from workbench.sources.agreement import ArmEnd, Rules, agreement
from workbench.store import ArmListing, Store
from workbench.summary import ArmSummary
from workbench.verdict import comparability, grade_note, session_comparability, verdict_label

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
        ArmListing("tool", "tool", "scripted", "completed", True, 0.1),
        ArmListing("code", "code", "x", "failed", None, 0),
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
    csv_rows = list(csv.DictReader(io.StringIO(export_session(comparison, "csv"))))
    assert (csv_rows[0]["comparable"], csv_rows[0]["not_comparable_reason"]) == ("False", "tool arm cancelled")
    assert csv_rows[0]["demonstration"] == "True"  # the scripted model

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


def test_created_records_match_by_content_without_what_the_server_generated() -> None:
    """Random hex keys, autoincrement keys, UUID columns and timestamps of the run are left out; a reference
    to a created row is named after that row, so it must still point at the corresponding one."""
    now = time.time()
    start: Snapshot = {"n.db:notes": {}, "n.db:tags": {}}

    def arm(note_key: int, uid: str, stamp: Any, tag_points_at: int) -> Snapshot:
        return {
            "n.db:notes": {str(note_key): {"id": note_key, "uid": uid, "title": "milk", "created": stamp}},
            "n.db:tags": {"9": {"id": 9, "note_id": tag_points_at, "tag": "food", "qty": 3}},
        }

    tool = arm(3, "0b8f9a4e-59c1-4b7e-9df2-7d1c3c0f2a11", now, 3)
    code = arm(7, "5f0c2d8e-1e0b-4c43-8a4b-6a8d1c5e9b02", datetime.fromtimestamp(now - 4).isoformat(), 7)
    ends = {"tool": ArmEnd(start, tool, "completed"), "code": ArmEnd(start, code, "completed")}
    assert agreement("tool", ends).verdict == "agree"
    wrong = arm(7, "x", now, 1)  # the tag points at another (pre-existing) note: a real difference
    ends["code"] = ArmEnd(start, wrong | {"n.db:notes": code["n.db:notes"]}, "completed")
    graded = agreement("tool", ends)
    assert graded.verdict == "differ" and graded.task == "arms differ"
    assert any("n.db:tags 9: created here" in line for line in graded.mismatches)


def test_a_dated_value_the_model_chose_and_a_quantity_are_compared() -> None:
    start: Snapshot = {"n.db:notes": {}}
    due = {"tool": "2020-01-01 10:00", "code": "2020-02-01 10:00"}  # far from now: chosen, not generated
    ends = {
        name: ArmEnd(start, {"n.db:notes": {"1": {"id": 1, "title": "pay", "due": value}}}, "completed")
        for name, value in due.items()
    }
    assert agreement("tool", ends).verdict == "differ"


def test_rules_ignore_a_column_or_match_on_some() -> None:
    start: Snapshot = {"n.db:notes": {}}
    tool = {"n.db:notes": {"a": {"id": "a", "title": "milk", "body": "x", "owner": "tool"}}}
    code = {"n.db:notes": {"b": {"id": "b", "title": "milk", "body": "y", "owner": "code"}}}
    ends = {"tool": ArmEnd(start, tool, "completed"), "code": ArmEnd(start, code, "completed")}
    assert agreement("tool", ends).verdict == "differ"
    assert agreement("tool", ends, rules=Rules(ignore=("body", "n.db:notes.owner"))).verdict == "differ"  # ids a, b
    assert agreement("tool", ends, rules=Rules(ignore=("id", "body", "n.db:notes.owner"))).verdict == "agree"
    assert agreement("tool", ends, rules=Rules(match_on=("n.db:notes.title",))).verdict == "agree"


def test_only_finished_arms_are_compared() -> None:
    start: Snapshot = {"f": {}}
    done = ArmEnd(start, {"f": {"1": {"x": 1}}}, "completed")
    for status, words in (("failed", "failed"), ("cancelled", "was cancelled"), ("interrupted", "was interrupted")):
        ends = {"tool": ArmEnd(start, start, status), "code": done}
        for name in ends:
            graded = agreement(name, ends)
            assert (graded.verdict, graded.reason) == ("not graded", f"not compared: the tool arm {words}")
    assert agreement("code", {"code": done}, unstarted=["tool"]).reason == "not compared: the tool arm failed"
    three = {"tool": ArmEnd(start, start, "failed"), "code": done, "hybrid": done}
    assert agreement("code", three).verdict == "agree"  # the finished arms still compare with each other


def test_agreement_is_never_shown_as_a_pass() -> None:
    events = [
        ArmEvent("tool", 0, 0.0, RunStarted("tool", "m", "mcp:x", 0, 0, "p", ["a"])),
        ArmEvent("tool", 1, 0.5, Graded(True, "arms agree", [], [], verdict="agree")),
        ArmEvent("tool", 2, 0.5, RunFinished("completed", None, "ok")),
    ]
    folded = ArmSummary.fold("tool", events)
    assert (folded.passed, folded.verdict) == (None, "agree")
    assert folded.to_dict()["passed"] is None and folded.to_dict()["verdict"] == "agree"
    old = ArmSummary.fold("tool", [*events[:1], ArmEvent("tool", 1, 0.5, Graded(True, "arms agree", [], []))])
    assert old.verdict == "agree" and old.passed is None  # a session stored before verdicts had kinds
    assert verdict_label("agree") == "= arms agree" and "✓" not in verdict_label("agree")
    assert verdict_label("not graded", "not compared: the tool arm failed") == "· not compared: the tool arm failed"


def test_a_failed_arm_whose_end_state_meets_the_expectation_is_no_pass() -> None:
    """The tool arm makes every deletion, then hits its request limit before it answers: a failed run."""
    from workbench.arms import ArmConfig
    from workbench.verdict import FAILED_RUN

    comparison = workbench.compare_sync(task=TASK, items=5, db=False, config=ArmConfig(request_limit=2))
    tool, code = comparison.arms["tool"].summary, comparison.arms["code"].summary
    assert (code.status, code.verdict, code.passed) == ("completed", "passed", True)
    assert tool.status == "failed" and tool.diff["deleted"] > 0  # it did the work the task asks for
    assert (tool.verdict, tool.passed, tool.mismatches[-1]) == ("failed", False, FAILED_RUN)
    assert comparison.to_dict()["arms"][0]["passed"] is False
    exported = json.loads(export_session(comparison, "json"))
    assert [arm["verdict"] for arm in exported["arms"]] == ["failed", "passed"]
    assert FAILED_RUN in export_session(comparison, "md")

    from rich.console import Console

    console = Console(width=120, record=True)
    console.print(comparison_view(comparison))
    grade_row = next(line for line in console.export_text().splitlines() if line.startswith("grade"))
    assert "✗ failed" in grade_row.split("│")[1] and "✓ passed" in grade_row.split("│")[2]
