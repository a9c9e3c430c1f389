"""What the transcript knows about each call and snippet, folded from events (no widgets here).

Widgets render these records; the snippet inspector reads a :class:`SnippetRecord` while it may still
be growing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.events import EagerProgress, InnerCall, InnerResult, Speculation, ToolResult


@dataclass
class CallRecord:
    """A top-level tool call and, once it arrives, its result."""

    call_id: str
    name: str
    args: dict[str, Any] | str
    result: ToolResult | None = None
    ended: bool = False
    """The arm finished (or was cancelled) before this call's result arrived."""

    @property
    def outcome(self) -> str | None:
        return self.result.outcome if self.result else None


@dataclass
class InnerRecord:
    """A call a snippet made inside the sandbox."""

    call: InnerCall
    result: InnerResult | None = None

    @property
    def outcome(self) -> str | None:
        return self.result.outcome if self.result else None


@dataclass
class SpeculationRecord:
    """A nested call the sandbox launched before the snippet asked for it, at its latest phase."""

    launch_id: str
    name: str
    args: dict[str, Any]
    phase: str = "launched"
    """``launched``, ``settled``, then ``claimed`` (the snippet used it) or ``evicted``; ``missed``: the snippet
    made a call that no speculation had ready."""
    launched: bool = False
    outcome: str | None = None
    line_start: int | None = None
    line_end: int | None = None
    hidden_ms: float | None = None
    """Claimed: how long the call had already run when the snippet asked for it."""


@dataclass
class SnippetRecord:
    """A ``run_code`` call: its code as it grows, its inner calls in order, and what the model received."""

    call_id: str
    arm: str = "code"
    code: str = ""
    complete: bool = False
    """The final code has arrived (the model finished writing it)."""
    called: bool = False
    """The model's ``run_code`` call was made (the sandbox runs the whole snippet from then on; an eager arm's
    sandbox may have begun its statements earlier)."""
    raw_arguments: str | None = None
    """The arguments as written, when they were not valid JSON (the code never reached the sandbox)."""
    inner: dict[str, InnerRecord] = field(default_factory=dict)
    result: ToolResult | None = None
    ended: bool = False
    """The arm finished (or was cancelled) before the snippet's result arrived."""
    eager_statements: int = 0
    """Leading statements eager execution handed to the sandbox while the model was still writing."""
    eager_lines: int = 0
    """The lines of the code those statements cover."""
    speculations: dict[str, SpeculationRecord] = field(default_factory=dict)
    """Speculatively launched nested calls by launch id, in launch order."""

    @property
    def running(self) -> bool:
        return self.result is None and not self.ended

    def add_eager(self, progress: EagerProgress) -> None:
        if progress.closed_statements >= self.eager_statements:
            self.eager_statements = progress.closed_statements
            self.eager_lines = max(self.eager_lines, progress.closed_lines)

    def add_speculation(self, step: Speculation) -> SpeculationRecord:
        record = self.speculations.get(step.launch_id)
        if record is None:
            record = self.speculations[step.launch_id] = SpeculationRecord(step.launch_id, step.name, step.args)
        if step.phase != "settled" or record.phase == "launched":
            record.phase = step.phase
        record.launched = record.launched or step.phase == "launched"
        if step.phase == "settled":
            record.outcome = step.outcome
        record.line_start = step.line_start if step.line_start is not None else record.line_start
        record.line_end = step.line_end if step.line_end is not None else record.line_end
        if step.hidden_ms is not None:
            record.hidden_ms = step.hidden_ms
        return record

    def speculation_counts(self) -> dict[str, int]:
        """Speculated calls by their latest phase (launched ones still waiting count as ``launched``)."""
        counts: dict[str, int] = {}
        for record in self.speculations.values():
            counts[record.phase] = counts.get(record.phase, 0) + 1
        return counts

    def add_inner_call(self, call: InnerCall) -> InnerRecord:
        record = self.inner.get(call.call_id)
        if record is None:
            record = self.inner[call.call_id] = InnerRecord(call)
        return record

    def add_inner_result(self, result: InnerResult) -> InnerRecord:
        record = self.inner.get(result.call_id)
        if record is None:
            call = InnerCall(result.call_id, result.parent_id, result.name, {})
            record = self.inner[result.call_id] = InnerRecord(call)
        record.result = result
        return record
