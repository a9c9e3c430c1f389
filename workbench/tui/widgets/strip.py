"""The comparison strip: every arm against the baseline (the first arm) in %, with the better arm marked."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.content import Content
from textual.widget import Widget

from workbench.display import DEMO_LABEL, WAITING, arm_title, is_demo, percent_change, waiting
from workbench.summary import ArmSummary
from workbench.tui import format as fmt
from workbench.verdict import AGREE, DIFFER, VERDICT_MARKS, VERDICT_WORDS, comparability

METRICS: tuple[tuple[str, str, Callable[[ArmSummary], float | None]], ...] = (
    ("cost", "cost", lambda summary: summary.cost_usd),
    ("input tokens", "in", lambda summary: summary.input_tokens),
    ("wall time", "wall", lambda summary: summary.wall_s),
    ("requests", "req", lambda summary: summary.requests),
)
"""(label, short label, figure) of each metric compared."""


class ComparisonStrip(Widget):
    """Every arm against the first (the baseline), a line each:
    ``Code mode vs Tool calling  cost -86% code ✓  ·  input tokens -88% code ✓  ·  wall time +27% tool ✓  ·  …``."""

    DEFAULT_CSS = "ComparisonStrip { height: auto; text-wrap: nowrap; text-overflow: ellipsis; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.arms: list[ArmSummary] = []
        """The arms' summaries in order; the first is the baseline."""
        self.titles: list[str] = []
        self.compact = False
        """A line per arm at most: names for titles, short labels, no winner marks (the colours say it)."""
        self._height = 0

    def show(self, arms: Sequence[ArmSummary], titles: Sequence[str] = ()) -> None:
        """The arms' summaries in order, and their titles (default: from their names and modes)."""
        self.arms = list(arms)
        self.titles = list(titles)
        self._fit()
        self.refresh()

    def on_resize(self) -> None:
        self._fit()

    def full_height(self, width: int) -> int:
        """The rows the strip takes at ``width`` (the view's) in its full, not compact, form, padding included:
        what the view lays the panes out against, so its choice never depends on the form it chose before."""
        compact, self.compact = self.compact, False
        try:
            return len(self._lines(max(width - self.styles.gutter.width, 1))) + self.styles.gutter.height
        finally:
            self.compact = compact

    def set_compact(self, compact: bool) -> None:
        if compact != self.compact:
            self.compact = compact
            self._fit()
            self.refresh()

    def _fit(self) -> None:
        """An explicit height of as many lines as the strip takes at this width (set only when it changes)."""
        if self.size.width:
            height = len(self._lines(self.size.width))
            if height != self._height:
                self._height = height
                self.styles.height = height + self.styles.gutter.height  # the height includes the padding

    def render(self) -> Content:
        return Content("\n").join(self._lines(self.size.width))

    def _lines(self, width: int) -> list[Content]:
        """Each challenger's figures in as few lines as fit ``width``, wrapped between figures, never inside one."""
        lines: list[list[Content]] = []
        separator = Content("  ") if self.compact else Content.styled("  ·  ", "$text-muted")
        for title, *figures in self._groups():
            lines.append([title])
            length = title.cell_length
            for figure in figures:
                joint = Content("  ") if lines[-1][-1] is title else separator
                if width and length + joint.cell_length + figure.cell_length > width:
                    lines.append([figure])
                    length = figure.cell_length
                else:
                    lines[-1].extend([joint, figure])
                    length += joint.cell_length + figure.cell_length
        return [Content.assemble(*line) for line in lines]

    def _groups(self) -> list[list[Content]]:
        """A title and its figures for each arm after the baseline."""
        if len(self.arms) < 2:
            return [[Content.styled("Run two arms or more to compare them here.", "$text-muted")]]
        baseline, *challengers = self.arms
        if not any(summary.requests for summary in self.arms):
            return [
                [
                    Content.styled(
                        f"{' · '.join(self._titles()[1:])} vs {self._titles()[0]}: cost, "
                        "input tokens, wall time and requests appear here once the arms run.",
                        "$text-muted",
                    )
                ]
            ]
        groups = [(_versus_compact if self.compact else _versus)(challenger, baseline) for challenger in challengers]
        if is_demo(" | ".join(summary.model for summary in self.arms)):
            groups[0].append(Content.styled(DEMO_LABEL, "$text-warning"))
        return groups

    def _titles(self) -> list[str]:
        if len(self.titles) == len(self.arms):
            return self.titles
        return [_title(summary) for summary in self.arms]


def _title(summary: ArmSummary) -> str:
    return arm_title(summary.name, summary.mode)


