"""A ``run_code`` snippet: its code growing as the model writes it, and its inner calls live beneath it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.events import Click
from textual.highlight import highlight
from textual.message import Message
from textual.widgets import Static

from workbench.tui import format as fmt
from workbench.tui.records import InnerRecord, SnippetRecord

INNER_SHOWN = 12
"""Inner calls listed under a snippet in the pane; the inspector lists them all."""


def inner_call_line(record: InnerRecord, *, args_limit: int = 48) -> Content:
    call, result = record.call, record.result
    meta = f"{fmt.duration(result.ms)} · {fmt.size(result.bytes)}" if result else "running…"
    return Content.assemble(
        fmt.outcome_mark(record.outcome),
        " ",
        call.name,
        ("(", "$text-muted"),
        (fmt.short_args(call.args, args_limit), "$text-muted"),
        (")", "$text-muted"),
        "  ",
        (meta, "$text-muted"),
    )


class SnippetView(Vertical, can_focus=True):
    """One snippet: header, highlighted code, inner calls (the latest few), and what the model received."""

    BINDINGS = [
        Binding("enter", "inspect", "Inspect", tooltip="Open the snippet inspector", id="snippet.inspect"),
    ]

    class Inspect(Message):
        """Open the inspector on this snippet."""

        def __init__(self, record: SnippetRecord) -> None:
            super().__init__()
            self.record = record

    def __init__(self, record: SnippetRecord, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="snippet")
        self.record = record
        self._header = Static(classes="snippet-header")
        self._code = Static(classes="snippet-code")
        self._inner = Static(classes="snippet-inner")
        self._result = Static(classes="snippet-result")
        self._shown_code: str | None = None

    def compose(self) -> ComposeResult:
        yield self._header
        yield self._code
        yield self._inner
        yield self._result

    def on_mount(self) -> None:
        self.update_view()

    def action_inspect(self) -> None:
        self.post_message(self.Inspect(self.record))

    def on_click(self, event: Click) -> None:
        event.stop()
        self.post_message(self.Inspect(self.record))

    def update_view(self) -> None:
        record = self.record
        self.set_class(record.running, "-running")
        self.set_class(record.ended and record.result is None, "-stopped")
        failed = record.result is not None and record.result.outcome != "ok"
        self.set_class(failed, "-error")
        self._header.update(self._header_content())
        if record.code != self._shown_code:
            self._shown_code = record.code
            self._code.update(highlight(fmt.safe(record.code.rstrip("\n")) or " ", language="python"))
        self._inner.display = bool(record.inner)
        if record.inner:
            self._inner.update(self._inner_content())
        self._result.display = record.result is not None
        if record.result is not None:
            self._result.update(self._result_content())

    def summary(self) -> list[Content]:
        lines = [Content("  ") + self._header_content()]
        if self.record.result is not None:
            lines.append(Content("    ") + self._result_content())
        return lines

    def _header_content(self) -> Content:
        record = self.record
        lines = record.code.count("\n") + 1 if record.code else 0
        if record.ended and record.result is None:
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

    def _inner_content(self) -> Content:
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
        return Content("\n").join(lines)

    def _result_content(self) -> Content:
        result = self.record.result
        assert result is not None
        if result.error or result.outcome != "ok":
            message = result.error or result.preview
            return Content.assemble(
                (f"{fmt.outcome_mark(result.outcome).plain} sandbox error — the model received: ", "bold $text-error"),
                (fmt.one_line(message, 800), "$text-error"),
            )
        return Content.assemble(("→ ", "$text-muted"), (fmt.one_line(result.preview, 400), ""))
