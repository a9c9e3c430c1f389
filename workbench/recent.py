"""Short most-recent-first lists kept as JSON in the data directory (recent models, recent apps of your own).

Reading and writing are best effort: an unreadable file reads as empty, and a data directory that cannot
be written loses the list, never the run that wanted to remember something.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def read_recent(path: Path) -> list[Any]:
    """The stored list (``[]`` when missing, unreadable or not a list)."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return stored if isinstance(stored, list) else []


def push_recent(path: Path, entry: Any, kept: int, key: Callable[[Any], Any] = lambda entry: entry) -> list[Any]:
    """Put ``entry`` first (once: an older entry with the same ``key`` is dropped), keep the newest ``kept``;
    the new list."""
    recent = [entry, *(other for other in read_recent(path) if key(other) != key(entry))][:kept]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(recent, indent=1, ensure_ascii=False), encoding="utf-8")
        temporary.replace(path)
    except OSError:
        pass
    return recent
