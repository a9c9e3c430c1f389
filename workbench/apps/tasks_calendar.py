"""The team calendar's built-in tasks: 10 everyday, 3 long-horizon, 1 scaling rule."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from workbench.apps.base import DemoApp
from workbench.apps.catalog import DAY, NAME, SCALING_SIZES
from workbench.apps.fields import minutes
from workbench.apps.tasks import Call, ForEach, Let, Play, Scan, Task

ROOM = r"[a-z][\w]*(?: [\w]+){0,2}?"
"""A room name (one to three words) in a pattern."""


def _events(app: DemoApp) -> list[Any]:
    return list(app.rows["events"].values())


def _one_hour_later(moment: str) -> str:
    return minutes(datetime.fromisoformat(moment) + timedelta(hours=1))


# -- references ----------------------------------------------------------------------------------


def _cancel_tentative(app: DemoApp, p: Mapping[str, Any]) -> None:
    for event in _events(app):
        if event.status == "tentative" and event.start < p["day"]:
            event.status = "cancelled"


def _delete_cancelled(app: DemoApp, p: Mapping[str, Any]) -> None:
    for event in _events(app):
        if event.status == "cancelled" and event.end < p["day"]:
            del app.rows["events"][event.id]


def _confirm_window(app: DemoApp, p: Mapping[str, Any]) -> None:
    for event in _events(app):
        if event.status == "tentative" and p["first"] <= event.start[:10] <= p["last"]:
            event.status = "confirmed"


def _move_room(app: DemoApp, p: Mapping[str, Any]) -> None:
    for event in _events(app):
        if event.room is not None and event.room.lower() == p["room"].lower() and event.start >= p["day"]:
            event.room = p["target"]


def _push_back(app: DemoApp, p: Mapping[str, Any]) -> None:
    for event in _events(app):
        if event.start[:10] == p["day"] and not event.all_day:
            event.start, event.end = _one_hour_later(event.start), _one_hour_later(event.end)


def _add_attendee(app: DemoApp, p: Mapping[str, Any]) -> None:
    for event in _events(app):
        invited = p["person"] in event.attendees or event.organizer == p["person"]
        if event.title.lower() == p["title"].lower() and not invited:
            event.attendees = [*event.attendees, p["person"]]


def _cancel_organizer(app: DemoApp, p: Mapping[str, Any]) -> None:
    for event in _events(app):
        if event.organizer.lower() == p["person"].lower() and event.start >= p["day"] and event.status != "cancelled":
            event.status = "cancelled"


def _drop_attendee(app: DemoApp, p: Mapping[str, Any]) -> None:
    for event in _events(app):
        if event.start >= p["day"] and p["person"] in event.attendees:
            event.attendees = [name for name in event.attendees if name != p["person"]]


def _rename(app: DemoApp, p: Mapping[str, Any]) -> None:
    for event in _events(app):
        if event.title.lower() == p["old"].lower():
            event.title = p["new"]


def _book_roomless(app: DemoApp, p: Mapping[str, Any]) -> None:
    for event in _events(app):
        if event.room is None and not event.all_day and event.status != "cancelled" and event.start >= p["day"]:
            event.room = p["room"]


def _close_room(app: DemoApp, p: Mapping[str, Any]) -> None:
    for event in _events(app):
        if event.room == p["room"]:
            event.room = p["target"]
    for room in list(app.rows["rooms"].values()):
        if room.name == p["room"]:
            del app.rows["rooms"][room.id]


def _tidy_up(app: DemoApp, p: Mapping[str, Any]) -> None:
    for event in _events(app):
        if event.status == "cancelled" and event.end < p["day"]:
            del app.rows["events"][event.id]
        elif event.status == "tentative" and p["day"] <= event.start[:10] <= p["until"]:
            event.status = "confirmed"


def _offboard(app: DemoApp, p: Mapping[str, Any]) -> None:
    for event in _events(app):
        if event.start < p["day"]:
            continue
        if p["person"] in event.attendees:
            event.attendees = [name for name in event.attendees if name != p["person"]]
        if event.organizer == p["person"] and event.status != "cancelled":
            event.status = "cancelled"


def _invite(app: DemoApp, p: Mapping[str, Any]) -> None:
    for event in _events(app):
        if event.start >= p["day"] and p["person"] not in event.attendees and event.organizer != p["person"]:
            event.attendees = [*event.attendees, p["person"]]


# -- the catalog ---------------------------------------------------------------------------------

PUSHED = "it['{0}'][:11] + str(int(it['{0}'][11:13]) + 1).zfill(2) + it['{0}'][13:]"
"""One hour later, for a time between 00:00 and 22:59 (meetings run from 08:00 to 19:30)."""

TASKS = [
    Task(
        app="calendar",
        slug="cancel-tentative",
        tier="everyday",
        prompt="Cancel every tentative event that starts before {day}.",
        defaults={"day": "2026-06-15"},
        patterns=(r"\bcancel\b.*?\btentative\b.*?\bbefore (?P<day>\d{4}-\d{2}-\d{2})",),
        items=120,
        expected=_cancel_tentative,
        play=Play(
            steps=(
                Scan("list_events", "events"),
                ForEach(
                    "update_event",
                    "[it for it in events if it['status'] == 'tentative' and it['start'] < day]",
                    {"event_id": "it['id']", "status": "'cancelled'"},
                    into="cancelled",
                ),
            ),
            report={"cancelled": "len(cancelled)"},
            answer="Cancelled {cancelled} tentative events that started before {day}.",
        ),
    ),
    Task(
        app="calendar",
        slug="delete-cancelled",
        tier="everyday",
        prompt="Delete every cancelled event that ended before {day}.",
        defaults={"day": "2026-06-01"},
        patterns=(
            r"\b(?:delete|remove|clear out|purge)\b.*?\bcancell?ed\b.*?\b(?:ended|ending|finished|before)\b\D*"
            r"(?P<day>\d{4}-\d{2}-\d{2})",
        ),
        items=120,
        expected=_delete_cancelled,
        play=Play(
            steps=(
                Scan("list_events", "events"),
                Let("targets", "[it for it in events if it['status'] == 'cancelled' and it['end'] < day]"),
                ForEach("delete_event", "targets", {"event_id": "it['id']"}, into="deleted"),
            ),
            report={"deleted": "len(deleted)", "remaining": "len(events) - len(deleted)"},
            answer="Deleted {deleted} cancelled events that ended before {day}; {remaining} events remain.",
        ),
    ),
    Task(
        app="calendar",
        slug="confirm-window",
        tier="everyday",
        prompt="Confirm every tentative event scheduled between {first} and {last}.",
        defaults={"first": "2026-06-01", "last": "2026-06-07"},
        patterns=(rf"\bconfirm\b.*?\btentative\b.*?\bbetween (?P<first>{DAY}) and (?P<last>{DAY})",),
        items=250,
        expected=_confirm_window,
        play=Play(
            steps=(
                Scan("list_events", "events"),
                ForEach(
                    "update_event",
                    "[it for it in events if it['status'] == 'tentative' and first <= it['start'][:10] <= last]",
                    {"event_id": "it['id']", "status": "'confirmed'"},
                    into="confirmed",
                ),
            ),
            report={"confirmed": "len(confirmed)"},
            answer="Confirmed {confirmed} tentative events scheduled between {first} and {last}.",
        ),
    ),
    Task(
        app="calendar",
        slug="move-room",
        tier="everyday",
        prompt="Move every event in {room} that starts on or after {day} to {target}.",
        defaults={"room": "Cedar", "day": "2026-06-01", "target": "Atlas"},
        patterns=(
            rf"\bmove (?:every|all|each)(?: the)? (?:events?|meetings?) in (?:room )?(?P<room>{ROOM}) (?:that|which) "
            rf"(?:starts?|begins?) on or after (?P<day>{DAY}) (?:in)?to (?:room )?(?P<target>{ROOM})[.!]?$",
        ),
        items=60,
        expected=_move_room,
        play=Play(
            steps=(
                Scan("list_events", "events"),
                ForEach(
                    "update_event",
                    "[it for it in events if it['room'] is not None and it['room'].lower() == room.lower()"
                    " and it['start'] >= day]",
                    {"event_id": "it['id']", "room": "target"},
                    into="moved",
                ),
            ),
            report={"moved": "len(moved)"},
            answer="Moved {moved} events from {room} to {target} (those starting on or after {day}).",
        ),
    ),
    Task(
        app="calendar",
        slug="push-back",
        tier="everyday",
        prompt="Everyone is in late on {day}: push every meeting that day back by one hour.",
        defaults={"day": "2026-06-24"},
        patterns=(
            rf"\blate on (?P<day>{DAY})\b.*?\b(?:one|an|1) hour\b",
            rf"\b(?:push|move)\b.*?\bmeetings?\b.*?\bon (?P<day>{DAY})\b.*?\b(?:back|later) by (?:one|an|1) hour\b",
        ),
        items=200,
        expected=_push_back,
        play=Play(
            steps=(
                Scan("list_events", "events"),
                ForEach(
                    "update_event",
                    "[it for it in events if it['start'][:10] == day and not it['all_day']]",
                    {"event_id": "it['id']", "start": PUSHED.format("start"), "end": PUSHED.format("end")},
                    into="pushed",
                ),
            ),
            report={"pushed": "len(pushed)"},
            answer="Pushed {pushed} meetings on {day} back by one hour.",
        ),
    ),
    Task(
        app="calendar",
        slug="add-attendee",
        tier="everyday",
        prompt="Add {person} to every {title} meeting.",
        defaults={"person": "Grace Kim", "title": "Design review"},
        patterns=(rf"\badd (?P<person>{NAME}) to (?:every|each|all)(?: the)? (?P<title>[^.!?]+?) meetings?[.!]?$",),
        items=150,
        expected=_add_attendee,
        play=Play(
            steps=(
                Scan("list_events", "events"),
                ForEach(
                    "update_event",
                    "[it for it in events if it['title'].lower() == title.lower()"
                    " and person not in it['attendees'] and it['organizer'] != person]",
                    {"event_id": "it['id']", "attendees": "it['attendees'] + [person]"},
                    into="added",
                ),
            ),
            report={"added": "len(added)"},
            answer="Added {person} to {added} {title} meetings.",
        ),
    ),
    Task(
        app="calendar",
        slug="cancel-organizer",
        tier="everyday",
        prompt="{person} is leaving: cancel every event they organize that starts on or after {day}.",
        defaults={"person": "Hugo Fischer", "day": "2026-06-01"},
        patterns=(
            rf"^(?P<person>{NAME}) is leaving\W+cancel\b.*?\bon or after (?P<day>{DAY})",
            rf"\bcancel (?:every|each|all)(?: the)? (?:events?|meetings?) (?:organi[sz]ed|run) by (?P<person>{NAME})\b"
            rf".*?\bon or after (?P<day>{DAY})",
        ),
        items=300,
        expected=_cancel_organizer,
        play=Play(
            steps=(
                Scan("list_events", "events"),
                ForEach(
                    "update_event",
                    "[it for it in events if it['organizer'].lower() == person.lower() and it['start'] >= day"
                    " and it['status'] != 'cancelled']",
                    {"event_id": "it['id']", "status": "'cancelled'"},
                    into="cancelled",
                ),
            ),
            report={"cancelled": "len(cancelled)"},
            answer="Cancelled {cancelled} events organized by {person} from {day} on.",
        ),
    ),
    Task(
        app="calendar",
        slug="drop-attendee",
        tier="everyday",
        prompt="Take {person} off the attendee list of every event from {day} on.",
        defaults={"person": "Chloe Moreau", "day": "2026-06-01"},
        patterns=(
            rf"\b(?:take|remove) (?P<person>{NAME}) (?:off|from) the attendee(?:s| list)\b.*?\bfrom (?P<day>{DAY})",
        ),
        items=100,
        expected=_drop_attendee,
        play=Play(
            steps=(
                Scan("list_events", "events"),
                ForEach(
                    "update_event",
                    "[it for it in events if it['start'] >= day and person in it['attendees']]",
                    {"event_id": "it['id']", "attendees": "[name for name in it['attendees'] if name != person]"},
                    into="updated",
                ),
            ),
            report={"updated": "len(updated)"},
            answer="Took {person} off the attendee list of {updated} events from {day} on.",
        ),
    ),
    Task(
        app="calendar",
        slug="rename-meetings",
        tier="everyday",
        prompt='Rename every "{old}" meeting to "{new}".',
        defaults={"old": "Lunch & learn", "new": "Tech talk"},
        patterns=(
            r"\brename (?:every|all|each)(?: the)? [\"'](?P<old>[^\"']+)[\"'] (?:meetings?|events?) to "
            r"[\"'](?P<new>[^\"']+)[\"']",
        ),
        items=150,
        expected=_rename,
        play=Play(
            steps=(
                Scan("list_events", "events"),
                ForEach(
                    "update_event",
                    "[it for it in events if it['title'].lower() == old.lower()]",
                    {"event_id": "it['id']", "title": "new"},
                    into="renamed",
                ),
            ),
            report={"renamed": "len(renamed)"},
            answer='Renamed {renamed} "{old}" meetings to "{new}".',
        ),
    ),
    Task(
        app="calendar",
        slug="book-roomless",
        tier="everyday",
        prompt="Book {room} for every meeting from {day} on that has no room yet (skip cancelled ones).",
        defaults={"room": "Atlas", "day": "2026-06-01"},
        patterns=(
            rf"\bbook (?:room )?(?P<room>{ROOM}) for (?:every|each|all)\b.*?\bfrom (?P<day>{DAY}) on\b.*?\bno room",
        ),
        items=200,
        expected=_book_roomless,
        play=Play(
            steps=(
                Scan("list_events", "events"),
                ForEach(
                    "update_event",
                    "[it for it in events if it['room'] is None and not it['all_day']"
                    " and it['status'] != 'cancelled' and it['start'] >= day]",
                    {"event_id": "it['id']", "room": "room"},
                    into="booked",
                ),
            ),
            report={"booked": "len(booked)"},
            answer="Booked {room} for {booked} meetings from {day} on that had no room.",
        ),
    ),
    # -- long-horizon --
    Task(
        app="calendar",
        slug="close-room",
        tier="long",
        prompt="The {room} room is closing: move every event booked in it to {target}, then delete the room.",
        defaults={"room": "Birch", "target": "Atlas"},
        patterns=(
            rf"\b(?:the )?(?P<room>{ROOM}) room is closing\W+move\b.*?\bto (?:room )?(?P<target>{ROOM}),? "
            r"(?:then|and) delete\b",
        ),
        items=300,
        expected=_close_room,
        play=Play(
            steps=(
                Scan("list_events", "events"),
                Scan("list_rooms", "rooms"),
                ForEach(
                    "update_event",
                    "[it for it in events if it['room'] == room]",
                    {"event_id": "it['id']", "room": "target"},
                    into="moved",
                ),
                Call("delete_room", {"room_id": "[it['id'] for it in rooms if it['name'] == room][0]"}, into="gone"),
            ),
            report={"moved": "len(moved)", "rooms_left": "len(rooms) - 1"},
            answer=(
                "Moved {moved} events from {room} to {target} and deleted the {room} room; {rooms_left} rooms remain."
            ),
        ),
    ),
    Task(
        app="calendar",
        slug="tidy-up",
        tier="long",
        prompt=(
            "Tidy up the calendar for the new month: drop every cancelled event that is already over (ended before "
            "{day}), and confirm the tentative ones that start from {day} through {until}."
        ),
        defaults={"day": "2026-06-01", "until": "2026-06-14"},
        patterns=(rf"\btidy up\b.*?\bended before (?P<day>{DAY})\b.*?\bthrough (?P<until>{DAY})",),
        items=500,
        expected=_tidy_up,
        play=Play(
            steps=(
                Scan("list_events", "events"),
                ForEach(
                    "delete_event",
                    "[it for it in events if it['status'] == 'cancelled' and it['end'] < day]",
                    {"event_id": "it['id']"},
                    into="dropped",
                ),
                ForEach(
                    "update_event",
                    "[it for it in events if it['status'] == 'tentative' and day <= it['start'][:10] <= until]",
                    {"event_id": "it['id']", "status": "'confirmed'"},
                    into="confirmed",
                ),
            ),
            report={"dropped": "len(dropped)", "confirmed": "len(confirmed)"},
            answer=(
                "Dropped {dropped} cancelled events that ended before {day} and confirmed {confirmed} tentative "
                "events from {day} through {until}."
            ),
        ),
    ),
    Task(
        app="calendar",
        slug="offboard",
        tier="long",
        prompt=(
            "{person} has left the company: from {day} on, take them off every event they were invited to and "
            "cancel every event they organize."
        ),
        defaults={"person": "Olga Rossi", "day": "2026-06-01"},
        patterns=(rf"^(?P<person>{NAME}) has left\b.*?\bfrom (?P<day>{DAY}) on\b.*?\bcancel\b",),
        items=250,
        expected=_offboard,
        play=Play(
            steps=(
                Scan("list_events", "events"),
                Let("upcoming", "[it for it in events if it['start'] >= day]"),
                ForEach(
                    "update_event",
                    "[it for it in upcoming if person in it['attendees']]",
                    {"event_id": "it['id']", "attendees": "[name for name in it['attendees'] if name != person]"},
                    into="uninvited",
                ),
                ForEach(
                    "update_event",
                    "[it for it in upcoming if it['organizer'] == person and it['status'] != 'cancelled']",
                    {"event_id": "it['id']", "status": "'cancelled'"},
                    into="cancelled",
                ),
            ),
            report={"uninvited": "len(uninvited)", "cancelled": "len(cancelled)"},
            answer=(
                "Took {person} off {uninvited} upcoming events and cancelled the {cancelled} upcoming events "
                "they organized."
            ),
        ),
    ),
    # -- scaling --
    Task(
        app="calendar",
        slug="invite-upcoming",
        tier="scaling",
        prompt="Invite {person} to every event that starts on or after {day}.",
        defaults={"person": "Tara Khan", "day": "2026-06-01"},
        patterns=(rf"\binvite (?P<person>{NAME}) to (?:every|each|all)\b.*?\bon or after (?P<day>{DAY})",),
        items=50,
        sizes=SCALING_SIZES,
        expected=_invite,
        play=Play(
            steps=(
                Scan("list_events", "events"),
                ForEach(
                    "update_event",
                    "[it for it in events if it['start'] >= day and person not in it['attendees']"
                    " and it['organizer'] != person]",
                    {"event_id": "it['id']", "attendees": "it['attendees'] + [person]"},
                    into="invited",
                ),
            ),
            report={"invited": "len(invited)"},
            answer="Invited {person} to {invited} events starting on or after {day}.",
        ),
    ),
]
