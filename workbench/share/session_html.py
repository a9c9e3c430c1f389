"""One session as a self-contained HTML page: the comparison strip, each arm's counters, the per-request
input-token bars on one scale, and each arm's transcript with its end state and grade.

Figures come from each arm's :class:`~workbench.summary.ArmSummary` (the fold every view uses); the first
arm is the baseline the others are compared with.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from workbench.display import arm_title, money, percent_change
from workbench.session import ArmRun, Comparison
from workbench.share.page import arm_style, esc, highlight_python, page, pretty_json, table
from workbench.share.steps import ArmSteps, CallStep, RequestStep
from workbench.summary import ArmSummary
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

FOLD_CHARS = 400
"""Results longer than this are folded (``<details>``) with a one-line preview."""
CALLS_SHOWN = 5
"""Calls of one response shown before the rest are folded (a tool-calling arm often batches dozens)."""
DIFF_ROWS = 200
"""Most records listed per kind of change in an arm's end state (the count is always exact)."""

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
    ("status", "status", lambda s, d: _status(d["status"]), None),
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
    "cached_input_tokens": lambda s: s.cache_read_tokens,
    "malformed_calls": lambda s: s.malformed_calls,
    "eager_statements": lambda s: s.eager_statements,
    "speculation": lambda s: s.speculation_launched + s.speculation_missed,
}
"""Rows shown only when some arm has a non-zero value."""


def session_html(comparison: Comparison) -> str:
    """The whole page for one stored or finished comparison."""
    arms = list(comparison.arms.values())
    steps = [ArmSteps.fold(arm.name, arm.events) for arm in arms]
    body = "\n".join(
        [
            _header(comparison),
            _strip(arms),
            '<section id="counters"><h2>Counters</h2>' + _counters(arms) + "</section>",
            _token_bars(arms),
            '<section id="transcripts"><h2>Transcripts</h2>'
            f'<div class="arms" style="--arms: {len(arms)}">'
            + "".join(
                _arm_article(index, arm, arm_steps)
                for index, (arm, arm_steps) in enumerate(zip(arms, steps, strict=True))
            )
            + "</div></section>",
            _footer(arms),
        ]
    )
    return page(f"Session {comparison.session_id} · {comparison.app}", body, highlight=True)


def _header(comparison: Comparison) -> str:
    facts = [
        ("app", comparison.app),
        ("items", f"{comparison.items:,}"),
        ("seed", str(comparison.seed)),
        ("task", comparison.task or "–"),
        ("model", comparison.model),
        ("created", comparison.created.strftime("%Y-%m-%d %H:%M UTC")),
    ]
    meta = " · ".join(f"{esc(label)} <b>{esc(value)}</b>" for label, value in facts)
    return (
        f'<header><h1>Session <span class="mono" id="session-id">{esc(comparison.session_id)}</span></h1>'
        f'<p class="meta">{meta}</p><blockquote id="prompt">{esc(comparison.prompt)}</blockquote></header>'
    )


def _arm_label(index: int, arm: ArmRun) -> str:
    """The arm under the title every view gives it (``Tool calling``, ``Code mode``, ``small-code · Code mode``)."""
    title = arm_title(arm.name, arm.summary.mode)
    return f'<span class="arm-name" style="{arm_style(index)}"><span class="swatch"></span>{esc(title)}</span>'


def _strip(arms: Sequence[ArmRun]) -> str:
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
    return '<section id="strip">' + "".join(lines) + "</section>"


def _counters(arms: Sequence[ArmRun]) -> str:
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
    return table(header, rows, attrs=' id="counter-table"')


def _token_bars(arms: Sequence[ArmRun]) -> str:
    """Each request's input tokens as a bar, every arm on one scale: the growing context is the mechanism."""
    largest = max((tokens for arm in arms for tokens in arm.summary.input_tokens_per_request), default=0)
    if not largest:
        return ""
    parts = ['<section id="token-bars"><h2>Input tokens per request</h2>']
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


def _folded(label: str, text: str) -> str:
    """Text shown as it is when short, folded under a one-line preview (and indented, if JSON) when long."""
    if len(text) <= FOLD_CHARS:
        return f"<pre>{esc(text)}</pre>" if text else ""
    preview = " ".join(text[:120].split())
    shown = pretty_json(text) if len(text) < 100_000 else text
    return (
        f'<details><summary>{esc(label)} <span class="dim">({len(text):,} characters) {esc(preview)}…</span>'
        f"</summary><pre>{esc(shown)}</pre></details>"
    )


def _args_inline(args: dict[str, Any] | str) -> str:
    if isinstance(args, str):
        text = args
    else:
        text = ", ".join(
            f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in args.items() if key != "code"
        )
    return text if len(text) <= 160 else text[:160] + "…"


