"""Short, display-safe renderings of figures, arguments and text for the TUI's widgets.

Styles are theme variables (``$success``, ``$text-muted``) so every built-in theme colours them.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.content import Content

from workbench.display import CUT_AT_MAX_TOKENS, clip_tail, money, sanitize, tokens
from workbench.display import clipped as clipped  # re-exported: the widgets write fmt.clipped, fmt.size, fmt.duration
from workbench.display import duration as duration
from workbench.display import size as size

OUTCOME_MARKS = {
    "ok": ("✓", "$text-success"),
    "retried": ("↻", "$text-error"),
    "failed": ("✗", "$text-error"),
    "denied": ("⊘", "$text-error"),
    None: ("○", "$text-muted"),
}
"""Mark and style per call outcome; ``None`` is a call still running."""

STATUS_STYLES = {
    "idle": "$text-muted",
    "running": "$text-accent",
    "completed": "$text-success",
    CUT_AT_MAX_TOKENS: "$text-warning",
    "failed": "$text-error",
    "cancelled": "$text-warning",
    "interrupted": "$text-warning",
}


def cell(text: str) -> Text:
    """A table cell shown as written. DataTable reads ``str`` cells as Rich markup, so a prompt, a model name
    or a model-made tool name holding ``[/b]`` would fail to render (and ``[red]`` would colour it). A Rich
    ``Text`` is taken literally and, unlike ``Content``, sizes its column like a ``str`` does."""
    return Text(safe(text), end="")


def safe(text: str) -> str:
    """Text without control or bidi-override characters, which would break a terminal layout
    (:func:`workbench.display.sanitize`, the one rule)."""
    return sanitize(text)


def one_line(text: str, limit: int = 200) -> str:
    """The text on one line (whitespace collapsed), cut at ``limit`` characters."""
    return clip_tail(" ".join(safe(text).split()), limit)


def count(value: int, estimated: bool = False) -> str:
    """A count; a token count the workbench estimated (no usage reported) is marked ``~``."""
    return tokens(value, estimated)


def compact(value: float) -> str:
    """12,345 -> "12.3k"; for axis labels and tight spots."""
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{value / 1_000:.0f}k"
    if value >= 1_000:
        return f"{value / 1_000:.1f}k"
    return f"{value:.0f}"


def seconds(value: float) -> str:
    return f"{value:.2f} s" if value < 60 else f"{int(value // 60)}m {value % 60:04.1f}s"


def line_count(code: str) -> int:
    """Lines of a snippet as the inspector numbers them (a final newline starts no line of its own)."""
    return code.rstrip("\n").count("\n") + 1 if code else 0


def cost(value: float | None) -> str:
    return money(value)


def value_text(value: Any, limit: int = 40) -> str:
    """One value as the model would write it, cut to ``limit`` characters."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return one_line(text, limit)


def short_args(args: dict[str, Any] | str, limit: int = 60) -> str:
    """``event_id="evt-0001", room="Cedar"``: call arguments on one line, the ones given a value only (a snippet's
    call passes every parameter, unset ones as ``None``; a tool call names only what the model set)."""
    if isinstance(args, str):
        return one_line(args, limit)
    parts = ", ".join(f"{name}={value_text(value, 30)}" for name, value in args.items() if value is not None)
    return one_line(parts, limit)


def pretty(value: Any) -> str:
    """Arguments or a result for a full view: JSON text indented when it parses, else as given."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return safe(value)
    return safe(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def outcome_mark(outcome: str | None) -> Content:
    mark, style = OUTCOME_MARKS.get(outcome, OUTCOME_MARKS[None])
    return Content.styled(mark, style)


def status_badge(status: str) -> Content:
    return Content.styled(status, f"bold {STATUS_STYLES.get(status, '')}")


def change_text(change: float | None, *, lower_is_better: bool = True) -> Content:
    """``-86%`` in the success colour when code mode did better, the error colour when worse."""
    if change is None:
        return Content.styled("–", "$text-muted")
    if abs(change) < 0.5:
        return Content.styled("±0%", "$text-muted")
    better = change < 0 if lower_is_better else change > 0
    return Content.styled(f"{change:+.0f}%", "$text-success" if better else "$text-error")
