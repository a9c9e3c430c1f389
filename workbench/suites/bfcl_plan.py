"""Choosing BFCL entries to run: one by id (``run --suite bfcl --entry``) or a category's range (``bench``).

A BFCL case is a sweep case like any other: its tier is the entry's category (so the bench report's tier
table is the per-category table), its task is ``bfcl/<entry id>``, and it runs on a
:class:`~workbench.suites.bfcl_source.BfclSource` with the entry's user turns as its prompts.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from workbench.errors import BadInput
from workbench.request import RunRequest
from workbench.suites import bfcl

SUITES = ("bfcl",)


class EntryError(BadInput):
    """An entry id, category or range that names nothing; the message says what there is."""


@dataclass(frozen=True)
class SuiteTask:
    """One entry as a task: its id (``bfcl/<entry>``), its user turns, and the app source the arms run on."""

    id: str
    turns: tuple[str, ...]
    source: Any

    @property
    def prompt(self) -> str:
        """The first user turn (a sweep reads a task's ``prompt``, ``turns`` and ``source``, as a task file's)."""
        return self.turns[0]

    def request_fields(self) -> dict[str, Any]:
        """The :class:`~workbench.runner.RunRequest` fields that run the entry: its app source and its turns."""
        return {"turns": self.turns, "source": self.source}


def check_suite(name: str) -> None:
    if name not in SUITES:
        raise EntryError(f"unknown suite {name!r}; choose one of: {', '.join(SUITES)} (`workbench suites` lists them)")


def category_of(entry_id: str) -> str:
    """``multi_turn_base_12`` -> ``multi_turn_base``."""
    category, _, number = entry_id.removeprefix("bfcl/").rpartition("_")
    if category not in bfcl.CATEGORIES or not number.isdigit():
        raise EntryError(
            f"unknown BFCL entry {entry_id!r}; an entry is <category>_<number>, e.g. multi_turn_base_0, with a "
            f"category of: {', '.join(bfcl.CATEGORIES)}"
        )
    return category


@functools.lru_cache(maxsize=len(bfcl.CATEGORIES))
def _entries_by_id(category: str) -> dict[str, bfcl.Entry]:
    """A category's entries by id, read once per process: a worker looks up an entry for every queued comparison
    (reading a category takes 0.15-0.25 s here, a fifth of an offline comparison). The entries are only read
    (each arm builds its own instances from copies), as an in-process sweep shares them between its arms and
    repeats; a read that fails is not kept."""
    return {entry.id: entry for entry in bfcl.load_entries(category)}


def find_entry(entry_id: str) -> bfcl.Entry:
    entry_id = entry_id.strip().removeprefix("bfcl/")
    entries = _entries_by_id(category_of(entry_id))
    if entry_id not in entries:
        raise EntryError(f"BFCL has no entry {entry_id!r}; {category_of(entry_id)} has entries 0-{len(entries) - 1}")
    return entries[entry_id]


def parse_range(text: str, count: int) -> list[int]:
    """``0-19``, ``3``, ``0-4,10,12-13`` -> entry numbers (in the order given, each once); within ``count``."""
    numbers: list[int] = []
    for piece in text.split(","):
        start, dash, end = piece.strip().partition("-")
        if not start.isdigit() or (dash and not end.isdigit()):
            raise EntryError(f"--entries {text!r}: expected numbers and ranges such as 0-19 or 0-4,10")
        low, high = int(start), int(end) if dash else int(start)
        if low > high:
            raise EntryError(f"--entries {text!r}: {low}-{high} runs backwards")
        if high >= count:
            raise EntryError(f"--entries {text!r}: the category has entries 0-{count - 1}")
        numbers += [number for number in range(low, high + 1) if number not in numbers]
    return numbers


def select(categories: Sequence[str] = (), entries: str | None = None) -> list[bfcl.Entry]:
    """The entries of ``categories`` (default: multi_turn_base), narrowed to the numbers of ``entries``."""
    chosen = list(dict.fromkeys(categories)) or ["multi_turn_base"]
    for category in chosen:
        if category not in bfcl.CATEGORIES:
            raise EntryError(f"unknown BFCL category {category!r}; choose one of: {', '.join(bfcl.CATEGORIES)}")
    selected: list[bfcl.Entry] = []
    for category in chosen:
        found = bfcl.load_entries(category)
        by_number = {int(entry.id.rpartition("_")[2]): entry for entry in found}
        numbers = parse_range(entries, len(found)) if entries else sorted(by_number)
        selected += [by_number[number] for number in numbers if number in by_number]
    return selected


def suite_task(entry: bfcl.Entry) -> SuiteTask:
    from workbench.suites.bfcl_source import BfclSource, entry_task_id

    turns = tuple(entry.user_messages(turn)[0]["content"] for turn in range(len(entry.turns)))
    return SuiteTask(entry_task_id(entry), turns, BfclSource(entry))


def is_entry_task(task: str | None) -> bool:
    """Whether a task id names a BFCL entry (``bfcl/multi_turn_base_0``) rather than a demo app's task."""
    from workbench.suites.bfcl_source import TASK_PREFIX

    return bool(task) and str(task).startswith(TASK_PREFIX)


def entry_request(request: RunRequest) -> RunRequest:
    """A request whose task names a BFCL entry, as the entry runs: its user turns on its own source, built from
    this installation's BFCL data (a queued job carries only the entry's id). Any other request as it is.

    Nothing of what runs comes from the request: the id is looked up among the installed entries (its category
    must be one of :data:`~workbench.suites.bfcl.CATEGORIES`, its number one the category has), and the
    classes, their initial state and the turns are bfcl-eval's own. Raises :class:`EntryError` for an id
    that names no entry, :class:`~workbench.suites.bfcl.SuiteMissing` when BFCL is not installed here (both
    are ``BadInput``: a worker refuses the job).
    """
    if not is_entry_task(request.task):
        return request
    task = suite_task(find_entry(str(request.task)))
    return replace(request, task=None, items=None, seed=0, prompt=None, **task.request_fields())


def manifest(categories: Sequence[str], entries: str | None) -> dict[str, Any]:
    """What a BFCL sweep records beside its cases: the suite, its pinned and installed version, the selection."""
    found = bfcl.status()
    return {
        "suite": "bfcl",
        "bfcl_version": found.version,
        "bfcl_pinned": found.pinned,
        "categories": list(dict.fromkeys(categories)) or ["multi_turn_base"],
        "entries": entries,
    }
