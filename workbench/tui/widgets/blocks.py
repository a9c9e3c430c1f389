"""Transcript blocks: what one entry of a transcript shows, drawn as lines (no widgets).

A :class:`Block` turns its record into lines of :class:`Content` at a width. The transcript keeps the
lines of each block until its ``version`` changes, so a batch of events costs the few blocks it
touched, however long the run. Blocks that a person can pick (a call row, a snippet) name their
*items*; the transcript owns the cursor over them.
"""

from __future__ import annotations

import re

from textual.content import Content

from workbench.tui import format as fmt
from workbench.tui.markdown import markdown_lines


class Block:
    """One transcript entry. ``gap`` is the number of blank lines above it (none at the very top)."""

    gap = 0

    def __init__(self) -> None:
        self.version = 0
        """Bumped by :meth:`changed`: the transcript draws the block again."""

    def changed(self) -> None:
        self.version += 1

    def items(self) -> list[str]:
        """Keys of the rows a person can pick, top to bottom."""
        return []

    def lines(self, width: int, selected: str | None) -> tuple[list[Content], list[str | None]]:
        """The block's lines at ``width``, and which item (if any) each line belongs to."""
        raise NotImplementedError

    @property
    def plain(self) -> str:
        """The block as plain text (tests and copying)."""
        lines, _ = self.lines(200, None)
        return "\n".join(line.plain for line in lines)


_BLOCK_BREAK = re.compile(r"\n\n+(?=\S)")
"""A blank line before text at the left margin: a new top-level Markdown block starts there."""
_FENCE = re.compile(r"^ {0,3}(?:```|~~~)", re.MULTILINE)


class TextBlock(Block):
    """Model text as it streams: Markdown, wrapped to the pane.

    Streamed text only grows, so the Markdown blocks before its last block break (outside a code fence)
    are laid out once and kept; each batch lays out only the text after it. Laying out all of 100 KB on
    every batch made a long answer quadratic.
    """

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.text = text
        self.answer = False
        self._settled: tuple[int, int, list[Content]] = (0, 0, [])
        """(width, end of the settled text, its lines): text before ``end`` is whole Markdown blocks."""

    def add(self, text: str) -> None:
        self.text += text
        self.changed()

    def mark_answer(self) -> None:
        self.answer = True
        self.gap = 1
        self.changed()

    def lines(self, width: int, selected: str | None) -> tuple[list[Content], list[str | None]]:
        if self.answer:
            lines = boxed(self._markdown(width - 6), width - 2, "Final answer")
        else:
            lines = [Content(" ") + line for line in self._markdown(width - 2)]
        return lines, [None] * len(lines)

    def _markdown(self, width: int) -> list[Content]:
        text = self.text
        settled_width, start, settled = self._settled
        if settled_width != width or start > len(text):
            start, settled = 0, []
        end, inside_fence, scanned = start, False, start
        for found in _BLOCK_BREAK.finditer(text, start):
            inside_fence ^= len(_FENCE.findall(text, scanned, found.start())) % 2 == 1
            scanned = found.start()
            if not inside_fence:
                end = found.start()
        if end > start:
            chunk = markdown_lines(text[start:end].strip("\n"), width)
            settled = [*settled, Content(""), *chunk] if settled and chunk else [*settled, *chunk]
            self._settled = (width, end, settled)
        tail = markdown_lines(text[end:].strip("\n"), width) if text[end:].strip() else []
        if settled and tail:
            return [*settled, Content(""), *tail]
        return settled or tail


class AnswerBlock(TextBlock):
    """The arm's final answer, when it is not simply the last streamed text."""

    def __init__(self, answer: str) -> None:
        super().__init__(answer)
        self.mark_answer()


class Notice(Block):
    """A one-off line in the transcript: an arm's error or cancellation."""

    gap = 1
    BACKGROUNDS = {"error": "$text-error on $error-muted", "warning": "$text-warning on $warning-muted"}

    def __init__(self, content: Content, *, kind: str) -> None:
        super().__init__()
        self.content = content
        self.kind = kind

    def lines(self, width: int, selected: str | None) -> tuple[list[Content], list[str | None]]:
        style = self.BACKGROUNDS.get(self.kind, "$text-muted")
        lines = [fill(Content(" ") + line, width, style) for line in self.content.wrap(max(width - 2, 4))]
        return lines, [None] * len(lines)


def fill(line: Content, width: int, style: str) -> Content:
    """``line`` padded to ``width`` with ``style`` beneath its own styles (a background across the pane)."""
    return line.truncate(width, ellipsis=True, pad=True).stylize_before(style)


def boxed(body: list[Content], width: int, title: str) -> list[Content]:
    """``body`` in a rounded box ``width`` wide, in the success colour, titled (the final answer)."""
    inner = max(width - 4, 4)
    top = Content.assemble(
        (" ╭─ ", "$success"),
        (title, "bold $text-success"),
        (" " + "─" * max(inner - len(title) - 1, 0) + "╮", "$success"),
    )
    rows = [
        Content.assemble((" │ ", "$success"), line.truncate(inner, ellipsis=True, pad=True), (" │", "$success"))
        for line in body
    ]
    bottom = Content.styled(" ╰" + "─" * (inner + 2) + "╯", "$success")
    return [top, *rows, bottom]


def empty_hint(text: str, width: int) -> list[Content]:
    return [Content(" ") + line for line in Content.styled(fmt.safe(text), "$text-muted").wrap(max(width - 2, 8))]
