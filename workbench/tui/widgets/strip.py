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

    def show(self, tool: ArmSummary | None, code: ArmSummary | None) -> None:
        self.tool, self.code = tool, code
        self.refresh()

    def render(self) -> Content:
        tool, code = self.tool, self.code
        if tool is None or code is None or not (tool.requests or code.requests):
            return Content.styled(
                "Code mode vs tool calling: cost, input tokens, wall time and requests appear here once both arms run.",
                "$text-muted",
            )
        running = "running" in (tool.status, code.status)
        parts: list[Content | tuple[str, str] | str] = [("Code mode vs tool calling", "bold")]
        unfinished = [
            f"{name} {summary.status}"
            for name, summary in (("tool calling", tool), ("code mode", code))
            if summary.status not in ("running", "completed")
        ]
        if running:
            parts.append((" (so far)  ", "$text-muted"))
        elif unfinished:
            parts.append((f" (partial: {', '.join(unfinished)})  ", "$text-warning"))
        else:
            parts.append(("  ", ""))
        for index, (label, number) in enumerate(METRICS):
            change = percent_change(_so_far(code, number), _so_far(tool, number))
            if index:
                parts.append(("  ·  ", "$text-muted"))
            parts.append((f"{label} ", "$text-muted"))
            parts.append(fmt.change_text(change))
            if change is not None and abs(change) >= 0.5:
                winner = "code" if change < 0 else "tool"
                parts.append((f" {winner} ✓", "bold $text-success" if winner == "code" else "bold $text-warning"))
        return Content.assemble(*parts)


def _so_far(summary: ArmSummary, number: Callable[[ArmSummary], float | None]) -> float | None:
    """A figure, or ``None`` while the arm runs and has not reported it yet (0 then is "not yet", not zero)."""
    value = number(summary)
    return None if summary.status == "running" and not value else value
