"""The small shared base of the demo apps: typed records, paginated lists, seeding, snapshots.

Each demo app is deliberately plain, like the published benchmark: one store of typed records per
entity and, per entity, only single-item tools (``list_*`` paginated, ``get_*``, ``create_*``,
``update_*``, ``delete_*``). No bulk endpoints and no server-side filtering. Bad ids and invalid values
raise :class:`~pydantic_ai.ModelRetry` (made by :func:`retry`), so both arms see a retry rather than an aborted
run. pydantic-ai is imported only when a toolset is built or a tool refuses, so the task catalog loads without it.
"""

from __future__ import annotations

import copy
import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from workbench.apps.names import DEFAULT_PAGE_SIZE
from workbench.errors import BadInput

if TYPE_CHECKING:
    from pydantic_ai.toolsets import FunctionToolset

MIN_ITEMS = 1
MAX_ITEMS = 5000

TODAY = date(2026, 6, 1)
"""The demo apps' fixed 'today': dates are seeded around it, so data and tasks never depend on the clock."""
NOW = datetime(2026, 6, 1, 9, 0, 0)

Snapshot = dict[str, dict[str, dict[str, Any]]]
"""The whole state of an app: entity name -> record id -> record fields (JSON values only)."""


def retry(message: str) -> Exception:
    """The error a tool raises for a bad id or value: the model reads ``message`` and may try again."""
    from pydantic_ai import ModelRetry

    return ModelRetry(message)


READ_PREFIXES = ("list_", "get_", "search_", "find_")
"""Names of the tools that only read."""


class Record(BaseModel):
    """A stored record. Every record has a string id unique within its entity."""

    model_config = ConfigDict(extra="forbid")

    id: str


RecordT = TypeVar("RecordT", bound=Record)


