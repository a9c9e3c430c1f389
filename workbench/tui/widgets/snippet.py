"""A ``run_code`` snippet: its code growing as the model writes it, and its inner calls live beneath it."""

from __future__ import annotations

from textual.content import Content

from workbench.display import error_text
from workbench.events import MALFORMED_ARGUMENTS, RUN_CODE
from workbench.timeline import SnippetEntry
from workbench.timeline_records import InnerRecord, SnippetRecord, SpeculationRecord
from workbench.tui import format as fmt
from workbench.tui.widgets.blocks import Block, fill

ERROR_LINES = 12
"""Lines of a sandbox error the block shows (its first two and its last ones, where the exception is)."""

INNER_SHOWN = 12
"""Inner calls listed under a snippet in the pane; the inspector lists them all."""
SNIPPET = "snippet"
"""The item key of a snippet (the whole block is one item: enter opens the inspector)."""
SPECULATIONS_SHOWN = 6
"""Speculated calls listed under a snippet (the latest); the summary line counts them all."""
EAGER_MARK = ("▸", "bold $text-success")
"""Left of each code line that ran while the model was still writing the snippet (eager execution)."""
SPECULATION_MARKS = {
    "launched": ("⇢", "$text-accent"),
    "settled": ("⇢", "$text-accent"),
    "claimed": ("✓", "$text-success"),
    "missed": ("✗", "$text-warning"),
    "evicted": ("⊘", "$text-muted"),
}


def speculation_line(record: SpeculationRecord) -> Content:
    """``✓ claimed get_cart_item(item_id="line-0001")  line 3  hid 3.5 ms``."""
    mark, style = SPECULATION_MARKS.get(record.phase, SPECULATION_MARKS["launched"])
    phase = "waiting" if record.phase == "launched" else "ready" if record.phase == "settled" else record.phase
    if record.phase == "settled" and record.outcome not in (None, "ready"):
        phase = record.outcome
    parts: list[Content | tuple[str, str] | str] = [
        (mark, style),
        (f" {phase} ", style),
        fmt.safe(record.name),
        ("(", "$text-muted"),
        (fmt.short_args(record.args, 40), "$text-muted"),
        (")", "$text-muted"),
    ]
    if record.line_start is not None:
        end = record.line_end if record.line_end not in (None, record.line_start) else None
        parts.append((f"  line {record.line_start}" + (f"-{end}" if end else ""), "$text-muted"))
    if record.hidden_ms:
        parts.append((f"  hid {fmt.duration(record.hidden_ms)}", "$text-success"))
    return Content.assemble(*parts)


def speculation_summary(record: SnippetRecord) -> Content:
    """``speculation: 20 launched · 15 claimed (hid 22 ms) · 5 missed · 0 evicted``."""
    counts = record.speculation_counts()
    launched = sum(1 for spec in record.speculations.values() if spec.launched)
    hidden = sum(spec.hidden_ms or 0.0 for spec in record.speculations.values())
    waiting = counts.get("launched", 0) + counts.get("settled", 0)
    parts: list[Content | tuple[str, str] | str] = [
        ("speculation: ", "bold"),
        (f"{launched} launched · ", "$text-muted"),
        (f"{counts.get('claimed', 0)} claimed", "$text-success"),
    ]
    if hidden:
        parts.append((f" (hid {fmt.duration(hidden)})", "$text-success"))
    parts.append((f" · {counts.get('missed', 0)} missed · {counts.get('evicted', 0)} evicted", "$text-muted"))
    if waiting:
        parts.append((f" · {waiting} waiting", "$text-accent"))
    return Content.assemble(*parts)


def inner_call_line(record: InnerRecord, *, args_limit: int = 48) -> Content:
    call, result = record.call, record.result
    meta = f"{fmt.duration(result.ms)} · {fmt.size(result.bytes)}" if result else "running…"
    return Content.assemble(
        fmt.outcome_mark(record.outcome),
        " ",
        fmt.safe(call.name),
        ("(", "$text-muted"),
        (fmt.short_args(call.args, args_limit), "$text-muted"),
        (")", "$text-muted"),
        "  ",
        (meta, "$text-muted"),
    )


