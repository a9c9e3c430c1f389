"""The team chat's built-in tasks: 10 everyday, 2 long-horizon, 1 scaling rule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.apps.base import NOW, DemoApp
from workbench.apps.catalog import DAY, NAME, SCALING_SIZES, add_record
from workbench.apps.fields import minutes
from workbench.apps.tasks import Call, ForEach, Let, Play, Scan, Task

CHANNEL = r"[a-z0-9][a-z0-9-]*"
QUOTED = r"\"(?P<{}>[^\"]+)\""


def _messages(app: DemoApp) -> list[Any]:
    return list(app.rows["messages"].values())


def _channel(name: str) -> str:
    return name.lower().lstrip("#")


def _post(app: DemoApp, channel: str, author: str, text: str) -> None:
    add_record(app, "messages", channel=channel, author=author, text=text, sent_at=minutes(NOW))


# -- references ----------------------------------------------------------------------------------


def _pin_popular(app: DemoApp, p: Mapping[str, Any]) -> None:
    for message in _messages(app):
        if message.channel == _channel(p["channel"]) and message.reactions >= p["reactions"]:
            message.pinned = True


def _clean_up_channel(app: DemoApp, p: Mapping[str, Any]) -> None:
    for message in _messages(app):
        if message.channel == _channel(p["channel"]) and not message.pinned and message.sent_at < p["day"]:
            del app.rows["messages"][message.id]


def _unpin_old(app: DemoApp, p: Mapping[str, Any]) -> None:
    for message in _messages(app):
        if message.pinned and message.sent_at < p["day"]:
            message.pinned = False


def _delete_from_person(app: DemoApp, p: Mapping[str, Any]) -> None:
    for message in _messages(app):
        if message.author.lower() == p["person"].lower():
            del app.rows["messages"][message.id]


def _answer_questions(app: DemoApp, p: Mapping[str, Any]) -> None:
    channel = _channel(p["channel"])
    questions = [
        m for m in _messages(app) if m.channel == channel and m.sent_at >= p["day"] and m.text.rstrip().endswith("?")
    ]
    for question in questions:
        _post(app, channel, p["person"], f"@{question.author} {p['reply']}")


def _archive_quiet(app: DemoApp, p: Mapping[str, Any]) -> None:
    for channel in app.rows["channels"].values():
        recent = sum(1 for m in _messages(app) if m.channel == channel.name and m.sent_at >= p["day"])
        if not channel.archived and recent < p["count"]:
            channel.archived = True


def _replace_word(app: DemoApp, p: Mapping[str, Any]) -> None:
    for message in _messages(app):
        if p["old"] in message.text:
            message.text = message.text.replace(p["old"], p["new"])
            message.edited = True


def _delete_repeats(app: DemoApp, p: Mapping[str, Any]) -> None:
    in_channel = [m for m in _messages(app) if m.channel == _channel(p["channel"])]
    seen: set[str] = set()
    for message in sorted(in_channel, key=lambda m: (m.sent_at, m.id)):
        if message.text in seen:
            del app.rows["messages"][message.id]
        seen.add(message.text)


def _announce(app: DemoApp, p: Mapping[str, Any]) -> None:
    for channel in list(app.rows["channels"].values()):
        if not channel.archived:
            _post(app, channel.name, p["person"], p["text"])


def _redact(app: DemoApp, p: Mapping[str, Any]) -> None:
    for message in _messages(app):
        if p["word"].lower() in message.text.lower() and message.text != p["replacement"]:
            message.text = p["replacement"]
            message.edited = True


def _retire_channel(app: DemoApp, p: Mapping[str, Any]) -> None:
    name = _channel(p["channel"])
    for message in _messages(app):
        if message.channel == name:
            if message.pinned:
                _post(app, _channel(p["target"]), message.author, message.text)
            del app.rows["messages"][message.id]
    for channel in list(app.rows["channels"].values()):
        if channel.name == name:
            del app.rows["channels"][channel.id]


def _retention(app: DemoApp, p: Mapping[str, Any]) -> None:
    for message in _messages(app):
        if message.channel != _channel(p["keep"]) and not message.pinned and message.sent_at < p["day"]:
            del app.rows["messages"][message.id]


def _prune_unreacted(app: DemoApp, p: Mapping[str, Any]) -> None:
    for message in _messages(app):
        if message.reactions == 0 and not message.pinned:
            del app.rows["messages"][message.id]


# -- the catalog ---------------------------------------------------------------------------------

TASKS = [
    Task(
        app="chatroom",
        slug="pin-popular",
        tier="everyday",
        prompt="Pin every message in #{channel} that has at least {reactions} reactions.",
        defaults={"channel": "general", "reactions": 5},
        patterns=(
            r"\bpin\b.*?\bmessages?\b.*?\bin #?(?P<channel>[a-z0-9-]+)\b.*?\b(?:at least|minimum of|min\.?) "
            r"(?P<reactions>\d+) reactions?",
            r"\bpin\b.*?\bmessages?\b.*?\bin #?(?P<channel>[a-z0-9-]+)\b.*?\b(?P<reactions>\d+) (?:or more|\+) "
            r"reactions?",
        ),
        items=150,
        expected=_pin_popular,
        play=Play(
            steps=(
                Scan("list_messages", "messages"),
                Let("channel_name", "channel.lower().lstrip('#')"),
                ForEach(
                    "update_message",
                    "[it for it in messages if it['channel'] == channel_name and it['reactions'] >= reactions"
                    " and not it['pinned']]",
                    {"message_id": "it['id']", "pinned": "True"},
                    into="pinned",
                ),
            ),
            report={"pinned": "len(pinned)"},
            answer="Pinned {pinned} messages in #{channel} with at least {reactions} reactions.",
        ),
    ),
    Task(
        app="chatroom",
        slug="clean-up-channel",
        tier="everyday",
        prompt="Clean up #{channel}: delete every message sent before {day} that is not pinned.",
        defaults={"channel": "random", "day": "2026-05-15"},
        patterns=(
            r"#(?P<channel>[a-z0-9-]+)\W+(?:delete|remove)\b.*?\bmessages?\b.*?\bbefore (?P<day>\d{4}-\d{2}-\d{2})",
            r"\b(?:delete|remove)\b.*?\bmessages?\b.*?\bin #?(?P<channel>[a-z0-9-]+)\b.*?\bbefore "
            r"(?P<day>\d{4}-\d{2}-\d{2})",
        ),
        items=150,
        expected=_clean_up_channel,
        play=Play(
            steps=(
                Scan("list_messages", "messages"),
                Let("channel_name", "channel.lower().lstrip('#')"),
                Let(
                    "targets",
                    "[it for it in messages if it['channel'] == channel_name and not it['pinned']"
                    " and it['sent_at'] < day]",
                ),
                ForEach("delete_message", "targets", {"message_id": "it['id']"}, into="deleted"),
            ),
            report={
                "deleted": "len(deleted)",
                "kept": "len([it for it in messages if it['channel'] == channel_name]) - len(deleted)",
            },
            answer=(
                "Deleted {deleted} unpinned messages sent before {day} from #{channel}; {kept} messages remain there."
            ),
        ),
    ),
    Task(
        app="chatroom",
        slug="unpin-old",
        tier="everyday",
        prompt="Unpin every message that was sent before {day}.",
        defaults={"day": "2026-05-25"},
        patterns=(rf"\bunpin\b.*?\bmessages?\b.*?\bbefore (?P<day>{DAY})",),
        items=300,
        expected=_unpin_old,
        play=Play(
            steps=(
                Scan("list_messages", "messages"),
                ForEach(
                    "update_message",
                    "[it for it in messages if it['pinned'] and it['sent_at'] < day]",
                    {"message_id": "it['id']", "pinned": "False"},
                    into="unpinned",
                ),
            ),
            report={"unpinned": "len(unpinned)"},
            answer="Unpinned {unpinned} messages sent before {day}.",
        ),
    ),
    Task(
        app="chatroom",
        slug="delete-from-person",
        tier="everyday",
        prompt="Delete every message posted by {person}.",
        defaults={"person": "Farid Haddad"},
        patterns=(rf"\b(?:delete|remove)\b.*?\bmessages?\b.*?\b(?:posted|sent|written) by (?P<person>{NAME})[.!]?$",),
        items=150,
        expected=_delete_from_person,
        play=Play(
            steps=(
                Scan("list_messages", "messages"),
                ForEach(
                    "delete_message",
                    "[it for it in messages if it['author'].lower() == person.lower()]",
                    {"message_id": "it['id']"},
                    into="deleted",
                ),
            ),
            report={"deleted": "len(deleted)"},
            answer="Deleted {deleted} messages posted by {person}.",
        ),
    ),
    Task(
        app="chatroom",
        slug="answer-questions",
        tier="everyday",
        prompt=(
            'As {person}, reply in #{channel} to every question asked there since {day} (messages ending in "?") '
            'with "@<author> {reply}".'
        ),
        defaults={"person": "Ada Okafor", "channel": "general", "day": "2026-05-20", "reply": "thanks, I'm on it!"},
        patterns=(
            rf"^as (?P<person>{NAME}),? reply in #(?P<channel>{CHANNEL})\b.*?\bsince (?P<day>{DAY})\b.*?"
            rf"\"@<author> (?P<reply>[^\"]+)\"",
        ),
        items=150,
        expected=_answer_questions,
        play=Play(
            steps=(
                Scan("list_messages", "messages"),
                Let("channel_name", "channel.lower().lstrip('#')"),
                ForEach(
                    "create_message",
                    "[it for it in messages if it['channel'] == channel_name and it['sent_at'] >= day"
                    " and it['text'].rstrip().endswith('?')]",
                    {"channel": "channel_name", "author": "person", "text": "'@' + it['author'] + ' ' + reply"},
                    into="replies",
                ),
            ),
            report={"replies": "len(replies)"},
            answer="Replied as {person} to {replies} questions asked in #{channel} since {day}.",
        ),
    ),
    Task(
        app="chatroom",
        slug="archive-quiet",
        tier="everyday",
        prompt="Archive every channel that has had fewer than {count} messages since {day}.",
        defaults={"count": 5, "day": "2026-05-20"},
        patterns=(rf"\barchive\b.*?\bchannels?\b.*?\bfewer than (?P<count>\d+) messages?\b.*?\bsince (?P<day>{DAY})",),
        items=240,
        expected=_archive_quiet,
        play=Play(
            steps=(
                Scan("list_messages", "messages"),
                Scan("list_channels", "channels"),
                Let(
                    "recent",
                    "{c['name']: len([m for m in messages if m['channel'] == c['name'] and m['sent_at'] >= day])"
                    " for c in channels}",
                ),
                ForEach(
                    "update_channel",
                    "[it for it in channels if not it['archived'] and recent[it['name']] < count]",
                    {"channel_id": "it['id']", "archived": "True"},
                    into="archived",
                ),
            ),
            report={"archived": "len(archived)", "names": "', '.join('#' + it['name'] for it in archived)"},
            answer="Archived {archived} quiet channels: {names}.",
        ),
    ),
    Task(
        app="chatroom",
        slug="replace-word",
        tier="everyday",
        prompt='Replace "{old}" with "{new}" in every message that contains it.',
        defaults={"old": "Thursday", "new": "Friday"},
        patterns=(rf"\breplace {QUOTED.format('old')} with {QUOTED.format('new')} in (?:every|each|all)\b",),
        items=200,
        expected=_replace_word,
        play=Play(
            steps=(
                Scan("list_messages", "messages"),
                ForEach(
                    "update_message",
                    "[it for it in messages if old in it['text']]",
                    {"message_id": "it['id']", "text": "it['text'].replace(old, new)"},
                    into="edited",
                ),
            ),
            report={"edited": "len(edited)"},
            answer='Replaced "{old}" with "{new}" in {edited} messages.',
        ),
    ),
    Task(
        app="chatroom",
        slug="delete-repeats",
        tier="everyday",
        prompt=(
            "Clean up repeats in #{channel}: when the same text was posted there more than once, delete every copy "
            "except the earliest."
        ),
        defaults={"channel": "general"},
        patterns=(rf"\brepeat\w*\b.*?\bin #(?P<channel>{CHANNEL})\b.*?\bsame text\b",),
        items=40,
        expected=_delete_repeats,
        play=Play(
            steps=(
                Scan("list_messages", "messages"),
                Let("mine", "[it for it in messages if it['channel'] == channel.lower().lstrip('#')]"),
                ForEach(
                    "delete_message",
                    "[it for it in mine if any(other['text'] == it['text']"
                    " and other['sent_at'] + other['id'] < it['sent_at'] + it['id'] for other in mine)]",
                    {"message_id": "it['id']"},
                    into="deleted",
                ),
            ),
            report={"deleted": "len(deleted)", "kept": "len(mine) - len(deleted)"},
            answer="Deleted {deleted} repeated messages in #{channel}; {kept} messages remain there.",
        ),
    ),
    Task(
        app="chatroom",
        slug="announce",
        tier="everyday",
        prompt='Post "{text}" in every channel that is not archived, as {person}.',
        defaults={"text": "The office is closed on Friday for maintenance.", "person": "Ada Okafor"},
        patterns=(
            rf"\bpost {QUOTED.format('text')} in (?:every|each|all)\b.*?\bchannels?\b.*?\bas (?P<person>{NAME})[.!]?$",
        ),
        items=240,
        expected=_announce,
        play=Play(
            steps=(
                Scan("list_channels", "channels"),
                ForEach(
                    "create_message",
                    "[it for it in channels if not it['archived']]",
                    {"channel": "it['name']", "author": "person", "text": "text"},
                    into="posted",
                ),
            ),
            report={"posted": "len(posted)"},
            answer="Posted the announcement as {person} in {posted} channels.",
        ),
    ),
    Task(
        app="chatroom",
        slug="redact",
        tier="everyday",
        prompt='Replace the text of every message that mentions "{word}" with "{replacement}".',
        defaults={"word": "password", "replacement": "[removed by an admin]"},
        patterns=(
            rf"\breplace the text of (?:every|each|all)\b.*?\bmessages?\b.*?\bmention\w* {QUOTED.format('word')} with "
            rf"{QUOTED.format('replacement')}",
        ),
        items=200,
        expected=_redact,
        play=Play(
            steps=(
                Scan("list_messages", "messages"),
                ForEach(
                    "update_message",
                    "[it for it in messages if word.lower() in it['text'].lower() and it['text'] != replacement]",
                    {"message_id": "it['id']", "text": "replacement"},
                    into="redacted",
                ),
            ),
            report={"redacted": "len(redacted)"},
            answer='Replaced the text of {redacted} messages that mentioned "{word}".',
        ),
    ),
    # -- long-horizon --
    Task(
        app="chatroom",
        slug="retire-channel",
        tier="long",
        prompt=(
            "We're retiring #{channel}: repost each of its pinned messages in #{target} (same author and text), "
            "delete all of its messages, then delete the channel."
        ),
        defaults={"channel": "random", "target": "general"},
        patterns=(rf"\bretir\w+ #(?P<channel>{CHANNEL})\b.*?\bin #(?P<target>{CHANNEL})\b.*?\bdelete\b",),
        items=200,
        expected=_retire_channel,
        play=Play(
            steps=(
                Scan("list_messages", "messages"),
                Scan("list_channels", "channels"),
                Let("name", "channel.lower().lstrip('#')"),
                Let("mine", "[it for it in messages if it['channel'] == name]"),
                ForEach(
                    "create_message",
                    "[it for it in mine if it['pinned']]",
                    {"channel": "target.lower().lstrip('#')", "author": "it['author']", "text": "it['text']"},
                    into="reposted",
                ),
                ForEach("delete_message", "mine", {"message_id": "it['id']"}, into="deleted"),
                Call("delete_channel", {"channel_id": "[it['id'] for it in channels if it['name'] == name][0]"}),
            ),
            report={"reposted": "len(reposted)", "deleted": "len(deleted)"},
            answer=(
                "Reposted {reposted} pinned messages in #{target}, deleted the {deleted} messages of #{channel} "
                "and deleted the channel."
            ),
        ),
    ),
    Task(
        app="chatroom",
        slug="retention",
        tier="long",
        prompt=(
            "Apply our retention policy: delete every unpinned message sent before {day} in every channel except "
            "#{keep}."
        ),
        defaults={"day": "2026-05-10", "keep": "general"},
        patterns=(rf"\bretention\b.*?\bbefore (?P<day>{DAY})\b.*?\bexcept #(?P<keep>{CHANNEL})",),
        items=500,
        expected=_retention,
        play=Play(
            steps=(
                Scan("list_messages", "messages"),
                ForEach(
                    "delete_message",
                    "[it for it in messages if it['channel'] != keep.lower().lstrip('#') and not it['pinned']"
                    " and it['sent_at'] < day]",
                    {"message_id": "it['id']"},
                    into="deleted",
                ),
            ),
            report={"deleted": "len(deleted)", "remaining": "len(messages) - len(deleted)"},
            answer=(
                "Deleted {deleted} unpinned messages sent before {day} outside #{keep}; {remaining} messages remain."
            ),
        ),
    ),
    # -- scaling --
    Task(
        app="chatroom",
        slug="prune-unreacted",
        tier="scaling",
        prompt="Delete every message that got no reactions and is not pinned.",
        patterns=(r"\b(?:delete|remove)\b.*?\bmessages?\b.*?\bno reactions\b",),
        items=50,
        sizes=SCALING_SIZES,
        expected=_prune_unreacted,
        play=Play(
            steps=(
                Scan("list_messages", "messages"),
                ForEach(
                    "delete_message",
                    "[it for it in messages if it['reactions'] == 0 and not it['pinned']]",
                    {"message_id": "it['id']"},
                    into="deleted",
                ),
            ),
            report={"deleted": "len(deleted)", "remaining": "len(messages) - len(deleted)"},
            answer="Deleted {deleted} unpinned messages without reactions; {remaining} messages remain.",
        ),
    ),
]
