"""How the workbench writes a figure, a name or a piece of text for a person, the same in every view: the CLI
printer, the TUI, the exports (Markdown, CSV, HTML) and the reports.

Plain strings only (no Rich, no Textual): each view styles them its own way.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import TYPE_CHECKING

from workbench.arm_spec import PRESETS

if TYPE_CHECKING:
    from workbench.events import ProviderRetry
    from workbench.summary import ArmSummary
    from workbench.timeline_records import SnippetRecord
    from workbench.turns import TurnFigures

ESTIMATED = "~"
"""Marks a figure counted by the workbench because the provider reported no usage."""
ESTIMATED_NOTE = (
    "~ estimated: the server reported no token usage, so these are the workbench's own o200k count of each "
    "request and response (cost priced from that count)"
)
CUT_AT_MAX_TOKENS = "cut at max_tokens"
"""An arm whose last response ended at the request's max_tokens (finish reason ``length``): its answer is
truncated, whatever its status says."""
ERROR_SHOWN_CHARS = 600
"""Longest error a view shows; the stored session keeps it whole (``show ID --json``)."""
MODE_TITLES = {"tool": "Tool calling", "code": "Code mode", "hybrid": "Hybrid"}
"""How a mode is named where an arm of another name runs it (``small-code · Code mode``)."""
DEMO_MODELS = ("scripted",)
"""Models whose figures are a demonstration: the scripted model plays the built-in tasks by construction."""
DEMO_LABEL = "demonstration figures"
"""How every view marks a session or sweep of a demonstration model (:func:`is_demo`)."""
DEMO_WHY = (
    "{what} ran on the scripted model, which plays the built-in tasks by construction; "
    "they show each arm's mechanics, not how a real model succeeds."
)
"""Why a demonstration's figures say nothing of success (after :data:`DEMO_LABEL` where a view shows both)."""
DEMO_NOTE = f"{DEMO_LABEL.capitalize()}: {DEMO_WHY}"


def is_demo(model: str) -> bool:
    """Whether a model, or a label of several (``tool=scripted | code=scripted``, ``scripted / scripted:paced``),
    is a demonstration model throughout: the one test every view asks before it shows :data:`DEMO_LABEL`."""
    specs = [part.strip() for chunk in model.split(" | ") for part in chunk.split(" / ")]
    specs = [spec.split("=", 1)[1] if "=" in spec.split(":", 1)[0] else spec for spec in specs]
    return bool(model.strip()) and all(spec.split(":", 1)[0].strip() in DEMO_MODELS for spec in specs)


def money(value: float | None, *, unknown: str = "cost unknown") -> str:
    """``$0.0115`` under a dollar, ``$1,234.56`` from a dollar up; ``unknown`` when no price is known."""
    if value is None:
        return unknown
    return f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"


def percent_change(value: float | None, baseline: float | None) -> float | None:
    """``value`` vs ``baseline`` in % (negative: less than the baseline); ``None`` when undefined."""
    if value is None or baseline is None or baseline == 0:
        return None
    return (value - baseline) / baseline * 100


def tokens(value: int, estimated: bool = False) -> str:
    """A token count, marked ``~`` when estimated."""
    return f"{ESTIMATED if estimated else ''}{value:,}"


def arm_cost(summary: ArmSummary) -> str:
    """An arm's cost: "cost unknown" when unpriced, marked ``~`` when priced from estimated tokens."""
    if summary.cost_usd is None:
        return money(None)
    return f"{ESTIMATED if summary.tokens_estimated else ''}{money(summary.cost_usd)}"


def turn_figures(figures: TurnFigures | None) -> str:
    """One arm's figures for one turn of a conversation: ``4 requests · 9,980 in / 397 out · $0.0033 · 0.37 s``,
    led by the turn's status when it did not complete; ``not reached`` for a turn the arm never began."""
    if figures is None:
        return "not reached"
    requests = f"{figures.requests:,} request{'' if figures.requests == 1 else 's'}"
    parts = [requests, f"{figures.input_tokens:,} in / {figures.output_tokens:,} out"]
    parts += [money(figures.cost_usd), f"{figures.wall_s:.2f} s"]
    status = "" if figures.status == "completed" else f"{figures.status}: "
    return status + " · ".join(parts)


WAITING = "waiting"
"""An arm whose first request is in flight: no figure of it is known yet (not ``0 in · cost unknown``)."""


def waiting(summary: ArmSummary) -> bool:
    """The arm runs and no response of it has reported yet."""
    return summary.status == "running" and bool(summary.mode) and not summary.input_tokens_per_request


def status_words(summary: ArmSummary) -> str:
    """An arm's status as shown: ``cut at max_tokens`` for a completed arm whose answer was truncated."""
    return CUT_AT_MAX_TOKENS if summary.status == "completed" and summary.cut_at_max_tokens else summary.status


