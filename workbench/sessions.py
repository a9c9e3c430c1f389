"""Stored sessions back as comparisons: the same objects a live run returns, folded from stored events."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from workbench.events import ArmEvent, RunFinished
from workbench.runner import ArmRun, Comparison
from workbench.store import Store


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
    runs = {name: ArmRun(name) for name in arms}
    for event in events:
        runs.setdefault(event.arm, ArmRun(event.arm)).add(event)
    return Comparison(
        session_id=session_id,
        app=app,
        items=items,
        seed=seed,
        prompt=prompt,
        task=task,
        model=model,
        arms=runs,
        created=created or datetime.now(UTC),
    )


def load_comparison(store: Store, session_id: str) -> Comparison:
    """A stored session as a :class:`Comparison` (works for runs that never finished)."""
    info = store.session(session_id)
    comparison = fold_comparison(
        store.events(session_id),
        session_id=info.id,
        app=info.app,
        items=info.items,
        seed=info.seed,
        prompt=info.prompt,
        task=info.task,
        model=info.model,
        created=info.created,
        arms=[arm.name for arm in info.arms],
    )
    comparison.stored = True
    for arm in comparison.arms.values():
        finished = any(isinstance(event.payload, RunFinished) for event in arm.events)
        if not finished:
            arm.summary.status = "interrupted" if info.status in ("interrupted", "completed", "failed") else "running"
            if info.status == "cancelled":
                arm.summary.status = "cancelled"
    return comparison
