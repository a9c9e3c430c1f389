"""The one event vocabulary: a live run produces these, the store writes them, a replay reads them back.

Every consumer (the TUI panes, the CLI printer, the bench aggregator, ``show``) renders from these
events and nothing else. An :class:`ArmEvent` is an envelope (arm, seq, seconds since the arm started)
around one typed payload; payloads are small dataclasses of JSON values so they round-trip through
SQLite unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import cache
from typing import Any, ClassVar, Literal

Outcome = Literal["ok", "retried", "failed", "denied"]
Status = Literal["running", "completed", "failed", "cancelled", "interrupted"]
Mode = Literal["tool", "code", "hybrid"]
"""How an arm's tools reach the model (see :mod:`workbench.arm_spec`)."""
DEFAULT_ARMS = ("tool", "code")
"""The arms a comparison runs when none are chosen, in display order (the first is the baseline)."""
RUN_CODE = "run_code"
"""The one tool CodeMode offers a model: a call of it is a snippet."""

CONTENT_CHARS = 16_000
"""Most of a result's text kept in its event: enough to inspect a page of records, while a snippet that
returns megabytes does not put megabytes into every stored session."""
PREVIEW_CHARS = 240
"""A result's one-line preview."""

_PAYLOADS: dict[str, type[Payload]] = {}


@dataclass(frozen=True)
class Payload:
    kind: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.kind:
            _PAYLOADS[cls.kind] = cls

    def to_dict(self) -> dict[str, Any]:
        """The payload's fields (shallow: they already are JSON values)."""
        return {name: getattr(self, name) for name in _field_names(type(self))}


@dataclass(frozen=True)
class RunStarted(Payload):
    kind: ClassVar[str] = "run_started"
    mode: Mode
    model: str
    app: str
    items: int
    seed: int
    prompt: str
    tools: list[str]
    """What the model sees: the app's tools (tool arm) or just ``run_code`` (code arm)."""
    sandboxed_tools: list[str] = field(default_factory=list)
    """The tools callable inside ``run_code`` (code arm only)."""
    price_label: str = ""
    """How cost is computed, e.g. "priced as openai:gpt-5-mini" for the scripted model."""
    limits: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    """The arm's mode options as given, e.g. ``{"eager": True, "speculate": "declared"}``."""
    read_only_tools: list[str] = field(default_factory=list)
    """The app's tools that declare they change nothing (MCP ``readOnlyHint``, ``metadata={'read_only': True}``)."""

    @property
    def app_tools(self) -> list[str]:
        """The app's own tools, however the arm calls them (directly, inside ``run_code``, or both)."""
        return list(self.sandboxed_tools) or [name for name in self.tools if name != RUN_CODE]


@dataclass(frozen=True)
class RequestStarted(Payload):
    kind: ClassVar[str] = "request_started"
    request: int
    """1-based number of the model request in this arm."""


@dataclass(frozen=True)
class ProviderRetry(Payload):
    """A model request failed with a transient provider error and will be tried again after ``wait_s``."""

    kind: ClassVar[str] = "provider_retry"
    attempt: int
    """The attempt that failed (1 for the first)."""
    attempts: int
    """Most attempts the retry policy allows."""
    error: str
    wait_s: float


@dataclass(frozen=True)
class LimiterWait(Payload):
    """A model request waited ``waited_s`` for a slot of the workbench's own per-provider limit (the
    ``concurrency`` setting) before it was sent. The arm's wall time leaves it out; views show it as "waited"."""

    kind: ClassVar[str] = "limiter_wait"
    waited_s: float


@dataclass(frozen=True)
class TextDelta(Payload):
    kind: ClassVar[str] = "text_delta"
    text: str


@dataclass(frozen=True)
class ToolCall(Payload):
    """A top-level tool call the model made (``run_code`` included)."""

    kind: ClassVar[str] = "tool_call"
    call_id: str
    name: str
    args: dict[str, Any] | str


