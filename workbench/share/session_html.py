"""One session as a self-contained HTML page: the comparison strip, each arm's counters, the per-request
input-token bars on one scale, and each arm's transcript with its end state and grade.

Figures come from each arm's :class:`~workbench.summary.ArmSummary` (the fold every view uses); the first
arm is the baseline the others are compared with. The transcripts walk each arm's
:class:`~workbench.timeline.Timeline`, the fold the TUI draws, so the page shows every call the TUI does
(the inner calls of a snippet that ran while it streamed included) and the same marks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from workbench.display import (
    CUT_AT_MAX_TOKENS,
    DEMO_LABEL,
    DEMO_WHY,
    ESTIMATED,
    arm_title,
    error_text,
    is_demo,
    money,
    percent_change,
    retried,
    status_words,
    turn_figures,
)
from workbench.display import clipped as clipped_note
from workbench.events import (
    MALFORMED_ARGUMENTS,
    RUN_CODE,
    EndState,
    Graded,
    InnerResult,
    Payload,
    ProviderRetry,
    ToolResult,
)
from workbench.session import ArmRun, Comparison
from workbench.share.page import arm_style, esc, esc_text, highlight_python, page, pretty_json, table
from workbench.summary import LENGTH, ArmSummary
from workbench.timeline import NoticeEntry, ResponseEntry, SnippetEntry, TextEntry, Timeline, ToolsEntry, TurnEntry
from workbench.timeline_records import InnerRecord, SnippetRecord
from workbench.turns import turn_prompts, turn_rows
from workbench.verdict import (
    DIFFER,
    FAILED,
    NOT_GRADED,
    PASSED,
    VERDICT_MARKS,
    VERDICT_STYLES,
    VERDICT_WORDS,
    verdict_of,
)

PayloadT = TypeVar("PayloadT", bound=Payload)

FOLD_CHARS = 400
"""Results longer than this are folded (``<details>``) with a one-line preview."""
CALLS_SHOWN = 5
"""Calls of one response shown before the rest are folded (a tool-calling arm often batches dozens)."""
DIFF_ROWS = 200
"""Most records listed per kind of change in an arm's end state (the count is always exact)."""
EMBED_CLIPPED = "clipped: {shown:,} of {whole:,} characters here; the session's own export has it whole"
"""The mark on a result cut in an embedded session (:class:`Embedding`)."""

STRIP_METRICS: tuple[tuple[str, Callable[[ArmSummary], float | None]], ...] = (
    ("cost", lambda s: s.cost_usd),
    ("input tokens", lambda s: s.input_tokens),
    ("wall time", lambda s: s.wall_s),
    ("requests", lambda s: s.requests),
)


CSS_CLASSES = {"success": "good", "error": "bad", "accent": "agree", "warning": "warn", "muted": "dim"}
""":data:`~workbench.verdict.VERDICT_STYLES` as the page's classes (``agree`` is not ``good``: no pass)."""


def _grade(verdict: str, reason: str = "") -> str:
    """``passed`` / ``failed``, ``= arms agree`` / ``≠ arms differ``, ``not graded`` or its reason."""
    words = reason if verdict == NOT_GRADED and reason else VERDICT_WORDS.get(verdict, verdict)
    mark = "" if verdict in (PASSED, FAILED, NOT_GRADED) else VERDICT_MARKS[verdict] + " "
    return f'<span class="{CSS_CLASSES[VERDICT_STYLES.get(verdict, "muted")]}">{esc(mark + words)}</span>'


def _status(status: str) -> str:
    style = {"completed": "good", "failed": "bad"}.get(status, "warn")
    return f'<span class="{style}">{esc(status)}</span>'


_Counter = tuple[str, str, Callable[[ArmSummary, dict[str, Any]], str], Callable[[ArmSummary], float | None] | None]

