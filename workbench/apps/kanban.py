"""Kanban board: cards and the columns they sit in."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from workbench.apps import tasks_kanban
from workbench.apps.base import TODAY, DemoApp, Record, retry
from workbench.apps.data import BOARD_COLUMNS, CARD_LABELS, CARD_OBJECTS, CARD_VERBS, PEOPLE
from workbench.apps.fields import IsoDate

TEAM = PEOPLE[:6]
"""The board's members; cards are assigned to one of them by full name (or to nobody)."""

Title = Annotated[str, Field(min_length=1, max_length=120)]
ColumnName = Annotated[str, Field(min_length=1, max_length=40)]
Person = Annotated[str, Field(min_length=1, max_length=80)]
Label = Annotated[str, Field(min_length=1, max_length=30)]
Points = Literal[0, 1, 2, 3, 5, 8, 13, 21]
WipLimit = Annotated[int, Field(ge=1, le=100)]
Position = Annotated[int, Field(ge=1, le=50)]


class Card(Record):
    """One card on the board. ``column`` is the column's name; ``due`` is a date or null."""

    title: Title
    column: ColumnName
    assignee: Person | None = None
    labels: list[Label] = []
    points: Points = 1
    due: IsoDate | None = None
    archived: bool = False


class CardPage(BaseModel):
    """One page of cards."""

    items: list[Card]
    page: int
    page_size: int
    total: int
    has_more: bool


class Column(Record):
    """A board column, left to right by ``position``. The work-in-progress limit is advisory."""

    name: ColumnName
    position: Position
    wip_limit: WipLimit | None = None


class ColumnPage(BaseModel):
    """One page of columns."""

    items: list[Column]
    page: int
    page_size: int
    total: int
    has_more: bool


class Kanban(DemoApp):
    name = "kanban"
    title = "Kanban board"
    about = "a team's kanban board: cards (column, assignee, labels, points, due date, archived) and the columns"
    entities = {"cards": Card, "columns": Column}
    id_prefixes = {"cards": "card", "columns": "col"}
    default_items = 50

    def populate(self, items: int) -> None:
        for number in range(items):
            self.add("cards", Card(id=self.new_id("cards"), **self._card(number)))
        for position, (name, wip_limit) in enumerate(BOARD_COLUMNS, start=1):
            self.add("columns", Column(id=self.new_id("columns"), name=name, position=position, wip_limit=wip_limit))

    def _card(self, number: int) -> dict[str, Any]:
        rng = self.rng("card", number)
        column = rng.choices([name for name, _ in BOARD_COLUMNS], weights=(25, 15, 15, 10, 35))[0]
        assignee = rng.choice(TEAM) if rng.random() >= 0.12 else None
        labels = sorted(rng.sample(CARD_LABELS, rng.choices((0, 1, 2, 3), weights=(20, 45, 25, 10))[0]))
        has_due = rng.random() >= 0.3
        due = (TODAY + timedelta(days=rng.randint(-21, 35))).isoformat()
        archived = rng.random() < 0.3
        return {
            "title": f"{rng.choice(CARD_VERBS)} {rng.choice(CARD_OBJECTS)}",
            "column": column,
            "assignee": assignee,
            "labels": labels,
            "points": rng.choice((1, 2, 3, 5, 8, 13)),
            "due": due if has_due else None,
            "archived": archived and column == "Done",
        }

    def _check_column(self, name: str | None) -> None:
        names = [c.name for c in self.rows["columns"].values()]
        if name is not None and name not in names:
            raise retry(f"no column named {name!r}; columns are: {', '.join(names)}")

    def tools(self) -> list[Callable[..., Any]]:
        async def list_cards(page: int = 1) -> CardPage:
            """List every card on the board (archived ones too), one page at a time, in creation order."""
            return self.page("cards", page, CardPage)

        async def get_card(card_id: str) -> Card:
            """Get one card by id."""
            return self.get("cards", card_id)

        async def create_card(
            title: Title,
            column: ColumnName,
            assignee: Person | None = None,
            labels: list[Label] | None = None,
            points: Points = 1,
            due: IsoDate | None = None,
        ) -> Card:
            """Add one card to a column (by column name)."""
            self._check_column(column)
            return self.create(
                "cards", title=title, column=column, assignee=assignee, labels=labels or [], points=points, due=due
            )

        async def update_card(
            card_id: str,
            title: Title | None = None,
            column: ColumnName | None = None,
            assignee: Person | None = None,
            labels: list[Label] | None = None,
            points: Points | None = None,
            due: IsoDate | None = None,
            archived: bool | None = None,
        ) -> Card:
            """Change one card: move it (column name), reassign, relabel (pass the full new label list), archive...

            Omitted fields stay as they are.
            """
            self.get("cards", card_id)
            self._check_column(column)
            return self.update(
                "cards",
                card_id,
                title=title,
                column=column,
                assignee=assignee,
                labels=labels,
                points=points,
                due=due,
                archived=archived,
            )

        async def delete_card(card_id: str) -> Card:
            """Delete one card for good (takes one id); archiving is usually what you want. Returns the card."""
            return self.delete("cards", card_id)

        async def list_columns(page: int = 1) -> ColumnPage:
            """List the board's columns, one page at a time."""
            return self.page("columns", page, ColumnPage)

        async def get_column(column_id: str) -> Column:
            """Get one column by id."""
            return self.get("columns", column_id)

        async def create_column(name: ColumnName, wip_limit: WipLimit | None = None) -> Column:
            """Add one column at the right end of the board; its name must be new."""
            columns = list(self.rows["columns"].values())
            if any(c.name == name for c in columns):
                raise retry(f"a column named {name!r} already exists")
            position = max((c.position for c in columns), default=0) + 1
            return self.create("columns", name=name, position=position, wip_limit=wip_limit)

        async def update_column(
            column_id: str, position: Position | None = None, wip_limit: WipLimit | None = None
        ) -> Column:
            """Change one column's position or work-in-progress limit. Omitted fields stay as they are."""
            return self.update("columns", column_id, position=position, wip_limit=wip_limit)

        async def delete_column(column_id: str) -> Column:
            """Delete one column. Fails while cards are still in it: move or delete them first."""
            column = self.get("columns", column_id)
            count = sum(1 for card in self.rows["cards"].values() if card.column == column.name)
            if count:
                raise retry(f"column {column.name!r} still holds {count} card(s); move or delete them first")
            return self.delete("columns", column_id)

        return [
            list_cards,
            get_card,
            create_card,
            update_card,
            delete_card,
            list_columns,
            get_column,
            create_column,
            update_column,
            delete_column,
        ]


APP = Kanban


# -- tasks: the catalog lives in workbench/apps/tasks_kanban.py ----------------------------------------------

TASKS = tasks_kanban.TASKS
