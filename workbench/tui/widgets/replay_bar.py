"""What a replayed session was, and where the replay is: the top of the compare screen in replay mode."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from workbench.replay import ReplayClock, speed_label
from workbench.store import SessionInfo
from workbench.tui import format as fmt


class SessionHeader(Widget):
    """The stored session's setup: app, items, seed, model, task and status, then the prompt.

    The setup wraps between fields, never inside one; the height is set from the lines it takes.
    """

    DEFAULT_CSS = "SessionHeader { height: auto; max-height: 6; text-wrap: nowrap; text-overflow: ellipsis; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.fields: list[Content] = []
        self.prompt = Content("")
        self._height = 0

    def show(self, info: SessionInfo) -> None:
        self.fields = [
            Content.assemble(("Session ", "$text-muted"), (info.id, "bold")),
            Content.assemble(("app ", "$text-muted"), info.app),
            Content.assemble(("items ", "$text-muted"), fmt.count(info.items)),
            Content.assemble(("seed ", "$text-muted"), str(info.seed)),
            Content.assemble(("model ", "$text-muted"), fmt.one_line(info.model, 60)),
            Content.assemble(("task ", "$text-muted"), info.task or "–"),
            Content.assemble(("status ", "$text-muted"), fmt.status_badge(info.status)),
        ]
        self.prompt = Content.assemble(("Prompt  ", "$text-muted"), fmt.one_line(info.prompt, 600) or "(empty prompt)")
        self._fit()
        self.refresh()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        if self.size.width and self.fields:
            height = len(self._lines(self.size.width))
            if height != self._height:
                self._height = height
                self.styles.height = height + self.styles.gutter.height  # the height includes the padding

    def _lines(self, width: int) -> list[Content]:
        lines: list[Content] = []
        for field in self.fields:
            if lines and lines[-1].cell_length + 3 + field.cell_length <= width:
                lines[-1] = lines[-1] + "   " + field
            else:
                lines.append(field)
        return [*lines, self.prompt]

    def render(self) -> Content:
        return Content("\n").join(self._lines(self.size.width)) if self.fields else Content("")


class ReplayBar(Widget):
    """``▶ playing x4   event 120 / 193   at 0.12 s / 0.26 s   ━━━━━━━━━━━━``."""

    DEFAULT_CSS = "ReplayBar { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock: ReplayClock | None = None

    def render(self) -> Content:
        clock = self.clock
        if clock is None:
            return Content.styled("loading the session…", "$text-muted")
        if clock.finished:
            state = Content.assemble(("■ replayed to the end", "bold $text-success"), (" (r restarts)", "$text-muted"))
        elif clock.playing:
            state = Content.styled(f"▶ playing {speed_label(clock.speed)}", "bold $text-accent")
        else:
            state = Content.styled(f"‖ paused ({speed_label(clock.speed)})", "bold $text-warning")
        total = max(clock.total, 1)
        width = 24
        done = round(clock.position / total * width)
        return Content.assemble(
            state,
            ("   event ", "$text-muted"),
            f"{clock.position:,} / {clock.total:,}" + ("" if clock.complete else "+ (loading)"),
            ("   at ", "$text-muted"),
            f"{fmt.seconds(clock.replay_t)} / {fmt.seconds(clock.duration)}   ",
            ("━" * done, "$primary"),
            ("━" * (width - done), "$foreground 25%"),
        )