COUNTERS: tuple[_Counter, ...] = (
    ("status", "status", lambda s, d: _status(status_words(s)), None),
    ("grade", "passed", lambda s, d: _grade(s.verdict, s.verdict_reason), None),
    ("requests", "requests", lambda s, d: f"{d['requests']:,}", lambda s: s.requests),
    ("provider retries", "provider_retries", lambda s, d: f"{s.retries:,}", None),
    ("input tokens", "input_tokens", lambda s, d: f"{d['input_tokens']:,}", lambda s: s.input_tokens),
    ("  of which cached", "cached_input_tokens", lambda s, d: f"{s.cache_read_tokens:,}", None),
    ("output tokens", "output_tokens", lambda s, d: f"{d['output_tokens']:,}", lambda s: s.output_tokens),
    ("tool calls (model)", "tool_calls", lambda s, d: f"{d['tool_calls']:,}", lambda s: s.tool_calls),
    ("inner calls", "inner_calls", lambda s, d: f"{d['inner_calls']:,}", None),
    ("snippets", "snippets", lambda s, d: f"{d['snippets']:,}", None),
    ("malformed calls", "malformed_calls", lambda s, d: f"{s.malformed_calls:,}", None),
    ("eager statements", "eager_statements", lambda s, d: f"{s.eager_statements:,}", None),
    (
        "speculative calls claimed / launched / missed",
        "speculation",
        lambda s, d: f"{s.speculation_claimed:,} / {s.speculation_launched:,} / {s.speculation_missed:,}",
        None,
    ),
    ("cost", "cost_usd", lambda s, d: money(d["cost_usd"]), lambda s: s.cost_usd),
    ("wall time", "wall_s", lambda s, d: f"{d['wall_s']:.2f} s", lambda s: s.wall_s),
    ("waited (left out of wall time)", "waited_s", lambda s, d: f"{s.waited_s:.2f} s" if s.waited_s else "–", None),
    ("created / updated / deleted", "diff", lambda s, d: "{created} / {updated} / {deleted}".format(**d["diff"]), None),
    (
        "payload suppression",
        "payload_suppression",
        lambda s, d: "–" if s.payload_suppression is None else f"{s.payload_suppression * 100:.1f}%",
        None,
    ),
)
OPTIONAL_COUNTERS = {
    "provider_retries": lambda s: s.retries,
    "waited_s": lambda s: s.waited_s > 0,
    "cached_input_tokens": lambda s: s.cache_read_tokens,
    "malformed_calls": lambda s: s.malformed_calls,
    "eager_statements": lambda s: s.eager_statements,
    "speculation": lambda s: s.speculation_launched + s.speculation_missed,
}
"""Rows shown only when some arm has a non-zero value."""


@dataclass(frozen=True)
class Embedding:
    """How a session is drawn inside another page (a sweep's): its element ids carry ``prefix`` (many
    sessions share one document), and a result, argument or end-state list longer than ``clip`` is cut with
    a visible mark pointing at the session's own export, which has it whole."""

    prefix: str
    clip: int
    diff_rows: int


def session_html(comparison: Comparison) -> str:
    """The whole page for one stored or finished comparison."""
    body = session_body(comparison) + "\n" + _footer(list(comparison.arms.values()))
    return page(f"Session {comparison.session_id} · {comparison.app}", body, highlight=True)


def session_body(comparison: Comparison, embedding: Embedding | None = None) -> str:
    """The session's header, strip, counters, token bars and transcripts, without the page around them:
    :func:`session_html` wraps it in a page, a sweep's page embeds one per run (``embedding``)."""
    arms = list(comparison.arms.values())
    timelines = [_timeline(arm) for arm in arms]
    prefix = embedding.prefix if embedding is not None else ""
    return "\n".join(
        [
            _header(comparison, prefix),
            _strip(arms, prefix),
            _turns(arms, prefix),
            f'<section id="{prefix}counters"><h2>Counters</h2>' + _counters(arms, prefix) + "</section>",
            _token_bars(arms, prefix),
            f'<section id="{prefix}transcripts"><h2>Transcripts</h2>'
            f'<div class="arms" style="--arms: {len(arms)}">'
            + "".join(
                _arm_article(index, arm, timeline, embedding)
                for index, (arm, timeline) in enumerate(zip(arms, timelines, strict=True))
            )
            + "</div></section>",
        ]
    )


