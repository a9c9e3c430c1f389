"""Per-arm figures, folded from the arm's events (live, stored or replayed alike)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from workbench.events import (
    RUN_CODE,
    ArmEvent,
    EagerProgress,
    EndState,
    Graded,
    InnerCall,
    InnerResult,
    LimiterWait,
    ProviderRetry,
    RequestStarted,
    RunFinished,
    RunStarted,
    Snippet,
    Speculation,
    Status,
    ToolCall,
    ToolResult,
    TurnEnded,
    TurnStarted,
    Usage,
)
from workbench.turns import TurnFigures
from workbench.verdict import AGREE, DIFFER, FAILED, NOT_GRADED, PASSED, UNFINISHED, Verdict, grade_note, verdict_of

LENGTH = "length"
"""The finish reason of a response cut at the request's max_tokens."""


@dataclass
class ArmSummary:
    """What one arm did and cost. Built by :meth:`fold` from events, so every consumer agrees."""

    name: str
    mode: str = ""
    model: str = ""
    sandboxed: bool = False
    """Whether the arm runs code in the sandbox (its tools are callable inside ``run_code``)."""
    options: dict[str, Any] = field(default_factory=dict)
    """The arm's mode options (eager, speculate, sandbox limits) as it was run with them."""
    app_tools: list[str] = field(default_factory=list)
    """The app's tools the arm got, and which of them declare they change nothing."""
    read_only_tools: list[str] = field(default_factory=list)
    status: Status = "running"
    passed: bool | None = None
    """Whether an expectation was met; ``None`` without one (the arms agreeing is :attr:`verdict`, not a pass)."""
    verdict: Verdict = NOT_GRADED
    """``passed`` / ``failed`` (an expectation), ``agree`` / ``differ`` (the arms compared), ``not graded``."""
    verdict_reason: str = ""
    """Why ``not graded``: ``not compared: the tool arm failed``, ``cancelled after 5.1 s: not graded``."""
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_cost_usd: float = 0.0
    """What the cached input tokens cost, at the provider's cached rate (included in ``cost_usd``)."""
    retries: int = 0
    """Model requests tried again after a transient provider error (429, 5xx, timeout, dropped connection)."""
    tool_calls: int = 0
    malformed_calls: int = 0
    """Top-level calls whose arguments were not valid JSON (they never reached a tool or the sandbox)."""
    inner_calls: int = 0
    snippets: int = 0
    cost_usd: float | None = None
    """``None`` until a response was priced (an endpoint that never answered costs "cost unknown")."""
    tokens_estimated: bool = False
    """Some response reported no usage: its tokens (and the cost priced from them) are the workbench's count."""
    finish_reason: str | None = None
    """Why the arm's last model response ended (``length``: cut at max_tokens; see :attr:`cut_at_max_tokens`)."""
    cut_responses: int = 0
    """Responses that ended at the request's max_tokens (``finish_reason: length``)."""
    wall_s: float = 0.0
    """The arm's time from start to its last event, less :attr:`waited_s`."""
    waited_s: float = 0.0
    """Time the arm's requests waited for the workbench's own concurrency limit (not the model's time)."""
    error: str | None = None
    diff: dict[str, int] = field(default_factory=lambda: {"created": 0, "updated": 0, "deleted": 0})
    mismatches: list[str] = field(default_factory=list)
    collateral: list[str] = field(default_factory=list)
    output: str = ""
    price_label: str = ""
    input_tokens_per_request: list[int] = field(default_factory=list)
    """Input tokens of each request in order: the context size, which grows in a tool-calling arm."""
    tool_output_bytes_seen: int = 0
    """Bytes of tool output the model received (top-level results)."""
    tool_output_bytes_produced: int = 0
    """Bytes of tool output the tools produced (top-level results in the tool arm, nested ones in the code arm)."""
    eager_statements: int = 0
    """Statements run while the model was still writing their snippet (the most per snippet, summed)."""
    speculation_launched: int = 0
    speculation_claimed: int = 0
    speculation_missed: int = 0
    speculation_evicted: int = 0
    speculation_hidden_ms: float = 0.0
    """Latency of nested calls hidden by speculation: time they had run before the snippet asked for them."""
    prompt: str = ""
    """The first turn's prompt (from the run-started event)."""
    turns: list[TurnFigures] = field(default_factory=list)
    """Each turn's own figures, for a conversation (empty for a run of one prompt: its figures are the arm's)."""
    _eager_by_call: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)
    _clock_s: float = field(default=0.0, init=False, repr=False, compare=False)
    """The latest event's time since the arm started (wall time before the limiter's waits are taken out)."""

    @classmethod
    def fold(cls, name: str, events: Iterable[ArmEvent]) -> ArmSummary:
        summary = cls(name=name)
        for event in events:
            summary.add(event)
        return summary

    def add(self, event: ArmEvent) -> None:
        """Fold one more event in (the TUI's counters call this live)."""
        payload = event.payload
        if event.t > self._clock_s:
            self._clock_s = event.t
            self.wall_s = max(0.0, self._clock_s - self.waited_s)
        match payload:
            case RunStarted():
                self.prompt = payload.prompt
                self.mode, self.model, self.price_label = payload.mode, payload.model, payload.price_label
                self.options = dict(payload.options)
                self.sandboxed = bool(payload.sandboxed_tools)
                self.app_tools, self.read_only_tools = payload.app_tools, list(payload.read_only_tools)
            case RequestStarted():
                self.requests = max(self.requests, payload.request)
            case Usage():
                self.input_tokens = payload.total_input_tokens
                self.output_tokens = payload.total_output_tokens
                self.cache_read_tokens += payload.cache_read_tokens
                self.cache_cost_usd += payload.cache_cost_usd or 0.0
                self.cost_usd = payload.total_cost_usd
                self.tokens_estimated = self.tokens_estimated or payload.estimated
                self.finish_reason = payload.finish_reason
                self.cut_responses += payload.finish_reason == LENGTH
                self.input_tokens_per_request.append(payload.input_tokens)
            case ProviderRetry():
                self.retries += 1
            case LimiterWait():
                self.waited_s += payload.waited_s
                self.wall_s = max(0.0, self._clock_s - self.waited_s)
            case ToolCall():
                self.tool_calls += 1
                self.malformed_calls += isinstance(payload.args, str)
            case ToolResult():
                self.tool_output_bytes_seen += payload.bytes
                if payload.name != RUN_CODE:
                    self.tool_output_bytes_produced += payload.bytes
            case Snippet():
                self.snippets += 1
            case InnerCall():
                self.inner_calls += 1
            case EagerProgress():
                before = self._eager_by_call.get(payload.call_id, 0)
                if payload.closed_statements > before:
                    self._eager_by_call[payload.call_id] = payload.closed_statements
                    self.eager_statements += payload.closed_statements - before
            case Speculation():
                self._add_speculation(payload)
            case InnerResult():
                self.tool_output_bytes_produced += payload.bytes
            case EndState():
                self.diff = {
                    "created": len(payload.created),
                    "updated": len(payload.updated),
                    "deleted": len(payload.deleted),
                }
            case Graded():
                self.verdict = verdict_of(payload)
                self.verdict_reason = payload.reason
                self.passed = payload.passed if self.verdict in (PASSED, FAILED) else None
                self.mismatches = list(payload.mismatches)
                self.collateral = list(payload.collateral)
            case RunFinished():
                self.status, self.error, self.output = payload.status, payload.error, payload.output
                if self.status in UNFINISHED:  # stopped from outside: what it left half done is not graded
                    self.passed, self.mismatches, self.collateral = None, [], []
                    self.verdict, self.verdict_reason = NOT_GRADED, grade_note(self.status, self.wall_s) or ""
                if self.turns and self.turns[-1].status == "running":  # stopped inside a turn
                    self._count_turn(self.turns[-1], event.t)
                    self._end_turn(payload.status, payload.error, payload.output)
            case TurnStarted():
                self._start_turn(payload, event.t)
            case TurnEnded():
                if self.turns:
                    self._count_turn(self.turns[-1], event.t)
                self._end_turn(payload.status, payload.error, payload.output)
            case _:
                pass
        if self.turns and self.turns[-1].status == "running":
            self._count_turn(self.turns[-1], event.t)

    def _totals(self) -> dict[str, float | None]:
        return {
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "tool_calls": self.tool_calls,
            "inner_calls": self.inner_calls,
        }

    def _start_turn(self, started: TurnStarted, t: float) -> None:
        if not self.turns and started.turn > 1:  # a follow-up on a run of one prompt: its turn 1 was implicit
            zero = dict.fromkeys(self._totals(), 0)
            first = TurnFigures(1, self.prompt, self.status, self.error, self.output, base=zero)
            self._count_turn(first, t)
            self.turns.append(first)
        if self.status != "running":  # a follow-up turn after the run had ended: the arm runs again
            self.status, self.error = "running", None
            self.passed, self.verdict, self.verdict_reason = None, NOT_GRADED, ""
            self.mismatches, self.collateral = [], []
        self.turns.append(TurnFigures(started.turn, started.prompt, started_t=t, base=self._totals()))

    def _end_turn(self, status: Status, error: str | None, output: str) -> None:
        last = self.turns[-1] if self.turns else None
        if last is not None:
            last.status, last.error, last.output = status, error, output

    def _count_turn(self, turn: TurnFigures, t: float) -> None:
        """The turn's figures: the arm's totals now less those when it began."""
        base = turn.base
        turn.requests = self.requests - int(base.get("requests") or 0)
        turn.input_tokens = self.input_tokens - int(base.get("input_tokens") or 0)
        turn.output_tokens = self.output_tokens - int(base.get("output_tokens") or 0)
        turn.tool_calls = self.tool_calls - int(base.get("tool_calls") or 0)
        turn.inner_calls = self.inner_calls - int(base.get("inner_calls") or 0)
        turn.cost_usd = None if self.cost_usd is None else self.cost_usd - (base.get("cost_usd") or 0.0)
        turn.wall_s = max(0.0, t - turn.started_t)

    def _add_speculation(self, payload: Speculation) -> None:
        match payload.phase:
            case "launched":
                self.speculation_launched += 1
            case "claimed":
                self.speculation_claimed += 1
                self.speculation_hidden_ms += payload.hidden_ms or 0.0
            case "missed":
                self.speculation_missed += 1
            case "evicted":
                self.speculation_evicted += 1
            case _:
                pass

    def to_dict(self) -> dict[str, Any]:
        """The arm object of the ``run --json`` contract."""
        return {
            "name": self.name,
            "mode": self.mode,
            "model": self.model,
            "status": self.status,
            "passed": self.passed,
            "verdict": self.verdict,
            "verdict_reason": self.verdict_reason or None,
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "tool_calls": self.tool_calls,
            "inner_calls": self.inner_calls,
            "snippets": self.snippets,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 8),
            "wall_s": round(self.wall_s, 3),
            "waited_s": round(self.waited_s, 3),
            "error": self.error,
            "diff": dict(self.diff),
            "mismatches": list(self.mismatches),
            "options": dict(self.options),
            "eager_statements": self.eager_statements,
            "speculation": {
                "launched": self.speculation_launched,
                "claimed": self.speculation_claimed,
                "missed": self.speculation_missed,
                "evicted": self.speculation_evicted,
                "hidden_ms": round(self.speculation_hidden_ms, 3),
            },
            "provider_retries": self.retries,
            "cached_input_tokens": self.cache_read_tokens,
            "tokens_estimated": self.tokens_estimated,
            "malformed_calls": self.malformed_calls,
            "finish_reason": self.finish_reason,
            "cut_at_max_tokens": self.cut_at_max_tokens,
        } | ({"turns": [turn.to_dict() for turn in self.turns]} if self.turns else {})

    @property
    def cut_at_max_tokens(self) -> bool:
        """Whether the arm's last response (its answer, when it completed) was cut at max_tokens."""
        return self.finish_reason == LENGTH

    @property
    def agreed(self) -> bool | None:
        """Whether the arms agree (``None`` when they were not compared with each other)."""
        return {AGREE: True, DIFFER: False}.get(self.verdict)

    @property
    def payload_suppression(self) -> float | None:
        """1 - bytes of tool output the model saw / bytes the tools produced."""
        if not self.tool_output_bytes_produced:
            return None
        return 1 - self.tool_output_bytes_seen / self.tool_output_bytes_produced
