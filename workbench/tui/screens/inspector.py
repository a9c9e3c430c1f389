"""The snippet inspector: the full code with line numbers, its inner calls in order, and one call in full."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, ScrollableContainer, Vertical, VerticalScroll
from textual.content import Content
from textual.highlight import highlight
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from workbench.events import MALFORMED_ARGUMENTS
from workbench.timeline_records import InnerRecord, SnippetRecord
from workbench.tui import format as fmt
from workbench.tui.widgets.footer import Footer

REFRESH_S = 0.25
"""How often the inspector catches up with a snippet that is still running."""
CODE_LEAST = 48
"""Columns the code keeps at least beside the inner calls; with less, the code sits above them at full width."""
DETAIL_LEAST = 36
"""Columns the selected call keeps beside the inner calls' table; with less, it sits beneath the table."""
ARGS_WIDEST = 48
"""The arguments column is as wide as its widest arguments, up to this (the selected call shows them whole)."""
CODE_FRAME = 6
"""Columns around the code's own: the pane's border (2), padding (2), the gap after the line numbers (1) and the
scrollbar (1)."""
TABLE_FRAME = 3
"""Columns around the inner calls' table: the pane's border (2) and the table's scrollbar (1)."""
COLUMNS = (("#", "n"), ("call", "name"), ("args", "args"), ("outcome", "outcome"), ("ms", "ms"), ("size", "bytes"))

HELP = """\
## What you are looking at

The snippet the code-mode arm's model wrote, and what it did when it ran in the sandbox.

- **Code** (left): the whole snippet with line numbers, as wide as its longest line needs (the inner calls
  keep the rest).
- **Inner calls** (right): every tool call the snippet made inside the sandbox, in the order they ran, with
  the arguments that were set, the outcome, time and size. **Up and down walk the calls**; the selected
  call's full arguments and whole result show beneath.
- **What the model received** (bottom): the one result of the snippet that went back into the model's
  context — usually far smaller than everything the inner calls read, which is code mode's point.

A snippet that is still running fills in as its calls arrive. `c` copies the code; `escape` goes back.
"""


def numbered_code(code: str, width: int | None = None) -> Content:
    """The code highlighted, with a right-aligned line-number gutter. A line longer than ``width`` goes on under
    a ``┆`` gutter (never cut: on a narrow terminal the code is what the inspector is for)."""
    lines = highlight(fmt.safe(code.rstrip("\n")) or " ", language="python").split("\n", allow_blank=True)
    gutter = len(str(len(lines)))
    shown: list[Content] = []
    for number, line in enumerate(lines, 1):
        pieces = line.wrap(width) if width and line.cell_length > width else [line]
        for index, piece in enumerate(pieces):
            head = f"{number:>{gutter}} │ " if index == 0 else f"{'':>{gutter}} ┆ "
            shown.append(Content.assemble((head, "$text-muted"), piece))
    return Content("\n").join(shown)


def code_width(code: str) -> int:
    """Columns the code pane needs to show every line of ``code`` whole."""
    lines = code.rstrip("\n").split("\n") or [" "]
    return max(len(line.expandtabs()) for line in lines) + len(str(len(lines))) + 3 + CODE_FRAME


def result_text(content: str, preview: str, size: int) -> list[Content]:
    """A result in full, indented when it is JSON. Sessions recorded before results kept their text have
    only the one-line preview: then say so."""
    if content:
        return [Content(fmt.pretty(content))]
    parts = [Content(fmt.pretty(preview))]
    if len(preview.encode()) < size:
        parts.append(
            Content.styled(
                f"(a preview: this session was recorded before results kept their full {fmt.size(size)})",
                "$text-muted italic",
            )
        )
    return parts


def _cell_width(cell: str | Content | Text) -> int:
    return cell.cell_len if isinstance(cell, Text) else cell.cell_length if isinstance(cell, Content) else len(cell)


