"""What a replayed session was, and where the replay is: the top of the compare screen in replay mode."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from workbench.replay import ReplayClock, speed_label
from workbench.store import SessionInfo
from workbench.tui import format as fmt


class SessionHeader(Static):
    """The stored session's setup: app, items, seed, model, task, and the prompt."""

    DEFAULT_CSS = "SessionHeader { height: auto; max-height: 6; }"

    def show(self, info: SessionInfo) -> None:
        first = Content.assemble(
            ("Session ", "$text-muted"), (info.id, "bold"),
            ("   app ", "$text-muted"), info.app,
            ("   items ", "$text-muted"), fmt.count(info.items),
            ("   seed ", "$text-muted"), str(info.seed),
            ("   model ", "$text-muted"), fmt.one_line(info.model, 60),
            ("   task ", "$text-muted"), info.task or "–",
            ("   status ", "$text-muted"), fmt.status_badge(info.status),
        )  # fmt: skip
        prompt = fmt.one_line(info.prompt, 600) or "(empty prompt)"
        self.update(Content("\n").join([first, Content.assemble(("Prompt  ", "$text-muted"), prompt)]))


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
            state = Content.styled("■ replayed to the end", "bold $text-success")
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
            ("━" * (width - done), "$panel-lighten-2"),
        )
