"""Which run of a case to replay, when the case ran more than once (``--repeat``): one line per run with
every arm's verdict, the cursor on the first run where the chosen arm did not pass."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from workbench.bench.results import RunResult
from workbench.display import money


@dataclass(frozen=True)
class ArmOutcome:
    arm: str
    succeeded: bool
    graded: bool
    shown: str
    """The verdict of a run that completed; the status (``failed``, ``cancelled``) of one that did not."""
    cost_usd: float | None


@dataclass(frozen=True)
class RunChoice:
    repeat: int
    session_id: str
    outcomes: tuple[ArmOutcome, ...]
    """Per arm, in the sweep's order."""

    @classmethod
    def of(cls, run: RunResult, arms: Sequence[str]) -> RunChoice:
        found = []
        for arm in arms:
            figures = run.arms.get(arm)
            if figures is not None:
                shown = figures.verdict if figures.status == "completed" else figures.status
                graded = not figures.graded_by_agreement
                found.append(ArmOutcome(arm, figures.succeeded, graded, shown, figures.cost_usd))
        return cls(run.case.repeat, run.session_id, tuple(found))

    def line(self) -> Text:
        text = Text(f"repeat {self.repeat + 1}  ", style="bold")
        for outcome in self.outcomes:
            mark, style = ("✓", "green") if outcome.succeeded else ("✗", "red") if outcome.graded else ("·", "dim")
            text.append(f"{outcome.arm} ")
            text.append(f"{mark} {outcome.shown}", style=style)
            text.append(f" {money(outcome.cost_usd, unknown='cost unknown')}   ", style="dim")
        text.append(f"session {self.session_id}", style="dim")
        return text


class PickRunScreen(ModalScreen[str | None]):
    """Returns the chosen run's session id (``None``: escape)."""

    DEFAULT_CSS = """
    PickRunScreen { align: center middle; background: $background 60%; }
    #pick-dialog { width: auto; max-width: 100%; height: auto; max-height: 80%; border: round $primary;
                   background: $surface; padding: 0 1; }
    #pick-runs { height: auto; max-height: 20; width: auto; }
    #pick-hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="pick.cancel", tooltip="Back to the cases")]

    def __init__(self, case: str, choices: Sequence[RunChoice], *, arm: str) -> None:
        super().__init__()
        self.case = case
        self.choices = list(choices)
        self.arm = arm

    def compose(self) -> ComposeResult:
        with Vertical(id="pick-dialog"):
            yield OptionList(*(Option(choice.line(), id=choice.session_id) for choice in self.choices), id="pick-runs")
            yield Static("enter replays the run · escape goes back", id="pick-hint")

    def on_mount(self) -> None:
        self.query_one("#pick-dialog").border_title = f"{self.case}: which run?"
        options = self.query_one(OptionList)
        failing = [
            index
            for index, choice in enumerate(self.choices)
            if any(outcome.arm == self.arm and not outcome.succeeded for outcome in choice.outcomes)
        ]
        options.highlighted = failing[0] if failing else 0
        options.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