class SnippetBlock(Block):
    """One snippet: header, highlighted code, inner calls (the latest few), and what the model received."""

    gap = 1
    entry: SnippetEntry

    def __init__(self, entry: SnippetEntry) -> None:
        super().__init__(entry)
        self._code: tuple[tuple[str, int, int], list[Content]] = (("", 0, 0), [])
        """(code, lines that ran early, width) last drawn, and the highlighted, wrapped lines."""

    @property
    def record(self) -> SnippetRecord:
        return self.entry.record

    def items(self) -> list[str]:
        return [SNIPPET]

    def lines(self, width: int, selected: str | None) -> tuple[list[Content], list[str | None]]:
        record = self.record
        chosen = selected == SNIPPET
        failed = record.result is not None and record.result.outcome != "ok"
        bar = "$primary" if chosen else "$error" if failed else "$accent"
        room = max(width - 2, 8)
        body: list[Content] = [self._header_content(), *self._code_lines(room)]
        if record.speculations:
            body.append(Content(""))
            body.extend(Content.styled("▏ ", "$foreground 25%") + line for line in self._speculation_lines())
        if record.inner:
            body.append(Content(""))
            body.extend(Content.styled("▏ ", "$foreground 25%") + line for line in self._inner_lines())
        if record.result is not None:
            body.extend(self._result_content().wrap(room))
        background = "on $boost" if chosen else "on $surface"
        lines = [fill(Content.styled("▌ ", bar) + line, width, background) for line in body]
        return lines, [SNIPPET] * len(lines)

    def _code_lines(self, room: int) -> list[Content]:
        """The code highlighted and wrapped, each line that ran early marked; drawn again only when the code,
        the lines that ran early or the width change."""
        record = self.record
        drawn_for = (record.code, record.eager_lines, room)
        if drawn_for != self._code[0]:
            from textual.highlight import highlight  # pygments: with the first snippet, or the warm-up's

            highlighted = highlight(fmt.safe(record.code.rstrip("\n")) or " ", language="python")
            lines = []
            for number, line in enumerate(highlighted.split("\n", allow_blank=True), start=1):
                mark = Content.styled(*EAGER_MARK) if number <= record.eager_lines else Content(" ")
                for index, part in enumerate(line.wrap(room - 1) or [Content("")]):
                    lines.append((mark if index == 0 else Content(" ")) + part)
            self._code = (drawn_for, lines)
        return self._code[1]

    def _speculation_lines(self) -> list[Content]:
        records = list(self.record.speculations.values())
        lines = [speculation_summary(self.record)]
        hidden = len(records) - SPECULATIONS_SHOWN
        if hidden > 0:
            lines.append(Content.styled(f"… {hidden:,} earlier speculated calls", "$text-muted"))
        lines.extend(speculation_line(record) for record in records[-SPECULATIONS_SHOWN:])
        return lines

    def _header_content(self) -> Content:
        record = self.record
        lines = fmt.line_count(record.code)
        if record.raw_arguments is not None and record.complete:
            state = Content.styled(MALFORMED_ARGUMENTS, "$text-error")
        elif record.ended and record.result is None:
            state = Content.styled("stopped: the run ended before the snippet finished", "$text-warning")
        elif not record.complete and record.result is None:
            state = Content.styled("writing…", "$text-accent")
        elif record.result is None:
            state = Content.styled(f"running · {len(record.inner)} calls", "$text-accent")
        else:
            result = record.result
            clipped = fmt.clipped(result.bytes, result.clipped_from)
            state = Content.assemble(
                fmt.outcome_mark(result.outcome),
                (f" {fmt.duration(result.ms)} · {len(record.inner)} inner calls", "$text-muted"),
                (f" · {clipped}" if clipped else "", "$text-warning"),
            )
        eager: list[tuple[str, str]] = []
        if record.eager_statements:
            statements = f"{record.eager_statements} statement{'s' if record.eager_statements != 1 else ''}"
            eager = [("   ▸ ", EAGER_MARK[1]), (f"eager: {statements} ran while the model wrote", "$text-success")]
        return Content.assemble(
            (RUN_CODE, "bold"),
            (f"  {lines} lines  ", "$text-muted"),
            state,
            *eager,
            ("   enter: inspect", "$text-muted italic"),
        )

    def _inner_lines(self) -> list[Content]:
        records = list(self.record.inner.values())
        lines: list[Content] = []
        hidden = len(records) - INNER_SHOWN
        if hidden > 0:
            lines.append(Content.styled(f"… {hidden:,} earlier calls (enter opens the inspector)", "$text-muted"))
            records = records[hidden:]
        for inner in records:
            lines.append(inner_call_line(inner))
            if inner.result is not None and inner.result.error:
                lines.append(Content.styled(f"  ↳ {fmt.one_line(inner.result.error, 300)}", "$text-error"))
        return lines

    def _result_content(self) -> Content:
        result = self.record.result
        assert result is not None
        if result.error or result.outcome != "ok":
            message = error_text(result.error or result.preview)
            what = MALFORMED_ARGUMENTS if self.record.raw_arguments is not None else "sandbox error"
            lines = [fmt.safe(line.rstrip()) for line in message.strip().splitlines()]
            shown = lines if len(lines) <= ERROR_LINES else [*lines[:2], "…", *lines[3 - ERROR_LINES :]]
            return Content.assemble(
                (f"{fmt.outcome_mark(result.outcome).plain} {what} — the model received:", "bold $text-error"),
                *((f"\n{fmt.clip_tail(line, 800)}", "$text-error") for line in shown),
            )
        return Content.assemble(("→ ", "$text-muted"), (fmt.one_line(result.preview, 400), ""))
