"""Messages workers post to screens (workers never touch widgets)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

from workbench.events import ArmEvent

if TYPE_CHECKING:
    from workbench.session import Comparison
    from workbench.store import SessionInfo
    from workbench.timeline_records import SnippetRecord


class ComparisonStarted(Message):
    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id


class ComparisonFinished(Message):
    """A run (or a follow-up turn) ended; ``open_for_more``: its arms kept their apps for another turn."""

    def __init__(self, comparison: Comparison, *, open_for_more: bool = False) -> None:
        super().__init__()
        self.comparison = comparison
        self.open_for_more = open_for_more


class SessionLoaded(Message):
    """A stored session opened for replay, with the first page of its events in the order they happened."""

    def __init__(self, info: SessionInfo, events: list[ArmEvent], *, complete: bool) -> None:
        super().__init__()
        self.info = info
        self.events = events
        self.complete = complete


class SessionRestLoaded(Message):
    """The next page of a replayed session's events, read behind its first page; ``complete`` on the last."""

    def __init__(self, events: list[ArmEvent], *, complete: bool) -> None:
        super().__init__()
        self.events = events
        self.complete = complete


class SessionsListed(Message):
    def __init__(self, sessions: list[SessionInfo], search: str) -> None:
        super().__init__()
        self.sessions = sessions
        self.search = search


class ReplayRequested(Message):
    """A screen asks the app to replay a stored session (the app routes: screens need not import the replay)."""

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id


class InspectRequested(Message):
    """A screen asks the app to open the inspector on a snippet (the app routes, as for a replay)."""

    def __init__(self, record: SnippetRecord) -> None:
        super().__init__()
        self.record = record