def _header(comparison: Comparison, prefix: str) -> str:
    facts = [
        ("app", comparison.app),
        ("items", f"{comparison.items:,}"),
        ("seed", str(comparison.seed)),
        ("task", comparison.task or "–"),
        ("model", comparison.model),
        ("created", comparison.created.strftime("%Y-%m-%d %H:%M UTC")),
    ]
    meta = " · ".join(f"{esc(label)} <b>{esc(value)}</b>" for label, value in facts)
    prompts = max((turn_prompts(arm.events) for arm in comparison.arms.values()), key=len, default=[])
    asked = f'<blockquote id="{prefix}prompt">{esc(comparison.prompt)}</blockquote>'
    if len(prompts) > 1:  # a conversation: its turns in order
        asked = f'<ol id="{prefix}prompts" class="turns">' + "".join(f"<li>{esc(p)}</li>" for p in prompts) + "</ol>"
    return (
        f'<header><h1>Session <span class="mono" id="{prefix}session-id">{esc(comparison.session_id)}</span></h1>'
        f'<p class="meta">{meta}</p>{_demo(comparison, prefix)}{asked}</header>'
    )


def _demo(comparison: Comparison, prefix: str) -> str:
    if not is_demo(comparison.model):
        return ""
    note = DEMO_WHY.format(what="this session")
    return f'<p class="warn demo" id="{prefix}demo"><b>{esc_text(DEMO_LABEL)}</b>: {esc_text(note)}</p>'


def _arm_label(index: int, arm: ArmRun) -> str:
    """The arm under the title every view gives it (``Tool calling``, ``Code mode``, ``small-code · Code mode``)."""
    title = arm_title(arm.name, arm.summary.mode)
    return f'<span class="arm-name" style="{arm_style(index)}"><span class="swatch"></span>{esc(title)}</span>'


def _strip(arms: Sequence[ArmRun], prefix: str) -> str:
    """Each arm against the baseline, in %, with the arm that did better named per figure."""
    if len(arms) < 2:
        return ""
    baseline = arms[0]
    lines = []
    for index, arm in enumerate(arms[1:], start=1):
        figures = []
        for label, value in STRIP_METRICS:
            change = percent_change(value(arm.summary), value(baseline.summary))
            if change is None:
                figures.append(f'<span class="figure">{esc(label)} <b>–</b></span>')
                continue
            if abs(change) < 0.5:
                style, winner = "dim", "even"
            else:
                better = arm if change < 0 else baseline
                style, winner = ("good" if better is arm else "bad"), better.name
            figures.append(
                f'<span class="figure" data-metric="{esc(label)}">{esc(label)} '
                f'<b class="{style}">{change:+.0f}%</b> <span class="dim">{esc(winner)}</span></span>'
            )
        lines.append(
            f'<div class="strip" data-arm="{esc(arm.name)}"><span>{_arm_label(index, arm)} '
            f'<span class="dim">vs</span> {_arm_label(0, baseline)}</span>{"".join(figures)}</div>'
        )
    return f'<section id="{prefix}strip">' + "".join(lines) + "</section>"


