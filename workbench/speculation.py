"""CodeMode's eager execution and speculation, as workbench events.

Eager execution has no event of its own in the harness: the sandbox runs each statement once a later
one has started streaming. :class:`EagerWatch` replays that rule (the harness's own
``closed_statements``) on the streamed snippet and reports each new boundary as :class:`EagerProgress`.
Speculative calls do have events (``SpeculativeCall*Event``); :class:`SpeculationWatch` turns each into
a :class:`Speculation`, adding the latency a claimed call hid (how long it had run, or needed, when the
snippet asked for it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai_harness.code_mode import (
    SpeculativeCallClaimedEvent,
    SpeculativeCallEvictedEvent,
    SpeculativeCallLaunchedEvent,
    SpeculativeCallMissedEvent,
    SpeculativeCallSettledEvent,
)
from pydantic_ai_harness.code_mode._streaming import closed_statements

from workbench.events import EagerProgress, Payload, Speculation

SPECULATION_EVENTS = (
    SpeculativeCallLaunchedEvent,
    SpeculativeCallSettledEvent,
    SpeculativeCallClaimedEvent,
    SpeculativeCallMissedEvent,
    SpeculativeCallEvictedEvent,
)


@dataclass
class EagerWatch:
    """Per arm: how many leading statements of each streaming snippet eager execution has taken."""

    closed: dict[str, int] = field(default_factory=dict)

    def __call__(self, call_id: str, code: str) -> Iterator[Payload]:
        statements = closed_statements(code)
        if len(statements) > self.closed.get(call_id, 0):
            self.closed[call_id] = len(statements)
            last = statements[-1]
            yield EagerProgress(call_id, len(statements), last.end_lineno or last.lineno)


@dataclass
class SpeculationWatch:
    """Per arm: turns the harness's speculation events into :class:`Speculation` payloads."""

    clock: Callable[[], float] = time.perf_counter
    _launched_at: dict[str, float] = field(default_factory=dict)
    _names: dict[str, str] = field(default_factory=dict)

    def __call__(self, event: Any) -> Iterator[Payload]:
        call_id = event.tool_call_id or ""
        match event:
            case SpeculativeCallLaunchedEvent():
                self._launched_at[event.launch_id] = self.clock()
                self._names[event.launch_id] = event.wrapped_tool_name
                yield Speculation(
                    call_id, event.launch_id, "launched", event.wrapped_tool_name, _plain(event.arguments),
                    line_start=event.line_start, line_end=event.line_end,
                )  # fmt: skip
            case SpeculativeCallSettledEvent():
                name = self._names.get(event.launch_id, "")
                yield Speculation(
                    call_id, event.launch_id, "settled", name, outcome=event.outcome, elapsed_ms=_ms(event.elapsed_ms)
                )
            case SpeculativeCallClaimedEvent():
                launched = self._launched_at.pop(event.launch_id, None)
                self._names.pop(event.launch_id, None)
                waited = (self.clock() - launched) * 1000 if launched is not None else event.elapsed_ms
                yield Speculation(
                    call_id, event.launch_id, "claimed", event.wrapped_tool_name,
                    outcome="ready" if event.ready_at_claim else "pending", elapsed_ms=_ms(event.elapsed_ms),
                    hidden_ms=_ms(min(waited, event.elapsed_ms)),
                )  # fmt: skip
            case SpeculativeCallMissedEvent():
                yield Speculation(call_id, event.nested_tool_call_id, "missed", event.wrapped_tool_name)
            case SpeculativeCallEvictedEvent():
                self._launched_at.pop(event.launch_id, None)
                self._names.pop(event.launch_id, None)
                yield Speculation(call_id, event.launch_id, "evicted", event.wrapped_tool_name, outcome=event.state)
            case _:
                pass


def _ms(value: float) -> float:
    return round(value, 3)


def _plain(arguments: dict[str, object]) -> dict[str, Any]:
    import pydantic_core

    try:
        plain = pydantic_core.to_jsonable_python(arguments)
    except pydantic_core.PydanticSerializationError:
        return {"repr": repr(arguments)[:500]}
    return plain if isinstance(plain, dict) else {"value": plain}
