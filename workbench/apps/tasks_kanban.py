"""The kanban board's built-in tasks: 10 everyday, 2 long-horizon, 1 scaling rule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.apps.base import DemoApp
from workbench.apps.catalog import DAY, NAME, SCALING_SIZES, add_record
from workbench.apps.tasks import Call, ForEach, Let, Play, Scan, Task

COLUMN = r"(?P<column>backlog|to do|in progress|review|done)"
PERSON = r"(?P<person>[a-z'-]+(?: (?!in\b|from\b|that\b|on\b)[a-z'-]+)?)"
LABEL = r"[\"']?(?P<{}>[\w-]+)[\"']?"


def _cards(app: DemoApp) -> list[Any]:
    return list(app.rows["cards"].values())


def _is(value: str | None, wanted: str) -> bool:
    return value is not None and value.lower() == wanted.lower()


# -- references ----------------------------------------------------------------------------------


def _archive_done(app: DemoApp, p: Mapping[str, Any]) -> None:
    for card in _cards(app):
        if _is(card.assignee, p["person"]) and _is(card.column, p["column"]):
            card.archived = True


def _label_overdue(app: DemoApp, p: Mapping[str, Any]) -> None:
    for card in _cards(app):
        late = card.due is not None and card.due < p["day"]
        if late and not card.archived and card.column != "Done" and p["label"] not in card.labels:
            card.labels = [*card.labels, p["label"]]


def _reassign(app: DemoApp, p: Mapping[str, Any]) -> None:
    for card in _cards(app):
        if _is(card.assignee, p["person"]) and card.column != "Done" and not card.archived:
            card.assignee = p["new"]


def _pull_due_soon(app: DemoApp, p: Mapping[str, Any]) -> None:
    for card in _cards(app):
        if card.column == "Backlog" and not card.archived and card.due is not None and card.due < p["day"]:
            card.column = "To do"


def _assign_unowned(app: DemoApp, p: Mapping[str, Any]) -> None:
    for card in _cards(app):
        if card.assignee is None and card.column != "Done" and not card.archived:
            card.assignee = p["person"]


def _cap_points(app: DemoApp, p: Mapping[str, Any]) -> None:
    for card in _cards(app):
        if card.column != "Done" and not card.archived and card.points > p["points"]:
            card.points = p["points"]


def _archive_old_done(app: DemoApp, p: Mapping[str, Any]) -> None:
    for card in _cards(app):
        if card.column == "Done" and not card.archived and card.due is not None and card.due < p["day"]:
            card.archived = True


def _relabel(app: DemoApp, p: Mapping[str, Any]) -> None:
    for card in _cards(app):
        if p["old"] in card.labels:
            card.labels = [label for label in card.labels if label != p["old"]]
            if p["new"] not in card.labels:
                card.labels.append(p["new"])


def _enforce_wip(app: DemoApp, p: Mapping[str, Any]) -> None:
    in_progress = [card for card in _cards(app) if card.column == "In progress" and not card.archived]
    in_progress.sort(key=lambda card: (card.due is None, card.due or "", card.id))
    for card in in_progress[p["limit"] :]:
        card.column = "To do"


def _reschedule_overdue(app: DemoApp, p: Mapping[str, Any]) -> None:
    for card in _cards(app):
        if card.column != "Done" and not card.archived and card.due is not None and card.due < p["day"]:
            card.due = p["new_day"]


def _qa_column(app: DemoApp, p: Mapping[str, Any]) -> None:
    position = max(column.position for column in app.rows["columns"].values()) + 1
    add_record(app, "columns", name=p["column"], position=position, wip_limit=p["limit"])
    for card in _cards(app):
        flagged = "bug" in card.labels or "security" in card.labels
        if card.column in ("In progress", "Review") and not card.archived and flagged:
            card.column = p["column"]


def _quarter_cleanup(app: DemoApp, p: Mapping[str, Any]) -> None:
    for card in _cards(app):
        if card.column == "Done" and not card.archived:
            card.archived = True
        elif card.column == "Backlog" and card.due is None:
            del app.rows["cards"][card.id]


def _tag_open(app: DemoApp, p: Mapping[str, Any]) -> None:
    for card in _cards(app):
        if card.column != "Done" and not card.archived and p["label"] not in card.labels:
            card.labels = [*card.labels, p["label"]]


# -- the catalog ---------------------------------------------------------------------------------

OPEN = "not it['archived'] and it['column'] != 'Done'"
"""A card that is still being worked on (the play-side twin of the references' checks)."""

TASKS = [
    Task(
        app="kanban",
        slug="archive-done",
        tier="everyday",
        prompt="Archive every card in {column} that is assigned to {person}.",
        defaults={"column": "Done", "person": "Ben Lindqvist"},
        patterns=(
            rf"\barchive\b.*?\bcards?\b.*?\bin (?:the )?{COLUMN}\b.*?\bassigned to {PERSON}",
            rf"\barchive\b.*?\bcards?\b.*?\bassigned to {PERSON}.*?\bin (?:the )?{COLUMN}\b",
        ),
        items=150,
        expected=_archive_done,
        play=Play(
            steps=(
                Scan("list_cards", "cards"),
                Let(
                    "targets",
                    "[it for it in cards if not it['archived'] and it['column'].lower() == column.lower()"
                    " and it['assignee'] is not None and it['assignee'].lower() == person.lower()]",
                ),
                ForEach("update_card", "targets", {"card_id": "it['id']", "archived": "True"}, into="archived"),
            ),
            report={"archived": "len(archived)"},
            answer="Archived {archived} cards in {column} assigned to {person}.",
        ),
    ),
    Task(
        app="kanban",
        slug="label-overdue",
        tier="everyday",
        prompt='Add the label "{label}" to every card due before {day} that is not in Done; skip archived cards.',
        defaults={"label": "overdue", "day": "2026-06-01"},
        patterns=(
            r"\b(?:add|put|apply) (?:the |a )?(?:label|tag) [\"']?(?P<label>[\w-]+)[\"']? (?:to|on)\b.*?\bcards?\b"
            r".*?\bdue before (?P<day>\d{4}-\d{2}-\d{2})",
            r"\b(?:label|tag) (?:every|all|each)\b.*?\bcards?\b.*?\bdue before (?P<day>\d{4}-\d{2}-\d{2})\b.*?"
            r"\bas [\"']?(?P<label>[\w-]+)",
        ),
        items=120,
        expected=_label_overdue,
        play=Play(
            steps=(
                Scan("list_cards", "cards"),
                Let(
                    "targets",
                    "[it for it in cards if not it['archived'] and it['column'] != 'Done' and it['due'] is not None"
                    " and it['due'] < day and label not in it['labels']]",
                ),
                ForEach(
                    "update_card",
                    "targets",
                    {"card_id": "it['id']", "labels": "it['labels'] + [label]"},
                    into="labelled",
                ),
            ),
            report={"labelled": "len(labelled)"},
            answer='Added the label "{label}" to {labelled} open cards due before {day}.',
        ),
    ),
    Task(
        app="kanban",
        slug="reassign",
        tier="everyday",
        prompt="{person} is on leave: reassign every card of theirs that is not in Done to {new}.",
        defaults={"person": "Ben Lindqvist", "new": "Dev Patel"},
        patterns=(
            rf"^(?P<person>{NAME}) is on leave\W+reassign\b.*?\bto (?P<new>{NAME})[.!]?$",
            rf"\breassign (?:every|all|each)(?: the)? cards? (?:assigned to|of|from) (?P<person>{NAME}) "
            rf"(?:that|which)\b.*?\bto (?P<new>{NAME})[.!]?$",
        ),
        items=100,
        expected=_reassign,
        play=Play(
            steps=(
                Scan("list_cards", "cards"),
                ForEach(
                    "update_card",
                    f"[it for it in cards if {OPEN} and it['assignee'] is not None"
                    " and it['assignee'].lower() == person.lower()]",
                    {"card_id": "it['id']", "assignee": "new"},
                    into="moved",
                ),
            ),
            report={"moved": "len(moved)"},
            answer="Reassigned {moved} open cards from {person} to {new}.",
        ),
    ),
    Task(
        app="kanban",
        slug="pull-due-soon",
        tier="everyday",
        prompt="Pull every Backlog card that is due before {day} into To do.",
        defaults={"day": "2026-06-15"},
        patterns=(
            rf"\b(?:pull|move|bring)\b.*?\bbacklog cards?\b.*?\bdue before (?P<day>{DAY})\b.*?"
            r"\b(?:in)?to (?:the )?to do",
        ),
        items=100,
        expected=_pull_due_soon,
        play=Play(
            steps=(
                Scan("list_cards", "cards"),
                ForEach(
                    "update_card",
                    "[it for it in cards if it['column'] == 'Backlog' and not it['archived']"
                    " and it['due'] is not None and it['due'] < day]",
                    {"card_id": "it['id']", "column": "'To do'"},
                    into="pulled",
                ),
            ),
            report={"pulled": "len(pulled)"},
            answer="Pulled {pulled} Backlog cards due before {day} into To do.",
        ),
    ),
    Task(
        app="kanban",
        slug="assign-unowned",
        tier="everyday",
        prompt="Assign every unassigned card that is not in Done to {person}.",
        defaults={"person": "Elena Novak"},
        patterns=(rf"\bassign (?:every|all|each)(?: the)? unassigned cards?\b.*?\bto (?P<person>{NAME})[.!]?$",),
        items=200,
        expected=_assign_unowned,
        play=Play(
            steps=(
                Scan("list_cards", "cards"),
                ForEach(
                    "update_card",
                    f"[it for it in cards if {OPEN} and it['assignee'] is None]",
                    {"card_id": "it['id']", "assignee": "person"},
                    into="assigned",
                ),
            ),
            report={"assigned": "len(assigned)"},
            answer="Assigned {assigned} unassigned open cards to {person}.",
        ),
    ),
    Task(
        app="kanban",
        slug="cap-points",
        tier="everyday",
        prompt=(
            "No card outside Done should be estimated above {points} points: lower the bigger estimates to {points}."
        ),
        defaults={"points": 8},
        patterns=(r"\bestimated (?:above|over|at more than) (?P<points>\d+) points?",),
        items=80,
        expected=_cap_points,
        play=Play(
            steps=(
                Scan("list_cards", "cards"),
                ForEach(
                    "update_card",
                    f"[it for it in cards if {OPEN} and it['points'] > points]",
                    {"card_id": "it['id']", "points": "points"},
                    into="lowered",
                ),
            ),
            report={"lowered": "len(lowered)"},
            answer="Lowered the estimate of {lowered} open cards to {points} points.",
        ),
    ),
    Task(
        app="kanban",
        slug="archive-old-done",
        tier="everyday",
        prompt="Archive every card in Done that was due before {day}.",
        defaults={"day": "2026-06-01"},
        patterns=(rf"\barchive\b.*?\bcards?\b.*?\bin (?:the )?done\b.*?\bdue before (?P<day>{DAY})",),
        items=160,
        expected=_archive_old_done,
        play=Play(
            steps=(
                Scan("list_cards", "cards"),
                ForEach(
                    "update_card",
                    "[it for it in cards if it['column'] == 'Done' and not it['archived']"
                    " and it['due'] is not None and it['due'] < day]",
                    {"card_id": "it['id']", "archived": "True"},
                    into="archived",
                ),
            ),
            report={"archived": "len(archived)"},
            answer="Archived {archived} Done cards that were due before {day}.",
        ),
    ),
    Task(
        app="kanban",
        slug="relabel",
        tier="everyday",
        prompt='Rename the label "{old}" to "{new}" on every card.',
        defaults={"old": "ux", "new": "design"},
        patterns=(rf"\brename the (?:label|tag) {LABEL.format('old')} to {LABEL.format('new')}",),
        items=80,
        expected=_relabel,
        play=Play(
            steps=(
                Scan("list_cards", "cards"),
                ForEach(
                    "update_card",
                    "[it for it in cards if old in it['labels']]",
                    {
                        "card_id": "it['id']",
                        "labels": "[label for label in it['labels'] if label != old]"
                        " + ([] if new in it['labels'] else [new])",
                    },
                    into="relabelled",
                ),
            ),
            report={"relabelled": "len(relabelled)"},
            answer='Renamed the label "{old}" to "{new}" on {relabelled} cards.',
        ),
    ),
    Task(
        app="kanban",
        slug="enforce-wip",
        tier="everyday",
        prompt=(
            "In progress is over its limit. Keep the {limit} cards with the earliest due dates there (cards with no "
            "due date count as latest) and move the rest back to To do."
        ),
        defaults={"limit": 4},
        patterns=(
            r"\bkeep (?:only )?the (?P<limit>\d+) cards? with the earliest due dates?\b.*?\bback to (?:the )?to do",
        ),
        items=60,
        expected=_enforce_wip,
        play=Play(
            steps=(
                Scan("list_cards", "cards"),
                Let(
                    "ranked",
                    "sorted([it for it in cards if it['column'] == 'In progress' and not it['archived']],"
                    " key=lambda it: (it['due'] is None, it['due'] or '', it['id']))",
                ),
                ForEach("update_card", "ranked[limit:]", {"card_id": "it['id']", "column": "'To do'"}, into="moved"),
            ),
            report={"moved": "len(moved)", "kept": "len(ranked) - len(moved)"},
            answer="Kept {kept} cards in In progress and moved {moved} back to To do.",
        ),
    ),
    Task(
        app="kanban",
        slug="reschedule-overdue",
        tier="everyday",
        prompt="Give every card that is overdue (due before {day}) and not in Done a new due date of {new_day}.",
        defaults={"day": "2026-06-01", "new_day": "2026-06-19"},
        patterns=(rf"\boverdue \(due before (?P<day>{DAY})\).*?\bnew due date of (?P<new_day>{DAY})",),
        items=60,
        expected=_reschedule_overdue,
        play=Play(
            steps=(
                Scan("list_cards", "cards"),
                ForEach(
                    "update_card",
                    f"[it for it in cards if {OPEN} and it['due'] is not None and it['due'] < day]",
                    {"card_id": "it['id']", "due": "new_day"},
                    into="rescheduled",
                ),
            ),
            report={"rescheduled": "len(rescheduled)"},
            answer="Gave {rescheduled} overdue open cards a new due date of {new_day}.",
        ),
    ),
    # -- long-horizon --
    Task(
        app="kanban",
        slug="qa-column",
        tier="long",
        prompt=(
            'Set up QA: add a "{column}" column with a WIP limit of {limit}, then move every card in In progress or '
            'Review that is labelled "bug" or "security" into it.'
        ),
        defaults={"column": "QA", "limit": 10},
        patterns=(r"\badd (?:a |an )?[\"'](?P<column>[^\"']+)[\"'] column with a wip limit of (?P<limit>\d+)\b",),
        items=400,
        expected=_qa_column,
        play=Play(
            steps=(
                Scan("list_cards", "cards"),
                Call("create_column", {"name": "column", "wip_limit": "limit"}, into="created"),
                ForEach(
                    "update_card",
                    "[it for it in cards if it['column'] in ('In progress', 'Review') and not it['archived']"
                    " and ('bug' in it['labels'] or 'security' in it['labels'])]",
                    {"card_id": "it['id']", "column": "created['name']"},
                    into="moved",
                ),
            ),
            report={"moved": "len(moved)"},
            answer='Added the "{column}" column (WIP limit {limit}) and moved {moved} bug and security cards into it.',
        ),
    ),
    Task(
        app="kanban",
        slug="quarter-cleanup",
        tier="long",
        prompt=(
            "End-of-quarter clean-up: archive every card in Done that is not archived yet, and delete every Backlog "
            "card that has no due date."
        ),
        patterns=(r"\bend[- ]of[- ]quarter clean[- ]?up\b",),
        items=500,
        expected=_quarter_cleanup,
        play=Play(
            steps=(
                Scan("list_cards", "cards"),
                ForEach(
                    "update_card",
                    "[it for it in cards if it['column'] == 'Done' and not it['archived']]",
                    {"card_id": "it['id']", "archived": "True"},
                    into="archived",
                ),
                ForEach(
                    "delete_card",
                    "[it for it in cards if it['column'] == 'Backlog' and it['due'] is None]",
                    {"card_id": "it['id']"},
                    into="deleted",
                ),
            ),
            report={"archived": "len(archived)", "deleted": "len(deleted)"},
            answer="Archived {archived} Done cards and deleted {deleted} Backlog cards without a due date.",
        ),
    ),
    # -- scaling --
    Task(
        app="kanban",
        slug="tag-open",
        tier="scaling",
        prompt='Add the label "{label}" to every card that is not in Done yet.',
        defaults={"label": "q3"},
        patterns=(
            rf"\badd the (?:label|tag) {LABEL.format('label')} to (?:every|each|all) cards? that is not in done\b",
        ),
        items=50,
        sizes=SCALING_SIZES,
        expected=_tag_open,
        play=Play(
            steps=(
                Scan("list_cards", "cards"),
                ForEach(
                    "update_card",
                    f"[it for it in cards if {OPEN} and label not in it['labels']]",
                    {"card_id": "it['id']", "labels": "it['labels'] + [label]"},
                    into="tagged",
                ),
            ),
            report={"tagged": "len(tagged)"},
            answer='Added the label "{label}" to {tagged} cards that are not in Done yet.',
        ),
    ),
]
