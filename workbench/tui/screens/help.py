"""F1: what the workbench shows, and the keys of the screen it was opened from."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown

ABOUT = """\
## What you are looking at

Every arm (one to four; the first is the baseline the others are compared with) gets the **same prompt**
and its own freshly seeded copy of the app.

- **Tool calling** — the model calls the app's tools one at a time; every page and result it reads stays in
  its context, so each request is bigger than the last (watch *Input tokens per request*).
- **Code mode** — the model writes one short Python snippet that calls the same tools inside a sandbox;
  it sees only what the snippet prints or returns. The snippet's *inner calls* appear beneath it live.

**Counters** per arm: requests, input tokens (total, and of the last request: the context size), output
tokens, tool calls and inner calls, cost and wall time. **The strip** compares code mode with tool calling
in % (negative: code mode used less). A request retried after a provider error (HTTP 429, 5xx, a
timeout) shows each failed attempt under its request line, and a **Retries** counter. When an arm
finishes, its **grade** (built-in tasks only) and its **end-state diff** appear at the bottom of its pane
(on a short terminal the diff is folded away so the transcript keeps its room: ctrl+l shows every change
in place of the transcript, and again brings the transcript back; there, enter on a change shows its record
whole).

**In a pane** (tab to it, or click): up and down pick a tool call or a snippet; enter expands a call to its
full arguments and the whole result the model saw, or opens a snippet in the **inspector** (ctrl+s opens
the latest snippet from anywhere). Scrolled up, a pane stays put; at its bottom, it follows the run.
A pane starts with the app's **tools** as its arm got them (`9 tools · 4 read-only · called directly`):
enter or a click lists them, the read-only ones marked.

**Your own tools**: the App field's last entries, *MCP server…* and *Toolset…*, take a command or an
http(s) URL (with headers) or `module:attribute`, and an optional workdir copied per arm. Apps that ran
are offered again at the top of the field; header values are not kept (write `$VARIABLE` to read one
from the environment). In a browser tab of `workbench serve` they are off unless it was started with
`--allow-commands` (whoever can open the page would run commands as the person serving).

The `scripted` model is offline and deterministic: its token counts are real BPE counts priced as a real
model, so cost mechanics are exact, but its success says nothing about real models. `scripted:paced`
adds a real model's latency. Any pydantic-ai model string works (`openai:gpt-5-mini`, `anthropic:…`).
"""


WHOLE_BELOW = (110, 34)
"""Columns and rows below which the help covers the whole screen."""


def keys_table(screen: Screen) -> str:
    """The workbench's own key bindings active on ``screen`` (not the focused widget's), as Markdown."""
    keys: dict[str, list[str]] = {}
    rows: dict[str, tuple[str, bool, str]] = {}
    for active in screen.active_bindings.values():
        binding = active.binding
        if active.node not in (screen, screen.app) or not binding.id:
            continue
        keys.setdefault(binding.id, []).append(screen.app.get_key_display(binding))
        rows.setdefault(binding.id, (binding.description, active.enabled, binding.tooltip or ""))
    for binding in getattr(screen, "BINDINGS", ()):  # the screen's keys it hides for now (escape with no run)
        if isinstance(binding, Binding) and binding.id and binding.id not in rows:
            keys[binding.id] = [screen.app.get_key_display(binding)]
            rows[binding.id] = (binding.description, False, binding.tooltip or "")
    lines = [
        f"| `{', '.join(keys[binding_id])}` | **{description}**{'' if enabled else ' *(not now)*'} | {tooltip} |"
        for binding_id, (description, enabled, tooltip) in rows.items()
    ]
    lines.append("| `ctrl+p` | **Command palette** | every action by name: *Compare: run*, *Replay: step*, … |")
    return "| key | action | |\n|---|---|---|\n" + "\n".join(lines)


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close", id="help.close")]

    def __init__(self, screen: Screen) -> None:
        super().__init__()
        self.keys = keys_table(screen)
        self.screen_title = (
            getattr(screen, "HELP_TITLE", "") or (screen.sub_title or screen.title or "").split(" · ")[0]
        )
        self.about = getattr(screen, "HELP", "") or ABOUT
        """A screen's own help (``HELP``), or what the compare screen shows."""

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Markdown(f"# Help · {self.screen_title}\n\n## Keys on this screen\n\n{self.keys}\n\n{self.about}")

    def on_resize(self) -> None:
        """On a small terminal the help takes the whole screen: the screen behind showed through its edges, and
        its scrollbar beside the help's own read as two thumbs."""
        self.set_class(self.size.width < WHOLE_BELOW[0] or self.size.height < WHOLE_BELOW[1], "-whole")

    def on_mount(self) -> None:
        body = self.query_one("#help-body")
        body.border_title = "Code Mode Workbench"
        body.border_subtitle = "escape closes"
        body.focus()

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