def _counters(arms: Sequence[ArmRun], prefix: str) -> str:
    baseline = arms[0]
    data = [arm.summary.to_dict() for arm in arms]
    header = ["", *(_arm_label(index, arm) for index, arm in enumerate(arms))]
    header += [f"{esc(arm.name)} vs {esc(baseline.name)}" for arm in arms[1:]]
    rows = []
    for label, key, show, number in COUNTERS:
        optional = OPTIONAL_COUNTERS.get(key)
        if optional is not None and not any(optional(arm.summary) for arm in arms):
            continue
        cells = [f'<td class="label">{esc(label)}</td>']
        for arm, arm_data in zip(arms, data, strict=True):
            value = arm_data.get(key, getattr(arm.summary, key, None))
            cells.append(
                f'<td data-arm="{esc(arm.name)}" data-key="{key}" '
                f"data-value='{esc(json.dumps(value))}'>{show(arm.summary, arm_data)}</td>"
            )
        for arm in arms[1:]:
            change = percent_change(number(arm.summary), number(baseline.summary)) if number else None
            if change is None:
                cells.append('<td class="dim">' + ("–" if number else "") + "</td>")
            else:
                style = "dim" if abs(change) < 0.5 else ("good" if change < 0 else "bad")
                cells.append(f'<td class="{style}">{change:+.0f}%</td>')
        rows.append(cells)
    return table(header, rows, attrs=f' id="{prefix}counter-table"')


def _token_bars(arms: Sequence[ArmRun], prefix: str) -> str:
    """Each request's input tokens as a bar, every arm on one scale: the growing context is the mechanism."""
    largest = max((tokens for arm in arms for tokens in arm.summary.input_tokens_per_request), default=0)
    if not largest:
        return ""
    parts = [f'<section id="{prefix}token-bars"><h2>Input tokens per request</h2>']
    parts.append(f'<p class="dim">One scale for every arm: the longest bar is {largest:,} tokens.</p>')
    for index, arm in enumerate(arms):
        per_request = arm.summary.input_tokens_per_request
        parts.append(f"<h3>{_arm_label(index, arm)} <span class='dim'>{len(per_request)} requests, "
                     f"{sum(per_request):,} input tokens</span></h3>")  # fmt: skip
        parts.append(f'<div class="bars" style="{arm_style(index)}" data-arm="{esc(arm.name)}">')
        for number, tokens in enumerate(per_request, start=1):
            width = tokens / largest * 100
            parts.append(
                f'<span class="dim">#{number}</span><div class="bar" data-tokens="{tokens}" '
                f'style="width: {width:.2f}%" title="request {number}: {tokens:,} input tokens"></div>'
                f'<span class="mono">{tokens:,}</span>'
            )
        parts.append("</div>")
    parts.append("</section>")
    return "".join(parts)


def _folded(label: str, text: str, clip: int | None = None) -> str:
    """Text shown as it is when short, folded under a one-line preview (and indented, if JSON) when long; past
    ``clip`` characters (an embedded session) cut, with a visible ``clipped`` mark."""
    if len(text) <= FOLD_CHARS:
        return f"<pre>{esc_text(text)}</pre>" if text else ""
    preview = " ".join(text[:120].split())
    mark = ""
    if clip is None:
        shown = pretty_json(text) if len(text) < 100_000 else text
    elif len(text) > clip:  # as it came (indenting would spend the clip on spaces)
        shown = text[:clip] + "…"
        mark = f' <span class="warn clipped">{esc_text(EMBED_CLIPPED.format(shown=clip, whole=len(text)))}</span>'
    else:
        shown = text
    return (
        f'<details><summary>{esc_text(label)} <span class="dim">({len(text):,} characters) {esc_text(preview)}…'
        f"</span>{mark}</summary><pre>{esc_text(shown)}</pre></details>"
    )


def _args_inline(args: dict[str, Any] | str) -> str:
    if isinstance(args, str):
        text = args
    else:
        text = ", ".join(
            f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in args.items() if key != "code"
        )
    return text if len(text) <= 160 else text[:160] + "…"


def _timeline(arm: ArmRun) -> Timeline:
    timeline = Timeline(arm.name)
    timeline.apply(arm.events)
    return timeline


