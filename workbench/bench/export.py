"""One stored session exported as JSON (everything, events included), Markdown or CSV (one row per arm)."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from workbench.display import (
    DEMO_LABEL,
    DEMO_WHY,
    ESTIMATED,
    ESTIMATED_NOTE,
    arm_title,
    clipped,
    error_text,
    is_demo,
    money,
    percent_change,
    retried,
    speculated,
    status_words,
    turn_figures,
)
from workbench.events import MALFORMED_ARGUMENTS, RUN_CODE, InnerCall, ToolCall
from workbench.session import ArmRun, Comparison
from workbench.summary import ArmSummary
from workbench.timeline import NoticeEntry, ResponseEntry, SnippetEntry, TextEntry, Timeline, TurnEntry
from workbench.timeline_records import SnippetRecord
from workbench.turns import turn_rows
from workbench.verdict import session_comparability, verdict_label

SESSION_FORMATS = ("json", "md", "csv", "html")
SESSION_CSV_COLUMNS = (
    "session_id", "created", "app", "items", "seed", "task", "model", "arm", "mode", "status", "passed",
    "verdict", "verdict_reason",
    "requests", "input_tokens", "output_tokens", "tool_calls", "inner_calls", "snippets", "cost_usd", "wall_s",
    "waited_s", "created_records", "updated_records", "deleted_records", "bytes_seen", "bytes_produced",
    "payload_suppression", "mismatches", "error", "provider_retries", "cached_input_tokens", "tokens_estimated",
    "malformed_calls", "comparable", "not_comparable_reason", "turn", "turns", "demonstration",
    "eager_statements", "speculation_launched", "speculation_claimed", "speculation_missed", "speculation_evicted",
)  # fmt: skip
"""One row per arm (``turn`` empty: the whole conversation); a conversation adds a row per arm per turn after
it, with that turn's figures (``turn`` its number)."""


def session_dict(comparison: Comparison) -> dict[str, Any]:
    """The ``run --json`` object plus when and how it ran, per-arm extras and every event."""
    data = comparison.to_dict()
    verdict = session_comparability([arm.summary for arm in comparison.arms.values()])
    data["comparable"], data["not_comparable_reason"] = verdict.comparable, verdict.reason or None
    data["model"] = comparison.model
    data["demonstration"] = is_demo(comparison.model)
    data["created"] = comparison.created.isoformat()
    for arm_data, arm in zip(data["arms"], comparison.arms.values(), strict=True):
        summary = arm.summary
        arm_data.update(
            {
                "price_label": summary.price_label,
                "output": summary.output,
                "collateral": list(summary.collateral),
                "input_tokens_per_request": list(summary.input_tokens_per_request),
                "tool_output_bytes_seen": summary.tool_output_bytes_seen,
                "tool_output_bytes_produced": summary.tool_output_bytes_produced,
                "payload_suppression": summary.payload_suppression,
            }
        )
    data["events"] = [event.to_dict() for event in comparison.events]
    return data


def session_json(comparison: Comparison) -> str:
    return json.dumps(session_dict(comparison), ensure_ascii=False, indent=2)


def session_csv(comparison: Comparison) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SESSION_CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    verdict = session_comparability([arm.summary for arm in comparison.arms.values()])
    for name, arm in comparison.arms.items():
        summary = arm.summary
        writer.writerow(
            _csv_run(comparison, name, summary)
            | {
                "status": summary.status,
                "passed": "" if summary.passed is None else summary.passed,
                "verdict": summary.verdict,
                "verdict_reason": summary.verdict_reason,
                "requests": summary.requests,
                "input_tokens": summary.input_tokens,
                "output_tokens": summary.output_tokens,
                "tool_calls": summary.tool_calls,
                "inner_calls": summary.inner_calls,
                "snippets": summary.snippets,
                "cost_usd": "" if summary.cost_usd is None else f"{summary.cost_usd:.8f}",
                "wall_s": f"{summary.wall_s:.3f}",
                "waited_s": f"{summary.waited_s:.3f}",
                "created_records": summary.diff["created"],
                "updated_records": summary.diff["updated"],
                "deleted_records": summary.diff["deleted"],
                "bytes_seen": summary.tool_output_bytes_seen,
                "bytes_produced": summary.tool_output_bytes_produced,
                "payload_suppression": ""
                if summary.payload_suppression is None
                else f"{summary.payload_suppression:.4f}",
                "mismatches": len(summary.mismatches),
                "error": summary.error or "",
                "provider_retries": summary.retries,
                "cached_input_tokens": summary.cache_read_tokens,
                "tokens_estimated": summary.tokens_estimated,
                "malformed_calls": summary.malformed_calls,
                "eager_statements": summary.eager_statements,
                "speculation_launched": summary.speculation_launched,
                "speculation_claimed": summary.speculation_claimed,
                "speculation_missed": summary.speculation_missed,
                "speculation_evicted": summary.speculation_evicted,
                "comparable": verdict.comparable,
                "not_comparable_reason": verdict.reason,
                "turn": "",
                "turns": len(summary.turns) or 1,
            }
        )
    for name, arm in comparison.arms.items():
        for turn in arm.summary.turns:
            writer.writerow(
                _csv_run(comparison, name, arm.summary)
                | {
                    "status": turn.status,
                    "requests": turn.requests,
                    "input_tokens": turn.input_tokens,
                    "output_tokens": turn.output_tokens,
                    "tool_calls": turn.tool_calls,
                    "inner_calls": turn.inner_calls,
                    "cost_usd": "" if turn.cost_usd is None else f"{turn.cost_usd:.8f}",
                    "wall_s": f"{turn.wall_s:.3f}",
                    "error": turn.error or "",
                    "turn": turn.turn,
                    "turns": len(arm.summary.turns),
                }
            )
    return buffer.getvalue()


