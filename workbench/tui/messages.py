"""Every message the TUI's workers and its event feed post to screens (workers never touch widgets), and the
requests screens post to the app. One module, as dataclasses (Textual's :class:`Message` supports them: its
``__post_init__`` does what ``__init__`` would).

A widget's own messages (``RunForm.OwnAppWanted``, ``Transcript.Inspect``, ``Roster.Picked``,
``OutcomeView.Fitted``) stay nested in their widget, as Textual's are: their handler names
(``on_run_form_own_app_wanted``) and ``@on`` selectors come from that nesting.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from workbench.bench import BenchReport, SweepInfo
    from workbench.bench.diff import SideDiff
    from workbench.events import ArmEvent
    from workbench.session import Comparison
    from workbench.store import SessionInfo
    from workbench.timeline_records import SnippetRecord

# -- a comparison, live or replayed --------------------------------------------------------------


@dataclass
class ArmEvents(Message):
    """A batch of arm events, in the order they happened (:class:`workbench.tui.feed.EventFeed` posts it)."""

    events: list[ArmEvent]
    received: float
    """``time.perf_counter()`` when the oldest event of the batch reached the feed."""


@dataclass
class ComparisonStarted(Message):
    session_id: str


@dataclass
class ComparisonFinished(Message):
    """A run (or a follow-up turn) ended; ``open_for_more``: its arms kept their apps for another turn."""

    comparison: Comparison
    _: KW_ONLY
    open_for_more: bool = False


# -- stored sessions -----------------------------------------------------------------------------


@dataclass
class SessionLoaded(Message):
    """A stored session opened for replay, with the first page of its events in the order they happened."""

    info: SessionInfo
    events: list[ArmEvent]
    _: KW_ONLY
    complete: bool


@dataclass
class SessionRestLoaded(Message):
    """The next page of a replayed session's events, read behind its first page; ``complete`` on the last."""

    events: list[ArmEvent]
    _: KW_ONLY
    complete: bool


@dataclass
class SessionsListed(Message):
    sessions: list[SessionInfo]
    search: str


# -- sweeps (the bench and diff screens) ---------------------------------------------------------


@dataclass
class SweepsListed(Message):
    sweeps: list[SweepInfo]


@dataclass
class QueueProgressed(Message):
    """Fresh sweeps and queue counts (and the shown sweep's report, when it changed)."""

    sweeps: list[SweepInfo]
    progress: dict[str, Any]
    report: BenchReport | None


@dataclass
class SweepProgressed(Message):
    """A step of the sweep this screen runs (``done`` runs of ``total``), or its end (``ended``)."""

    done: int
    total: int
    line: str
    _: KW_ONLY
    ended: bool = False


@dataclass
class SweepReportLoaded(Message):
    report: BenchReport


@dataclass
class DiffLoaded(Message):
    """Two sweeps compared (``diff``), or why they cannot be (``error``)."""

    diff: SideDiff | None
    error: str = ""


# -- requests to the app -------------------------------------------------------------------------


@dataclass
class ReplayRequested(Message):
    """A screen asks the app to replay a stored session (the app routes: screens need not import the replay)."""

    session_id: str


@dataclass
class InspectRequested(Message):
    """A screen asks the app to open the inspector on a snippet (the app routes, as for a replay)."""

    record: SnippetRecord