def _call(call: CallStep, *, inner: bool = False) -> str:
    outcome = call.outcome or "no result"
    facts = [f'<span class="outcome-{esc(outcome)}">{esc(outcome)}</span>']
    if call.outcome is not None:
        facts.append(f"{call.bytes:,} B")
        if call.ms is not None:
            facts.append(f"{call.ms:,.1f} ms")
    head = (
        f'<span class="mono"><b>{esc(call.name)}</b>({esc(_args_inline(call.args))})</span> '
        f'<span class="dim">→</span> {" · ".join(facts)}'
    )
    body = []
    if call.code is not None:
        body.append(highlight_python(call.code))
    elif not isinstance(call.args, dict) or len(_args_inline(call.args)) >= 160:
        body.append(_folded("arguments", call.args if isinstance(call.args, str) else json.dumps(call.args)))
    if call.inner:
        inner_calls = "".join(_call(step, inner=True) for step in call.inner)
        body.append(
            f'<details class="inner-calls"><summary>{len(call.inner):,} inner calls</summary>'
            f'<div class="inner">{inner_calls}</div></details>'
        )
    if call.error:
        body.append(f'<div class="error">{esc(call.error)}</div>')
    if call.content:
        body.append(_folded("result", call.content))
    kind = "inner-call" if inner else ("snippet" if call.code is not None else "tool-call")
    return (
        f'<div class="call {esc(outcome)} {kind}" data-call="{esc(call.call_id)}" data-name="{esc(call.name)}">'
        f"<div>{head}</div>{''.join(body)}</div>"
    )


def _request(request: RequestStep) -> str:
    usage = request.usage
    figures = (
        f"{usage.input_tokens:,} in · {usage.output_tokens:,} out · {money(usage.cost_usd)}"
        if usage is not None
        else "no usage reported"
    )
    parts = [
        f'<div class="request" data-request="{request.number}"><div class="request-head">'
        f'<h4>Request {request.number}</h4><span class="dim">{figures}</span></div>'
    ]
    for retry in request.retries:
        parts.append(
            f'<div class="warn retry">provider retry {retry.attempt} of {retry.attempts} after '
            f"{esc(retry.error)}; waited {retry.wait_s:.1f} s</div>"
        )
    if request.text:
        parts.append(f'<div class="text">{esc(request.text)}</div>')
    calls = [_call(call) for call in request.calls]
    if len(calls) > CALLS_SHOWN * 2:
        parts += calls[:CALLS_SHOWN]
        rest = calls[CALLS_SHOWN:]
        parts.append(f'<details class="more-calls"><summary>{len(rest):,} more calls in this response</summary>'
                     f"{''.join(rest)}</details>")  # fmt: skip
    else:
        parts += calls
    parts.append("</div>")
    return "".join(parts)


def _arm_article(index: int, arm: ArmRun, steps: ArmSteps) -> str:
    summary = arm.summary
    started = steps.started
    about = [summary.mode or "?", summary.model or "?"]
    about += [f"{key}={json.dumps(value)}" for key, value in summary.options.items()]
    parts = [
        f'<article class="arm" id="arm-{esc(arm.name)}" data-arm="{esc(arm.name)}" style="{arm_style(index)}">',
        f"<h3>{_arm_label(index, arm)} {_status(summary.status)} "
        f"{_grade(summary.verdict, summary.verdict_reason)}</h3>",
        f'<p class="dim">{esc(" · ".join(about))}</p>',
    ]
    if started is not None and started.app_tools:
        parts.append(_tools(started.app_tools, set(started.read_only_tools), bool(started.sandboxed_tools)))
    parts += [_request(request) for request in steps.requests]
    parts.append("<h4>Answer</h4>")
    parts.append(f'<div class="answer">{esc(summary.output)}</div>' if summary.output else '<p class="dim">none</p>')
    if summary.error:
        parts.append(f'<div class="error">{esc(summary.error)}</div>')
    parts.append(_end_state(steps))
    parts.append("</article>")
    return "".join(parts)


def _tools(tools: list[str], read_only: set[str], sandboxed: bool) -> str:
    """The app's tools as the arm got them, folded: ``9 tools inside run_code · 4 read-only``."""
    marked = sum(1 for name in tools if name in read_only)
    title = f"{len(tools)} tools{' inside run_code' if sandboxed else ''} · " + (
        f"{marked} read-only" if marked else "none marked read-only"
    )
    mark = ' <span class="dim">read-only</span>'
    rows = "".join(f"<li><code>{esc(name)}</code>{mark if name in read_only else ''}</li>" for name in tools)
    return f'<details class="tools"><summary>{esc(title)}</summary><ul>{rows}</ul></details>'


def _end_state(steps: ArmSteps) -> str:
    parts = ["<h4>End state</h4>"]
    state = steps.end_state
    if state is None:
        parts.append('<p class="dim">not recorded (the arm did not finish)</p>')
    else:
        counts = f"{len(state.created)} created · {len(state.updated)} updated · {len(state.deleted)} deleted"
        parts.append(f'<p class="end-state-counts">{counts}</p>')
        for kind, records in (("created", state.created), ("updated", state.updated), ("deleted", state.deleted)):
            if not records:
                continue
            lines = [_change_line(kind, record) for record in records[:DIFF_ROWS]]
            if len(records) > DIFF_ROWS:
                lines.append(f"… {len(records) - DIFF_ROWS:,} more")
            parts.append(
                f"<details><summary>{len(records):,} {kind}</summary><pre>{esc(chr(10).join(lines))}</pre></details>"
            )
    grade = steps.grade
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
