"""Model text (Markdown) as lines of :class:`Content`, for the line-rendered transcript.

The transcript draws every block as cached lines rather than widgets, so model text is laid out here:
paragraphs, headings, lists, quotes, code (highlighted) and tables, wrapped to a width. Styles are
theme variables, so every theme colours it. Unfinished Markdown (text still streaming) parses fine.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

from textual.content import Content

from workbench.tui import format as fmt

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

INLINE_STYLES = {
    "strong_open": "bold",
    "em_open": "italic",
    "s_open": "strike",
    "link_open": "underline $text-accent",
}
HEADING_STYLES = {"h1": "bold underline $text-primary", "h2": "bold $text-primary"}


@cache
def shared_parser() -> MarkdownIt:
    """One Markdown parser for every text block: building one costs about a millisecond, parsing is stateless.
    markdown-it is imported with the first text to draw, not with the first screen (whose panes are empty)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("gfm-like")


def markdown_lines(text: str, width: int) -> list[Content]:
    """The Markdown ``text`` as lines no wider than ``width`` cells."""
    width = max(width, 8)
    tokens = shared_parser().parse(fmt.safe(text))
    lines: list[Content] = []
    prefixes: list[tuple[str, str]] = []
    """(first-line prefix, following-lines prefix) per open list item or quote."""
    numbers: list[int | None] = []
    """Per open list: the next item number, or ``None`` for bullets."""
    index = 0
    while index < len(tokens):
        token = tokens[index]
        kind = token.type
        starts_block = kind.endswith("_open") or kind in ("fence", "code_block", "hr", "html_block")
        if starts_block and token.level == 0 and lines and lines[-1].plain:
            lines.append(Content(""))  # a blank line between top-level blocks
        if kind == "bullet_list_open":
            numbers.append(None)
        elif kind == "ordered_list_open":
            numbers.append(int(token.attrGet("start") or 1))  # type: ignore[arg-type]
        elif kind in ("bullet_list_close", "ordered_list_close"):
            numbers.pop()
        elif kind == "list_item_open":
            number = numbers[-1] if numbers else None
            mark = "• " if number is None else f"{number}. "
            if number is not None:
                numbers[-1] = number + 1
            prefixes.append((mark, " " * len(mark)))
        elif kind == "blockquote_open":
            prefixes.append(("▌ ", "▌ "))
        elif kind in ("list_item_close", "blockquote_close"):
            prefixes.pop()
        elif kind == "heading_open":
            inline = inline_content(tokens[index + 1].children or [])
            lines.extend(_wrap(inline.stylize(HEADING_STYLES.get(token.tag, "bold")), width, prefixes))
            index += 2
        elif kind == "inline":
            lines.extend(_wrap(inline_content(token.children or []), width, prefixes))
        elif kind in ("fence", "code_block"):
            lines.extend(_code(token.content, token.info.strip() or "text", width, prefixes))
        elif kind == "hr":
            lines.append(Content.styled("─" * min(width, 40), "$text-muted"))
        elif kind == "html_block":
            lines.extend(_wrap(Content(token.content.rstrip("\n")), width, prefixes))
        elif kind == "table_open":
            close = next(i for i in range(index, len(tokens)) if tokens[i].type == "table_close")
            lines.extend(_table(tokens[index:close], width))
            index = close
        index += 1
    return lines or [Content("")]


def inline_content(children: Sequence[Token]) -> Content:
    """An inline run (emphasis, code spans, links, breaks) as one :class:`Content`."""
    parts: list[tuple[str, str]] = []
    styles: list[str] = []
    for child in children:
        kind = child.type
        if kind in INLINE_STYLES:
            styles.append(INLINE_STYLES[kind])
        elif kind.endswith("_close") and styles:
            styles.pop()
        elif kind == "code_inline":
            parts.append((child.content, "$text-warning"))
        elif kind == "softbreak":
            parts.append((" ", ""))
        elif kind == "hardbreak":
            parts.append(("\n", ""))
        elif kind == "image":
            parts.append((f"[image: {child.content}]", "$text-muted"))
        elif kind in ("text", "html_inline"):
            parts.append((child.content, " ".join(styles)))
    return Content.assemble(*parts)


def _wrap(content: Content, width: int, prefixes: list[tuple[str, str]]) -> list[Content]:
    """Wrap within the room the open list items and quotes leave, then put their marks in front."""
    first = "".join(prefix[1] for prefix in prefixes[:-1]) + (prefixes[-1][0] if prefixes else "")
    rest = "".join(prefix[1] for prefix in prefixes)
    room = max(width - len(rest), 4)
    wrapped = [line for part in content.split("\n") for line in part.wrap(room)]
    return [
        Content.assemble((first if number == 0 else rest, "$text-muted"), line)
        for number, line in enumerate(wrapped or [Content("")])
    ]


def _code(code: str, language: str, width: int, prefixes: list[tuple[str, str]]) -> list[Content]:
    indent = "".join(prefix[1] for prefix in prefixes)
    room = max(width - len(indent) - 2, 4)
    from textual.highlight import highlight  # pygments: with the first code block, or the warm-up's

    # Tabs expanded before measuring: a tab counted as one cell would overflow the room when painted.
    highlighted = highlight(code.rstrip("\n").expandtabs(4) or " ", language=language)
    lines = []
    for line in highlighted.split("\n", allow_blank=True):
        for part in line.fold(room) if line.cell_length > room else [line]:
            lines.append(Content.assemble((indent + "│ ", "$text-muted"), part))
    return lines


def _table(tokens: Sequence[Token], width: int) -> list[Content]:
    """A GFM table as aligned rows, the header bold, cells cut to share the width."""
    rows: list[list[Content]] = []
    header_rows = 0
    for token in tokens:
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append(inline_content(token.children or []))
        elif token.type == "thead_close":
            header_rows = len(rows)
    if not rows:
        return []
    columns = max(len(row) for row in rows)
    widths = [max((row[c].cell_length for row in rows if c < len(row)), default=0) for c in range(columns)]
    room = max(width - 3 * (columns - 1), columns)
    while sum(widths) > room:
        widest = widths.index(max(widths))
        widths[widest] -= 1
    lines = []
    separator = Content.styled(" │ ", "$text-muted")
    for number, row in enumerate(rows):
        cells = [
            (row[c] if c < len(row) else Content("")).truncate(widths[c], ellipsis=True, pad=True)
            for c in range(columns)
        ]
        line = separator.join(cells)
        lines.append(line.stylize("bold") if number < header_rows else line)
        if number + 1 == header_rows:
            lines.append(Content.styled("─┼─".join("─" * w for w in widths), "$text-muted"))
    return lines
