"""An arm's transcript drawn: the entries of its :class:`Timeline` as blocks of lines.

The model turns events into entries; this widget only draws and navigates. It is one scrolling widget
that draws lines (Textual's line API, as toolong does), not a widget per block: each block's lines are
kept until its entry changes, and only the lines on screen are painted. A batch of events so costs the
blocks it touched, whatever the length of the run, and the pane never re-lays out.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

from textual.binding import Binding
from textual.cache import LRUCache
from textual.content import Content
from textual.events import Click
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual

from workbench.events import ArmEvent
from workbench.timeline import (
    Entry,
    NoticeEntry,
    ResponseEntry,
    SnippetEntry,
    TextEntry,
    Timeline,
    ToolsEntry,
    TurnEntry,
)
from workbench.timeline_records import SnippetRecord
from workbench.tui.widgets.blocks import Block, Notice, TextBlock, TurnBlock, empty_hint
from workbench.tui.widgets.calls import MORE, ResponseBlock
from workbench.tui.widgets.snippet import SNIPPET, SnippetBlock
from workbench.tui.widgets.tools import ToolsBlock

EMPTY_HINTS = {
    "": "Each model request, the calls or snippets the model makes with their results, the model's text and its "
    "final answer appear here as they happen.",
    "tool": "Tool calling: each model request, every tool call the model makes with its result, the model's text "
    "and its final answer appear here as they happen.",
    "code": "Code mode: the snippet the model writes (as it writes it), the snippet's inner calls beneath it as they "
    "run, and the final answer appear here. Enter on a snippet opens the inspector.",
    "hybrid": "Hybrid: the app's tools called directly, the snippets the model writes with their inner calls "
    "beneath them, and the final answer appear here. Enter on a snippet opens the inspector.",
}

PAINTED_LINES = 4000
"""Painted lines kept by content (a few screens of every pane's changing blocks)."""


def block_for(entry: Entry) -> Block:
    """The block that draws an entry."""
    match entry:
        case TextEntry():
            return TextBlock(entry)
        case ResponseEntry():
            return ResponseBlock(entry)
        case SnippetEntry():
            return SnippetBlock(entry)
        case NoticeEntry():
            return Notice(entry)
        case ToolsEntry():
            return ToolsBlock(entry)
        case TurnEntry():
            return TurnBlock(entry)
        case _:
            raise TypeError(f"no block draws {type(entry).__name__}")


class Transcript(ScrollView, can_focus=True):
    """The scrolling, bottom-following record of what one arm did.

    Up and down pick a call or a snippet; enter (or a click) expands a call or inspects a snippet.
    While the view is at its bottom, new lines keep it there; scrolled up, it stays where it is.
    """

    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        overflow-x: hidden;
        scrollbar-size-vertical: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """
    BINDINGS = [
        Binding("up", "cursor(-1)", "Previous call", show=False, id="transcript.up"),
        Binding("down", "cursor(1)", "Next call", show=False, id="transcript.down"),
        Binding("enter", "choose", "Expand / inspect", id="transcript.choose",
                tooltip="Expand the picked call to its full arguments and result, or inspect the picked snippet"),
    ]  # fmt: skip

    class Inspect(Message):
        """Open the inspector on a snippet."""

        def __init__(self, record: SnippetRecord) -> None:
            super().__init__()
            self.record = record

    def __init__(self, arm: str, *, mode: str = "", id: str | None = None) -> None:
        super().__init__(id=id, classes="transcript")
        self.arm = arm
        self.planned_mode = mode
        """The arm's mode before its run starts (the empty transcript's hint explains it)."""
        self.model = Timeline(arm)
        self.blocks: list[Block] = []
        """The block drawing each of the model's entries, in the same order."""
        self.cursor: tuple[Block, str] | None = None
        """The picked item: a block and one of its :meth:`Block.items`."""
        self._position: dict[int, int] = {}
        """id(block) -> its index in :attr:`blocks`."""
        self._drawn: dict[int, tuple[tuple[object, ...], list[Content], list[str | None]]] = {}
        """id(block) -> (what it was drawn for, its lines, the item of each line)."""
        self._strips: dict[int, list[Strip | None]] = {}
        """id(block) -> its lines as painted, filled in as they come on screen."""
        self._painted: LRUCache[tuple[str, tuple[object, ...], int], Strip] = LRUCache(PAINTED_LINES)
        """Lines painted lately, by text, styles and width: a block drawn again mostly repeats lines already
        painted. (Content compares by text alone, so the styles are part of the key.)"""
        self._tops: list[int] = []
        """The first line of each block (its gap included)."""
        self._height = 0
        self._width = 0
        self._stale_from: int | None = 0
        """Blocks from this index on must be measured again (``None``: all measured)."""
        self._healing = False
        """A measure is scheduled from a paint that found blocks not measured at the current width."""
        self._hint: list[Content] = []
        self.following = True
        """Whether the view is at its bottom, so new lines keep it there (scrolling up releases it)."""

    # -- the record ------------------------------------------------------------------------------

    @property
    def last_snippet(self) -> SnippetRecord | None:
        return self.model.last_snippet

    @property
    def picked_snippet(self) -> SnippetRecord | None:
        """The snippet under the cursor, if the cursor is on one."""
        block = self.cursor[0] if self.cursor is not None else None
        return block.record if isinstance(block, SnippetBlock) else None

    def block(self, entry: Entry) -> Block:
        """The block drawing one of the model's entries."""
        index = self.model.index(entry)
        if index is None:
            raise KeyError(entry)
        self._sync()
        return self.blocks[index]

    def reset(self) -> None:
        self.model.reset()
        self.blocks.clear()
        self._position.clear()
        self._drawn.clear()
        self._strips.clear()
        self._painted.clear()
        self._tops.clear()  # a transcript not laid out (hidden, no width) is not measured again until it is
        self._height = 0
        self.cursor = None
        self._stale_from = 0
        self.following = True
        self._update()

    def apply(self, events: Iterable[ArmEvent]) -> None:
        """Fold a batch of this arm's events into the model, then draw the blocks it touched."""
        self.model.apply(events)
        self._sync()
        self._keep_cursor_shown()
        self._update()

    def _sync(self) -> None:
        """A block for each new entry; blocks from the first changed entry on are measured again."""
        stale = self.model.take_stale()
        if stale is None:
            return
        entries = self.model.entries
        for index in range(len(self.blocks), len(entries)):
            block = block_for(entries[index])
            self._position[id(block)] = index
            self.blocks.append(block)
        self._stale_from = stale if self._stale_from is None else min(self._stale_from, stale)

    def _keep_cursor_shown(self) -> None:
        """A picked call that newer calls pushed out of its response's shown rows: pick the "earlier calls"
        row that now holds it, so the cursor stays visible and up/down move from where it is."""
        if self.cursor is None:
            return
        block, key = self.cursor
        shown = block.items()
        if key not in shown and shown:
            self.cursor = (block, MORE if MORE in shown else shown[-1])
            self._touch(block)

    def _touch(self, block: Block) -> None:
        """The block's view changed (cursor, expansion): draw it again, and measure it and all below it."""
        block.changed()
        index = self._position[id(block)]
        self._stale_from = index if self._stale_from is None else min(self._stale_from, index)

    # -- measuring and painting ------------------------------------------------------------------

    def on_resize(self) -> None:
        self._update()

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        """The scrollbar coming or going changes the width lines are drawn at, though the widget kept its
        size (no resize): draw them again once that layout is done, else they are cropped without an ellipsis."""
        self.call_after_refresh(self._update)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        self.vertical_scrollbar.position = new_value  # also while hidden: it shows once this layout is done
        super().watch_scroll_y(old_value, new_value)
        self.following = round(new_value) >= self.max_scroll_y

    def _update(self) -> None:
        """Measure what changed, size the scrollable area, keep to the bottom if it was there, repaint."""
        width = self.scrollable_content_region.width
        if width != self._width:
            self._width = width
            self._drawn.clear()
            self._strips.clear()
            self._painted.clear()
            self._stale_from = 0
        if width <= 0:
            return
        start = self._stale_from
        if start is not None:
            del self._tops[start:]
            line = self._tops[-1] + self._block_height(start - 1) if start else 0
            for index in range(start, len(self.blocks)):
                self._tops.append(line)
                line += self._block_height(index)
            self._height = line
            self._stale_from = None
        hint = EMPTY_HINTS.get(self.model.mode or self.planned_mode, EMPTY_HINTS[""])
        self._hint = [] if self.blocks else empty_hint(hint, width)
        self.virtual_size = Size(width, max(self._height, len(self._hint)))
        if self.following:
            self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
        self.refresh()

    def _heal(self) -> None:
        self._healing = False
        self._update()

    def _block_height(self, index: int) -> int:
        block = self.blocks[index]
        return (block.gap if index else 0) + len(self._draw(block)[0])

    def _selected_in(self, block: Block) -> str | None:
        cursor = self.cursor
        return cursor[1] if cursor is not None and cursor[0] is block and self.has_focus else None

    def _draw(self, block: Block) -> tuple[list[Content], list[str | None]]:
        key = (block.version, self._width, self._selected_in(block))
        drawn = self._drawn.get(id(block))
        if drawn is None or drawn[0] != key:
            lines, owners = block.lines(self._width, key[2])
            drawn = self._drawn[id(block)] = (key, lines, owners)
            self._strips[id(block)] = [None] * len(lines)
        return drawn[1], drawn[2]

    def _locate(self, line: int) -> tuple[int, int] | None:
        """(block index, line within the block) of a line of the view; ``None`` for a gap or past the end."""
        index = bisect_right(self._tops, line) - 1
        if index < 0:
            return None
        block = self.blocks[index]
        offset = line - self._tops[index] - (block.gap if index else 0)
        lines, _ = self._draw(block)
        return (index, offset) if 0 <= offset < len(lines) else None

    def render_line(self, y: int) -> Strip:
        if (self._stale_from is not None or self._width != self.scrollable_content_region.width) and not self._healing:
            # Events applied before the transcript had a width (its pane not laid out yet) were folded but not
            # measured, and no resize may follow: measure them once this paint is done (else the pane stays blank).
            self._healing = True
            self.call_after_refresh(self._heal)
        _, scroll_y = self.scroll_offset
        line = scroll_y + y
        width = self._width
        style = self.visual_style.rich_style
        if self._hint:
            content = self._hint[line] if line < len(self._hint) else None
            return self._paint(content, width).crop_extend(0, width, style) if content else Strip.blank(width, style)
        found = self._locate(line)
        if found is None:
            return Strip.blank(width, style)
        index, offset = found
        block = self.blocks[index]
        strips = self._strips[id(block)]
        strip = strips[offset]
        if strip is None:
            strip = strips[offset] = self._paint(self._draw(block)[0][offset], width)
        return strip.crop_extend(0, width, style)

    def _paint(self, content: Content, width: int) -> Strip:
        key = (content.plain, tuple(content.spans), width)
        strip = self._painted.get(key)
        if strip is None:
            strips = Visual.to_strips(self, content, width, 1, self.visual_style)
            strip = self._painted[key] = strips[0] if strips else Strip.blank(width)
        return strip

    # -- picking ---------------------------------------------------------------------------------

    def _items(self) -> list[tuple[Block, str]]:
        return [(block, key) for block in self.blocks for key in block.items()]

    def _select(self, cursor: tuple[Block, str] | None) -> None:
        for block in {self.cursor[0] if self.cursor else None, cursor[0] if cursor else None}:
            if block is not None and id(block) in self._position:
                self._touch(block)
        self.cursor = cursor
        self._update()
        if cursor is not None:
            self._scroll_to_item(*cursor)

    def _scroll_to_item(self, block: Block, key: str) -> None:
        index = self._position[id(block)]
        _, owners = self._draw(block)
        rows = [number for number, owner in enumerate(owners) if owner == key] or [0]
        top = self._tops[index] + (block.gap if index else 0) + rows[0]
        height = min(rows[-1] - rows[0] + 1, max(self.scrollable_content_region.height, 1))
        self.scroll_to_region(Region(0, top, 1, height), animate=False, immediate=True, force=True)

    def action_cursor(self, step: int) -> None:
        items = self._items()
        if not items:
            return
        if self.cursor in items:
            position = max(0, min(len(items) - 1, items.index(self.cursor) + step))  # type: ignore[arg-type]
        else:
            position = len(items) - 1
        self._select(items[position])

    def action_choose(self) -> None:
        if self.cursor is None:
            self.action_cursor(0)
        if self.cursor is not None:
            self._activate(*self.cursor)

    def _activate(self, block: Block, key: str) -> None:
        if isinstance(block, SnippetBlock) and key == SNIPPET:
            self.post_message(self.Inspect(block.record))
        elif isinstance(block, ResponseBlock):
            block.toggle(key)
            self._select((block, block.items()[0]) if key == MORE else (block, key))
        elif isinstance(block, ToolsBlock):
            block.toggle()
            self._select((block, key))

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        event.stop()
        found = self._locate(self.scroll_offset.y + offset.y)
        if found is None:
            return
        block = self.blocks[found[0]]
        key = self._draw(block)[1][found[1]]
        if key is not None:
            self.focus()
            self._select((block, key))
            self._activate(block, key)

    def notify_style_update(self) -> None:
        """A theme or style change: painted lines hold resolved colours, so paint them again."""
        super().notify_style_update()
        self._painted.clear()
        for strips in self._strips.values():
            strips[:] = [None] * len(strips)
        self.refresh()

    def on_focus(self) -> None:
        """Show the cursor (on the latest item the first time) where it is: focusing never scrolls, so a
        click lands on the row under the pointer and a pane scrolled up stays where it was."""
        if self.cursor is None:
            items = self._items()
            self.cursor = items[-1] if items else None
        self._repaint_cursor()

    def on_blur(self) -> None:
        self._repaint_cursor()

    def _repaint_cursor(self) -> None:
        if self.cursor is not None and id(self.cursor[0]) in self._position:
            self._touch(self.cursor[0])
            self._update()