@dataclass(frozen=True)
class ToolResult(Payload):
    """The result the model received for a top-level call."""

    kind: ClassVar[str] = "tool_result"
    call_id: str
    name: str
    outcome: Outcome
    preview: str
    bytes: int
    """Size of what the model sees for this result (UTF-8 bytes of its text form)."""
    ms: float
    error: str | None = None
    """For a retry or failure: the message the model received."""
    content: str = ""
    """The whole result as the model saw it, clipped at ``CONTENT_CHARS`` (``bytes`` keeps the full size)."""
    clipped_from: int | None = None
    """Bytes of the result the tool or snippet produced when that was over the result limit
    (``max_result_bytes``): the model received only its first ``bytes``."""


@dataclass(frozen=True)
class SnippetDelta(Payload):
    """The code of a ``run_code`` call so far, decoded from the streamed argument deltas."""

    kind: ClassVar[str] = "snippet_delta"
    call_id: str
    code: str


MALFORMED_ARGUMENTS = "arguments were not valid JSON"
"""How every view labels a call whose arguments the model wrote as broken JSON (it never reached a tool)."""


@dataclass(frozen=True)
class Snippet(Payload):
    """The final code of a ``run_code`` call."""

    kind: ClassVar[str] = "snippet"
    call_id: str
    code: str
    raw_arguments: str | None = None
    """The arguments exactly as the model wrote them, when they were not valid JSON: ``code`` is then what a
    lenient decode recovered (empty when nothing could be), and the call never reached the sandbox."""


@dataclass(frozen=True)
class EagerProgress(Payload):
    """CodeMode(eager=True) handed the snippet's leading statements to the sandbox while the model was
    still writing the rest."""

    kind: ClassVar[str] = "eager_progress"
    call_id: str
    """The ``run_code`` call."""
    closed_statements: int
    closed_lines: int
    """How many leading lines of the code so far those statements cover."""


SpeculationPhase = Literal["launched", "settled", "claimed", "missed", "evicted"]


@dataclass(frozen=True)
class Speculation(Payload):
    """One step of a nested call the sandbox launched speculatively, before the snippet asked for it."""

    kind: ClassVar[str] = "speculation"
    call_id: str
    """The ``run_code`` call."""
    launch_id: str
    phase: SpeculationPhase
    name: str
    """The tool."""
    args: dict[str, Any] = field(default_factory=dict)
    line_start: int | None = None
    line_end: int | None = None
    outcome: str | None = None
    """Settled: "ready" or "failed"; evicted: the state it was in."""
    elapsed_ms: float | None = None
    hidden_ms: float | None = None
    """Claimed: how long the call had already run before the snippet asked for it (latency hidden)."""


@dataclass(frozen=True)
class InnerCall(Payload):
    """A call a snippet made from inside the sandbox."""

    kind: ClassVar[str] = "inner_call"
    call_id: str
    parent_id: str
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class InnerResult(Payload):
    kind: ClassVar[str] = "inner_result"
    call_id: str
    parent_id: str
    name: str
    outcome: Outcome
    preview: str
    bytes: int
    """Size of the result handed to the sandbox (JSON bytes): produced, but not seen by the model."""
    ms: float
    error: str | None = None
    content: str = ""
    """The whole result as JSON, clipped at ``CONTENT_CHARS`` (``bytes`` keeps the full size)."""


@dataclass(frozen=True)
class Usage(Payload):
    """Token usage and cost after one model response, and the arm's running totals."""

    kind: ClassVar[str] = "usage"
    request: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    total_input_tokens: int
    total_output_tokens: int
    cost_usd: float | None
    """``None`` when the model cannot be priced: shown as "cost unknown", never guessed."""
    total_cost_usd: float | None
    estimated: bool = False
    """The response carried no usage: its tokens are the workbench's own BPE count of the request and the
    response (and its cost is priced from that count)."""
    cache_cost_usd: float | None = None
    """The part of ``cost_usd`` charged for ``cache_read_tokens`` (at the provider's cached-input rate)."""
    finish_reason: str | None = None
    """Why the response ended, as pydantic-ai normalizes it (``stop``, ``length``, ``tool_call``,
    ``content_filter``, ``error``); ``length``: cut at the request's max_tokens. ``None`` when the provider
    said nothing (and in sessions stored before it was kept)."""


