"""A session as a domain object: what ran (its header), each arm's events and figures, and the ``run --json``
object.

A live run builds a :class:`Comparison` as its events arrive; a stored session folds back into the same
object (:func:`fold_comparison`). This module knows nothing of models, SQL or Textual, so everything that only
reads sessions (the store, ``show``, ``export``, the printer, the TUI's lists) imports it and not the engine.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from workbench.display import is_demo
from workbench.events import ArmEvent, RunFinished, Status, TurnStarted
from workbench.summary import ArmSummary

UNFINISHED_ORDER: tuple[Status, ...] = ("running", "interrupted", "cancelled")
"""A session's status is the first of these any of its arms has; else completed (all arms) or failed."""


def new_session_id() -> str:
    return secrets.token_hex(5)


@dataclass(frozen=True)
class SessionHeader:
    """What a session ran: the one header shape behind a live comparison, a stored row and a fallback file."""

    session_id: str
    app: str
    items: int
    seed: int = 0
    prompt: str = ""
    task: str | None = None
    model: str = "scripted"
    created: datetime = field(default_factory=lambda: datetime.now(UTC))


@dataclass
class ArmRun:
    """One arm of a comparison: its events as they arrive, and the figures folded from them."""

    name: str
    events: list[ArmEvent] = field(default_factory=list)
    summary: ArmSummary = field(init=False)

    turn: int = field(default=1, init=False)
    """The turn the arm is in: that of its last :class:`TurnStarted` (1 before any)."""

    def __post_init__(self) -> None:
        self.summary = ArmSummary(name=self.name)

    def add(self, event: ArmEvent) -> None:
        """Fold one more event in, numbered with its turn (events read back from a store or a file carry none
        of their own: the turn-started events before them say it)."""
        if isinstance(event.payload, TurnStarted):
            self.turn = event.payload.turn
        if event.turn != self.turn:
            event = replace(event, turn=self.turn)
        self.events.append(event)
        self.summary.add(event)

    @property
    def finished(self) -> bool:
        """Whether the arm's run reached its end (a ``RunFinished`` event), whatever its status, and no follow-up
        turn began after it."""
        for event in reversed(self.events):
            if isinstance(event.payload, RunFinished):
                return True
            if isinstance(event.payload, TurnStarted):
                return False
        return False


class HeaderFields:
    """Read access to a :class:`SessionHeader`'s fields on an object that holds one as ``header`` (a
    :class:`Comparison`, a listed session), so the header is one shape and readers need not spell
    ``.header.`` each time. The fields are read-only here: change a header with :func:`dataclasses.replace`."""

    header: SessionHeader

    @property
    def session_id(self) -> str:
        return self.header.session_id

    @property
    def app(self) -> str:
        return self.header.app

    @property
    def items(self) -> int:
        return self.header.items

    @property
    def seed(self) -> int:
        return self.header.seed

    @property
    def prompt(self) -> str:
        return self.header.prompt

    @property
    def task(self) -> str | None:
        return self.header.task

    @property
    def model(self) -> str:
        return self.header.model

    @property
    def created(self) -> datetime:
        return self.header.created


@dataclass
class Comparison(HeaderFields):
    """The outcome of running one prompt against its arms, in order: the first is the baseline.

    ``to_dict()`` is the ``run --json`` object."""

    header: SessionHeader
    arms: dict[str, ArmRun]
    stored: bool = False
    """Whether the whole session reached the database (False when none was used, or it failed)."""
    store_error: str | None = None
    """Why the session could not be fully stored, and where its events were saved instead."""

    @classmethod
    def begin(cls, header: SessionHeader, arm_names: Iterable[str]) -> Comparison:
        """A comparison with its arms named, in order, and no events yet."""
        return cls(header, arms={name: ArmRun(name) for name in arm_names})

    @property
    def status(self) -> Status:
        statuses = [arm.summary.status for arm in self.arms.values()]
        for status in UNFINISHED_ORDER:
            if status in statuses:
                return status
        return "completed" if all(s == "completed" for s in statuses) else "failed"

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "app": self.app,
            "items": self.items,
            "seed": self.seed,
            "prompt": self.prompt,
            "task": self.task,
            "demonstration": is_demo(self.model),
            "arms": [arm.summary.to_dict() for arm in self.arms.values()],
            "stored": self.stored,
            "store_error": self.store_error,
        }

    @property
    def events(self) -> list[ArmEvent]:
        return [event for arm in self.arms.values() for event in arm.events]


def fold_comparison(
    events: Iterable[ArmEvent],
    *,
    session_id: str,
    app: str,
    items: int,
    seed: int = 0,
    prompt: str = "",
    task: str | None = None,
    model: str = "scripted",
    created: datetime | None = None,
    arms: Iterable[str] = (),
) -> Comparison:
    """A comparison folded from events; each of ``arms`` is there even without events, in that order, and
    the arms of other events follow in the order they first appear."""
    header = SessionHeader(session_id, app, items, seed, prompt, task, model, created or datetime.now(UTC))
    return fold_header(header, events, arms)


def fold_header(header: SessionHeader, events: Iterable[ArmEvent], arms: Iterable[str] = ()) -> Comparison:
    """:func:`fold_comparison` for a header already made."""
    comparison = Comparison.begin(header, arms)
    for event in events:
        comparison.arms.setdefault(event.arm, ArmRun(event.arm)).add(event)
    return comparison


def settle_stored(comparison: Comparison, stored_status: str) -> Comparison:
    """A stored comparison marked stored, each arm that never finished given the status its session's row
    implies: cancelled with a cancelled session, still running with a running one, else interrupted."""
    comparison.stored = True
    for arm in comparison.arms.values():
        if not arm.finished:
            if stored_status == "cancelled":
                arm.summary.status = "cancelled"
            elif stored_status in ("interrupted", "completed", "failed"):
                arm.summary.status = "interrupted"
            else:
                arm.summary.status = "running"
    return comparison
