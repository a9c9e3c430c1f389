"""The app's tools as one arm got them: a line at the top of its transcript, expandable to the list.

``  9 tools · 4 read-only · called directly — list_cart_items, get_cart_item, …``; enter (or a click)
lists every tool on a line of its own, the read-only ones marked. It is drawn from the arm's
run-started event, so a replay shows it as the live run did.
"""

from __future__ import annotations

from textual.content import Content

from workbench.timeline import ToolsEntry
from workbench.tui import format as fmt
from workbench.tui.widgets.blocks import Block

TOOLS = "\x00tools"
"""The item key of the tools line (and of its expanded list)."""


class ToolsBlock(Block):
    entry: ToolsEntry

    def __init__(self, entry: ToolsEntry) -> None:
        super().__init__(entry)
        self.expanded = False

    def items(self) -> list[str]:
        return [TOOLS]

    def toggle(self) -> None:
        self.expanded = not self.expanded
        self.changed()

    def lines(self, width: int, selected: str | None) -> tuple[list[Content], list[str | None]]:
        entry = self.entry
        chosen = selected == TOOLS
        count = len(entry.tools)
        head = Content.assemble(
            ("▸ " if chosen else "  ", "$text-accent"),
            (f"{count} {'tool' if count == 1 else 'tools'}", "bold"),
            (" · ", "$text-muted"),
            (f"{len(entry.read_only)} read-only" if entry.read_only else "none marked read-only", ""),
            (f" · {entry.how}", "$text-muted"),
        )
        if not self.expanded:
            head += Content.styled(" — " + ", ".join(fmt.safe(name) for name in entry.tools), "$text-muted")
        lines = [head.stylize("on $boost") if chosen else head]
        if self.expanded:
            name_width = min(max(len(name) for name in entry.tools), max(width - 18, 8))
            for name in entry.tools:
                shown = fmt.one_line(fmt.safe(name), name_width)
                if name in entry.read_only:
                    lines.append(Content.assemble("      ", (shown.ljust(name_width), "bold"),
                                                  ("  read-only", "$text-success")))  # fmt: skip
                else:
                    lines.append(Content.assemble("      ", (shown, "bold")))
        return lines, [TOOLS] * len(lines)
