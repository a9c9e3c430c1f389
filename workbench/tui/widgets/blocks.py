"""The simple transcript blocks: a request marker, streamed model text, the final answer, a notice."""

from __future__ import annotations

from functools import cache

from markdown_it import MarkdownIt
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from workbench.tui import format as fmt


@cache
def shared_parser() -> MarkdownIt:
    """One Markdown parser for every text block: building one costs about a millisecond, parsing is stateless."""
    return MarkdownIt("gfm-like")


class TextBlock(Markdown):
    """Model text as it streams, appended through a :class:`MarkdownStream` rather than re-rendered."""

    DEFAULT_CSS = "TextBlock { height: auto; }"

    def __init__(self, text: str = "") -> None:
        text = fmt.safe(text)
        super().__init__(text, classes="model-text", parser_factory=shared_parser)
        self.text = text
        self._unsent: list[str] = []
        self._stream: MarkdownStream | None = None

    def add(self, text: str) -> None:
        """Take more text now (so :attr:`text` is always current); :meth:`flush` shows it."""
        text = fmt.safe(text)
        self.text += text
        self._unsent.append(text)

    async def flush(self) -> None:
        if not self._unsent:
            return
        text, self._unsent = "".join(self._unsent), []
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        await self._stream.write(text)

    async def close(self) -> None:
        """Finish the stream (the model moved on to something else)."""
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

    def mark_answer(self) -> None:
        self.add_class("-answer")
        self.border_title = "Final answer"

    def summary(self) -> list[Content]:
        label = "final answer: " if self.has_class("-answer") else ""
        return [Content.assemble(("  ", ""), (label, "bold $text-success"), fmt.one_line(self.text, 300))]


class AnswerBlock(Markdown):
    """The arm's final answer, when it is not simply the last streamed text."""

    DEFAULT_CSS = "AnswerBlock { height: auto; }"

    def __init__(self, answer: str) -> None:
        super().__init__(fmt.safe(answer), classes="model-text -answer", parser_factory=shared_parser)
        self.answer = answer
        self.border_title = "Final answer"

    def summary(self) -> list[Content]:
        return [Content.assemble(("  final answer: ", "bold $text-success"), fmt.one_line(self.answer, 300))]


class Notice(Static):
    """A one-off line in the transcript: an arm's error or cancellation."""

    DEFAULT_CSS = "Notice { height: auto; }"

    def __init__(self, content: Content, *, kind: str) -> None:
        super().__init__(content, classes=f"notice -{kind}")
        self.content = content

    def summary(self) -> list[Content]:
        return [Content("  ") + self.content]


class HistoryChunk(Widget):
    """Blocks condensed out of the live view, one line each; a pane keeps a few of these, not a widget per block."""

    DEFAULT_CSS = "HistoryChunk { height: auto; text-wrap: nowrap; text-overflow: ellipsis; }"

    def __init__(self, lines: list[Content]) -> None:
        super().__init__(classes="history")
        self.lines = lines
        self._content = Content("\n").join(lines)

    def add(self, lines: list[Content]) -> None:
        self.lines.extend(lines)
        self._content = Content("\n").join([self._content, *lines])
        self.refresh(layout=True)

    def render(self) -> Content:
        return self._content


class Spacer(Widget):
    """Blank room (a plain Widget would print its own name)."""

    def render(self) -> str:
        return ""
