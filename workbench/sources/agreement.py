"""The arms' end states compared with each other: the grade when a source has no expected state."""

from __future__ import annotations

from collections.abc import Mapping

from apps import Snapshot
from apps.state import MAX_REPORTED, diff

AGREE = "arms agree"
DIFFER = "arms differ"


def disagreements(arm: str, ends: Mapping[str, Snapshot]) -> list[str]:
    """Where ``arm``'s end state differs from each other arm's: one line per record."""
    lines: list[str] = []
    mine = ends[arm]
    for other, theirs in ends.items():
        if other == arm:
            continue
        changes = diff(theirs, mine)
        for item in changes.created:
            lines.append(f"{item['entity']} {item['id']}: here, but not in the {other} arm")
        for item in changes.deleted:
            lines.append(f"{item['entity']} {item['id']}: in the {other} arm, but not here")
        for item in changes.updated:
            fields = ", ".join(f"{name} {old!r} there, {new!r} here" for name, (old, new) in item["changes"].items())
            lines.append(f"{item['entity']} {item['id']}: {fields} ({other} arm)")
    if len(lines) > MAX_REPORTED:
        lines = [*lines[:MAX_REPORTED], f"... and {len(lines) - MAX_REPORTED} more"]
    return lines
