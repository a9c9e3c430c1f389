"""Whether an arm's figures can be compared with the baseline arm's, and what to say when they cannot.

Every view that compares arms (the TUI's strip, ``run``'s vs column, the sessions list, the exports) asks
:func:`comparability` and names a better arm only when it says so; otherwise it shows the figures with the
reason (``not comparable: tool arm cancelled``). The rule: both arms ran to their end (an arm cancelled,
interrupted, failed or still running has figures for part of the work only), and at least one of them
called a tool (a model that declined the prompt in both arms did no work to compare).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

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