class DemoApp(ABC):
    """A seeded, in-memory demo app and the single-item tools that operate on it.

    Subclasses declare their entities, seed them deterministically and expose their tools as closures
    over ``self`` (so each arm gets its own independent instance).
    """

    name: ClassVar[str]
    """Short name used on the command line: ``cart``, ``calendar``, ..."""
    title: ClassVar[str]
    """Human title: ``Shopping cart``."""
    about: ClassVar[str]
    """One sentence for the agents' instructions: what the app holds."""
    entities: ClassVar[dict[str, type[Record]]]
    """Entity name -> record model, in display order. The first entity is the one ``items`` counts."""
    id_prefixes: ClassVar[dict[str, str]]
    """Entity name -> id prefix, for ids like ``line-0042``."""
    default_items: ClassVar[int] = 50

    def __init__(self, items: int | None = None, seed: int = 0, *, page_size: int = DEFAULT_PAGE_SIZE) -> None:
        items = self.default_items if items is None else items
        if not MIN_ITEMS <= items <= MAX_ITEMS:
            raise BadInput(f"items must be between {MIN_ITEMS} and {MAX_ITEMS}, got {items}")
        if page_size < 1:
            raise BadInput(f"page size must be at least 1, got {page_size}")
        self.items = items
        self.seed = seed
        self.page_size = page_size
        self.rows: dict[str, dict[str, Record]] = {entity: {} for entity in self.entities}
        self._next_number: dict[str, int] = dict.fromkeys(self.entities, 1)
        self.populate(items)

    # -- seeding ---------------------------------------------------------------------------------

    def rng(self, *scope: object) -> random.Random:
        """A random generator for one seeded thing, stable on every machine and Python version.

        String seeds are hashed with SHA-512 by :mod:`random`, so ``rng('line', 7)`` yields the same
        values everywhere, and item ``n``'s values do not depend on how many items are seeded.
        """
        return random.Random(":".join([self.name, str(self.seed), *map(str, scope)]))

    @abstractmethod
    def populate(self, items: int) -> None:
        """Fill ``self.rows`` with ``items`` records of the main entity (and what they refer to)."""

    def copy(self) -> Self:
        """An independent instance in this one's state (records, id counters, page size): seeding is most of the
        cost of building an app, and every instance of one items/seed pair starts the same."""
        twin = copy.copy(self)
        twin.rows = {
            entity: {key: _copied(record) for key, record in records.items()} for entity, records in self.rows.items()
        }
        twin._next_number = dict(self._next_number)
        return twin

    def new_id(self, entity: str) -> str:
        number = self._next_number[entity]
        self._next_number[entity] = number + 1
        return f"{self.id_prefixes[entity]}-{number:04d}"

    def add(self, entity: str, record: Record) -> Record:
        """Store a record whose id was made by :meth:`new_id`."""
        self.rows[entity][record.id] = record
        return record

    # -- tools -----------------------------------------------------------------------------------

    @abstractmethod
    def tools(self) -> list[Callable[..., Any]]:
        """The app's single-item tools, as typed async functions bound to this instance."""

    def toolset(self) -> FunctionToolset[Any]:
        from pydantic_ai import toolsets

        return toolsets.FunctionToolset(self.tools())

    def tool_names(self) -> list[str]:
        return [tool.__name__ for tool in self.tools()]

    def read_only_tool_names(self) -> list[str]:
        """The tools that only read (``list_*``, ``get_*``, ...): MCP's ``readOnlyHint`` when served."""
        return [name for name in self.tool_names() if name.startswith(READ_PREFIXES)]

    def page(self, entity: str, page: int, page_model: type[BaseModel]) -> Any:
        """One page of an entity in id order, shaped as ``page_model`` (items, page, page_size, total, has_more)."""
        rows = list(self.rows[entity].values())
        total = len(rows)
        last_page = max(1, -(-total // self.page_size))
        if page < 1 or page > last_page:
            raise retry(f"page {page} does not exist: {entity} has {total} records in {last_page} page(s)")
        start = (page - 1) * self.page_size
        chunk = rows[start : start + self.page_size]
        return page_model(
            items=chunk, page=page, page_size=self.page_size, total=total, has_more=start + len(chunk) < total
        )

    def get(self, entity: str, record_id: str) -> Any:
        try:
            return self.rows[entity][record_id]
        except KeyError:
            singular = entity.removesuffix("s").replace("_", " ")
            raise retry(f"no {singular} with id {record_id!r}") from None

    def create(self, entity: str, **fields: Any) -> Any:
        model = self.entities[entity]
        try:
            record = model(id=self.new_id(entity), **fields)
        except ValidationError as error:
            raise retry(_validation_message(error)) from None
        return self.add(entity, record)

    def update(self, entity: str, record_id: str, **changes: Any) -> Any:
        """Apply the changes that are not ``None``; validate the result as a whole."""
        current = self.get(entity, record_id)
        changes = {key: value for key, value in changes.items() if value is not None}
        if not changes:
            raise retry("nothing to update: pass at least one field to change")
        try:
            updated = type(current).model_validate({**current.model_dump(), **changes})
        except ValidationError as error:
            raise retry(_validation_message(error)) from None
        self.rows[entity][record_id] = updated
        return updated

    def delete(self, entity: str, record_id: str) -> Any:
        record = self.get(entity, record_id)
        del self.rows[entity][record_id]
        return record

    # -- state -----------------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The whole state as plain JSON values, in id order."""
        return {
            entity: {record_id: record.model_dump(mode="json") for record_id, record in records.items()}
            for entity, records in self.rows.items()
        }


_IMMUTABLE = (str, int, float, bool, type(None), date, datetime)


def _copied(record: RecordT) -> RecordT:
    """A copy of ``record`` that shares only immutable values with it (tools and tasks change records, and the
    lists in them, in place): what ``model_copy(deep=True)`` makes, at a third of its cost."""
    twin = record.model_copy()
    for name, value in record.__dict__.items():
        if not isinstance(value, _IMMUTABLE):
            twin.__dict__[name] = copy.deepcopy(value)
    return twin


def _validation_message(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "value"
        problems.append(f"{where}: {item['msg']}")
    return "invalid value: " + "; ".join(problems)