def _versus(challenger: ArmSummary, baseline: ArmSummary) -> list[Content]:
    """``Code mode vs Tool calling`` and a figure per metric: the challenger's change against the baseline."""
    pair = (baseline, challenger)
    running = any(summary.status == "running" for summary in pair)
    verdict = comparability(baseline, challenger)
    judged = not running and bool(verdict)  # a better side is marked once both ended, comparable; not mid-run
    title = Content.styled(f"{_title(challenger)} vs {_title(baseline)}", "bold")
    if running:
        title += Content.styled(" (so far)", "$text-muted")
    elif not verdict:  # the figures without a better side, and why
        title = Content.styled(f"{challenger.name} vs {baseline.name}", "bold")
        title += Content.styled(f", {verdict.note}", "$text-warning")
    units = [title]
    agreement = _agreement(challenger, baseline)
    if agreement is not None:
        units.append(agreement)
    for label, _, number in METRICS:
        if label == "wall time" and running:
            units.append(_wall_time_so_far(challenger, baseline))
            continue
        if running and (waiting(challenger) or waiting(baseline)):
            units.append(Content.assemble((f"{label} ", "$text-muted"), (WAITING, "$text-muted")))
            continue
        change = percent_change(_so_far(challenger, number), _so_far(baseline, number))
        shown = fmt.change_text(change) if judged else Content(fmt.change_text(change).plain)
        parts: list[Content | tuple[str, str] | str] = [(f"{label} ", "$text-muted"), shown]
        if judged and change is not None and abs(change) >= 0.5:
            parts.append(_winner_mark(challenger if change < 0 else baseline, baseline))
        units.append(Content.assemble(*parts))
    return units


def _versus_compact(challenger: ArmSummary, baseline: ArmSummary) -> list[Content]:
    """``code-eager vs tool  cost -86%  in -88%  wall +6%  req -60%``: the challenger's changes in one line."""
    running = any(summary.status == "running" for summary in (baseline, challenger))
    verdict = comparability(baseline, challenger)
    judged = not running and bool(verdict)
    title = Content.assemble((challenger.name, "bold"), (f" vs {baseline.name}", "$text-muted"))
    units = [title]
    for _, short, number in METRICS:
        if short == "wall" and running:
            units.append(Content.styled("wall …", "$text-muted"))
            continue
        if running and (waiting(challenger) or waiting(baseline)):
            units.append(Content.styled(f"{short} {WAITING}", "$text-muted"))
            continue
        change = percent_change(_so_far(challenger, number), _so_far(baseline, number))
        shown = fmt.change_text(change) if judged else Content(fmt.change_text(change).plain)
        units.append(Content.assemble((f"{short} ", "$text-muted"), shown))
    if not judged and not running:
        units.append(Content.styled(verdict.note, "$text-warning"))
    agreement = _agreement(challenger, baseline)
    if agreement is not None:
        units.append(agreement)
    return units


def _agreement(challenger: ArmSummary, baseline: ArmSummary) -> Content | None:
    """``= arms agree`` / ``≠ arms differ`` once two arms without an expectation were compared (an expected
    state's passed / failed is each pane's own)."""
    verdicts = {challenger.verdict, baseline.verdict}
    if verdicts <= {AGREE}:
        return Content.styled(f"{VERDICT_MARKS[AGREE]} {VERDICT_WORDS[AGREE]}", "bold $text-accent")
    if DIFFER in verdicts and verdicts <= {AGREE, DIFFER}:
        return Content.styled(f"{VERDICT_MARKS[DIFFER]} {VERDICT_WORDS[DIFFER]}", "bold $text-warning")
    return None


def _wall_time_so_far(challenger: ArmSummary, baseline: ArmSummary) -> Content:
    """While an arm runs, its wall time is only known to be at least its latest event's time. Once the other
    arm has ended sooner than that, it is faster whatever happens next: say so, with the change as a bound
    (``≤-57%``), plain (the better side is marked once both ended). Otherwise the figure waits for both."""
    done = [summary for summary in (baseline, challenger) if summary.status != "running"]
    if len(done) == 1:
        finished = done[0]
        still = challenger if finished is baseline else baseline
        if finished.wall_s < still.wall_s:
            change = percent_change(challenger.wall_s, baseline.wall_s)
            bound = "≤" if finished is challenger else "≥"
            return Content.assemble(("wall time ", "$text-muted"), bound, fmt.change_text(change).plain)
    return Content.styled("wall time when both end", "$text-muted")


def _winner_mark(winner: ArmSummary, baseline: ArmSummary) -> tuple[str, str]:
    """`` code ✓`` in the success colour when the challenger wins, `` tool ✓`` in the warning colour when the
    baseline does."""
    return f" {winner.name} ✓", "bold $text-warning" if winner is baseline else "bold $text-success"


def _so_far(summary: ArmSummary, number: Callable[[ArmSummary], float | None]) -> float | None:
    """A figure, or ``None`` while the arm runs and has not reported it yet (0 then is "not yet", not zero)."""
    value = number(summary)
    return None if summary.status == "running" and not value else value
