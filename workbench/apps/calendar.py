"""Team calendar: events and the meeting rooms they are booked in."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, time, timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, model_validator

from workbench.apps import tasks_calendar
from workbench.apps.base import TODAY, DemoApp, Record, retry
from workbench.apps.data import ALL_DAY_TOPICS, MEETING_TOPICS, PEOPLE, ROOM_DETAILS, ROOMS
from workbench.apps.fields import IsoDateTime, minutes

Status = Literal["confirmed", "tentative", "cancelled"]
Title = Annotated[str, Field(min_length=1, max_length=120)]
Name = Annotated[str, Field(min_length=1, max_length=80)]
Capacity = Annotated[int, Field(ge=1, le=500)]
Floor = Annotated[int, Field(ge=-2, le=50)]


class Event(Record):
    """One calendar event. ``room`` is a room name (or null for no room)."""

    title: Title
    start: IsoDateTime
    end: IsoDateTime
    all_day: bool = False
    room: str | None = None
    organizer: Name
    attendees: list[str] = []
    status: Status = "confirmed"

    @model_validator(mode="after")
    def _end_after_start(self) -> Event:
        if self.end <= self.start:
            raise ValueError(f"end ({self.end}) must be after start ({self.start})")
        return self


class EventPage(BaseModel):
    """One page of events."""

    items: list[Event]
    page: int
    page_size: int
    total: int
    has_more: bool


class Room(Record):
    """A meeting room that events can be booked in, by name."""

    name: Name
    capacity: Capacity
    floor: Floor
    has_video: bool = False


class RoomPage(BaseModel):
    """One page of rooms."""

    items: list[Room]
    page: int
    page_size: int
    total: int
    has_more: bool


class Calendar(DemoApp):
    name = "calendar"
    title = "Team calendar"
    about = "a team's calendar: events (meetings with times, room, organizer, attendees, status) and meeting rooms"
    entities = {"events": Event, "rooms": Room}
    id_prefixes = {"events": "evt", "rooms": "room"}
    default_items = 50

    def populate(self, items: int) -> None:
        rooms = ROOMS[: max(3, min(len(ROOMS), items // 15))]
        for number in range(items):
            self.add("events", Event(id=self.new_id("events"), **self._event(number, rooms)))
        for name in rooms:
            capacity, floor, has_video = ROOM_DETAILS[ROOMS.index(name)]
            self.add(
                "rooms", Room(id=self.new_id("rooms"), name=name, capacity=capacity, floor=floor, has_video=has_video)
            )

    def _event(self, number: int, rooms: tuple[str, ...]) -> dict[str, Any]:
        rng = self.rng("event", number)
        day = TODAY + timedelta(days=rng.randint(-21, 28))
        all_day = rng.random() < 0.06
        if all_day:
            title = rng.choice(ALL_DAY_TOPICS)
            start = datetime.combine(day, time(0, 0))
            end = start + timedelta(days=1)
        else:
            title = rng.choice(MEETING_TOPICS)
            start = datetime.combine(day, time(rng.randint(8, 17), rng.choice((0, 30))))
            end = start + timedelta(minutes=rng.choice((30, 45, 60, 60, 90, 120)))
        organizer = rng.choice(PEOPLE)
        others = [person for person in PEOPLE if person != organizer]
        attendees = sorted(rng.sample(others, rng.randint(1, 6)))
        # Past events were mostly held; upcoming ones are more often still tentative.
        weights = (80, 3, 17) if day < TODAY else (62, 26, 12)
        status = rng.choices(("confirmed", "tentative", "cancelled"), weights=weights)[0]
        # The room comes last: it depends on how many rooms there are, the rest of the event does not.
        in_room = not all_day and rng.random() >= 0.1
        room = rooms[int(rng.random() * len(rooms))] if in_room else None
        return {
            "title": title,
            "start": minutes(start),
            "end": minutes(end),
            "all_day": all_day,
            "room": room,
            "organizer": organizer,
            "attendees": attendees,
            "status": status,
        }

    def _check_room(self, room: str | None) -> None:
        names = [r.name for r in self.rows["rooms"].values()]
        if room is not None and room not in names:
            raise retry(f"no room named {room!r}; rooms are: {', '.join(names)}")

    def tools(self) -> list[Callable[..., Any]]:
        async def list_events(page: int = 1) -> EventPage:
            """List the calendar's events, one page at a time, in the order they were created (not by time)."""
            return self.page("events", page, EventPage)

        async def get_event(event_id: str) -> Event:
            """Get one event by id."""
            return self.get("events", event_id)

        async def create_event(
            title: Title,
            start: IsoDateTime,
            end: IsoDateTime,
            organizer: Name,
            attendees: list[str] | None = None,
            room: str | None = None,
            all_day: bool = False,
            status: Status = "confirmed",
        ) -> Event:
            """Add one event. ``room`` must be the name of an existing room; ``end`` must be after ``start``."""
            self._check_room(room)
            return self.create(
                "events",
                title=title,
                start=start,
                end=end,
                all_day=all_day,
                room=room,
                organizer=organizer,
                attendees=attendees or [],
                status=status,
            )

        async def update_event(
            event_id: str,
            title: Title | None = None,
            start: IsoDateTime | None = None,
            end: IsoDateTime | None = None,
            room: str | None = None,
            attendees: list[str] | None = None,
            status: Status | None = None,
        ) -> Event:
            """Change one event (reschedule, move room, edit attendees, cancel...). Omitted fields stay as they are."""
            self.get("events", event_id)
            self._check_room(room)
            return self.update(
                "events", event_id, title=title, start=start, end=end, room=room, attendees=attendees, status=status
            )

        async def delete_event(event_id: str) -> Event:
            """Delete one event (takes one id). Returns the deleted event."""
            return self.delete("events", event_id)

        async def list_rooms(page: int = 1) -> RoomPage:
            """List the meeting rooms, one page at a time."""
            return self.page("rooms", page, RoomPage)

        async def get_room(room_id: str) -> Room:
            """Get one meeting room by id."""
            return self.get("rooms", room_id)

        async def create_room(name: Name, capacity: Capacity, floor: Floor, has_video: bool = False) -> Room:
            """Add one meeting room; its name must be new."""
            if any(r.name == name for r in self.rows["rooms"].values()):
                raise retry(f"a room named {name!r} already exists")
            return self.create("rooms", name=name, capacity=capacity, floor=floor, has_video=has_video)

        async def update_room(room_id: str, capacity: Capacity | None = None, has_video: bool | None = None) -> Room:
            """Change one room's capacity or video equipment. Omitted fields stay as they are."""
            return self.update("rooms", room_id, capacity=capacity, has_video=has_video)

        async def delete_room(room_id: str) -> Room:
            """Delete one room. Fails while events are still booked in it: move or delete them first."""
            room = self.get("rooms", room_id)
            booked = sum(1 for event in self.rows["events"].values() if event.room == room.name)
            if booked:
                raise retry(f"room {room.name!r} still has {booked} event(s) booked; move or delete them first")
            return self.delete("rooms", room_id)

        return [
            list_events,
            get_event,
            create_event,
            update_event,
            delete_event,
            list_rooms,
            get_room,
            create_room,
            update_room,
            delete_room,
        ]


APP = Calendar


# -- tasks: the catalog lives in workbench/apps/tasks_calendar.py --------------------------------------------

TASKS = tasks_calendar.TASKS
