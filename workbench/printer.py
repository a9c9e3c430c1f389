"""Rich renderings of comparisons, tasks and sessions for the command line."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from workbench.apps.names import APP_NAMES
from workbench.display import (
    CUT_AT_MAX_TOKENS,
    DEMO_NOTE,
    ESTIMATED_NOTE,
    arm_cost,
    arm_title,
    clipped_error,
    duration,
    is_demo,
    money,
    percent_change,
    status_words,
    tokens,
    turn_figures,
)
from workbench.display import sanitize as shown
from workbench.summary import ArmSummary
from workbench.turns import TurnRow, turn_rows
from workbench.verdict import (
    DIFFER,
    NOT_COMPARED,
    NOT_GRADED,
    VERDICT_MARKS,
    VERDICT_STYLES,
    VERDICT_WORDS,
    comparability,
    grade_note,
    session_comparability,
)

if TYPE_CHECKING:
    from workbench.apps import Task
    from workbench.session import Comparison
    from workbench.store import ArmListing, SessionInfo


def delta_text(
    value: float | None, baseline: float | None, *, lower_is_better: bool = True, judged: bool = True
) -> Text:
    """The change against the baseline arm in %, green where the arm did better and red where worse; plain when
    ``judged`` is False (the arms are not comparable, so no side is named better)."""
    change = percent_change(value, baseline)
    if change is None:
        return Text("–", style="dim")
    if not judged:
        return Text(f"{change:+.0f}%")
    better = change < 0 if lower_is_better else change > 0
    style = "green" if better and abs(change) >= 0.5 else ("red" if abs(change) >= 0.5 else "dim")
    return Text(f"{change:+.0f}%", style=style)


def status_text(summary: ArmSummary) -> Text:
    styles = {"completed": "green", "failed": "red", "cancelled": "yellow", "interrupted": "yellow", "running": "cyan"}
    words = status_words(summary)
    return Text(words, style="yellow" if words == CUT_AT_MAX_TOKENS else styles.get(summary.status, ""))


RICH_STYLES = {"success": "bold green", "error": "bold red", "accent": "bold cyan", "warning": "yellow", "muted": "dim"}
""":data:`~workbench.verdict.VERDICT_STYLES` as Rich styles."""


def passed_text(summary: ArmSummary) -> Text:
    """The grade row: ``✓ passed`` / ``✗ failed`` (an expectation), ``= arms agree`` / ``≠ arms differ``
    (the arms compared, no expectation), ``· not compared`` / ``· not graded`` (why is said below the table)."""
    verdict = summary.verdict
    if verdict == NOT_GRADED:
        stopped = summary.verdict_reason.startswith(NOT_COMPARED) or grade_note(summary.status, summary.wall_s)
        words = NOT_COMPARED if summary.verdict_reason.startswith(NOT_COMPARED) else VERDICT_WORDS[NOT_GRADED]
        return Text(f"{VERDICT_MARKS[verdict]} {words}", style="yellow" if stopped else "dim")
    return Text(f"{VERDICT_MARKS[verdict]} {VERDICT_WORDS[verdict]}", style=RICH_STYLES[VERDICT_STYLES[verdict]])


DIFF_ROW = "created / updated / deleted"
_Row = tuple[str, Callable[[ArmSummary], object], Callable[[ArmSummary], float | None] | None]
CACHED_ROW = "  of which cached"
"""Shown only when a provider reported cached input tokens."""
MALFORMED_ROW = "  of which not valid JSON"
"""Shown only when the model wrote a call's arguments as broken JSON."""
WAITED_ROW = "waited"
"""Time requests waited for the workbench's own concurrency limit, left out of wall time; shown only when any did."""
RETRIES_ROW = "provider retries"
"""Shown only when a request was tried again after a transient provider error."""
EAGER_ROW = "eager statements"
"""Statements run while the model still wrote their snippet; shown only when an arm ran any."""
SPECULATION_ROW = "speculation l/c/m/e"
"""Speculative calls launched / claimed / missed / evicted; shown only when an arm had any."""
HIDDEN_ROW = "latency hidden"
"""Time claimed speculative calls had already run when the snippet asked for them."""
OPTIONAL_ROWS: dict[str, Callable[[ArmSummary], int]] = {
    CACHED_ROW: lambda s: s.cache_read_tokens,
    RETRIES_ROW: lambda s: s.retries,
    WAITED_ROW: lambda s: s.waited_s > 0,
    EAGER_ROW: lambda s: s.eager_statements,
    SPECULATION_ROW: lambda s: s.speculation_launched + s.speculation_missed,
    HIDDEN_ROW: lambda s: s.speculation_claimed,
    MALFORMED_ROW: lambda s: s.malformed_calls,
}

