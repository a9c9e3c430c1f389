"""Between the domain (:mod:`workbench.session`) and the stored shapes: a session's row and arm rows as plain
fields, which the database, a fallback file and an import all hold.

The writer, ``Store.save_all`` and the fallback file build their records here, so a session has one stored
shape, named once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.session import Comparison
from workbench.store.codec import clean_text
from workbench.store.liveness import this_host


def session_record(
    comparison: Comparison,
    models: Mapping[str, str] | None = None,
    modes: Mapping[str, str] | None = None,
    *,
    pid: int | None = None,
    host: str | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A comparison's session row and arm rows as plain fields (what the store and a fallback file hold)."""
    session = {
        "id": comparison.session_id,
        "created": comparison.created,
        "app": clean_text(comparison.app),
        "items": comparison.items,
        "seed": comparison.seed,
        "prompt": clean_text(comparison.prompt),
        "task": clean_text(comparison.task) if comparison.task is not None else None,
        "model": clean_text(comparison.model),
        "status": "running",
        "pid": os.getpid() if pid is None else pid,
        "host": this_host() if host is None else host,
    }
    arms = []
    for position, (name, arm) in enumerate(comparison.arms.items()):
        model = (models or {}).get(name) or arm.summary.model or comparison.model
        mode = (modes or {}).get(name) or arm.summary.mode or name
        arms.append({"name": name, "mode": mode, "model": clean_text(model), "status": "running", "position": position})
    return session, arms


def arm_outcomes(comparison: Comparison, arms: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The arm rows updated with how each arm ended."""
    updated = [dict(arm) for arm in arms]
    for arm in updated:
        summary = comparison.arms[arm["name"]].summary
        arm.update(status=summary.status, passed=summary.passed, cost_usd=summary.cost_usd)
        if summary.mode:
            arm["mode"] = summary.mode
    return updated


def record_to_file(session: Mapping[str, Any]) -> dict[str, Any]:
    """A session row as a fallback file's ``session`` record holds it (times as ISO text)."""
    return {**session, "created": session["created"].isoformat()}