class InspectorScreen(Screen[None]):
    CSS_PATH = "inspector.tcss"
    HELP = HELP
    HELP_TITLE = "Snippet inspector"
    BINDINGS = [
        Binding("escape", "dismiss", "Back", id="inspector.back", tooltip="Back to the comparison"),
        Binding("c", "copy", "Copy snippet", id="inspector.copy", tooltip="Copy the snippet's code to the clipboard"),
    ]

    def __init__(self, record: SnippetRecord) -> None:
        super().__init__()
        self.record = record
        self._rows = 0
        self._widths = [len(label) for label, _ in COLUMNS]
        """Each table column's widest cell so far (the table's natural width, known before it measures)."""
        self._code_room: int | None = None
        self._shown_code: tuple[str, bool] | None = None
        """The code last shown, and whether it was labelled as recovered from arguments that were not JSON."""
        self._shown_result = False

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◧")
        with Horizontal(id="inspector-body"):
            with ScrollableContainer(id="code-pane"):
                yield Static(id="code")
            with Vertical(id="calls-pane"):
                table: DataTable[str | Content] = DataTable(id="inner-calls", cursor_type="row", zebra_stripes=True)
                for label, key in COLUMNS:
                    table.add_column(label, key=key)
                yield table
                with VerticalScroll(id="call-detail-pane"):
                    yield Static(id="call-detail")
        with VerticalScroll(id="snippet-result-pane"):
            yield Static(id="snippet-result")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Snippet inspector"
        self.sub_title = f"{self.record.arm} arm · {self.record.call_id}"
        self.query_one("#calls-pane").border_title = "Inner calls, in the order they ran"
        self.query_one("#call-detail-pane").border_title = "Selected call"
        self.query_one("#snippet-result-pane").border_title = "What the model received"
        self._sync()
        self.query_one(DataTable).focus()
        if self.record.running:
            self.set_interval(REFRESH_S, self._sync)

    def palette_commands(self) -> Iterable[tuple[str, str, str]]:
        yield "Snippet: copy", "Copy the snippet's code to the clipboard (c)", "copy"
        yield "Snippet: back", "Back to the comparison (escape)", "dismiss"

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.record.code)
        self.notify(f"Copied the snippet ({fmt.line_count(self.record.code)} lines) to the clipboard.", title="Snippet")

    def _sync(self) -> None:
        """Show what is new since the last look: code, rows for new inner calls, finished results."""
        record = self.record
        shown = (record.code, record.raw_arguments is not None)
        if shown != self._shown_code:
            self._shown_code = shown
            malformed = f" · {MALFORMED_ARGUMENTS}: recovered, never ran" if shown[1] else ""
            self.query_one("#code-pane").border_title = f"Code · {fmt.line_count(record.code)} lines{malformed}"
            self._code_room = None
        table: DataTable[str | Content] = self.query_one(DataTable)
        records = list(record.inner.values())
        for number, inner in enumerate(records, 1):
            cells = self._cells(number, inner)
            self._widths = [max(width, _cell_width(cell)) for width, cell in zip(self._widths, cells, strict=True)]
            if number > self._rows:
                table.add_row(*cells, key=inner.call.call_id)
            else:
                for column, value in zip(("outcome", "ms", "bytes"), cells[3:], strict=True):
                    table.update_cell(inner.call.call_id, column, value)
        self._rows = len(records)
        self._fit()
        if self._rows and table.cursor_row == 0:
            self._show_call(records[0])
        elif not self._rows:
            self.query_one("#call-detail", Static).update(
                Content.styled("This snippet made no inner calls.", "$text-muted")
            )
        self._show_result()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Columns sized to content: the inner calls' table as wide as its cells; the code as wide as its
        longest line where that fits beside the table, else what is left down to :data:`CODE_LEAST` (long
        lines wrap), else the code above the calls at full width. The selected call sits beside the table when
        :data:`DETAIL_LEAST` is left for it, else beneath it."""
        width = self.size.width
        if not width:
            return
        table = sum(self._widths) + 2 * len(self._widths) + TABLE_FRAME
        needed = code_width(self.record.code)
        stacked = width - table < CODE_LEAST
        self.set_class(stacked, "-stacked")
        pane = width if stacked else min(needed, width - table)
        self.query_one("#code-pane").styles.width = "1fr" if stacked else pane
        room = pane - CODE_FRAME - len(str(fmt.line_count(self.record.code))) - 3  # less the line-number gutter
        beside = stacked and width - table >= DETAIL_LEAST
        self.query_one("#calls-pane").set_class(beside, "-beside")
        self.query_one("#inner-calls").styles.width = table - 2 if beside else "1fr"
        if room != self._code_room:
            self._code_room = room
            self.query_one("#code", Static).update(numbered_code(self.record.code, max(room, 20)))

    def _cells(self, number: int, inner: InnerRecord) -> tuple[str | Content, ...]:
        result = inner.result
        outcome = Content.assemble(fmt.outcome_mark(inner.outcome), " ", inner.outcome or "running")
        return (
            str(number),
            fmt.cell(inner.call.name),
            fmt.cell(fmt.short_args(inner.call.args, ARGS_WIDEST)),
            outcome,
            fmt.duration(result.ms) if result else "",
            fmt.size(result.bytes) if result else "",
        )

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        if key is not None and key in self.record.inner:
            self._show_call(self.record.inner[key])

    def _show_call(self, inner: InnerRecord) -> None:
        call, result = inner.call, inner.result
        parts = [
            Content.assemble((fmt.safe(call.name), "bold"), ("  ", ""), (fmt.safe(call.call_id), "$text-muted")),
            Content.styled("args", "bold $text-muted"),
            Content(fmt.pretty(call.args)),
        ]
        if result is None:
            parts.append(Content.styled("running…", "$text-accent"))
        else:
            parts.append(
                Content.assemble(
                    ("result  ", "bold $text-muted"),
                    fmt.outcome_mark(result.outcome),
                    (f" {result.outcome} · {fmt.duration(result.ms)} · {fmt.size(result.bytes)}", "$text-muted"),
                )
            )
            if result.error:
                parts.append(Content.styled(fmt.safe(result.error), "$text-error"))
            parts.extend(result_text(result.content, result.preview, result.bytes))
        self.query_one("#call-detail", Static).update(Content("\n").join(parts))

    def _show_result(self) -> None:
        result = self.record.result
        widget = self.query_one("#snippet-result", Static)
        if result is None:
            widget.update(Content.styled("The snippet is still running…", "$text-accent"))
            return
        if self._shown_result:
            return
        self._shown_result = True
        head = Content.assemble(
            fmt.outcome_mark(result.outcome),
            (f" {result.outcome} · {fmt.duration(result.ms)} · {fmt.size(result.bytes)} to the model", "$text-muted"),
            (f" ({fmt.clipped(result.bytes, result.clipped_from)})" if result.clipped_from else "", "$text-warning"),
        )
        if self.record.raw_arguments is not None:
            head += Content.styled(f" · {MALFORMED_ARGUMENTS}; as written:", "$text-error")
            head = Content("\n").join([head, Content.styled(fmt.safe(self.record.raw_arguments), "$text-muted")])
        if result.error:
            body = [Content.styled(fmt.safe(result.error), "$text-error")]
        else:
            body = result_text(result.content, result.preview, result.bytes)
        widget.update(Content("\n").join([head, *body]))