def _call(
    call_id: str,
    name: str,
    args: dict[str, Any] | str,
    result: ToolResult | InnerResult | None,
    *,
    kind: str = "tool-call",
    code: str | None = None,
    inner: Sequence[InnerRecord] = (),
    malformed: bool = False,
    clip: int | None = None,
) -> str:
    """One call as the page shows it: its head (name, arguments, outcome), then the snippet's code and inner
    calls, its error and its result."""
    outcome = result.outcome if result is not None else "no result"
    facts = [f'<span class="outcome-{esc(outcome)}">{esc(outcome)}</span>']
    if result is not None:
        facts.append(f"{result.bytes:,} B")
        if result.ms is not None:
            facts.append(f"{result.ms:,.1f} ms")
    if malformed:
        facts.append(f'<span class="bad malformed">{esc(MALFORMED_ARGUMENTS)}</span>')
    clipped = clipped_note(result.bytes, result.clipped_from) if isinstance(result, ToolResult) else ""
    if clipped:
        facts.append(f'<span class="warn clipped">{esc(clipped)}</span>')
    head = (
        f'<span class="mono"><b>{esc(name)}</b>({esc(_args_inline(args))})</span> '
        f'<span class="dim">→</span> {" · ".join(facts)}'
    )
    body = []
    if code is not None:
        body.append(highlight_python(code))
    elif not isinstance(args, dict) or len(_args_inline(args)) >= 160:
        body.append(_folded("arguments", args if isinstance(args, str) else json.dumps(args), clip))
    if inner:
        inner_calls = "".join(
            _call(step.call.call_id, step.call.name, step.call.args, step.result, kind="inner-call", clip=clip)
            for step in inner
        )
        body.append(
            f'<details class="inner-calls"><summary>{len(inner):,} inner calls</summary>'
            f'<div class="inner">{inner_calls}</div></details>'
        )
    error = result.error if result is not None else None
    if error:
        body.append(f'<div class="error">{esc(error_text(error))}</div>')
    content = (result.content or result.preview) if result is not None else ""
    if content:
        body.append(_folded("result", content, clip))
    return (
        f'<div class="call {esc(outcome)} {kind}" data-call="{esc(call_id)}" data-name="{esc(name)}">'
        f"<div>{head}</div>{''.join(body)}</div>"
    )


def _snippet(record: SnippetRecord, clip: int | None) -> str:
    args: dict[str, Any] | str = record.raw_arguments if record.raw_arguments is not None else {}
    return _call(
        record.call_id, RUN_CODE, args, record.result, kind="snippet", code=record.code,
        inner=list(record.inner.values()), malformed=record.raw_arguments is not None, clip=clip,
    )  # fmt: skip


def _calls(response: ResponseEntry, clip: int | None) -> str:
    calls = [_call(call.call_id, call.name, call.args, call.result, clip=clip) for call in response.records.values()]
    if len(calls) <= CALLS_SHOWN * 2:
        return "".join(calls)
    rest = calls[CALLS_SHOWN:]
    return "".join(calls[:CALLS_SHOWN]) + (
        f'<details class="more-calls"><summary>{len(rest):,} more calls in this response</summary>'
        f"{''.join(rest)}</details>"
    )


def _request_head(response: ResponseEntry) -> str:
    usage = response.usage
    if usage is None:
        figures = "no usage reported"
    else:
        mark = ESTIMATED if usage.estimated else ""
        cost = f"{mark if usage.cost_usd is not None else ''}{money(usage.cost_usd)}"
        figures = f"{mark}{usage.input_tokens:,} in · {mark}{usage.output_tokens:,} out · {cost}"
        if usage.finish_reason == LENGTH:
            figures += f" · {CUT_AT_MAX_TOKENS}"
    return (
        f'<div class="request" data-request="{response.request}"><div class="request-head">'
        f'<h4>Request {response.request}</h4><span class="dim">{esc(figures)}</span></div>'
        + "".join(_retry(retry) for retry in response.retries)
    )


def _retry(retry: ProviderRetry) -> str:
    return f'<div class="warn retry">{esc(retried(retry))}</div>'