def _csv_run(comparison: Comparison, name: str, summary: ArmSummary) -> dict[str, Any]:
    """The columns that say which session and arm a CSV row is of."""
    return {
        "session_id": comparison.session_id,
        "created": comparison.created.isoformat(),
        "app": comparison.app,
        "items": comparison.items,
        "seed": comparison.seed,
        "task": comparison.task or "",
        "model": summary.model or comparison.model,
        "demonstration": is_demo(summary.model or comparison.model),
        "arm": name,
        "mode": summary.mode,
    }


_ROWS: tuple[tuple[str, str], ...] = (
    ("requests", "requests"),
    ("input tokens", "input_tokens"),
    ("output tokens", "output_tokens"),
    ("tool calls (model)", "tool_calls"),
    ("inner calls", "inner_calls"),
    ("cost (USD)", "cost_usd"),
    ("wall time (s)", "wall_s"),
)


_OPTIONAL_ROWS: tuple[tuple[str, Callable[[ArmSummary], str]], ...] = (
    ("provider retries", lambda s: f"{s.retries:,}" if s.retries else ""),
    ("eager statements", lambda s: f"{s.eager_statements:,}" if s.eager_statements else ""),
    (
        "speculative calls claimed / launched / missed",
        lambda s: (
            f"{s.speculation_claimed:,} / {s.speculation_launched:,} / {s.speculation_missed:,}"
            if s.speculation_launched + s.speculation_missed
            else ""
        ),
    ),
)
"""Rows shown only when some arm has something to show (as in the HTML export)."""

_ESTIMABLE = frozenset({"input_tokens", "output_tokens", "cost_usd"})


def session_markdown(comparison: Comparison) -> str:
    arms = comparison.arms
    lines = [
        f"# Session {comparison.session_id}",
        "",
        f"- app: {comparison.app} · items: {comparison.items} · seed: {comparison.seed}",
        f"- task: {comparison.task or '–'} · model: {comparison.model}",
        f"- created: {comparison.created.strftime('%Y-%m-%d %H:%M UTC')}",
        *([f"- **{DEMO_LABEL}**: {DEMO_WHY.format(what='this session')}"] if is_demo(comparison.model) else []),
        "",
    ]
    names = list(arms)
    rows = turn_rows([arm.summary for arm in arms.values()])
    if rows:
        lines += ["## Turns", "", "| turn | prompt | " + " | ".join(arm_title(name).lower() for name in names) + " |"]
        lines.append("|---:|---|" + "---|" * len(names))
        for row in rows:
            cells = [turn_figures(row.arms.get(name)) for name in names]
            lines.append(f"| {row.turn} | {_table_text(row.prompt)} | " + " | ".join(cells) + " |")
        lines += ["", "## Whole conversation", ""]
    else:
        lines += [f"> {comparison.prompt}", ""]
    baseline = arms[names[0]].summary if names else None
    others = names[1:]
    blank = " |" * len(others)
    header = ["", *(arm_title(name).lower() for name in names), *(f"{name} vs {names[0]}" for name in others)]
    lines += ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines.append("| status | " + " | ".join(status_words(arm.summary) for arm in arms.values()) + " |" + blank)
    lines.append(
        "| grade | "
        + " | ".join(verdict_label(arm.summary.verdict, arm.summary.verdict_reason) for arm in arms.values())
        + " |"
        + blank
    )
    for label, key in _ROWS:
        cells = [_cell(key, getattr(arm.summary, key), arm.summary) for arm in arms.values()]
        for name in others:
            change = percent_change(getattr(arms[name].summary, key), getattr(baseline, key))
            cells.append("–" if change is None else f"{change:+.0f}%")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for label, figure in _OPTIONAL_ROWS:
        if any(figure(arm.summary) for arm in arms.values()):
            cells = (figure(arm.summary) or "0" for arm in arms.values())
            lines.append(f"| {label} | " + " | ".join(cells) + " |" + blank)
    if any(arm.summary.waited_s > 0 for arm in arms.values()):
        waited = (f"{arm.summary.waited_s:.2f}" for arm in arms.values())
        lines.append("| waited for a slot (s, not in wall time) | " + " | ".join(waited) + " |" + blank)
    suppression = [arm.summary.payload_suppression for arm in arms.values()]
    lines.append(
        "| payload suppression | "
        + " | ".join("–" if value is None else f"{value * 100:.1f}%" for value in suppression)
        + " |"
        + blank
    )
    lines.append(
        "| created / updated / deleted | "
        + " | ".join("{created} / {updated} / {deleted}".format(**arm.summary.diff) for arm in arms.values())
        + " |"
        + blank
    )
    lines.append("")
    if any(arm.summary.tokens_estimated for arm in arms.values()):
        lines += [ESTIMATED_NOTE, ""]
    verdict = session_comparability([arm.summary for arm in arms.values()])
    if verdict.note:
        lines += [f"**{verdict.note.capitalize()}**: the figures are shown, no arm is named better.", ""]
    for name, arm in arms.items():
        lines += _arm_section(arm_title(name).lower(), arm)
    return "\n".join(lines) + "\n"


