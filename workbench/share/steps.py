"""One arm's events folded into its steps: model requests, the calls each response made, snippets and their
inner calls, with start and end times, for the HTML transcript. (The OpenTelemetry exporter folds events on its
own as they arrive, since it opens each span live.)"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from workbench.events import (
    ArmEvent,
    EndState,
    Graded,
    InnerCall,
    InnerResult,
    ProviderRetry,
    RequestStarted,
    RunFinished,
    RunStarted,
    Snippet,
    TextDelta,
    ToolCall,
    ToolResult,
    Usage,
)


@dataclass
class CallStep:
    """A tool call (top level, or inside a snippet) and its result once it arrived."""

    call_id: str
    name: str
    args: dict[str, Any] | str
    start: float
    end: float | None = None
    outcome: str | None = None
    content: str = ""
    """The result as the model (or the sandbox) received it, clipped as stored."""
    bytes: int = 0
    ms: float | None = None
    error: str | None = None
    code: str | None = None
    """The snippet's final code, for a ``run_code`` call."""
    inner: list[CallStep] = field(default_factory=list)
    """Calls the snippet made inside the sandbox, in order."""


@dataclass
class RequestStep:
    """One model request: what its response said and called, and what it cost."""

    number: int
    start: float
    end: float | None = None
    text: str = ""
    calls: list[CallStep] = field(default_factory=list)
    usage: Usage | None = None
    retries: list[ProviderRetry] = field(default_factory=list)


@dataclass
class ArmSteps:
    """Everything one arm did, in order, with its beginning and end."""

    name: str
    started: RunStarted | None = None
    requests: list[RequestStep] = field(default_factory=list)
    end_state: EndState | None = None
    grade: Graded | None = None
    finished: RunFinished | None = None
    end: float = 0.0

    @classmethod
    def fold(cls, name: str, events: Iterable[ArmEvent]) -> ArmSteps:
        steps = cls(name)
        calls: dict[str, CallStep] = {}
        codes: dict[str, str] = {}
        pending_retries: list[ProviderRetry] = []
        for event in events:
            payload, t = event.payload, event.t
            steps.end = max(steps.end, t)
            match payload:
                case RunStarted():
                    steps.started = payload
                case RequestStarted():
                    steps.requests.append(RequestStep(payload.request, t, retries=pending_retries))
                    pending_retries = []
                case ProviderRetry():
                    (steps.requests[-1].retries if steps.requests else pending_retries).append(payload)
                case TextDelta() if steps.requests:
                    steps.requests[-1].text += payload.text
                case Usage():
                    request = next((r for r in reversed(steps.requests) if r.number == payload.request), None)
                    if request is not None:
                        request.usage, request.end = payload, t
                case ToolCall():
                    call = CallStep(payload.call_id, payload.name, payload.args, t, code=codes.get(payload.call_id))
                    calls[payload.call_id] = call
                    if steps.requests:
                        steps.requests[-1].calls.append(call)
                case Snippet():
                    codes[payload.call_id] = payload.code
                    if payload.call_id in calls:
                        calls[payload.call_id].code = payload.code
                case InnerCall():
                    inner = CallStep(payload.call_id, payload.name, payload.args, t)
                    calls[f"{payload.parent_id}/{payload.call_id}"] = inner
                    parent = calls.get(payload.parent_id)
                    if parent is not None:
                        parent.inner.append(inner)
                case ToolResult() | InnerResult():
                    key = (
                        f"{payload.parent_id}/{payload.call_id}"
                        if isinstance(payload, InnerResult)
                        else payload.call_id
                    )
                    if (call := calls.get(key)) is not None:
                        call.end, call.outcome, call.content = t, payload.outcome, payload.content or payload.preview
                        call.bytes, call.ms, call.error = payload.bytes, payload.ms, payload.error
                case EndState():
                    steps.end_state = payload
                case Graded():
                    steps.grade = payload
                case RunFinished():
                    steps.finished = payload
                case _:
                    pass
        return steps

    def all_calls(self) -> list[CallStep]:
        """Every top-level call, in order."""
        return [call for request in self.requests for call in request.calls]
