"""Diffs of two snapshots and the grade of an end state against the expected one."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.apps.base import Snapshot


@dataclass
class StateDiff:
    """What changed between two snapshots: created records, updated fields (old -> new), deleted records."""

    created: list[dict[str, Any]] = field(default_factory=list)
    """``{"entity", "id", "record"}`` per new record."""
    updated: list[dict[str, Any]] = field(default_factory=list)
    """``{"entity", "id", "changes": {field: [old, new]}}`` per changed record."""
    deleted: list[dict[str, Any]] = field(default_factory=list)
    """``{"entity", "id", "record"}`` per removed record (the record as it was)."""

    def counts(self) -> dict[str, int]:
        return {"created": len(self.created), "updated": len(self.updated), "deleted": len(self.deleted)}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StateDiff:
        return cls(**data)


def diff(before: Snapshot, after: Snapshot) -> StateDiff:
    result = StateDiff()
    for entity in _entities(before, after):
        old_rows, new_rows = before.get(entity, {}), after.get(entity, {})
        for record_id, old in old_rows.items():
            new = new_rows.get(record_id)
            if new is None:
                result.deleted.append({"entity": entity, "id": record_id, "record": old})
            elif new != old:
                changes = {
                    name: [old.get(name), new.get(name)] for name in _fields(old, new) if old.get(name) != new.get(name)
                }
                result.updated.append({"entity": entity, "id": record_id, "changes": changes})
        for record_id, new in new_rows.items():
            if record_id not in old_rows:
                result.created.append({"entity": entity, "id": record_id, "record": new})
    return result


@dataclass
class Grade:
    """An end state compared with the expected one.

    ``mismatches`` lists every difference; ``collateral`` is the subset that touched records the task
    should have left alone (including records created that should not exist).
    """

    passed: bool
    mismatches: list[str] = field(default_factory=list)
    collateral: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


MAX_REPORTED = 200
"""Mismatch lists are cut here (with a final line saying how many were left out)."""


def grade(start: Snapshot, expected: Snapshot, actual: Snapshot) -> Grade:
    """Compare ``actual`` with ``expected``; both evolved from ``start``.

    Records that existed at the start are compared by id. Records created during the run are compared
    by content (every field but the id), since two arms may create the same records in another order
    and so give them other ids.
    """
    mismatches: list[str] = []
    collateral: list[str] = []
    for entity in _entities(start, expected, actual):
        start_rows, expected_rows, actual_rows = (s.get(entity, {}) for s in (start, expected, actual))
        for record_id, original in start_rows.items():
            want, got = expected_rows.get(record_id), actual_rows.get(record_id)
            if want == got:
                continue
            untouched = want == original
            if got is None:
                problems = [
                    f"{entity} {record_id}: deleted, but it should " + ("remain" if untouched else "be updated")
                ]
            elif want is None:
                problems = [f"{entity} {record_id}: still present, but it should have been deleted"]
            else:
                problems = [
                    f"{entity} {record_id}: {name} is {_show(got.get(name))}, expected {_show(want.get(name))}"
                    for name in _fields(want, got)
                    if want.get(name) != got.get(name)
                ]
            mismatches.extend(problems)
            if untouched:
                collateral.extend(problems)

        wanted_new = Counter(_content_key(r) for i, r in expected_rows.items() if i not in start_rows)
        for record_id, record in actual_rows.items():
            if record_id in start_rows:
                continue
            key = _content_key(record)
            if wanted_new[key] > 0:
                wanted_new[key] -= 1
                continue
            problem = f"{entity} {record_id}: created, but no such record was expected ({_summary(record)})"
            mismatches.append(problem)
            collateral.append(problem)
        for key, missing in wanted_new.items():
            for _ in range(missing):
                mismatches.append(f"{entity}: expected a new record that was not created ({_summary(json.loads(key))})")

    return Grade(passed=not mismatches, mismatches=_cap(mismatches), collateral=_cap(collateral))


def _entities(*snapshots: Snapshot) -> list[str]:
    names: dict[str, None] = {}
    for snapshot in snapshots:
        names.update(dict.fromkeys(snapshot))
    return list(names)


def _fields(*records: dict[str, Any]) -> list[str]:
    names: dict[str, None] = {}
    for record in records:
        names.update(dict.fromkeys(record))
    return list(names)


def _content_key(record: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in record.items() if k != "id"}, sort_keys=True)


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _summary(record: dict[str, Any]) -> str:
    parts = [f"{k}={_show(v)}" for k, v in record.items() if k != "id"][:3]
    return ", ".join(parts)


def _cap(lines: list[str]) -> list[str]:
    if len(lines) <= MAX_REPORTED:
        return lines
    return [*lines[:MAX_REPORTED], f"... and {len(lines) - MAX_REPORTED} more"]
