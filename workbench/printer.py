"""Rich renderings of comparisons, tasks and sessions for the command line."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from apps import Task
from workbench.runner import Comparison
from workbench.store import SessionInfo
from workbench.summary import ArmSummary, percent_change

ARM_TITLES = {"tool": "Tool calling", "code": "Code mode"}


def money(value: float | None) -> str:
    if value is None:
        return "cost unknown"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def delta_text(code: float | None, tool: float | None, *, lower_is_better: bool = True) -> Text:
    change = percent_change(code, tool)
    if change is None:
        return Text("–", style="dim")
    better = change < 0 if lower_is_better else change > 0
    style = "green" if better and abs(change) >= 0.5 else ("red" if abs(change) >= 0.5 else "dim")
    return Text(f"{change:+.0f}%", style=style)


def status_text(summary: ArmSummary) -> Text:
    styles = {"completed": "green", "failed": "red", "cancelled": "yellow", "interrupted": "yellow", "running": "cyan"}
    return Text(summary.status, style=styles.get(summary.status, ""))


def passed_text(summary: ArmSummary) -> Text:
    if summary.passed is None:
        return Text("not graded", style="dim")
    return Text("passed", style="bold green") if summary.passed else Text("failed", style="bold red")


_Row = tuple[str, Callable[[ArmSummary], object], Callable[[ArmSummary], float | None] | None]
CACHED_ROW = "  of which cached"
"""Shown only when a provider reported cached input tokens."""
RETRIES_ROW = "provider retries"
"""Shown only when a request was tried again after a transient provider error."""
OPTIONAL_ROWS: dict[str, Callable[[ArmSummary], int]] = {
    CACHED_ROW: lambda s: s.cache_read_tokens,
    RETRIES_ROW: lambda s: s.retries,
}

ROWS: Sequence[_Row] = (
    ("status", status_text, None),
    ("grade", passed_text, None),
    ("requests", lambda s: f"{s.requests:,}", lambda s: s.requests),
    (RETRIES_ROW, lambda s: f"{s.retries:,}", None),
    ("input tokens", lambda s: f"{s.input_tokens:,}", lambda s: s.input_tokens),
    (CACHED_ROW, lambda s: f"{s.cache_read_tokens:,}", None),
    ("output tokens", lambda s: f"{s.output_tokens:,}", lambda s: s.output_tokens),
    ("tool calls", lambda s: f"{s.tool_calls:,}", None),
    ("inner calls", lambda s: f"{s.inner_calls:,}" if s.mode == "code" else "–", None),
    ("cost", lambda s: money(s.cost_usd), lambda s: s.cost_usd),
    ("wall time", lambda s: f"{s.wall_s:.2f} s", lambda s: s.wall_s),
    ("created / updated / deleted", lambda s: "{created} / {updated} / {deleted}".format(**s.diff), None),
)


_CONTROL = {code: f"\\x{code:02x}" for code in [*range(0x20), 0x7F, *range(0x80, 0xA0)] if chr(code) not in "\n\t"}


def shown(text: str) -> str:
    """``text`` with control characters made visible: a model's answer (or a prompt) holding terminal escape
    sequences must not clear the screen, retitle the window or recolour what follows."""
    return text.translate(_CONTROL)


def comparison_view(comparison: Comparison) -> RenderableType:
    arms = comparison.arms
    header = Text.assemble(
        ("session ", "dim"), (comparison.session_id, "bold"), ("  app ", "dim"), comparison.app,
        ("  items ", "dim"), str(comparison.items), ("  seed ", "dim"), str(comparison.seed),
        ("  model ", "dim"), comparison.model, ("  task ", "dim"), comparison.task or "–",
    )  # fmt: skip
    prompt = Text.assemble(
        ("prompt ", "dim"), shown(comparison.prompt if len(comparison.prompt) < 400 else comparison.prompt[:400] + "…")
    )
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    table.add_column("")
    for name in arms:
        table.add_column(ARM_TITLES.get(name, name), justify="right")
    both = "tool" in arms and "code" in arms
    if both:
        table.add_column("code vs tool", justify="right")
    for label, show, number in ROWS:
        optional = OPTIONAL_ROWS.get(label)
        if optional is not None and not any(optional(arm.summary) for arm in arms.values()):
            continue
        cells: list[RenderableType] = [Text(label, style="dim")]
        for arm in arms.values():
            value = show(arm.summary)
            cells.append(value if isinstance(value, Text) else Text(str(value)))
        if both:
            tool, code = arms["tool"].summary, arms["code"].summary
            cells.append(delta_text(number(code), number(tool)) if number else Text(""))
        table.add_row(*cells)
    parts: list[RenderableType] = [header, prompt, Text(""), table]
    for arm in arms.values():
        summary = arm.summary
        lines: list[RenderableType] = []
        title = ARM_TITLES.get(arm.name, arm.name)
        if summary.output:
            lines.append(Text.assemble((f"{title} answered: ", "dim"), shown(summary.output)))
        if summary.error:
            lines.append(Text.assemble((f"{title} error: ", "red"), shown(summary.error)))
        for mismatch in summary.mismatches[:8]:
            lines.append(Text(f"  ✗ {mismatch}", style="red"))
        if len(summary.mismatches) > 8:
            lines.append(Text(f"  … {len(summary.mismatches) - 8} more mismatches (see --json)", style="red"))
        parts.extend(lines)
    labels = {arm.summary.price_label for arm in arms.values() if arm.summary.price_label}
    if labels:
        parts.append(Text("cost: " + "; ".join(sorted(labels)), style="dim"))
    return Padding(Group(*parts), (0, 0))


def tasks_table(tasks: Sequence[Task]) -> Table:
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for column in ("task", "tier", "items", "prompt"):
        table.add_column(column, justify="right" if column == "items" else "left", overflow="fold")
    for task in tasks:
        items = ", ".join(map(str, task.sizes)) if task.sizes else str(task.items)
        table.add_row(task.id, task.tier, items, escape(task.prompt_for()))
    return table


def sessions_table(sessions: Sequence[SessionInfo]) -> Table:
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for column in ("session", "created", "app", "items", "model", "tool", "code", "prompt"):
        table.add_column(
            column, overflow="ellipsis", no_wrap=column != "prompt", max_width=60 if column == "prompt" else None
        )
    for info in sessions:
        cells = {arm.name: _arm_cell(arm.status, arm.passed, arm.cost_usd) for arm in info.arms}
        first_line = info.prompt.splitlines()[0] if info.prompt else ""
        table.add_row(
            info.id, info.created.astimezone().strftime("%Y-%m-%d %H:%M"), info.app, str(info.items), info.model,
            cells.get("tool", Text("–")), cells.get("code", Text("–")), escape(first_line),
        )  # fmt: skip
    return table


def _arm_cell(status: str, passed: bool | None, cost: float | None) -> Text:
    mark = {True: ("✓", "green"), False: ("✗", "red"), None: ("·", "dim")}[passed]
    return Text.assemble(
        (mark[0], mark[1]), " ", (status, "" if status == "completed" else "yellow"), " ", (money(cost), "dim")
    )
