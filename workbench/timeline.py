"""One arm's timeline: its events folded into entries (requests with their calls, snippets with their inner calls,
text and notices), without any drawing. The one fold every view walks: the TUI's transcript draws it, the HTML
export renders it, the OpenTelemetry trace opens and ends its spans from its entries (``share/otel.py``).

Every call id is a key: a snippet is an entry of its own, the calls of one model response are records
of one :class:`ResponseEntry`, and later events update them in place (bumping the entry's ``version``).
:class:`Transcript` (the widget) draws the entries and keeps its cursor over them; this module knows
nothing of Textual, so it is tested with plain events.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from workbench.events import (
    RUN_CODE,
    ArmEvent,
    EagerProgress,
    InnerCall,
    InnerResult,
    ProviderRetry,
    RequestStarted,
    RunFinished,
    RunStarted,
    Snippet,
    SnippetDelta,
    Speculation,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnEnded,
    TurnStarted,
    Usage,
)
from workbench.timeline_records import CallRecord, SnippetRecord


@dataclass(eq=False)
class Entry:
    """One entry of a transcript; ``version`` goes up whenever it changes (the widget draws it again)."""

    version: int = field(default=0, init=False)

    def changed(self) -> None:
        self.version += 1


@dataclass(eq=False)
class TextEntry(Entry):
    """Model text as it streams; ``answer`` once it turned out to be the final answer."""

    text: str = ""
    answer: bool = False
    turn: int = 0
    """For an answer in a conversation: the turn it answers (0: the run's one answer)."""


@dataclass(eq=False)
class ResponseEntry(Entry):
    """One model response: its request (``None`` for calls after text in the same response), its usage once
    known, the transient failures before it succeeded, and its top-level calls by call id."""

    request: int | None = None
    usage: Usage | None = None
    ended: bool = False
    """The arm finished: a request that never got its usage is no longer waiting."""
    records: dict[str, CallRecord] = field(default_factory=dict)
    retries: list[ProviderRetry] = field(default_factory=list)


@dataclass(eq=False)
class SnippetEntry(Entry):
    record: SnippetRecord = field(default_factory=lambda: SnippetRecord(""))


@dataclass(eq=False)
class NoticeEntry(Entry):
    """A one-off line: ``cancelled``, an ``error`` that ended the arm, or a ``retry`` that cut a stream short
    (or came before any request)."""

    kind: str = "error"
    message: str = ""
    status: str = ""
    retry: ProviderRetry | None = None


@dataclass(eq=False)
class ToolsEntry(Entry):
    """The app's tools as the arm got them (from its run-started event), the read-only ones, and how the
    arm calls them (``called directly``, ``inside run_code``, or both)."""

    tools: list[str] = field(default_factory=list)
    read_only: frozenset[str] = frozenset()
    how: str = ""
    sandboxed: bool = False
    """Whether the arm calls them from its snippets (views ask this, not the words of :attr:`how`)."""


def tools_entry(started: RunStarted) -> ToolsEntry | None:
    """What the transcript's tools line shows for a run-started event (``None``: the arm got no tools)."""
    tools = started.app_tools
    if not tools:
        return None
    direct = any(name != RUN_CODE for name in started.tools)
    sandboxed = bool(started.sandboxed_tools)
    ways = [way for way, used in (("called directly", direct), (f"inside {RUN_CODE}", sandboxed)) if used]
    return ToolsEntry(
        tools=tools, read_only=frozenset(started.read_only_tools), how=" and ".join(ways), sandboxed=sandboxed
    )


@dataclass(eq=False)
class TurnEntry(Entry):
    """Where a user turn of a conversation begins: its number and prompt (and the tools when they changed);
    ``status`` once it ended (``running`` until then)."""

    turn: int = 1
    prompt: str = ""
    tools: list[str] | None = None
    status: str = "running"


AnyEntry = TypeVar("AnyEntry", bound=Entry)


class Timeline:
    """Folds one arm's events into entries, in order. ``stale_from`` is the first entry that changed since
    the widget last took the changes (:meth:`take_stale`)."""

    def __init__(self, arm: str) -> None:
        self.arm = arm
        self.mode = ""
        """The arm's mode once its run has started."""
        self.entries: list[Entry] = []
        self.calls: dict[str, ResponseEntry] = {}
        """Every top-level call id -> the entry holding it (the calls of one response share one)."""
        self.snippets: dict[str, SnippetEntry] = {}
        self.requests: dict[int, ResponseEntry] = {}
        self.turns: list[TurnEntry] = []
        """Each turn's opening entry, in order (empty for a run of one prompt)."""
        self.stale_from: int | None = None
        self._position: dict[int, int] = {}
        """id(entry) -> its index in :attr:`entries`."""
        self._open_text: TextEntry | None = None
        self._open_response: ResponseEntry | None = None
        self._answered: str | None = None
        """The answer the latest turn's end marked (the conversation's end does not add it again)."""

    @property
    def last_snippet(self) -> SnippetRecord | None:
        return next(reversed(self.snippets.values())).record if self.snippets else None

    def index(self, entry: Entry) -> int | None:
        return self._position.get(id(entry))

    def reset(self) -> None:
        self.mode = ""
        self.entries.clear()
        self.calls.clear()
        self.snippets.clear()
        self.requests.clear()
        self.turns.clear()
        self._answered = None
        self._position.clear()
        self._open_text = self._open_response = None
        self.stale_from = 0

    def take_stale(self) -> int | None:
        """The first entry changed since the last call (``None``: none), and forget it."""
        stale, self.stale_from = self.stale_from, None
        return stale

    def apply(self, events: Iterable[ArmEvent]) -> None:
        """Fold a batch of this arm's events in."""
        for event in events:
            payload = event.payload
            match payload:
                case TextDelta():
                    self._open_response = None
                    if self._open_text is None:
                        self._open_text = self._append(TextEntry())
                    self._open_text.text += payload.text
                    self.touch(self._open_text)
                case SnippetDelta() | Snippet():
                    entry = self._snippet(payload.call_id)
                    entry.record.code = payload.code
                    entry.record.complete = entry.record.complete or isinstance(payload, Snippet)
                    if isinstance(payload, Snippet):
                        entry.record.raw_arguments = payload.raw_arguments
                    self.touch(entry)
                case InnerCall():
                    entry = self._snippet(payload.parent_id)
                    entry.record.add_inner_call(payload)
                    self.touch(entry)
                case InnerResult():
                    entry = self._snippet(payload.parent_id)
                    entry.record.add_inner_result(payload)
                    self.touch(entry)
                case EagerProgress():
                    entry = self._snippet(payload.call_id)
                    entry.record.add_eager(payload)
                    self.touch(entry)
                case Speculation():
                    entry = self._snippet(payload.call_id)
                    entry.record.add_speculation(payload)
                    self.touch(entry)
                case ToolCall() if payload.name == RUN_CODE:
                    entry = self._snippet(payload.call_id)
                    if not entry.record.code and isinstance(payload.args, dict):
                        entry.record.code = str(payload.args.get("code", ""))
                    entry.record.complete = entry.record.called = True
                    self.touch(entry)
                case ToolCall():
                    response = self._calls_response()
                    response.records[payload.call_id] = CallRecord(payload.call_id, payload.name, payload.args)
                    self.calls[payload.call_id] = response
                    self.touch(response)
                case ToolResult():
                    self.touch(self._store_result(payload))
                case RequestStarted():
                    self._open_text = None
                    response = self._append(ResponseEntry(request=payload.request))
                    self.requests[payload.request] = self._open_response = response
                case Usage():
                    found = self.requests.get(payload.request)
                    if found is not None:
                        found.usage = payload
                        self.touch(found)
                case ProviderRetry():
                    latest = self.requests.get(max(self.requests, default=0))
                    if self._open_text is not None:  # a stream cut short: its text stays apart, above the retry
                        self._open_text = None
                        self._append(NoticeEntry(kind="retry", retry=payload))
                    elif latest is None:  # a retry before any request line (a truncated recording)
                        self._append(NoticeEntry(kind="retry", retry=payload))
                    else:
                        latest.retries.append(payload)
                        self.touch(latest)
                case RunStarted():
                    self.mode = payload.mode
                    tools = tools_entry(payload)
                    if tools is not None:
                        self._append(tools)
                case RunFinished():
                    self._finish(payload)
                case TurnStarted():
                    self._open_text = self._open_response = None
                    self._answered = None
                    self.turns.append(
                        self._append(TurnEntry(turn=payload.turn, prompt=payload.prompt, tools=payload.tools))
                    )
                case TurnEnded():
                    self._end_calls()
                    self._answer(payload.output)
                    self._answered = payload.output.strip()
                    if self.turns:
                        self.turns[-1].status = payload.status
                        self.touch(self.turns[-1])
                case _:
                    pass

    def touch(self, entry: Entry) -> None:
        """The entry changed: it is drawn again, and it and everything below it measured again."""
        entry.changed()
        index = self._position[id(entry)]
        self.stale_from = index if self.stale_from is None else min(self.stale_from, index)

    def _append(self, entry: AnyEntry) -> AnyEntry:
        self._position[id(entry)] = len(self.entries)
        self.entries.append(entry)
        self.touch(entry)
        return entry

    def _snippet(self, call_id: str) -> SnippetEntry:
        entry = self.snippets.get(call_id)
        if entry is None:
            self._open_text = self._open_response = None
            entry = self._append(SnippetEntry(record=SnippetRecord(call_id, arm=self.arm)))
            self.snippets[call_id] = entry
        return entry

    def _calls_response(self) -> ResponseEntry:
        """The entry for the calls of the current response (a new one after text, a snippet or a request)."""
        if self._open_response is None:
            self._open_text = None
            self._open_response = self._append(ResponseEntry())
        return self._open_response

    def _store_result(self, result: ToolResult) -> Entry:
        if result.call_id in self.snippets or (result.name == RUN_CODE and result.call_id not in self.calls):
            entry = self._snippet(result.call_id)
            entry.record.result = result
            return entry
        response = self.calls.get(result.call_id)
        if response is None:  # a result whose call was never seen (a truncated recording)
            response = self._calls_response()
            response.records[result.call_id] = CallRecord(result.call_id, result.name, {})
            self.calls[result.call_id] = response
        response.records[result.call_id].result = result
        return response

    def _finish(self, finished: RunFinished) -> None:
        self._end_calls()
        if finished.output.strip() != self._answered:
            self._answer(finished.output)
        self._open_text = self._open_response = None
        if finished.status == "cancelled":
            self._append(NoticeEntry(kind="cancelled", status=finished.status))
        elif finished.error:
            self._append(NoticeEntry(kind="error", message=finished.error, status=finished.status))

    def _end_calls(self) -> None:
        """Every request, call and snippet so far stops waiting (a turn or the arm ended)."""
        for response in self.requests.values():
            if not response.ended:
                response.ended = True
                self.touch(response)
        for response in set(self.calls.values()):
            for record in response.records.values():
                if record.result is None and not record.ended:
                    record.ended = True
                    self.touch(response)
        for snippet in self.snippets.values():
            if snippet.record.result is None and not snippet.record.ended:
                snippet.record.ended = True
                self.touch(snippet)

    def _answer(self, output: str) -> None:
        """Mark the text just streamed as the answer ``output``, or add the answer when it was not streamed."""
        text, self._open_text, self._open_response = self._open_text, None, None
        turn = self.turns[-1].turn if self.turns else 0
        if output.strip():
            if text is not None and text.text.strip() == output.strip():
                text.answer, text.turn = True, turn
                self.touch(text)
            else:
                self._append(TextEntry(text=output, answer=True, turn=turn))