def _transcript(timeline: Timeline, clip: int | None) -> list[str]:
    """The arm's timeline in order: each request with the text, calls and snippets that followed it."""
    parts: list[str] = []
    in_request = False
    for entry in timeline.entries:
        if isinstance(entry, ResponseEntry) and entry.request is not None:
            if in_request:
                parts.append("</div>")
            parts.append(_request_head(entry))
            in_request = True
            parts.append(_calls(entry, clip))
        elif isinstance(entry, ResponseEntry):
            parts.append(_calls(entry, clip))
        elif isinstance(entry, TurnEntry):
            if in_request:
                parts.append("</div>")
                in_request = False
            parts.append(_turn_head(entry))
        elif isinstance(entry, TextEntry) and entry.text and entry.answer and entry.turn:
            parts.append(
                f'<div class="answer" data-turn="{entry.turn}"><b>Answer to turn {entry.turn}</b>\n'
                f"{esc(entry.text)}</div>"
            )
        elif isinstance(entry, TextEntry) and entry.text:
            parts.append(f'<div class="text">{esc(entry.text)}</div>')
        elif isinstance(entry, SnippetEntry):
            parts.append(_snippet(entry.record, clip))
        elif isinstance(entry, NoticeEntry) and entry.kind == "retry" and entry.retry is not None:
            parts.append(_retry(entry.retry))
        elif isinstance(entry, NoticeEntry) and entry.kind == "cancelled":
            parts.append('<div class="warn notice">cancelled</div>')
    if in_request:
        parts.append("</div>")
    return parts


def _turn_head(entry: TurnEntry) -> str:
    """Where a turn of a conversation begins in an arm's transcript: its number and prompt."""
    tools = "" if entry.tools is None else f'<p class="dim">tools from this turn on: {esc(", ".join(entry.tools))}</p>'
    return (
        f'<h4 class="turn" data-turn="{entry.turn}">Turn {entry.turn}</h4>'
        f'<blockquote class="prompt">{esc(entry.prompt)}</blockquote>{tools}'
    )


def _turns(arms: Sequence[ArmRun], prefix: str) -> str:
    """A conversation's turns: each prompt and each arm's figures for it ("" for a run of one prompt)."""
    rows = turn_rows([arm.summary for arm in arms])
    if not rows:
        return ""
    header = ["turn", "prompt", *(_arm_label(index, arm) for index, arm in enumerate(arms))]
    cells = []
    for row in rows:
        figures = [
            f'<td data-arm="{esc(arm.name)}" data-turn="{row.turn}">{esc(turn_figures(row.arms.get(arm.name)))}</td>'
            for arm in arms
        ]
        cells.append([f'<td class="label">{row.turn}</td>', f'<td class="text">{esc(row.prompt)}</td>', *figures])
    body = table(header, cells, attrs=f' id="{prefix}turn-table"')
    return f'<section id="{prefix}turns"><h2>Turns</h2>{body}</section>'


def _arm_article(index: int, arm: ArmRun, timeline: Timeline, embedding: Embedding | None) -> str:
    summary = arm.summary
    prefix = embedding.prefix if embedding is not None else ""
    clip = embedding.clip if embedding is not None else None
    about = [summary.mode or "?", summary.model or "?"]
    about += [f"{key}={json.dumps(value)}" for key, value in summary.options.items()]
    parts = [
        f'<article class="arm" id="{prefix}arm-{esc(arm.name)}" data-arm="{esc(arm.name)}" style="{arm_style(index)}">',
        f"<h3>{_arm_label(index, arm)} {_status(status_words(summary))} "
        f"{_grade(summary.verdict, summary.verdict_reason)}</h3>",
        f'<p class="dim">{esc(" · ".join(about))}</p>',
    ]
    tools = next((entry for entry in timeline.entries if isinstance(entry, ToolsEntry)), None)
    if tools is not None:
        parts.append(_tools(tools.tools, set(tools.read_only), tools.sandboxed))
    parts += _transcript(timeline, clip)
    parts.append(f"<h4>{'Last answer' if summary.turns else 'Answer'}</h4>")
    parts.append(f'<div class="answer">{esc(summary.output)}</div>' if summary.output else '<p class="dim">none</p>')
    if summary.error:
        parts.append(f'<div class="error">{esc(summary.error)}</div>')
    rows = embedding.diff_rows if embedding is not None else DIFF_ROWS
    parts.append(_end_state(_last(arm, EndState), _last(arm, Graded), rows))
    parts.append("</article>")
    return "".join(parts)


