"""Conversations: the user turns of a run, and what each arm did in each turn.

A run is a conversation of one or more user turns. Each arm answers them one after the other on its own app
instance (the state carries over) with its own message history (each turn's model requests carry the earlier
turns). A run of one prompt has no turn events; a conversation of several turns, or a session continued with
a follow-up prompt, has a :class:`~workbench.events.TurnStarted` and a :class:`~workbench.events.TurnEnded`
per turn, and every event carries its turn (:attr:`~workbench.events.ArmEvent.turn`).

This module is the one reading of turns every view and grader shares: :func:`turn_calls` gives the calls an
arm made per turn, the code arm's calls from inside ``run_code`` included (what a per-turn checker such as
BFCL's is fed), and :class:`TurnFigures` an arm's figures per turn (folded by
:class:`~workbench.summary.ArmSummary`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.errors import BadInput
from workbench.events import (
    RUN_CODE,
    ArmEvent,
    InnerCall,
    InnerResult,
    RunStarted,
    ToolCall,
    ToolResult,
    TurnStarted,
)

if TYPE_CHECKING:
    from workbench.summary import ArmSummary

MAX_TURNS = 200
"""Most user turns in one conversation (BFCL's longest entries have under ten)."""


@dataclass
class TurnCall:
    """One call of an app tool an arm made in a turn: directly (``parent`` is ``None``) or from inside a
    ``run_code`` snippet (``parent`` is the snippet's call id). ``run_code`` itself is not one."""

    call_id: str
    name: str
    args: dict[str, Any] | str
    """The arguments as the model wrote them (text when they were not valid JSON: such a call never ran)."""
    parent: str | None = None
    outcome: str | None = None
    """``ok`` | ``retried`` | ``failed`` | ``denied``; ``None`` when no result came (the arm was stopped)."""
    result: str = ""
    """The result's text as recorded (clipped at the event's content limit)."""
    error: str | None = None

    @property
    def ran(self) -> bool:
        """Whether the call reached the tool (valid arguments, not denied)."""
        return isinstance(self.args, dict) and self.outcome in ("ok", "retried", "failed")

    def to_dict(self) -> dict[str, Any]:
        return {
            "call_id": self.call_id,
            "name": self.name,
            "args": self.args,
            "parent": self.parent,
            "outcome": self.outcome,
            "error": self.error,
        }


def turn_calls(events: Iterable[ArmEvent]) -> list[list[TurnCall]]:
    """One arm's app-tool calls per turn, in the order they were made: ``[turn 1 calls, turn 2 calls, …]``.

    A turn that made no call has an empty list; the list is as long as the arm's last turn."""
    turns: list[list[TurnCall]] = [[]]
    by_id: dict[str, TurnCall] = {}
    for event in events:
        payload = event.payload
        match payload:
            case TurnStarted():
                while len(turns) < payload.turn:
                    turns.append([])
            case ToolCall() if payload.name != RUN_CODE:
                call = TurnCall(payload.call_id, payload.name, payload.args)
                by_id[payload.call_id] = call
                turns[-1].append(call)
            case InnerCall():
                call = TurnCall(payload.call_id, payload.name, payload.args, parent=payload.parent_id)
                by_id[f"{payload.parent_id}/{payload.call_id}"] = call
                turns[-1].append(call)
            case ToolResult() if payload.name != RUN_CODE:
                _settle(by_id.get(payload.call_id), payload.outcome, payload.content, payload.error)
            case InnerResult():
                found = by_id.get(f"{payload.parent_id}/{payload.call_id}")
                _settle(found, payload.outcome, payload.content, payload.error)
            case _:
                pass
    return turns


def _settle(call: TurnCall | None, outcome: str, content: str, error: str | None) -> None:
    if call is not None:
        call.outcome, call.result, call.error = outcome, content, error


def turn_prompts(events: Iterable[ArmEvent]) -> list[str]:
    """The user prompt of each turn, in order (turn 1's from the run-started event when it has no turn event)."""
    prompts: list[str] = []
    for event in events:
        payload = event.payload
        if isinstance(payload, RunStarted) and not prompts:
            prompts.append(payload.prompt)
        elif isinstance(payload, TurnStarted):
            del prompts[payload.turn - 1 :]
            prompts += [""] * (payload.turn - 1 - len(prompts)) + [payload.prompt]
    return prompts


@dataclass
class TurnFigures:
    """One turn's figures: what it cost and did, this turn alone."""

    turn: int
    prompt: str = ""
    status: str = "running"
    error: str | None = None
    output: str = ""
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    tool_calls: int = 0
    inner_calls: int = 0
    wall_s: float = 0.0
    started_t: float = 0.0
    base: dict[str, float | None] = field(default_factory=dict, repr=False, compare=False)
    """The arm's running totals when the turn began (the turn's figures are the totals since)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "prompt": self.prompt,
            "status": self.status,
            "error": self.error,
            "output": self.output,
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 8),
            "tool_calls": self.tool_calls,
            "inner_calls": self.inner_calls,
            "wall_s": round(self.wall_s, 3),
        }


def checked_turns(turns: Sequence[Any], where: str = "turns") -> tuple[str, ...]:
    """A list of user prompts as given (a task file, ``--turn``, the API): each non-empty text; raises
    ``BadInput`` (a ``ValueError``) with a one-line message."""
    if isinstance(turns, str) or not isinstance(turns, Sequence):
        raise BadInput(f"{where} must be a list of prompts (text)")
    if not turns:
        raise BadInput(f"{where} is empty: give at least one prompt")
    if len(turns) > MAX_TURNS:
        raise BadInput(f"{where}: {len(turns):,} turns; a conversation may have at most {MAX_TURNS}")
    for number, prompt in enumerate(turns, 1):
        if not isinstance(prompt, str) or not prompt.strip():
            raise BadInput(f"{where}: turn {number} is not a prompt (non-empty text)")
    return tuple(turns)


@dataclass(frozen=True)
class TurnRow:
    """One turn of a conversation across its arms: the prompt, and each arm's figures for it (``None``: the
    arm never reached that turn)."""

    turn: int
    prompt: str
    arms: dict[str, TurnFigures | None]


def turn_rows(summaries: Sequence[ArmSummary]) -> list[TurnRow]:
    """The per-turn table every view shows for a conversation (empty for a run of one prompt)."""
    count = max((len(summary.turns) for summary in summaries), default=0)
    rows = []
    for index in range(count):
        figures = {s.name: s.turns[index] if index < len(s.turns) else None for s in summaries}
        prompt = next((f.prompt for f in figures.values() if f is not None and f.prompt), "")
        rows.append(TurnRow(index + 1, prompt, figures))
    return rows
