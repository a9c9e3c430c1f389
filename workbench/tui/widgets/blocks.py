"""Transcript blocks: how one entry of a transcript (:mod:`workbench.timeline`) is drawn, as
lines (no widgets).

A :class:`Block` turns its entry into lines of :class:`Content` at a width. The transcript keeps the
lines of each block until its ``version`` changes (the entry changed, or the block's own view of it,
such as an expanded call), so a batch of events costs the few blocks it touched, however long the run.
Blocks that a person can pick (a call row, a snippet) name their *items*; the transcript owns the
cursor over them.
"""

from __future__ import annotations

import re

from textual.content import Content

from workbench.display import clipped_error
from workbench.events import ProviderRetry
from workbench.timeline import Entry, NoticeEntry, TextEntry, TurnEntry
from workbench.tui import format as fmt
from workbench.tui.markdown import markdown_lines


class Block:
    """How one transcript entry is drawn. ``gap`` is the number of blank lines above it (none at the very
    top)."""

    gap = 0

    def __init__(self, entry: Entry) -> None:
        self.entry = entry
        self._view_version = 0

    @property
    def version(self) -> tuple[int, int]:
        """Changes when the entry or this block's view of it changes: the transcript draws it again."""
        return self.entry.version, self._view_version

    def changed(self) -> None:
        """This block's view of its entry changed (an expanded row, say)."""
        self._view_version += 1

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
    """Model text as it streams: Markdown, wrapped to the pane; boxed once it is the final answer.

    Streamed text only grows, so the Markdown blocks before its last block break (outside a code fence)
    are laid out once and kept; each batch lays out only the text after it. Laying out all of 100 KB on
    every batch made a long answer quadratic.
    """

    entry: TextEntry

    def __init__(self, entry: TextEntry) -> None:
        super().__init__(entry)
        self._safe: tuple[int, str] = (0, "")
        """(characters of the entry's text made safe, the safe text): streamed text is made safe as it grows."""
        self._settled: tuple[int, int, list[Content]] = (0, 0, [])
        """(width, end of the settled text, its lines): text before ``end`` is whole Markdown blocks."""

    @property
    def gap(self) -> int:  # type: ignore[override]
        return 1 if self.entry.answer else 0

    @property
    def answer(self) -> bool:
        return self.entry.answer

    @property
    def text(self) -> str:
        """The entry's text without control characters."""
        raw = self.entry.text
        done, text = self._safe
        if done > len(raw):
            done, text = 0, ""
        if done < len(raw):
            self._safe = (len(raw), text + fmt.safe(raw[done:]))
        return self._safe[1]

    def lines(self, width: int, selected: str | None) -> tuple[list[Content], list[str | None]]:
        if self.entry.answer:
            title = f"Answer to turn {self.entry.turn}" if self.entry.turn else "Final answer"
            lines = boxed(self._markdown(width - 6), width - 2, title)
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


class Notice(Block):
    """A one-off line in the transcript: an arm's error or cancellation, or a provider retry."""

    gap = 1
    BACKGROUNDS = {"error": "$text-error on $error-muted", "warning": "$text-warning on $warning-muted"}

    entry: NoticeEntry

    @property
    def content(self) -> Content:
        entry = self.entry
        if entry.kind == "cancelled":
            return Content.styled("■ cancelled — the session was saved as cancelled", "bold")
        if entry.kind == "retry" and entry.retry is not None:
            return retry_notice(entry.retry)
        return Content.assemble((f"✗ {entry.status}: ", "bold"), fmt.one_line(clipped_error(entry.message), 10_000))

    def lines(self, width: int, selected: str | None) -> tuple[list[Content], list[str | None]]:
        style = self.BACKGROUNDS["error" if self.entry.kind == "error" else "warning"]
        lines = [fill(Content(" ") + line, width, style) for line in self.content.wrap(max(width - 2, 4))]
        return lines, [None] * len(lines)


class TurnBlock(Block):
    """Where a user turn of a conversation begins: a rule with the turn's number, then its prompt."""

    gap = 1
    entry: TurnEntry

    def lines(self, width: int, selected: str | None) -> tuple[list[Content], list[str | None]]:
        entry = self.entry
        title = f" Turn {entry.turn} "
        rule = Content.assemble(("──", "$text-accent"), (title, "bold $text-accent"),
                                ("─" * max(width - len(title) - 2, 0), "$text-accent"))  # fmt: skip
        lines = [rule]
        prompt = fmt.safe(entry.prompt)
        lines += [Content.assemble(("  you: ", "bold"), line) if index == 0 else Content("       ") + line
                  for index, line in enumerate(Content(prompt).wrap(max(width - 7, 8)))]  # fmt: skip
        if entry.tools is not None:
            names = ", ".join(fmt.safe(name) for name in entry.tools)
            lines.append(Content.styled(f"  tools now: {names}", "$text-muted"))
        return lines, [None] * len(lines)


def retry_notice(retry: ProviderRetry) -> Content:
    """``⟳ attempt 1 of 4 failed: HTTP 429 … — trying again in 0.5 s``."""
    return Content.assemble(
        ("⟳ ", "bold"),
        (f"attempt {retry.attempt} of {retry.attempts} failed: ", "bold"),
        fmt.safe(retry.error),
        f" — trying again in {fmt.seconds(retry.wait_s)}",
    )


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
