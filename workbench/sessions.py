"""Stored sessions back as comparisons: the same objects a live run returns, folded from stored events."""

from __future__ import annotations

from workbench.events import RunFinished
from workbench.runner import ArmRun, Comparison
from workbench.store import Store


def load_comparison(store: Store, session_id: str) -> Comparison:
    """A stored session as a :class:`Comparison` (works for runs that never finished)."""
    info = store.session(session_id)
    arms = {arm.name: ArmRun(arm.name) for arm in info.arms}
    for event in store.events(session_id):
        arms.setdefault(event.arm, ArmRun(event.arm)).add(event)
    for arm in arms.values():
        finished = any(isinstance(event.payload, RunFinished) for event in arm.events)
        if not finished:
            arm.summary.status = "interrupted" if info.status in ("interrupted", "completed", "failed") else "running"
            if info.status == "cancelled":
                arm.summary.status = "cancelled"
    return Comparison(
        session_id=info.id,
        app=info.app,
        items=info.items,
        seed=info.seed,
        prompt=info.prompt,
        task=info.task,
        model=info.model,
        arms=arms,
        created=info.created,
    )