def _last(arm: ArmRun, kind: type[PayloadT]) -> PayloadT | None:
    return next((event.payload for event in reversed(arm.events) if isinstance(event.payload, kind)), None)


def _tools(tools: list[str], read_only: set[str], sandboxed: bool) -> str:
    """The app's tools as the arm got them, folded: ``9 tools inside run_code · 4 read-only``."""
    marked = sum(1 for name in tools if name in read_only)
    title = f"{len(tools)} tools{f' inside {RUN_CODE}' if sandboxed else ''} · " + (
        f"{marked} read-only" if marked else "none marked read-only"
    )
    mark = ' <span class="dim">read-only</span>'
    rows = "".join(f"<li><code>{esc(name)}</code>{mark if name in read_only else ''}</li>" for name in tools)
    return f'<details class="tools"><summary>{esc(title)}</summary><ul>{rows}</ul></details>'


def _end_state(state: EndState | None, grade: Graded | None, most: int = DIFF_ROWS) -> str:
    parts = ["<h4>End state</h4>"]
    if state is None:
        parts.append('<p class="dim">not recorded (the arm did not finish)</p>')
    else:
        counts = f"{len(state.created)} created · {len(state.updated)} updated · {len(state.deleted)} deleted"
        parts.append(f'<p class="end-state-counts">{counts}</p>')
        for kind, records in (("created", state.created), ("updated", state.updated), ("deleted", state.deleted)):
            if not records:
                continue
            lines = [_change_line(kind, record) for record in records[:most]]
            if len(records) > most:
                lines.append(f"… {len(records) - most:,} more")
            parts.append(
                f"<details><summary>{len(records):,} {kind}</summary><pre>{esc_text(chr(10).join(lines))}</pre>"
                "</details>"
            )
    if grade is not None:
        verdict = verdict_of(grade)
        parts.append(f"<h4>Grade: {_grade(verdict, grade.reason)} <span class='dim'>{esc(grade.task)}</span></h4>")
        found = "differences from the other arms" if verdict == DIFFER else "mismatches"
        for title, lines in ((found, grade.mismatches), ("collateral changes", grade.collateral)):
            if lines:
                items = "".join(f"<li>{esc(line)}</li>" for line in lines)
                parts.append(f'<details open><summary class="bad">{len(lines)} {title}</summary><ul>{items}</ul>'
                             "</details>")  # fmt: skip
    return "".join(parts)


def _change_line(kind: str, record: dict[str, Any]) -> str:
    where = f"{record.get('entity', '?')} {record.get('id', '?')}"
    if kind == "updated":
        changes = record.get("changes", {})
        return f"~ {where}: " + ", ".join(
            f"{name} {json.dumps(old, ensure_ascii=False)} → {json.dumps(new, ensure_ascii=False)}"
            for name, (old, new) in changes.items()
        )
    mark = "+" if kind == "created" else "-"
    return f"{mark} {where}: {json.dumps(record.get('record', {}), ensure_ascii=False)}"


def _footer(arms: Sequence[ArmRun]) -> str:
    labels = sorted({arm.summary.price_label for arm in arms if arm.summary.price_label})
    cost = f"Cost: {esc('; '.join(labels))}. " if labels else ""
    return f"<footer>{cost}Exported by Code Mode Workbench (workbench export --format html).</footer>"