def _table_text(text: str) -> str:
    """Text for a Markdown table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _cell(key: str, value: float | None, summary: ArmSummary) -> str:
    if key == "inner_calls" and summary.mode == "tool":
        return "–"  # an arm that writes no snippets has no inner calls to count
    mark = ESTIMATED if summary.tokens_estimated and key in _ESTIMABLE else ""
    if value is None:
        return "cost unknown" if key == "cost_usd" else "unknown"
    if key == "cost_usd":
        return f"{mark}{money(value)}"
    if key == "wall_s":
        return f"{value:.2f}"
    return f"{mark}{value:,}"


def _arm_section(title: str, arm: ArmRun) -> list[str]:
    summary: ArmSummary = arm.summary
    lines = [f"## {title.capitalize()}", ""]
    if summary.output and not summary.turns:  # a conversation's answers follow turn by turn
        lines += [f"Answer: {summary.output}", ""]
    if summary.error:
        lines += [f"Error: {summary.error}", ""]
    calls = Counter(e.payload.name for e in arm.events if isinstance(e.payload, ToolCall))
    inner = Counter(e.payload.name for e in arm.events if isinstance(e.payload, InnerCall))
    if calls:
        lines += ["Tool calls: " + ", ".join(f"{name} ×{count}" for name, count in calls.most_common()), ""]
    if inner:
        lines += ["Calls inside snippets: " + ", ".join(f"{name} ×{count}" for name, count in inner.most_common()), ""]
    timeline = Timeline(arm.name)
    timeline.apply(arm.events)
    for entry in timeline.entries:
        if isinstance(entry, TurnEntry):
            lines += [f"### Turn {entry.turn}", "", f"> {' '.join(entry.prompt.split())}", ""]
            if entry.tools is not None:
                lines += ["Tools from this turn on: " + ", ".join(entry.tools), ""]
        elif isinstance(entry, TextEntry) and entry.answer and entry.turn:
            lines += [f"Answer to turn {entry.turn}: {entry.text.strip()}", ""]
        elif isinstance(entry, SnippetEntry):
            lines += _snippet_lines(entry.record)
        elif isinstance(entry, NoticeEntry) and entry.retry is not None:
            lines += [retried(entry.retry), ""]
        elif isinstance(entry, ResponseEntry):
            lines += [line for retry in entry.retries for line in (retried(retry), "")]
            for call in entry.records.values():
                note = clipped(call.result.bytes, call.result.clipped_from) if call.result is not None else ""
                if note:
                    lines += [f"{call.name} result {note}", ""]
    if summary.verdict_reason:
        lines += [f"Verdict: {summary.verdict_reason}", ""]
    if summary.mismatches:
        what = "Differences from the other arms" if summary.verdict == "differ" else "Mismatches"
        lines += [f"{what}:", ""] + [f"- {line}" for line in summary.mismatches[:50]] + [""]
    return lines


def _snippet_lines(record: SnippetRecord) -> list[str]:
    """One snippet of the timeline: its code, and how it ran (eager statements, its result cut to size)."""
    lines = []
    if record.raw_arguments is not None:
        lines += [f"{RUN_CODE} {MALFORMED_ARGUMENTS}; the code recovered from them (it never ran):", ""]
    lines += ["```python", record.code.rstrip(), "```", ""]
    facts = []
    if record.inner:
        facts.append(f"{len(record.inner):,} inner calls")
    if record.eager_statements:
        facts.append(f"{record.eager_statements:,} statements run while it streamed")
    if speculation := speculated(record):
        facts.append(speculation)
    if record.result is not None and record.result.clipped_from is not None:
        facts.append(f"result {clipped(record.result.bytes, record.result.clipped_from)}")
    if facts:
        lines += [" · ".join(facts), ""]
    result = record.result
    if result is not None and (result.error or result.outcome != "ok") and record.raw_arguments is None:
        lines += ["Sandbox error (the model received it):", "", "```text", error_text(result.error or result.preview)]
        lines += ["```", ""]
    return lines


def export_session(comparison: Comparison, fmt: str) -> str:
    if fmt == "json":
        return session_json(comparison)
    if fmt == "md":
        return session_markdown(comparison)
    if fmt == "csv":
        return session_csv(comparison)
    if fmt == "html":
        from workbench.share.session_html import session_html

        return session_html(comparison)
    raise ValueError(f"unknown format {fmt!r}; choose one of: {', '.join(SESSION_FORMATS)}")