def arm_title(name: str, mode: str | None = None) -> str:
    """How every view names an arm: a built-in arm by its title (``Tool calling``, ``Code mode``, ``Code mode,
    eager``), any other arm by its name and its mode's title (``small-code · Code mode``), or its name alone
    while its mode is not known."""
    preset = PRESETS.get(name)
    if preset is not None and preset.title and mode in (None, "", preset.mode):
        return preset.title
    title = MODE_TITLES.get(mode or "")
    if title is None:
        return name
    return title if name == mode else f"{name} · {title}"


_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def sanitize(text: str) -> str:
    """Text safe to print to a terminal: no control characters (a model's answer or a prompt holding escape
    sequences must not clear the screen, retitle the window or recolour what follows; ESC shows as ``␛``,
    the others as U+FFFD) and no bidi overrides (which would reorder what follows them). Newlines and tabs
    stay."""
    return _UNSAFE.sub(lambda match: _visible(match.group()), text)


def _visible(char: str) -> str:
    if char == "\x1b":
        return "␛"
    if unicodedata.category(char) == "Cf":
        return ""
    return "\N{REPLACEMENT CHARACTER}"


def clip_tail(text: str, limit: int, *, more: str | None = None) -> str:
    """``text`` cut after ``limit`` characters. Without ``more``, the cut ends in ``…`` within ``limit``
    characters; with it, ``… [N more characters<more>]`` follows the first ``limit``."""
    if len(text) <= limit:
        return text
    if more is None:
        return text[: max(limit - 1, 0)] + "…"
    return f"{text[:limit]}… [{len(text) - limit:,} more characters{more}]"


def clip_middle(text: str, limit: int) -> str:
    """``text``, or its head and tail when longer than ``limit`` (an exception is at the end of a long
    output, what it was doing at the start)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - 2 * half:,} characters not kept] …\n{text[-half:]}"


def size(num_bytes: int) -> str:
    """``812 B``, ``3.4 KB``, ``95.4 MB``."""
    if num_bytes < 1024:
        return f"{num_bytes} B"
    if num_bytes < 1024 * 1024:
        return f"{num_bytes / 1024:.1f} KB"
    return f"{num_bytes / 1024 / 1024:.1f} MB"


def clipped(result_bytes: int, clipped_from: int | None) -> str:
    """How a result over the result limit was cut, e.g. ``clipped: 95.4 MB → 1.0 MB`` (empty when it was not)."""
    return f"clipped: {size(clipped_from)} → {size(result_bytes)}" if clipped_from is not None else ""


def retried(retry: ProviderRetry) -> str:
    """A model request tried again, e.g. ``provider retry 1 of 4 after HTTP 503: overloaded; waited 0.5 s``."""
    return f"provider retry {retry.attempt} of {retry.attempts} after {retry.error}; waited {retry.wait_s:.1f} s"


def duration(ms: float | None) -> str:
    """A short span of time for every view: ``<0.1 ms``, ``3.5 ms``, ``42 ms``, ``1.25 s`` (empty: unknown).
    Small values stay visible: a 3.5 ms hidden latency is not "0.00 s"."""
    if ms is None:
        return ""
    if ms < 0.1:
        return "<0.1 ms"
    if ms < 10:
        return f"{ms:.1f} ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.2f} s"


def speculated(record: SnippetRecord) -> str:
    """What speculation did for one snippet, e.g. ``speculated calls: 1 claimed, 2 evicted · hid 3.5 ms``
    (empty when it launched none)."""
    counts = record.speculation_counts()
    if not counts:
        return ""
    hidden = sum(speculation.hidden_ms or 0.0 for speculation in record.speculations.values())
    phases = ", ".join(f"{count:,} {phase}" for phase, count in counts.items())
    return f"speculated calls: {phases}" + (f" · hid {duration(hidden)}" if hidden else "")


def clipped_error(error: str, limit: int = ERROR_SHOWN_CHARS) -> str:
    """An arm's error for a view: whole when short, else cut with a pointer to the whole message."""
    return clip_tail(error, limit, more=": `workbench show ID --json` has it whole")


_JSON_ERROR = re.compile(r'^\{\s*"error"\s*:\s*"(?P<body>.*?)"?\s*\}?$', re.DOTALL)
_JSON_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|["\\/bfnrt])')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def error_text(text: str) -> str:
    """A sandbox error as the text it is: the sandbox answers ``{"error": "Runtime error:\\n..."}``, which the
    model reads as JSON and a person reads decoded (real line breaks and quotes). A clipped one (its middle cut
    out, so no longer JSON) is decoded all the same; any other text is returned as it is."""
    stripped = text.strip()
    try:
        data = json.loads(stripped)
    except ValueError:
        found = _JSON_ERROR.match(stripped)
        if found is None:
            return text
        return _JSON_ESCAPE.sub(_unescape, found.group("body"))
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return data["error"]
    return data if isinstance(data, str) else text


def _unescape(found: re.Match[str]) -> str:
    code = found.group(1)
    return chr(int(code[1:], 16)) if code.startswith("u") else _ESCAPES[code]
