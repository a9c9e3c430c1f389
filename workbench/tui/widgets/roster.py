"""One line per arm: what stays visible of every arm when only one pane fits the terminal.

``▶ 1 Tool calling  completed  passed  12 req · 45.2k in · $0.0123 · 3.41 s``: the expanded arm is
marked; a click (or the screen's next-arm key) expands another.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.events import Click
from textual.message import Message
from textual.widget import Widget

from workbench.display import WAITING, arm_title, status_words, waiting
from workbench.summary import ArmSummary
from workbench.tui import format as fmt
from workbench.verdict import AGREE, DIFFER, NOT_GRADED, VERDICT_STYLES, VERDICT_WORDS


def arm_status(summary: ArmSummary, started: bool) -> str:
    """``idle`` before the arm started; ``cut at max_tokens`` for a completed arm whose answer was truncated."""
    return status_words(summary) if started else "idle"


def verdict_content(verdict: str) -> Content:
    """``passed`` / ``failed``, ``= agree`` / ``≠ differ`` (no check mark for agreement), each in its colour."""
    words = {AGREE: "= agree", DIFFER: "≠ differ"}.get(verdict, VERDICT_WORDS.get(verdict, verdict))
    return Content.styled(words, f"bold $text-{VERDICT_STYLES.get(verdict, 'muted')}")


def grade_text(summary: ArmSummary) -> Content:
    if summary.verdict == NOT_GRADED:
        return Content("")
    return verdict_content(summary.verdict)


def main_counters(summary: ArmSummary, wall_s: float, *, tokens: bool = True) -> str:
    """``12 req · 45.2k in · $0.0123 · 3.41 s`` (a dash before the arm has started, ``waiting · 1.20 s`` while
    its first request is in flight); ``tokens=False`` leaves out the input tokens, for a narrow line."""
    if not summary.mode:
        return "–"
    if waiting(summary):
        return f"{WAITING} · {fmt.seconds(wall_s)}"
    parts = [f"{fmt.count(summary.requests)} req", f"{fmt.compact(summary.input_tokens)} in"]
    return " · ".join([*parts[: 2 if tokens else 1], fmt.cost(summary.cost_usd), fmt.seconds(wall_s)])


class ArmRoster(Widget):
    """Every arm on a line of its own, the expanded one marked."""

    DEFAULT_CSS = "ArmRoster { height: auto; text-wrap: nowrap; text-overflow: ellipsis; }"

    class Picked(Message):
        """An arm's line was clicked: expand that arm."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[tuple[str, ArmSummary, bool, float]] = []
        """(name, summary, started, wall seconds shown) of each arm, in order."""
        self.expanded = 0

    def show(self, rows: Sequence[tuple[str, ArmSummary, bool, float]], expanded: int) -> None:
        height_changed = len(rows) != len(self.rows)
        self.rows, self.expanded = list(rows), expanded
        self.styles.height = len(self.rows) if height_changed else self.styles.height
        self.refresh(layout=height_changed)

    def render(self) -> Content:
        titles = [arm_title(name, summary.mode) for name, summary, _, _ in self.rows]
        title_width = min(max((len(title) for title in titles), default=0), 28)
        statuses = [arm_status(summary, started) for _, summary, started, _ in self.rows]
        status_width = max((len(status) for status in statuses), default=0)
        grade_width = max([len("passed"), *(grade_text(summary).cell_length for _, summary, _, _ in self.rows)])
        lines = []
        for index, ((_, summary, _, wall), title, status) in enumerate(zip(self.rows, titles, statuses, strict=True)):
            chosen = index == self.expanded
            head = Content.assemble(
                ("▶ " if chosen else "  ", "bold $text-primary"),
                (f"{index + 1} ", "$text-muted"),
                (fmt.one_line(title, title_width).ljust(title_width), "bold" if chosen else ""),
                "  ",
                fmt.status_badge(status).pad_right(status_width - len(status)),
                "  ",
                grade_text(summary).pad_right(grade_width - grade_text(summary).cell_length),
                "  ",
            )
            counters = main_counters(summary, wall)
            if head.cell_length + len(counters) > self.size.width:
                counters = main_counters(summary, wall, tokens=False)
            lines.append(head + Content.styled(counters, "$text-muted"))
        return Content("\n").join(lines)

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is not None and 0 <= offset.y < len(self.rows):
            event.stop()
            self.post_message(self.Picked(offset.y))
