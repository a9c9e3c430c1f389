"""The comparison strip: code mode vs tool calling in %, with the better arm marked."""

from __future__ import annotations

from collections.abc import Callable

from textual.content import Content
from textual.widget import Widget

from workbench.summary import ArmSummary, percent_change
from workbench.tui import format as fmt

METRICS: tuple[tuple[str, Callable[[ArmSummary], float | None]], ...] = (
    ("cost", lambda summary: summary.cost_usd),
    ("input tokens", lambda summary: summary.input_tokens),
    ("wall time", lambda summary: summary.wall_s),
    ("requests", lambda summary: summary.requests),
)


class ComparisonStrip(Widget):
    """``code vs tool  cost -86% code  ·  input tokens -88% code  ·  wall time +27% tool  ·  …``."""

    DEFAULT_CSS = "ComparisonStrip { height: auto; text-wrap: nowrap; text-overflow: ellipsis; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tool: ArmSummary | None = None
        self.code: ArmSummary | None = None
        self._height = 0

    def show(self, tool: ArmSummary | None, code: ArmSummary | None) -> None:
        self.tool, self.code = tool, code
        self._fit()
        self.refresh()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """An explicit height of as many lines as the strip takes at this width (set only when it changes)."""
        if self.size.width:
            height = len(self._lines(self.size.width))
            if height != self._height:
                self._height = height
                self.styles.height = height + self.styles.gutter.height  # the height includes the padding

    def render(self) -> Content:
        return Content("\n").join(self._lines(self.size.width))

    def _lines(self, width: int) -> list[Content]:
        """The strip in as few lines as fit ``width``, wrapped between figures, never inside one."""
        title, *figures = self._units()
        separator = Content.styled("  ·  ", "$text-muted")
        lines = [[title]]
        length = title.cell_length
        for figure in figures:
            joint = Content("  ") if lines[-1][-1] is title else separator
            if width and length + joint.cell_length + figure.cell_length > width:
                lines.append([figure])
                length = figure.cell_length
            else:
                lines[-1].extend([joint, figure])
                length += joint.cell_length + figure.cell_length
        return [Content.assemble(*line) for line in lines]

    def _units(self) -> list[Content]:
        tool, code = self.tool, self.code
        if tool is None or code is None or not (tool.requests or code.requests):
            return [
                Content.styled(
                    "Code mode vs tool calling: cost, input tokens, wall time and requests appear here once both "
                    "arms run.",
                    "$text-muted",
                )
            ]
        running = "running" in (tool.status, code.status)
        unfinished = [
            f"{name} {summary.status}"
            for name, summary in (("tool calling", tool), ("code mode", code))
            if summary.status not in ("running", "completed")
        ]
        title = Content.styled("Code mode vs tool calling", "bold")
        if running:
            title += Content.styled(" (so far)", "$text-muted")
        elif unfinished:
            title += Content.styled(f" (partial: {', '.join(unfinished)})", "$text-warning")
        units = [title]
        for label, number in METRICS:
            if label == "wall time" and running:
                units.append(_wall_time_so_far(tool, code))
                continue
            change = percent_change(_so_far(code, number), _so_far(tool, number))
            parts: list[Content | tuple[str, str] | str] = [(f"{label} ", "$text-muted"), fmt.change_text(change)]
            if change is not None and abs(change) >= 0.5:
                parts.append(_winner_mark("code" if change < 0 else "tool"))
            units.append(Content.assemble(*parts))
        return units


def _wall_time_so_far(tool: ArmSummary, code: ArmSummary) -> Content:
    """While an arm runs, its wall time is only known to be at least its latest event's time. Once the other
    arm has ended sooner than that, it is faster whatever happens next: say so, with the change as a bound
    (``≤-57%``). Otherwise the verdict waits for both to end."""
    done = [summary for summary in (tool, code) if summary.status != "running"]
    if len(done) == 1:
        finished = done[0]
        still = code if finished is tool else tool
        if finished.wall_s < still.wall_s:
            change = percent_change(code.wall_s, tool.wall_s)
            bound = ("≤", "$text-success") if finished is code else ("≥", "$text-error")
            return Content.assemble(
                ("wall time ", "$text-muted"), bound, fmt.change_text(change), _winner_mark(finished.name)
            )
    return Content.styled("wall time when both end", "$text-muted")


def _winner_mark(winner: str) -> tuple[str, str]:
    """`` code ✓`` in the success colour, or `` tool ✓`` in the warning colour."""
    return f" {winner} ✓", "bold $text-success" if winner == "code" else "bold $text-warning"


def _so_far(summary: ArmSummary, number: Callable[[ArmSummary], float | None]) -> float | None:
    """A figure, or ``None`` while the arm runs and has not reported it yet (0 then is "not yet", not zero)."""
    value = number(summary)
    return None if summary.status == "running" and not value else value