ROWS: Sequence[_Row] = (
    ("status", status_text, None),
    ("grade", passed_text, None),
    ("requests", lambda s: f"{s.requests:,}", lambda s: s.requests),
    (RETRIES_ROW, lambda s: f"{s.retries:,}", None),
    ("input tokens", lambda s: tokens(s.input_tokens, s.tokens_estimated), lambda s: s.input_tokens),
    (CACHED_ROW, lambda s: f"{s.cache_read_tokens:,}", None),
    ("output tokens", lambda s: tokens(s.output_tokens, s.tokens_estimated), lambda s: s.output_tokens),
    ("tool calls", lambda s: f"{s.tool_calls:,}", None),
    (MALFORMED_ROW, lambda s: f"{s.malformed_calls:,}", None),
    ("inner calls", lambda s: f"{s.inner_calls:,}" if s.sandboxed else "–", None),
    (EAGER_ROW, lambda s: f"{s.eager_statements:,}" if s.eager_statements else "–", None),
    (SPECULATION_ROW, lambda s: _speculation(s), None),
    (HIDDEN_ROW, lambda s: duration(s.speculation_hidden_ms) if s.speculation_claimed else "–", None),
    ("cost", arm_cost, lambda s: s.cost_usd),
    ("wall time", lambda s: f"{s.wall_s:.2f} s", lambda s: round(s.wall_s, 2)),  # vs the figure shown: 0.00 s, none
    (WAITED_ROW, lambda s: f"{s.waited_s:.2f} s" if s.waited_s else "–", None),
    (DIFF_ROW, lambda s: "{created} / {updated} / {deleted}".format(**s.diff), None),
)


def comparison_view(comparison: Comparison) -> RenderableType:
    arms = comparison.arms
    seeded = ("  items ", "dim"), str(comparison.items), ("  seed ", "dim"), str(comparison.seed)
    header = Text.assemble(
        ("session ", "dim"), (comparison.session_id, "bold"), ("  app ", "dim"), comparison.app,
        *(seeded if comparison.items else ()),  # an app of the user's own is not seeded
        ("  model ", "dim"), comparison.model, ("  task ", "dim"), comparison.task or "–",
    )  # fmt: skip
    rows = turn_rows([arm.summary for arm in arms.values()])
    prompt = Text.assemble(("prompt ", "dim"), _clip_prompt(comparison.prompt))
    table = FiguresTable(comparison)
    parts: list[RenderableType] = [header, prompt if not rows else turns_table(rows, list(arms)), Text(""), table]
    verdict = session_comparability([arm.summary for arm in arms.values()])
    if verdict.note:
        parts.append(Text(verdict.note, style="yellow"))
    for arm in arms.values():
        summary = arm.summary
        lines: list[RenderableType] = []
        title = arm_title(arm.name)
        if summary.output:
            cut = (f" ({CUT_AT_MAX_TOKENS})", "yellow") if summary.cut_at_max_tokens else ""
            which = f" turn {len(summary.turns)}" if summary.turns else ""
            lines.append(Text.assemble((f"{title} answered{which}", "dim"), cut, (": ", "dim"), shown(summary.output)))
        if summary.error:
            lines.append(Text.assemble((f"{title} error: ", "red"), shown(clipped_error(summary.error))))
        if summary.verdict_reason.startswith(NOT_COMPARED):
            lines.append(Text(f"{title}: {summary.verdict_reason}", style="yellow"))
        mark, style, what = ("≠", "yellow", "differences") if summary.verdict == DIFFER else ("✗", "red", "mismatches")
        for mismatch in summary.mismatches[:8]:
            lines.append(Text(f"  {mark} {mismatch}", style=style))
        if len(summary.mismatches) > 8:
            lines.append(Text(f"  … {len(summary.mismatches) - 8} more {what} (see --json)", style=style))
        parts.extend(lines)
    tools = tools_line([arm.summary for arm in arms.values()])
    if tools:
        parts.append(Text(tools, style="dim"))
    labels = {arm.summary.price_label for arm in arms.values() if arm.summary.price_label}
    if labels:
        parts.append(Text("cost: " + "; ".join(sorted(labels)), style="dim"))
    if any(arm.summary.tokens_estimated for arm in arms.values()):
        parts.append(Text(ESTIMATED_NOTE, style="dim"))
    if is_demo(comparison.model):
        parts.append(Text(DEMO_NOTE.format(what="this session"), style="yellow"))
    return Group(*parts)


