"""One model response: its request line (tokens, cost), then the tool calls it made, one row per call.

Calls are keyed by call id and updated in place when their results arrive. A tool-calling model often
answers with dozens of parallel calls; each call is a row of this block. Rows behave like items: the
transcript's cursor (up/down) picks one, enter or a click expands it to its full arguments and result.
A response with many calls shows the latest few; its "earlier calls" row lists them all.
"""

from __future__ import annotations

from textual.content import Content

from workbench.display import CUT_AT_MAX_TOKENS
from workbench.events import ProviderRetry
from workbench.summary import LENGTH
from workbench.timeline import ResponseEntry
from workbench.timeline_records import CallRecord
from workbench.tui import format as fmt
from workbench.tui.widgets.blocks import Block, fill, retry_notice

PREVIEW_ROWS_UP_TO = 4
"""Responses with at most this many calls show each result's preview; bigger ones show it on expansion."""
ROWS_SHOWN = 8
"""Calls listed of a bigger response until its "earlier calls" row is opened."""
MORE = "\x00more"
"""The item key of the "earlier calls" row."""


EXPANDED_LINES = 400
"""Lines of an expanded call's result at most; the rest is counted."""


class ResponseBlock(Block):
    """``── request 3 · 6,400 in ──`` then ``✓ name(args)  duration · size`` per call; a call expands in place.

    ``request`` is ``None`` for calls that follow text within the same response (they get no request line).
    """

    entry: ResponseEntry

    def __init__(self, entry: ResponseEntry) -> None:
        super().__init__(entry)
        self.gap = 1 if entry.request is not None else 0
        self.expanded: set[str] = set()
        self.show_all = False
        self._rows: dict[str, tuple[tuple[object, ...], list[Content]]] = {}
        """Call id -> (what its rows were drawn from, the rows): a batch redraws only the calls it changed."""

    @property
    def records(self) -> dict[str, CallRecord]:
        return self.entry.records

    @property
    def request(self) -> int | None:
        return self.entry.request

    @property
    def retries(self) -> list[ProviderRetry]:
        return self.entry.retries

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
        else:
            self.expanded.symmetric_difference_update({key})
        self.changed()

    # -- rendering -------------------------------------------------------------------------------

    def lines(self, width: int, selected: str | None) -> tuple[list[Content], list[str | None]]:
        lines: list[Content] = []
        owners: list[str | None] = []
        if self.entry.request is not None:
            lines.append(self._header())
            owners.append(None)
        for retry in map(retry_notice, self.entry.retries):
            wrapped = [fill(Content("  ") + line, width, "$text-warning") for line in retry.wrap(max(width - 2, 4))]
            lines.extend(wrapped)
            owners.extend([None] * len(wrapped))
        preview = len(self.records) <= PREVIEW_ROWS_UP_TO
        for key in self.items():
            chosen = key == selected
            if key == MORE:
                rows = [self._more_line(chosen)]
            else:
                rows = self._rows_of(self.records[key], preview, chosen, width)
            lines.extend(rows)
            owners.extend([key] * len(rows))
        return lines, owners

    def _rows_of(self, record: CallRecord, preview: bool, selected: bool, width: int) -> list[Content]:
        drawn_from = (record.result, record.ended, record.name, preview, selected, record.call_id in self.expanded,
                      width)  # fmt: skip
        cached = self._rows.get(record.call_id)
        if cached is None or cached[0] != drawn_from:
            cached = self._rows[record.call_id] = (drawn_from, self._call_lines(record, preview, selected, width))
        return cached[1]

    def _header(self) -> Content:
        parts: list[Content | tuple[str, str] | str] = [(f"── request {self.request}", "bold $text-muted")]
        usage = self.entry.usage
        if usage is not None:
            estimated = usage.estimated
            counts = fmt.count(usage.input_tokens, estimated), fmt.count(usage.output_tokens, estimated)
            tokens = f"  {counts[0]} in · {counts[1]} out"
            cost = fmt.cost(usage.cost_usd)
            mark = "~" if estimated and usage.cost_usd is not None else ""
            parts.append((f"{tokens} · {mark}{cost}", "$text-muted"))
            if usage.finish_reason == LENGTH:
                parts.append((f" · {CUT_AT_MAX_TOKENS}", "$text-warning"))
        elif not self.entry.ended and not self.records:
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
            if result.clipped_from is not None:
                meta = f"{fmt.duration(result.ms)} · {fmt.clipped(result.bytes, result.clipped_from)}"
        else:
            meta = "no result: the run ended first" if record.ended else "running…"
        head = Content.assemble(
            ("▸ " if selected else "  ", "$text-accent"),
            fmt.outcome_mark("denied" if record.ended and result is None else record.outcome),
            " ",
            (fmt.safe(record.name), "bold"),
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

    def _call_lines(self, record: CallRecord, preview: bool, selected: bool, width: int) -> list[Content]:
        result = record.result
        lines = [self._call_head(record, selected=selected)]
        if record.call_id in self.expanded:
            lines.append(Content.styled("      args", "bold $text-muted"))
            lines.extend(indented(fmt.pretty(record.args), width, 8))
            if result is not None:
                lines.append(Content.styled("      result (as the model saw it)", "bold $text-muted"))
                if result.error:
                    lines.extend(indented(result.error, width, 8, "$text-error"))
                lines.extend(indented(fmt.pretty(result.content or result.preview), width, 8))
                if not result.content and len(result.preview.encode()) < result.bytes:
                    lines.append(Content.styled("        (a preview: this recording predates full results)",
                                                "$text-muted italic"))  # fmt: skip
        elif result is not None:
            if result.error:
                lines.append(self._error_line(result.error))
            elif preview:
                lines.append(Content.styled(f"    → {fmt.one_line(result.preview, 400)}", "$text-muted"))
        return lines


def indented(text: str, width: int, indent: int, style: str = "") -> list[Content]:
    """``text`` wrapped below a row, ``indent`` cells in, at most about :data:`EXPANDED_LINES` lines."""
    room = max(width - indent, 16)
    sources = text.splitlines() or [""]
    lines: list[Content] = []
    for number, source in enumerate(sources):
        if len(lines) >= EXPANDED_LINES:
            lines.append(Content.styled(f"… {len(sources) - number:,} more lines", "$text-muted italic"))
            break
        lines.extend(Content.styled(fmt.safe(source), style).wrap(room) or [Content("")])
    return [Content(" " * indent) + line for line in lines]