@dataclass(frozen=True)
class EndState(Payload):
    """What the arm changed in its app: created, updated (field old -> new), deleted."""

    kind: ClassVar[str] = "state_diff"
    created: list[dict[str, Any]]
    updated: list[dict[str, Any]]
    deleted: list[dict[str, Any]]


@dataclass(frozen=True)
class Graded(Payload):
    """An arm's verdict: an expectation met or not, the arms agreeing or not, or why it is not graded.

    ``passed`` is whether the expectation was met, or (for ``agree`` / ``differ``) whether the arms agree:
    read :func:`workbench.verdict.verdict_of` rather than it, since agreement is not a pass.
    """

    kind: ClassVar[str] = "grade"
    passed: bool
    task: str
    mismatches: list[str]
    collateral: list[str]
    verdict: str = ""
    """``passed`` | ``failed`` | ``agree`` | ``differ`` | ``not graded``; empty in sessions stored before
    verdicts had kinds (then ``task`` says ``arms agree`` / ``arms differ`` for the agreement grade)."""
    reason: str = ""
    """Why an arm is ``not graded``: ``not compared: the tool arm failed``."""


@dataclass(frozen=True)
class TurnStarted(Payload):
    """A user turn of a conversation begins: every event after it, up to the next, belongs to ``turn``.

    A run of one prompt has no turn events (its one turn is implicit); a conversation of several turns, or a
    session continued with a follow-up prompt, has one per turn. The arm keeps its app instance (its state)
    and its message history from turn to turn."""

    kind: ClassVar[str] = "turn_started"
    turn: int
    """1-based."""
    prompt: str
    tools: list[str] | None = None
    """The app's tools for this turn when they differ from the turn before (a source that holds some back,
    like BFCL's ``miss_func``); ``None``: unchanged."""


@dataclass(frozen=True)
class TurnEnded(Payload):
    """A user turn's end: its status, the model's answer to it, and its figures (this turn only)."""

    kind: ClassVar[str] = "turn_ended"
    turn: int
    status: Status
    error: str | None
    output: str
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    wall_s: float = 0.0


@dataclass(frozen=True)
class RunFinished(Payload):
    kind: ClassVar[str] = "run_finished"
    status: Status
    error: str | None
    output: str
    """The model's final answer (empty when the run did not complete)."""


@dataclass(frozen=True)
class ArmEvent:
    """One event of one arm: ``seq`` counts from 0 per arm, ``t`` is seconds since the arm started, ``turn``
    the user turn it belongs to (1-based: the last :class:`TurnStarted` at or before it, else 1).

    The store keeps ``turn`` as the order of the events themselves (a turn-started event opens each turn):
    the store's readers (``Store.events``, ``Store.events_by_time``) number the events they return from those,
    and a session folded back (:class:`workbench.session.ArmRun`) numbers them again the same way."""

    arm: str
    seq: int
    t: float
    payload: Payload
    turn: int = 1

    @property
    def kind(self) -> str:
        return self.payload.kind

    def to_dict(self) -> dict[str, Any]:
        return {
            "arm": self.arm,
            "seq": self.seq,
            "t": self.t,
            "turn": self.turn,
            "kind": self.kind,
            "data": self.payload.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArmEvent:
        payload = payload_from(data["kind"], data["data"])
        return cls(data["arm"], data["seq"], data["t"], payload, int(data.get("turn", 1)))


@cache
def _field_names(payload_type: type[Payload]) -> tuple[str, ...]:
    return tuple(f.name for f in fields(payload_type))


def payload_from(kind: str, data: dict[str, Any]) -> Payload:
    """Rebuild a payload from its kind and fields; unknown fields (from a newer writer) are ignored."""
    payload_type = _PAYLOADS[kind]
    known = _field_names(payload_type)
    if len(data) == len(known) and all(name in data for name in known):
        return payload_type(**data)
    return payload_type(**{key: value for key, value in data.items() if key in known})


def payload_kinds() -> list[str]:
    return list(_PAYLOADS)


def clip(text: str, limit: int = CONTENT_CHARS) -> str:
    """``text`` cut at ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters not kept]"
