"""An arm's transcript: requests, streamed text, tool calls and snippets, built from events in batches.

Every call id is a key: a snippet has a widget of its own, the calls of one model response are rows of
one :class:`ResponseView`; later events update them in place. New blocks of a batch are mounted
together and each touched block re-renders once per batch. Only the latest :data:`MAX_BLOCKS` stay
live widgets; older ones become one-line history, so a run of any length keeps the pane fast.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from workbench.events import (
    ArmEvent,
    InnerCall,
    InnerResult,
    RequestStarted,
    RunFinished,
    Snippet,
    SnippetDelta,
    TextDelta,
    ToolCall,
    ToolResult,
    Usage,
)
from workbench.recorder import RUN_CODE
from workbench.tui import format as fmt
from workbench.tui.records import CallRecord, SnippetRecord
from workbench.tui.widgets.blocks import AnswerBlock, HistoryChunk, Notice, Spacer, TextBlock
from workbench.tui.widgets.calls import ResponseView
from workbench.tui.widgets.snippet import SnippetView

MAX_BLOCKS = 48
"""Live blocks kept in a pane; older ones become one-line history so that huge runs stay smooth."""
HISTORY_CHUNK_LINES = 200
"""Lines per history widget: small enough to re-render cheaply, big enough to keep the widget count low."""
HISTORY_TITLE = Content.styled(
    "── earlier, condensed to a line each (the counters include everything) ──", "$text-muted"
)

EMPTY_HINTS = {
    "tool": "Tool calling: each model request, every tool call the model makes with its result, the model's text "
    "and its final answer appear here as they happen.",
    "code": "Code mode: the snippet the model writes (as it writes it), the snippet's inner calls beneath it as they "
    "run, and the final answer appear here. Enter on a snippet opens the inspector.",
}

_NOT_ID = re.compile(r"[^A-Za-z0-9_-]")


def dom_id(arm: str, call_id: str) -> str:
    """A DOM id for a call: provider call ids may hold characters ids cannot."""
    return f"{arm}-{_NOT_ID.sub('_', call_id)}"


@dataclass
class NewText:
    """Text that started in this batch: it becomes a :class:`TextBlock`, parsed once, when the batch mounts."""

    text: str = ""
    answer: bool = False

    def mark_answer(self) -> None:
        self.answer = True


class Transcript(VerticalScroll):
    """The scrolling, bottom-anchored record of what one arm did."""

    DEFAULT_CSS = "Transcript { height: 1fr; }"

    def __init__(self, arm: str, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="transcript")
        self.arm = arm
        self.calls: dict[str, ResponseView] = {}
        """Every top-level call id -> the widget showing it (the calls of one response share one)."""
        self.snippets: dict[str, SnippetView] = {}
        self.requests: dict[int, ResponseView] = {}
        self._open_text: TextBlock | NewText | None = None
        self._open_response: ResponseView | None = None
        self._responses = 0
        self._history: list[HistoryChunk] = []
        self._hint: Static | None = None
        self._tail = Spacer(classes="transcript-tail")
        """Takes the room left under short content, so that it sits at the top while the pane stays anchored."""
        self._ended_texts: list[TextBlock] = []
        """Text blocks the model moved on from in this batch; their streams stop after the batch."""

    def compose(self) -> ComposeResult:
        self._hint = Static(EMPTY_HINTS.get(self.arm, ""), classes="empty-hint")
        yield self._hint
        yield self._tail

    def on_mount(self) -> None:
        self.anchor()

    async def reset(self) -> None:
        await self._close_text()
        self.calls.clear()
        self._open_response = None
        self.snippets.clear()
        self.requests.clear()
        self._history = []
        await self.remove_children([child for child in self.children if child is not self._tail])
        self._hint = Static(EMPTY_HINTS.get(self.arm, ""), classes="empty-hint")
        await self.mount(self._hint, before=self._tail)
        self.anchor()

    @property
    def last_snippet(self) -> SnippetRecord | None:
        return next(reversed(self.snippets.values())).record if self.snippets else None

    async def apply(self, events: Iterable[ArmEvent]) -> None:
        """Fold a batch of this arm's events into the transcript."""
        new: list[Widget | NewText] = []
        touched: dict[int, ResponseView | SnippetView] = {}
        growing: dict[int, TextBlock] = {}
        for event in events:
            payload = event.payload
            match payload:
                case TextDelta():
                    self._open_response = None
                    if self._open_text is None:
                        self._open_text = NewText()
                        new.append(self._open_text)
                    if isinstance(self._open_text, NewText):
                        self._open_text.text += payload.text
                    else:
                        self._open_text.add(payload.text)
                        growing[id(self._open_text)] = self._open_text
                case SnippetDelta() | Snippet():
                    view = self._snippet(payload.call_id, new)
                    view.record.code = payload.code
                    view.record.complete = view.record.complete or isinstance(payload, Snippet)
                    touched[id(view)] = view
                case InnerCall():
                    view = self._snippet(payload.parent_id, new)
                    view.record.add_inner_call(payload)
                    touched[id(view)] = view
                case InnerResult():
                    view = self._snippet(payload.parent_id, new)
                    view.record.add_inner_result(payload)
                    touched[id(view)] = view
                case ToolCall() if payload.name == RUN_CODE:
                    view = self._snippet(payload.call_id, new)
                    if not view.record.code and isinstance(payload.args, dict):
                        view.record.code = str(payload.args.get("code", ""))
                    view.record.complete = True
                    touched[id(view)] = view
                case ToolCall():
                    response = self._calls_response(new)
                    response.add(CallRecord(payload.call_id, payload.name, payload.args))
                    self.calls[payload.call_id] = response
                    touched[id(response)] = response
                case ToolResult():
                    target = self._store_result(payload, new)
                    touched[id(target)] = target
                case RequestStarted():
                    self._end_text()
                    self._responses += 1
                    response = ResponseView(payload.request, id=f"{self.arm}-response-{self._responses}")
                    self.requests[payload.request] = self._open_response = response
                    new.append(response)
                case Usage():
                    found = self.requests.get(payload.request)
                    if found is not None:
                        found.usage = payload
                        touched[id(found)] = found
                case RunFinished():
                    for response in self.requests.values():
                        if not response.ended:
                            response.ended = True
                            touched[id(response)] = response
                    for view in {*self.calls.values(), *self.snippets.values()}:
                        records = view.records.values() if isinstance(view, ResponseView) else [view.record]
                        for record in records:
                            if record.result is None:
                                record.ended = True
                                touched[id(view)] = view
                    new.extend(self._finish(payload))
                case _:
                    pass

        new = await self._fold([self._materialize(item) for item in new])
        if new and self._hint is not None:
            await self._hint.remove()
            self._hint = None
        if new:
            await self.mount_all(new, before=self._tail)
        for widget in touched.values():
            if widget.is_attached:
                widget.update_view()
        for block in growing.values():
            if block.is_attached:
                await block.flush()
        ended, self._ended_texts = self._ended_texts, []
        for block in ended:
            await block.close()

    def _materialize(self, item: Widget | NewText) -> Widget:
        """Turn text that started in this batch into its block, with all of the batch's text parsed once."""
        if not isinstance(item, NewText):
            return item
        block = TextBlock(item.text)
        if item.answer:
            block.mark_answer()
        if self._open_text is item:
            self._open_text = block
        return block

    def _snippet(self, call_id: str, new: list[Widget | NewText]) -> SnippetView:
        view = self.snippets.get(call_id)
        if view is None:
            self._end_text()
            self._open_response = None
            view = SnippetView(SnippetRecord(call_id, arm=self.arm), id=dom_id(self.arm, call_id))
            self.snippets[call_id] = view
            new.append(view)
        return view

    def _calls_response(self, new: list[Widget | NewText]) -> ResponseView:
        """The widget for the calls of the current response (a new one after text, a snippet or a request)."""
        if self._open_response is None:
            self._end_text()
            self._responses += 1
            self._open_response = ResponseView(id=f"{self.arm}-response-{self._responses}")
            new.append(self._open_response)
        return self._open_response

    def _store_result(self, result: ToolResult, new: list[Widget | NewText]) -> ResponseView | SnippetView:
        if result.call_id in self.snippets or (result.name == RUN_CODE and result.call_id not in self.calls):
            view = self._snippet(result.call_id, new)
            view.record.result = result
            return view
        response = self.calls.get(result.call_id)
        if response is None:  # a result whose call was never seen (a truncated recording)
            response = self._calls_response(new)
            response.add(CallRecord(result.call_id, result.name, {}))
            self.calls[result.call_id] = response
        response.records[result.call_id].result = result
        return response

    def _finish(self, finished: RunFinished) -> list[Widget]:
        blocks: list[Widget] = []
        text = self._open_text
        self._end_text()
        output = finished.output.strip()
        if output:
            if text is not None and text.text.strip() == output:
                text.mark_answer()
            else:
                blocks.append(AnswerBlock(finished.output))
        if finished.status == "cancelled":
            blocks.append(
                Notice(Content.styled("■ cancelled — the session was saved as cancelled", "bold"), kind="warning")
            )
        elif finished.error:
            blocks.append(
                Notice(
                    Content.assemble((f"✗ {finished.status}: ", "bold"), fmt.one_line(finished.error, 1000)),
                    kind="error",
                )
            )
        return blocks

    def _end_text(self) -> None:
        """The model moved on from its current text: the next text starts a new block."""
        if isinstance(self._open_text, TextBlock):
            self._ended_texts.append(self._open_text)
        self._open_text = None

    async def _close_text(self) -> None:
        if isinstance(self._open_text, TextBlock):
            await self._open_text.close()
        self._open_text = None

    async def _fold(self, new: list[Widget]) -> list[Widget]:
        """Keep at most :data:`MAX_BLOCKS` live blocks: the oldest finished ones become condensed history lines.

        Textual lays out every widget of the pane on each change, so the live window stays small while
        the history (a few widgets of plain lines) keeps everything scrollable. Returns the new blocks
        still worth mounting: a flood condenses some before they are ever shown.
        """
        current = [
            child
            for child in self.children
            if child not in (self._hint, self._tail) and not isinstance(child, HistoryChunk)
        ]
        excess = len(current) + len(new) - MAX_BLOCKS
        if excess <= 0:
            return new
        folding = [block for block in [*current, *new][:excess] if self._foldable(block)]
        if not folding:
            return new
        lines: list[Content] = []
        for block in folding:
            self._forget(block)
            lines.extend(block.summary())  # type: ignore[attr-defined]
        await self._add_history(lines)
        gone = set(folding)
        await self.remove_children([block for block in current if block in gone])
        return [block for block in new if block not in gone]

    async def _add_history(self, lines: list[Content]) -> None:
        last = self._history[-1] if self._history else None
        if last is not None and len(last.lines) < HISTORY_CHUNK_LINES:
            last.add(lines)
            return
        chunk = HistoryChunk(lines if last else [HISTORY_TITLE, *lines])
        self._history.append(chunk)
        if last is None:
            await self.mount(chunk, before=0)
        else:
            await self.mount(chunk, after=last)

    def _foldable(self, block: Widget) -> bool:
        if block in (self._open_text, self._open_response):
            return False
        if isinstance(block, SnippetView):
            return not block.record.running
        if isinstance(block, ResponseView):
            return all(record.result is not None or record.ended for record in block.records.values())
        return True

    def _forget(self, block: Widget) -> None:
        """Drop a folded block's keys, so that late events for it are ignored rather than re-shown."""
        if isinstance(block, ResponseView):
            for call_id in block.records:
                self.calls.pop(call_id, None)
        if isinstance(block, SnippetView):
            self.snippets.pop(block.record.call_id, None)
        if isinstance(block, ResponseView) and block.request is not None:
            self.requests.pop(block.request, None)