def _clip_prompt(prompt: str) -> str:
    return shown(prompt if len(prompt) < 400 else prompt[:400] + "…")


def turns_table(rows: Sequence[TurnRow], arms: Sequence[str]) -> Table:
    """A conversation's turns: each prompt, and each arm's figures for that turn."""
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="dim")
    table.add_column("turn", justify="right", style="dim")
    table.add_column("prompt", overflow="fold", ratio=2)
    for name in arms:
        table.add_column(arm_title(name), overflow="fold", ratio=1)
    for row in rows:
        table.add_row(str(row.turn), _clip_prompt(row.prompt), *(turn_figures(row.arms.get(name)) for name in arms))
    return table


def tools_line(summaries: Sequence[ArmSummary]) -> str:
    """``tools: 9, 4 read-only (list_cart_items, get_cart_item, ...)`` for the app the arms got ("" when none)."""
    got = next((summary for summary in summaries if summary.app_tools), None)
    if got is None:
        return ""
    read_only = [name for name in got.app_tools if name in set(got.read_only_tools)]
    marks = f"{len(read_only)} read-only ({', '.join(read_only)})" if read_only else "none marked read-only"
    return shown(f"tools: {len(got.app_tools)}, {marks}")


class FiguresTable:
    """The figures of every arm, row by row, with each arm's change against the first arm.

    Laid out for the width it is given: one column per arm plus a "vs" column after each arm but the first where
    that fits, else (four arms at 80 columns) the change sits in the arm's own column under its figure, so no
    figure is ever cut to an ellipsis.
    """

    def __init__(self, comparison: Comparison) -> None:
        self.arms = comparison.arms

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        unbounded = options.update(width=10_000)
        for layout in (self.table(separate=True), self.table(separate=False)):
            if Measurement.get(console, unbounded, layout).minimum <= options.max_width:
                yield layout
                return
        yield self.table(separate=False, whole=False)  # narrower still: Rich folds the figures

    def table(self, *, separate: bool, whole: bool = True) -> Table:
        arms = self.arms
        baseline = next(iter(arms.values()), None)
        many = len(arms) > 2
        table = Table(show_edge=False, pad_edge=False, header_style="bold")
        table.add_column("", min_width=12)
        for index, name in enumerate(arms):
            title = name if many else arm_title(name)
            if separate or not index:
                table.add_column(title, justify="right", no_wrap=whole and not separate)
            else:
                header = Text.assemble(title, ("\nvs " + baseline.name, "dim"))
                table.add_column(header, justify="right", no_wrap=whole)
            if separate and index and baseline is not None:
                table.add_column(f"vs {baseline.name}" if many else f"{name} vs {baseline.name}", justify="right")
        judged = {
            name: baseline is not None and bool(comparability(baseline.summary, arm.summary))
            for name, arm in arms.items()
        }
        for label, show, number in ROWS:
            optional = OPTIONAL_ROWS.get(label)
            if optional is not None and not any(optional(arm.summary) for arm in arms.values()):
                continue
            cells: list[RenderableType] = [Text(label, style="dim")]
            for index, arm in enumerate(arms.values()):
                value = show(arm.summary)
                cell = value if isinstance(value, Text) else Text(str(value))
                delta = None
                if index and baseline is not None and number is not None:
                    delta = delta_text(number(arm.summary), number(baseline.summary), judged=judged[arm.name])
                if separate:
                    cells.append(cell)
                    if index and baseline is not None:
                        cells.append(delta or Text(""))
                else:
                    cells.append(Text.assemble(cell, "\n", delta) if delta is not None else cell)
            table.add_row(*cells)
        return table


def _speculation(summary: ArmSummary) -> str:
    if not (summary.speculation_launched or summary.speculation_missed):
        return "–"
    return (
        f"{summary.speculation_launched}/{summary.speculation_claimed}/{summary.speculation_missed}/"
        f"{summary.speculation_evicted}"
    )


def tasks_table(tasks: Sequence[Task]) -> Table:
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for column in ("task", "tier", "items", "prompt"):
        table.add_column(column, justify="right" if column == "items" else "left", overflow="fold")
    for task in tasks:
        items = ", ".join(map(str, task.sizes)) if task.sizes else str(task.items)
        table.add_row(task.id, task.tier, items, escape(task.prompt_for()))
    return table


