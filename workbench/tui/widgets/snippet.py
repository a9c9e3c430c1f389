"""A ``run_code`` snippet: its code growing as the model writes it, and its inner calls live beneath it."""

from __future__ import annotations

from textual.content import Content
from textual.highlight import highlight

from workbench.events import MALFORMED_ARGUMENTS
from workbench.tui import format as fmt
from workbench.tui.records import InnerRecord, SnippetRecord
from workbench.tui.transcript_model import SnippetEntry
from workbench.tui.widgets.blocks import Block, fill

INNER_SHOWN = 12
"""Inner calls listed under a snippet in the pane; the inspector lists them all."""
SNIPPET = "snippet"
"""The item key of a snippet (the whole block is one item: enter opens the inspector)."""


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
        self._code: tuple[str, int, list[Content]] = ("", 0, [])
        """The code last drawn, the width it was drawn at, and its highlighted, wrapped lines."""

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
        if record.inner:
            body.append(Content(""))
            body.extend(Content.styled("▏ ", "$foreground 25%") + line for line in self._inner_lines())
        if record.result is not None:
            body.extend(self._result_content().wrap(room))
        background = "on $boost" if chosen else "on $surface"
        lines = [fill(Content.styled("▌ ", bar) + line, width, background) for line in body]
        return lines, [SNIPPET] * len(lines)

    def _code_lines(self, room: int) -> list[Content]:
        """The code highlighted and wrapped; drawn again only when the code or the width changes."""
        code = self.record.code
        if (code, room) != self._code[:2]:
            highlighted = highlight(fmt.safe(code.rstrip("\n")) or " ", language="python")
            lines = [
                Content(" ") + part
                for line in highlighted.split("\n", allow_blank=True)
                for part in (line.wrap(room - 1) or [Content("")])
            ]
            self._code = (code, room, lines)
        return self._code[2]

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
            state = Content.assemble(
                fmt.outcome_mark(record.result.outcome),
                (f" {fmt.duration(record.result.ms)} · {len(record.inner)} inner calls", "$text-muted"),
            )
        return Content.assemble(
            ("run_code", "bold"),
            (f"  {lines} lines  ", "$text-muted"),
            state,
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
            message = result.error or result.preview
            what = MALFORMED_ARGUMENTS if self.record.raw_arguments is not None else "sandbox error"
            return Content.assemble(
                (f"{fmt.outcome_mark(result.outcome).plain} {what} — the model received: ", "bold $text-error"),
                (fmt.one_line(message, 800), "$text-error"),
            )
        return Content.assemble(("→ ", "$text-muted"), (fmt.one_line(result.preview, 400), ""))
