"""An arm's live figures: the counters folded by :class:`ArmSummary`, and its context size per request."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from workbench.display import WAITING, arm_cost, waiting
from workbench.summary import ArmSummary
from workbench.tui import format as fmt

BARS = " ▁▂▃▄▅▆▇█"
CODE_MODES = ("code", "hybrid")
"""Modes in which the model can write snippets, so an arm makes inner calls."""


class ArmCounters(Widget):
    """Requests, tokens (total, last request, output), calls, cost and wall time, in three aligned columns;
    provider retries too, once there are any; and a line of eager statements and speculated calls for an
    arm that has them."""

    DEFAULT_CSS = "ArmCounters { height: 3; text-wrap: nowrap; text-overflow: ellipsis; }"

    eager = reactive(False)
    """Whether the arm ran statements eagerly or speculated calls (a fourth line shows them)."""

    def __init__(self, summary: ArmSummary, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="counters")
        self.summary = summary
        self.elapsed_s = 0.0
        """Seconds the arm has been running by the clock (live) or the replay position."""

    def render(self) -> Content:
        summary = self.summary
        last = summary.input_tokens_per_request[-1] if summary.input_tokens_per_request else 0
        wall = live_wall_s(summary, self.elapsed_s)
        inner = fmt.count(summary.inner_calls) if summary.mode in CODE_MODES else "–"
        estimated = summary.tokens_estimated
        cells = [
            [("Requests", fmt.count(summary.requests)), ("Tool calls", fmt.count(summary.tool_calls)),
             ("Inner calls", inner)],
            [("Input tokens", fmt.count(summary.input_tokens, estimated)), ("Last request", fmt.count(last, estimated)),
             ("Output tokens", fmt.count(summary.output_tokens, estimated))],
            [("Cost", WAITING if waiting(summary) else arm_cost(summary)), ("Wall time", fmt.seconds(wall)),
             _last_counter(summary)],
        ]  # fmt: skip
        widths = [(max(len(label) for label, _ in column), max(len(value) for _, value in column)) for column in cells]
        if not summary.mode:  # nothing has run yet
            cells = [[(label, "–" if label else "") for label, _ in column] for column in cells]
            widths = [(width, 1) for width, _ in widths]
        # Columns two cells apart, one where the pane is narrower than that: a figure is never cut (no trailing
        # gap either, whose ellipsis would eat the last digit: "$0.0081…").
        needed = sum(label + 1 + value for label, value in widths) + 2 * (len(widths) - 1)
        gap = "  " if not self.size.width or needed <= self.size.width else " "
        lines = []
        for row in range(3):
            parts: list[tuple[str, str] | str] = []
            for index, (column, (label_width, value_width)) in enumerate(zip(cells, widths, strict=True)):
                label, value = column[row]
                if index:
                    parts.append(gap)
                parts.append((f"{label:<{label_width}} ", "$text-muted"))
                parts.append((f"{value:>{value_width}}", "bold"))
            lines.append(Content.assemble(*parts).rstrip())
        if eager_or_speculative(summary):
            lines.append(eager_line(summary))
        return Content("\n").join(lines)

    def watch_eager(self) -> None:
        self.styles.height = 4 if self.eager else 3

    def update(self) -> None:
        """Repaint with the summary's figures (a fourth line once there are eager or speculative ones)."""
        self.eager = eager_or_speculative(self.summary)
        self.refresh()


def live_wall_s(summary: ArmSummary, elapsed_s: float) -> float:
    """The wall time shown: while the arm runs, the clock (or replay position) less the time its requests
    waited for the workbench's own concurrency limit; once it ended, its summary's."""
    if summary.status != "running":
        return summary.wall_s
    return max(summary.wall_s, elapsed_s - summary.waited_s)


def _last_counter(summary: ArmSummary) -> tuple[str, str]:
    """Provider retries when there were any, else the time waited for the workbench's own limit, else nothing."""
    if summary.retries:
        return "Retries", fmt.count(summary.retries)
    if summary.waited_s > 0:
        return "Waited", fmt.seconds(summary.waited_s)
    return "", ""


def eager_or_speculative(summary: ArmSummary) -> bool:
    speculated = summary.speculation_launched + summary.speculation_missed
    return bool(summary.eager_statements or speculated)


def eager_line(summary: ArmSummary) -> Content:
    """``Eager 6 · Launched 20 · Claimed 15 · Missed 5 · Evicted 0 · Hid 22 ms``: statements run while the
    model wrote, and speculated calls."""
    figures = [
        ("Eager", fmt.count(summary.eager_statements), "bold"),
        ("Launched", fmt.count(summary.speculation_launched), "bold"),
        ("Claimed", fmt.count(summary.speculation_claimed), "bold $text-success"),
        ("Missed", fmt.count(summary.speculation_missed), "bold"),
        ("Evicted", fmt.count(summary.speculation_evicted), "bold"),
        (
            "Hid",
            fmt.duration(summary.speculation_hidden_ms) if summary.speculation_hidden_ms else "0 ms",
            "bold $text-success",
        ),
    ]
    parts: list[tuple[str, str]] = []
    for index, (label, value, style) in enumerate(figures):
        parts.extend([((" · " if index else "") + f"{label} ", "$text-muted"), (value, style)])
    return Content.assemble(*parts)


class ContextChart(Widget):
    """Input tokens of each request as bars, on a scale shared by all arms so their contexts compare."""

    DEFAULT_CSS = "ContextChart { height: 3; text-wrap: nowrap; text-overflow: ellipsis; }"

    scale = reactive(0)
    """The largest request of any arm: the full bar height."""

    def __init__(self, summary: ArmSummary, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="chart")
        self.summary = summary

    def render(self) -> Content:
        values = self.summary.input_tokens_per_request
        rows = max(1, self.size.height - 1)
        width = max(self.size.width, 10)
        label = Content.assemble(
            ("Input tokens per request  ", "$text-muted"),
            (f"last {fmt.compact(values[-1])} · peak {fmt.compact(max(values))}" if values else "–", "bold"),
        )
        note = Content.styled("  (one scale for all arms)", "$text-muted")
        if label.cell_length + note.cell_length <= width:  # the note only where it fits whole
            label += note
        step = 2 if len(values) * 2 <= width else 1
        shown = values[-(width // step) :] if values else []
        scale = max(self.scale, max(shown, default=0), 1)
        levels = [round(value / scale * rows * 8) for value in shown]
        bars = []
        for row in range(rows - 1, -1, -1):
            cells = []
            for level in levels:
                fill = min(max(level - row * 8, 0), 8)
                if row == 0 and fill == 0 and level == 0:
                    fill = 1
                cells.append(BARS[fill] + (" " if step == 2 else ""))
            bars.append(Content.styled("".join(cells), "$primary"))
        return Content("\n").join([label, *bars])