SESSION_COLUMNS_DROPPED = ("model", "items", "app", "cost vs 1st", "date", "arms")
"""Columns given up, in this order, when the terminal is too narrow for them and a readable prompt (``arms``:
the arms' columns become one of marks, ``✓✓✗✓``)."""
PROMPT_LEAST = 16
PROMPT_SHORTEST = 6
ARMS_COLUMN = "arms"


def sessions_table(sessions: Sequence[SessionInfo], width: int = 120) -> Table:
    """Newest first, fitted to ``width`` columns. The id is never cut (it is what ``show`` and ``replay``
    take); the prompt takes the width that is left, and narrow terminals give up the least useful columns.
    ``items`` is a dash for an app of the user's own (nothing is seeded). ``cost vs 1st``: the second arm's cost
    against the first's, marked ``partial`` when the arms are not comparable; where that column is given up,
    the prompt carries the mark."""
    arm_names = list(dict.fromkeys(arm.name for info in sessions for arm in info.arms))
    rows = []
    partial = [not session_comparability(info.arms) for info in sessions]
    for info in sessions:
        cells = {arm.name: _arm_cell(arm.status, arm.passed, arm.cost_usd) for arm in info.arms}
        first_line = info.prompt.splitlines()[0] if info.prompt else ""
        rows.append(
            {
                "session": Text(info.id),
                "created": Text(info.created.astimezone().strftime("%Y-%m-%d %H:%M")),
                "app": Text(info.app),
                "items": Text(str(info.items) if info.app in APP_NAMES else "–", justify="right"),
                "model": Text(info.model),
                **{name: cells.get(name, Text("–")) for name in arm_names},
                ARMS_COLUMN: Text.assemble(*(_arm_mark(arm.passed) for arm in info.arms)),
                "cost vs 1st": _versus_cell(info.arms),
                "prompt": Text(first_line),
            }
        )
    names = ["session", "created", "app", "items", "model", *arm_names, "cost vs 1st", "prompt"]
    widths = {name: max([len(name), *(row[name].cell_len for row in rows)]) for name in [*names, ARMS_COLUMN]}
    widths["model"] = min(widths["model"], 24)

    def used() -> int:
        return sum(widths[name] for name in names if name != "prompt") + 3 * (len(names) - 1)

    for dropped in SESSION_COLUMNS_DROPPED:
        if width - used() >= PROMPT_LEAST:
            break
        if dropped == "date":  # the year and the separator go: 12-01 09:38
            widths["created"] = 11
            for row in rows:
                row["created"] = Text(row["created"].plain[5:])
        elif dropped == ARMS_COLUMN:
            at = names.index(arm_names[0]) if arm_names else len(names) - 1
            names[at : at + len(arm_names)] = [ARMS_COLUMN]
        else:
            names.remove(dropped)
    if "cost vs 1st" not in names:
        for row, marked in zip(rows, partial, strict=True):
            if marked:
                row["prompt"] = Text.assemble(("partial ", "yellow"), row["prompt"])
    widths["prompt"] = max(min(widths["prompt"], width - used()), PROMPT_SHORTEST)
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for name in names:
        least = widths[name] if name == "session" else None
        table.add_column(name, width=widths[name], min_width=least, no_wrap=True, overflow="ellipsis")
    for row in rows:
        table.add_row(*(row[name] for name in names))
    return table


def _arm_mark(passed: bool | None) -> tuple[str, str]:
    return {True: ("✓", "green"), False: ("✗", "red"), None: ("·", "dim")}[passed]


def _arm_cell(status: str, passed: bool | None, cost: float | None) -> Text:
    """``✓ $0.0081``; a status other than completed is named: ``· cancelled $0.0002``."""
    mark = _arm_mark(passed)
    named = "" if status == "completed" else f"{status} "
    return Text.assemble((mark[0], mark[1]), " ", (named, "yellow"), (money(cost), "dim"))


def _versus_cell(arms: Sequence[ArmListing]) -> Text:
    """The second arm's cost against the first's, marked ``partial`` (no colour, no better side) when the
    session's arms are not comparable."""
    if len(arms) < 2:
        return Text("–", style="dim")
    baseline, arm = arms[0], arms[1]
    comparable = bool(session_comparability(arms))
    cell = delta_text(arm.cost_usd, baseline.cost_usd, judged=comparable)
    return cell if comparable else Text.assemble(cell, (" partial", "yellow"))
