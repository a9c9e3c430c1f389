"""What the transcript knows about each call and snippet, folded from events (no widgets here).

Widgets render these records; the snippet inspector reads a :class:`SnippetRecord` while it may still
be growing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.events import InnerCall, InnerResult, ToolResult


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
class SnippetRecord:
    """A ``run_code`` call: its code as it grows, its inner calls in order, and what the model received."""

    call_id: str
    arm: str = "code"
    code: str = ""
    complete: bool = False
    """The final code has arrived (the model finished writing it)."""
    raw_arguments: str | None = None
    """The arguments as written, when they were not valid JSON (the code never reached the sandbox)."""
    inner: dict[str, InnerRecord] = field(default_factory=dict)
    result: ToolResult | None = None
    ended: bool = False
    """The arm finished (or was cancelled) before the snippet's result arrived."""

    @property
    def running(self) -> bool:
        return self.result is None and not self.ended

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
