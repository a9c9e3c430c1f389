"""The arms' changes compared with each other: the verdict when a source has no expected state.

Each arm is compared by what it *changed* (its end state diffed from its own start), so a per-arm
``--setup`` (a different seed row per arm) cancels out. Records that existed at an arm's start are
matched by their key; records created during the run are matched by content, leaving out the values
the server generated rather than the model chose:

- the record's own key when it is a number or looks random (an autoincrement id, a random hex id,
  a UUID);
- any value of a column named like an id (``id``, ``*_id``, ``uuid``, ``*key``) that looks random
  (a UUID, or 12+ hex digits);
- any timestamp within a day of the grading (an ISO date and time, or seconds / milliseconds since
  1970): the time of the run, which no two arms share;
- the columns a task file names in ``compare.ignore``; with ``compare.match_on``, only those columns.

A generated value that another change refers to (a foreign key to a created row) is not dropped but
replaced, in both places, by the name of the record it belongs to (``<notes.db:notes #1>``, numbered
in the order of the records' content), so the reference still has to point at the corresponding
record in the other arm. Only arms that ran to their end are compared (:func:`agreement`).
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from workbench.apps import Snapshot
from workbench.apps.state import MAX_REPORTED, diff
from workbench.events import Graded
from workbench.sources.workdir import FILES
from workbench.verdict import AGREE as AGREE_VERDICT
from workbench.verdict import DIFFER as DIFFER_VERDICT
from workbench.verdict import NOT_COMPARED, NOT_GRADED

AGREE = "arms agree"
DIFFER = "arms differ"

_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-fA-F]{12,}$")
_ID_COLUMN = re.compile(r"(^|_)(id|uuid|guid|uid|key)$|Id$|ID$", re.IGNORECASE)
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
RECENT_S = 86_400.0
"""A timestamp this close to the grading is taken for the time of the run (generated, not chosen)."""


@dataclass(frozen=True)
class Rules:
    """What a task file says about comparing created records (``[tasks.compare]``)."""

    ignore: tuple[str, ...] = ()
    """Columns never compared: ``created_at`` (in every table) or ``notes.db:notes.created_at``."""
    match_on: tuple[str, ...] = ()
    """Created records correspond by these columns only (same forms as ``ignore``)."""

    def ignores(self, entity: str, column: str) -> bool:
        return _names(self.ignore, entity, column)

    def keeps(self, entity: str, column: str) -> bool:
        """Whether ``column`` takes part in matching a created record (``match_on`` leaves out the rest)."""
        if not any(_entity_of(name) in (None, entity) for name in self.match_on):
            return True
        return _names(self.match_on, entity, column)


def _entity_of(name: str) -> str | None:
    entity, dot, _ = name.rpartition(".")
    return entity if dot and ":" in entity else None


def _names(names: Iterable[str], entity: str, column: str) -> bool:
    return any(name == column or name == f"{entity}.{column}" for name in names)


@dataclass(frozen=True)
class ArmEnd:
    """What the comparison reads of an arm at its end."""

    start: Snapshot
    end: Snapshot
    status: str


@dataclass
class Changes:
    """An arm's changes in a form two arms can be compared in: a count of each change's canonical key."""

    keys: Counter[str] = field(default_factory=Counter)
    shown: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    """A canonical key -> the change for people: record, what was done, details
    (``("notes.db:notes 3", "created", 'title="milk"')``)."""


def agreement(arm: str, ends: Mapping[str, ArmEnd], unstarted: Iterable[str] = (), rules: Rules = Rules()) -> Graded:
    """``arm``'s verdict against every other arm that ran to its end; ``not graded`` when there is none
    (``not compared: the tool arm failed``). ``unstarted``: arms whose app never opened."""
    mine = ends[arm]
    if mine.status != "completed":
        return _not_compared(f"the {arm} arm {_stopped(mine.status)}")
    stopped = [(name, end.status) for name, end in ends.items() if end.status != "completed"]
    stopped += [(name, "failed") for name in unstarted if name not in ends]
    others = [name for name, end in ends.items() if name != arm and end.status == "completed"]
    if not others:
        return _not_compared(" and ".join(f"the {name} arm {_stopped(status)}" for name, status in stopped))
    now = time.time()
    my_changes = canonical_changes(mine.start, mine.end, rules, now)
    lines: list[str] = []
    for other in others:
        lines += _differences(my_changes, canonical_changes(ends[other].start, ends[other].end, rules, now), other)
    if len(lines) > MAX_REPORTED:
        lines = [*lines[:MAX_REPORTED], f"... and {len(lines) - MAX_REPORTED} more"]
    if lines:
        return Graded(False, DIFFER, lines, [], verdict=DIFFER_VERDICT)
    return Graded(True, AGREE, [], [], verdict=AGREE_VERDICT)


def _not_compared(why: str) -> Graded:
    return Graded(False, NOT_COMPARED, [], [], verdict=NOT_GRADED, reason=f"{NOT_COMPARED}: {why}")


def _stopped(status: str) -> str:
    return {"failed": "failed", "running": "is still running"}.get(status, f"was {status}")


def _differences(mine: Changes, theirs: Changes, other: str) -> list[str]:
    lines = []
    for key, count in (mine.keys - theirs.keys).items():
        record, action, details = mine.shown[key]
        lines += [f"{record}: {action} here{f' ({details})' if details else ''}, not in the {other} arm"] * count
    for key, count in (theirs.keys - mine.keys).items():
        record, action, details = theirs.shown[key]
        lines += [f"{record}: {action} in the {other} arm{f' ({details})' if details else ''}, not here"] * count
    return lines


def canonical_changes(start: Snapshot, end: Snapshot, rules: Rules = Rules(), now: float | None = None) -> Changes:
    """What changed from ``start`` to ``end``, with generated values left out or named by their record."""
    now = time.time() if now is None else now
    changes = diff(start, end)
    result = Changes()
    keys = [_own_key(item["entity"], item["id"], item["record"]) for item in changes.created]
    made_keys = {_json(value) for key in keys for value in key.values()}
    created = []
    for item, own in zip(changes.created, keys, strict=True):
        entity, record = item["entity"], item["record"]
        kept = {
            column: value
            for column, value in record.items()
            if rules.keeps(entity, column) and not rules.ignores(entity, column)
            and column not in own and not _generated(entity, column, value, made_keys, now)
        }  # fmt: skip
        order = {column: "<ref>" if _json(value) in made_keys else value for column, value in kept.items()}
        # (the order of records must not depend on the keys they refer to, which differ between arms)
        created.append((entity, item["id"], kept, own, _json(order)))
    created.sort(key=lambda entry: (entry[0], entry[4]))
    names: dict[str, str] = {}
    """A generated key (as JSON) -> the name of the created record it belongs to."""
    numbers: Counter[str] = Counter()
    for entity, _, _, own, _ in created:
        numbers[entity] += 1
        for value in own.values():
            names.setdefault(_json(value), f"<{entity} #{numbers[entity]}>")

    def named(column: str, value: Any) -> Any:
        """A reference to a created record by its generated key, named after that record: in a column named
        like an id, or a random-looking text (a number elsewhere, like a quantity of 3, is left alone)."""
        if not _referable(value) or not (
            _ID_COLUMN.search(column) or (isinstance(value, str) and _looks_random(value))
        ):
            return value
        return names.get(_json(value), value)

    for entity, record_id, kept, _, _ in created:
        content = {column: named(column, value) for column, value in kept.items()}
        _add(result, f"created {entity} {_json(content)}", (f"{entity} {record_id}", "created", _summary(content)))
    for item in changes.updated:
        entity, record_id = item["entity"], item["id"]
        new = {
            column: "<generated>" if _recent(values[1], now) else named(column, values[1])
            for column, values in item["changes"].items()
            if not rules.ignores(entity, column)
        }
        if new:
            shown = ", ".join(f"{column} = {_show(value)}" for column, value in new.items())
            _add(result, f"updated {entity} {record_id} {_json(new)}", (f"{entity} {record_id}", "updated", shown))
    for item in changes.deleted:
        entity, record_id = item["entity"], item["id"]
        _add(result, f"deleted {entity} {record_id}", (f"{entity} {record_id}", "deleted", ""))
    return result


def _add(result: Changes, key: str, shown: tuple[str, str, str]) -> None:
    result.keys[key] += 1
    result.shown.setdefault(key, shown)


def _own_key(entity: str, record_id: str, record: dict[str, Any]) -> dict[str | None, Any]:
    """A created record's own key where the server chose it (a number or a random-looking id): its column
    and value, or ``None`` and the id for a rowid (not a column)."""
    if entity == FILES or entity.startswith("git:") or not _looks_random(record_id):
        return {}
    for column, value in record.items():
        if str(value) == record_id:
            return {column: value}
    return {None: int(record_id) if record_id.isdigit() else record_id}


def _generated(entity: str, column: str, value: Any, made_keys: set[str], now: float) -> bool:
    """A value in a created record the server chose, other than its key: a timestamp of the run, or a
    random id in an id-named column that is not a reference to another created record."""
    if entity == FILES or entity.startswith("git:"):
        return False
    if _recent(value, now):
        return True
    if _json(value) in made_keys:
        return False  # a reference: named after its record instead
    return bool(_ID_COLUMN.search(column)) and isinstance(value, str) and bool(_UUID.match(value) or _HEX.match(value))


def _looks_random(value: Any) -> bool:
    """A number (an autoincrement key), a UUID, or a string of 12 or more hex digits."""
    if isinstance(value, str):
        return bool(value.isdigit() or _UUID.match(value) or _HEX.match(value))
    return isinstance(value, int) and not isinstance(value, bool)


def _recent(value: Any, now: float) -> bool:
    """A timestamp within :data:`RECENT_S` of ``now``: seconds or milliseconds since 1970, or ISO text."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return any(abs(value / scale - now) < RECENT_S for scale in (1, 1000))
    if isinstance(value, str) and _DATETIME.match(value):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return False
        stamp = moment.timestamp() if moment.tzinfo else moment.replace(tzinfo=None).timestamp()
        # Naive text may be UTC or local time: either way it is within a day of now if it is the run's.
        return abs(stamp - now) < RECENT_S + 14 * 3600
    return False


def _referable(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _summary(record: dict[str, Any]) -> str:
    parts = [f"{column}={_show(value)}" for column, value in record.items()][:3]
    return ", ".join(parts) or "no columns compared"
