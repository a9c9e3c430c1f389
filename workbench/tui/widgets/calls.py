"""One model response: its request line (tokens, cost), then the tool calls it made, one row per call.

Calls are keyed by call id and updated in place when their results arrive. A tool-calling model often
answers with dozens of parallel calls; each call is a row of this widget rather than a widget of its
own, because Textual spends a few milliseconds per mounted widget and a widget per call would cap a
pane at a few hundred events a second. Rows still behave like items: the cursor (up/down) picks one,
enter or a click expands it to its full arguments and result. A response with many calls shows the
latest few; its "earlier calls" row lists them all.
"""

from __future__ import annotations

from collections import Counter

from textual.binding import Binding
from textual.content import Content
from textual.events import Click
from textual.reactive import reactive
from textual.widget import Widget

from workbench.events import Usage
from workbench.tui import format as fmt
from workbench.tui.records import CallRecord

PREVIEW_ROWS_UP_TO = 4
"""Responses with at most this many calls show each result's preview; bigger ones show it on expansion."""
ROWS_SHOWN = 8
"""Calls listed of a bigger response until its "earlier calls" row is opened."""
MORE = "\x00more"
"""The item key of the "earlier calls" row."""


class ResponseView(Widget, can_focus=True):
    """``── request 3 · 6,400 in ──`` then ``✓ name(args)  size · duration`` per call; a call expands in place.

    ``request`` is ``None`` for calls that follow text within the same response (they get no request line).
    """

    DEFAULT_CSS = """
    ResponseView {
        height: auto;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        &.-expanded { text-wrap: wrap; }
    }
    """
    BINDINGS = [
        Binding("enter", "toggle", "Expand call", tooltip="Show the full arguments and result", id="calls.toggle"),
        Binding("up", "cursor(-1)", "Previous call", show=False, id="calls.up"),
        Binding("down", "cursor(1)", "Next call", show=False, id="calls.down"),
    ]

    cursor = reactive(0)
    """Index into :meth:`items` (the rows a person can pick)."""

    def __init__(self, request: int | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="response -headed" if request is not None else "response")
        self.request = request
        self.usage: Usage | None = None
        self.ended = False
        """The arm finished: a request that never got its usage is no longer waiting."""
        self.records: dict[str, CallRecord] = {}
        self.expanded: set[str] = set()
        self.show_all = False
        self._line_items: list[str | None] = []
        self.can_focus = False

    def add(self, record: CallRecord) -> None:
        self.records[record.call_id] = record

    def update_view(self) -> None:
        self.can_focus = bool(self.records)
        self.refresh(layout=True)

    # -- picking and expanding -------------------------------------------------------------------

    def items(self) -> list[str]:
        """The pickable rows, top to bottom: maybe the "earlier calls" row, then the shown calls."""
        ids = list(self.records)
        if self.show_all or len(ids) <= ROWS_SHOWN:
            return ids
        return [MORE, *ids[-ROWS_SHOWN:]]

    def toggle(self, key: str) -> None:
        if key == MORE:
            self.show_all = True
            self.cursor = 0
        else:
            self.expanded.symmetric_difference_update({key})
            self.set_class(bool(self.expanded), "-expanded")
        self.refresh(layout=True)

    def action_toggle(self) -> None:
        items = self.items()
        if items:
            self.toggle(items[min(self.cursor, len(items) - 1)])

    def action_cursor(self, step: int) -> None:
        items = self.items()
        self.cursor = max(0, min(len(items) - 1, self.cursor + step))
        if items and items[self.cursor] in self._line_items:
            line = self._line_items.index(items[self.cursor])
            self.scroll_to_region(self.region.reset_offset.translate((0, line)).crop_size((self.size.width, 1)))

    def on_click(self, event: Click) -> None:
        event.stop()
        row = event.y - self.styles.padding.top
        if 0 <= row < len(self._line_items) and (key := self._line_items[row]) is not None:
            self.cursor = self.items().index(key)
            self.toggle(key)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def watch_cursor(self) -> None:
        self.refresh()

    # -- rendering -------------------------------------------------------------------------------

    def render(self) -> Content:
        lines: list[Content] = []
        owners: list[str | None] = []
        if self.request is not None:
            lines.append(self._header())
            owners.append(None)
        items = self.items()
        preview = len(self.records) <= PREVIEW_ROWS_UP_TO
        for index, key in enumerate(items):
            selected = self.has_focus and index == self.cursor
            rows = (
                [self._more_line(selected)] if key == MORE else self._call_lines(self.records[key], preview, selected)
            )
            lines.extend(rows)
            owners.extend([key] * len(rows))
        self._line_items = owners
        return Content("\n").join(lines)

    def summary(self) -> list[Content]:
        """What the pane keeps once this response scrolls far away: the request line and a line per tool."""
        lines = [self._header()] if self.request is not None else []
        if len(self.records) <= ROWS_SHOWN:
            for record in self.records.values():
                lines.append(self._call_head(record, selected=False))
        else:
            for (name, outcome), count in Counter((r.name, r.outcome) for r in self.records.values()).items():
                lines.append(
                    Content.assemble(
                        "  ", fmt.outcome_mark(outcome), f" {count} × ", (name, "bold"), ("(…)", "$text-muted")
                    )
                )
        for record in self.records.values():
            if record.result is not None and record.result.error:
                lines.append(self._error_line(record.result.error))
        return lines

    def _header(self) -> Content:
        parts: list[Content | tuple[str, str] | str] = [(f"── request {self.request}", "bold $text-muted")]
        usage = self.usage
        if usage is not None:
            tokens = f"  {fmt.count(usage.input_tokens)} in · {fmt.count(usage.output_tokens)} out"
            parts.append((f"{tokens} · {fmt.cost(usage.cost_usd)}", "$text-muted"))
        elif not self.ended and not self.records:
            parts.append(("  in progress…", "$text-accent"))
        if len(self.records) > PREVIEW_ROWS_UP_TO:
            records = self.records.values()
            done = sum(1 for record in records if record.result is not None)
            failed = sum(1 for record in records if record.outcome not in (None, "ok"))
            calls = f"  {len(self.records)} parallel calls, {done} returned" + (f", {failed} failed" if failed else "")
            parts.append((calls, "$text-error" if failed else "$text-muted"))
        parts.append((" ──", "$text-muted"))
        return Content.assemble(*parts)

    def _more_line(self, selected: bool) -> Content:
        hidden = len(self.records) - ROWS_SHOWN
        line = Content.assemble(
            ("▸ " if selected else "  ", "$text-accent"),
            (f"… {hidden:,} earlier calls", "$text-muted"),
            ("  (enter or click lists them all)", "$text-muted italic"),
        )
        return line.stylize("on $boost") if selected else line

    def _call_head(self, record: CallRecord, *, selected: bool) -> Content:
        result = record.result
        if result is not None:
            meta = f"{fmt.duration(result.ms)} · {fmt.size(result.bytes)}"
        else:
            meta = "no result: the run ended first" if record.ended else "running…"
        head = Content.assemble(
            ("▸ " if selected else "  ", "$text-accent"),
            fmt.outcome_mark("denied" if record.ended and result is None else record.outcome),
            " ",
            (record.name, "bold"),
            ("(", "$text-muted"),
            (fmt.short_args(record.args, 80), "$text-muted"),
            (")", "$text-muted"),
            "  ",
            (meta, "$text-muted"),
        )
        return head.stylize("on $boost") if selected else head

    @staticmethod
    def _error_line(error: str) -> Content:
        return Content.styled(f"    ↳ model received: {fmt.one_line(error, 600)}", "$text-error")

    def _call_lines(self, record: CallRecord, preview: bool, selected: bool) -> list[Content]:
        result = record.result
        lines = [self._call_head(record, selected=selected)]
        expanded = record.call_id in self.expanded
        if expanded:
            lines.append(Content.styled("      args", "bold $text-muted"))
            lines.extend(Content("        " + line) for line in fmt.pretty(record.args).splitlines())
        if result is not None:
            if result.error:
                lines.append(self._error_line(result.error))
            elif expanded:
                lines.append(Content.styled("      result (as the model saw it)", "bold $text-muted"))
                lines.extend(Content("        " + line) for line in fmt.pretty(result.preview).splitlines())
            elif preview:
                lines.append(Content.styled(f"    → {fmt.one_line(result.preview, 400)}", "$text-muted"))
        return lines
