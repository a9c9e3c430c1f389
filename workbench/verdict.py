"""An arm's verdict, and whether an arm's figures can be compared with the baseline arm's.

**Verdicts.** Three kinds, never mixed up in any view: an expectation met or not (``passed`` /
``failed``: a built-in task's expected state, a task file's ``expect``); with no expectation, whether
the arms did the same (``agree`` / ``differ``: two arms making the same mistake agree, which is not a
pass); and ``not graded`` with its reason (an arm stopped from outside, a failed arm that is not
compared). :data:`VERDICT_WORDS` and :data:`VERDICT_MARKS` are what every view says for them.

**Comparability of figures.**
Every view that compares arms (the TUI's strip, ``run``'s vs column, the sessions list, the exports) asks
:func:`comparability` and names a better arm only when it says so; otherwise it shows the figures with the
reason (``not comparable: tool arm cancelled``). The rule: both arms ran to their end (an arm cancelled,
interrupted, failed or still running has figures for part of the work only), and at least one of them
called a tool (a model that declined the prompt in both arms did no work to compare).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from workbench.events import Graded

Verdict = Literal["passed", "failed", "agree", "differ", "not graded"]
PASSED: Verdict = "passed"
FAILED: Verdict = "failed"
AGREE: Verdict = "agree"
DIFFER: Verdict = "differ"
NOT_GRADED: Verdict = "not graded"
VERDICTS: tuple[Verdict, ...] = (PASSED, FAILED, AGREE, DIFFER, NOT_GRADED)
VERDICT_WORDS: dict[str, str] = {
    PASSED: "passed", FAILED: "failed", AGREE: "arms agree", DIFFER: "arms differ", NOT_GRADED: "not graded",
}  # fmt: skip
"""What a view says for each verdict (the short form; :data:`VERDICT_MARKS` goes before it where marked)."""
VERDICT_MARKS: dict[str, str] = {PASSED: "✓", FAILED: "✗", AGREE: "=", DIFFER: "≠", NOT_GRADED: "·"}
"""No check mark for agreement: ``=`` / ``≠`` say the arms did the same or not, not that they did right."""
VERDICT_STYLES: dict[str, str] = {
    PASSED: "success", FAILED: "error", AGREE: "accent", DIFFER: "warning", NOT_GRADED: "muted",
}  # fmt: skip
"""The colour family of each verdict (views map it to their own: Rich colours, Textual variables, CSS)."""
NOT_COMPARED = "not compared"
"""How the reason of an arm left out of the comparison begins: ``not compared: the tool arm failed``."""
AGREEMENT_TASKS = ("arms agree", "arms differ")
"""The ``task`` of an agreement grade, which is all that tells one apart in sessions stored before ``verdict``."""

UNFINISHED = ("cancelled", "interrupted")
"""Statuses of an arm that was stopped from outside: its end state is not graded."""


class ArmOutcome(Protocol):
    """What the rule reads of an arm: an :class:`~workbench.summary.ArmSummary`, or a stored session's arm
    (which knows no call counts, so only the statuses decide for it)."""

    name: str
    status: str


@dataclass(frozen=True)
class Comparability:
    comparable: bool
    reason: str = ""
    """Why not, for people: ``tool arm cancelled``, ``neither arm called a tool``."""

    def __bool__(self) -> bool:
        return self.comparable

    @property
    def note(self) -> str:
        """``not comparable: tool arm cancelled``, or ``""`` when comparable."""
        return "" if self.comparable else f"not comparable: {self.reason}"


COMPARABLE = Comparability(True)


def comparability(baseline: ArmOutcome, arm: ArmOutcome) -> Comparability:
    """Whether ``arm``'s figures can be weighed against ``baseline``'s (the first arm of a comparison)."""
    for outcome in (baseline, arm):
        if outcome.status != "completed":
            state = "still running" if outcome.status == "running" else outcome.status
            return Comparability(False, f"{outcome.name} arm {state}")
    calls = [getattr(outcome, "tool_calls", None) for outcome in (baseline, arm)]
    if calls == [0, 0]:
        return Comparability(False, "neither arm called a tool")
    return COMPARABLE


def session_comparability(arms: Sequence[ArmOutcome]) -> Comparability:
    """Every arm against the first: the first reason found, or comparable (a single arm compares with none)."""
    if len(arms) < 2:
        return COMPARABLE
    baseline = arms[0]
    for arm in arms[1:]:
        verdict = comparability(baseline, arm)
        if not verdict:
            return verdict
    return COMPARABLE


def grade_note(status: str, wall_s: float) -> str | None:
    """``cancelled after 5.1 s: not graded`` for an arm stopped from outside; ``None`` for any other."""
    if status not in UNFINISHED:
        return None
    return f"{status} after {wall_s:.1f} s: not graded"


FAILED_RUN = "the run failed before it finished (its end state met the expectation, but a failed run is no pass)"
"""The mismatch a failed arm's grade carries when its half-done end state happens to meet the expectation."""


def as_finished(grade: Graded, status: str) -> Graded:
    """``grade`` for an arm that ended with ``status``: a failed run is never a pass, whatever its end state.

    An arm that hit its request limit or lost its provider may already have made every change the task asks
    for; its end state meets the expectation, yet the run did not finish (no answer, its figures for part of the
    work). Graded ``passed`` it would read as a success beside ``failed`` in every view that shows the verdict.
    """
    if status != "failed" or not grade.passed or verdict_of(grade) != PASSED:
        return grade
    return replace(grade, passed=False, verdict=FAILED, mismatches=[*grade.mismatches, FAILED_RUN])


def verdict_of(grade: Graded) -> Verdict:
    """The kind of verdict a grade event gives (sessions stored before verdicts had kinds included)."""
    if grade.verdict in VERDICTS:
        return grade.verdict  # type: ignore[return-value]
    if grade.task in AGREEMENT_TASKS:
        return AGREE if grade.passed else DIFFER
    return PASSED if grade.passed else FAILED


def verdict_label(verdict: str, reason: str = "") -> str:
    """``✓ passed``, ``= arms agree``, ``· not compared: the tool arm failed`` (the reason in place of the words)."""
    words = reason if verdict == NOT_GRADED and reason else VERDICT_WORDS.get(verdict, verdict)
    return f"{VERDICT_MARKS.get(verdict, '·')} {words}"
