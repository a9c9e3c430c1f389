"""Prompts with unusual text, through the engine (``compare``) and through ``workbench run``.

Each prompt is either accepted (both arms run, the stored session keeps the prompt exactly, ``show`` prints
it without a traceback or raw control characters) or refused with a one-line message (``BadInput`` from
the engine, exit 2 from the CLI). Nothing in between: no crash, no silently lost session.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from click.testing import CliRunner

import workbench
from workbench.errors import is_text

NEAR_MISS = "Remove everything in the cart that costs more than $" * 2000
"""~100 KB that keeps almost matching a built-in task's pattern (a regular expression's worst case)."""

PROMPTS: dict[str, str] = {
    "empty": "",
    "whitespace only": " \t\n  \r\n ",
    "100 KB of prose": ("The quick brown fox jumps over the lazy dog. " * 2300)[:100_000],
    "100 KB near-miss of a task": NEAR_MISS[:100_000],
    "100 KB on one line, no spaces": "x" * 100_000,
    "control characters": "Remove\x00 everything\x07 in the\x1b[2J cart\x08\x0b\x0c\x7f that costs\x85 more than $50",
    "terminal escapes": "\x1b]0;PWNED\x07\x1b[31mred\x1b[0m and \x1b[2J cleared",
    "right-to-left": "הסר כל פריט בעגלה שעולה יותר מ-50 דולר \u202eevil\u202c مرحبا بالعالم",
    "emoji": "🛒🔥 Remove everything that costs more than $50 apiece 💸👍🏽👨‍👩‍👧‍👦",
    "combining marks": "Ŗ̶̡e̷͉m̸̱o̵̯v̴̰e̷͎ ̵e̷v̶e̵r̶y̴t̷h̴i̸n̷g̸" * 20,
    "a built-in task, padded": "\n\n   Remove everything in the cart that costs more than $50 apiece.   \n\n",
    "invalid UTF-8 (lone surrogate)": "Remove \udcff\udcfe everything",
    "only a NUL": "\x00",
}
REFUSED = {"empty", "whitespace only", "invalid UTF-8 (lone surrogate)"}
"""Prompts that must be refused with a message; every other one must be accepted."""
TIME_LIMIT_S = 10.0
"""Goal for one prompt, through the engine and the CLI; a prompt over it is in ``over_goal``."""


@dataclass
class PromptReport:
    name: str
    length: int
    engine: str
    """accepted / refused: the engine's verdict."""
    cli_exit: int | None
    seconds: float
    problems: list[str] = field(default_factory=list)
    over_goal: list[str] = field(default_factory=list)

    @property
    def handled(self) -> bool:
        return not self.problems


async def check_prompt(name: str, prompt: str, directory: Path) -> PromptReport:
    db = directory / "prompts.db"
    started = time.perf_counter()
    report = PromptReport(name, len(prompt), "accepted", None, 0.0)
    try:
        comparison = await workbench.compare(prompt, app="cart", db=str(db))
    except workbench.BadInput as error:
        report.engine = "refused"
        if not str(error) or "\n" in str(error):
            report.problems.append(f"the refusal is not one line: {error!r}")
    else:
        for arm, run in comparison.arms.items():
            if run.summary.status != "completed":
                report.problems.append(f"{arm} arm {run.summary.status}: {run.summary.error}")
        stored = workbench.Store(db).session(comparison.session_id).prompt
        if stored != comparison.prompt:
            report.problems.append("the stored prompt differs from the one run")
    should = "refused" if name in REFUSED else "accepted"
    if report.engine != should:
        report.problems.append(f"the engine {report.engine} it; it should be {should}")
    if "\x00" not in prompt and is_text(prompt):
        await asyncio.to_thread(_check_cli, prompt, db, report)  # the CLI runs its own event loop
    report.seconds = round(time.perf_counter() - started, 3)
    if report.seconds > TIME_LIMIT_S:
        report.over_goal.append(f"took {report.seconds} s")
    return report


def _check_cli(prompt: str, db: Path, report: PromptReport) -> None:
    """``workbench run PROMPT --json`` then ``workbench show ID`` (a real argv cannot hold NUL or bad UTF-8)."""
    from workbench.cli import cli

    result = CliRunner().invoke(cli, ["run", prompt, "--app", "cart", "--json", "--db", str(db)], prog_name="workbench")
    report.cli_exit = result.exit_code
    if "Traceback" in result.output + result.stderr:
        report.problems.append("`workbench run` printed a traceback")
    if report.engine == "refused":
        if result.exit_code != 2 or result.stderr.count("\n") != 1:
            report.problems.append(f"`workbench run` exit {result.exit_code}, stderr {result.stderr[:200]!r}")
        return
    if result.exit_code != 0:
        report.problems.append(f"`workbench run` exit {result.exit_code}: {result.stderr.strip()[:200]}")
        return
    data = json.loads(result.stdout)
    if data["prompt"] != prompt.strip() and data["prompt"] != prompt:
        report.problems.append("`workbench run --json` changed the prompt")
    shown = CliRunner().invoke(cli, ["show", data["session_id"], "--db", str(db)], prog_name="workbench")
    if shown.exit_code != 0 or any(char in shown.stdout for char in "\x1b\x07\x00"):
        report.problems.append(f"`workbench show` exit {shown.exit_code} or raw control characters in its output")


async def all_checks(directory: Path, on_report: Callable[[PromptReport], None] | None = None) -> list[PromptReport]:
    reports = []
    for name, prompt in PROMPTS.items():
        reports.append(await check_prompt(name, prompt, directory))
        if on_report is not None:
            on_report(reports[-1])
    return reports
