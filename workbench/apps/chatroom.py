"""Team chat room: channels and the messages posted in them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, time, timedelta
from typing import Annotated, Any

from pydantic import BaseModel, Field

from workbench.apps import tasks_chatroom
from workbench.apps.base import NOW, TODAY, DemoApp, Record, retry
from workbench.apps.data import CHANNELS, CHAT_LINES, PEOPLE
from workbench.apps.fields import IsoDate, IsoDateTime, minutes

ChannelName = Annotated[
    str, Field(pattern=r"^[a-z0-9][a-z0-9-]{0,39}$", description="Lowercase name without '#', like 'general'")
]
Text = Annotated[str, Field(min_length=1, max_length=4000)]
Author = Annotated[str, Field(min_length=1, max_length=80)]
Topic = Annotated[str, Field(max_length=200)]


class Message(Record):
    """One chat message. ``channel`` is the channel's name (without '#')."""

    channel: ChannelName
    author: Author
    text: Text
    sent_at: IsoDateTime
    pinned: bool = False
    reactions: Annotated[int, Field(ge=0)] = 0
    edited: bool = False


class MessagePage(BaseModel):
    """One page of messages."""

    items: list[Message]
    page: int
    page_size: int
    total: int
    has_more: bool


class Channel(Record):
    """A chat channel; messages refer to it by name."""

    name: ChannelName
    topic: Topic = ""
    private: bool = False
    archived: bool = False
    created_on: IsoDate


class ChannelPage(BaseModel):
    """One page of channels."""

    items: list[Channel]
    page: int
    page_size: int
    total: int
    has_more: bool


class Chatroom(DemoApp):
    name = "chatroom"
    title = "Team chat"
    about = "a team chat workspace: messages (channel, author, text, time, pins, reactions) and channels"
    entities = {"messages": Message, "channels": Channel}
    id_prefixes = {"messages": "msg", "channels": "chan"}
    default_items = 50

    def populate(self, items: int) -> None:
        channels = CHANNELS[: max(3, min(len(CHANNELS), items // 20))]
        for number in range(items):
            self.add("messages", Message(id=self.new_id("messages"), **self._message(number, channels)))
        for number, (name, topic) in enumerate(channels):
            rng = self.rng("channel", number)
            self.add(
                "channels",
                Channel(
                    id=self.new_id("channels"),
                    name=name,
                    topic=topic,
                    private=name in {"hiring", "incidents"},
                    archived=False,
                    created_on=(TODAY - timedelta(days=rng.randint(60, 900))).isoformat(),
                ),
            )

    def _message(self, number: int, channels: tuple[tuple[str, str], ...]) -> dict[str, Any]:
        rng = self.rng("message", number)
        day = TODAY - timedelta(days=rng.randint(0, 30))
        sent_at = datetime.combine(day, time(rng.randint(8, 18), rng.randint(0, 59)))
        reactions = rng.choices((0, 1, 2, 3, 5, 8, 12), weights=(45, 18, 12, 9, 8, 5, 3))[0]
        fields = {
            "author": rng.choice(PEOPLE[:14]),
            "text": rng.choice(CHAT_LINES),
            "sent_at": minutes(sent_at),
            "pinned": rng.random() < 0.05,
            "reactions": reactions,
            "edited": rng.random() < 0.08,
        }
        # The channel comes last: it depends on how many channels there are, the rest of the message does not.
        weights = [4 if index == 0 else 2 if index < 3 else 1 for index in range(len(channels))]
        fields["channel"] = rng.choices([name for name, _ in channels], weights=weights)[0]
        return fields

    def _channel(self, name: str) -> Channel:
        for channel in self.rows["channels"].values():
            if channel.name == name:
                return channel
        names = ", ".join(c.name for c in self.rows["channels"].values())
        raise retry(f"no channel named {name!r}; channels are: {names}")

    def tools(self) -> list[Callable[..., Any]]:
        async def list_messages(page: int = 1) -> MessagePage:
            """List the messages of every channel, one page at a time, in the order they were stored."""
            return self.page("messages", page, MessagePage)

        async def get_message(message_id: str) -> Message:
            """Get one message by id."""
            return self.get("messages", message_id)

        async def create_message(channel: ChannelName, author: Author, text: Text) -> Message:
            """Post one message to a channel (by name, without '#'). Archived channels cannot be posted to."""
            if self._channel(channel).archived:
                raise retry(f"channel #{channel} is archived; unarchive it first")
            return self.create("messages", channel=channel, author=author, text=text, sent_at=minutes(NOW))

        async def update_message(message_id: str, text: Text | None = None, pinned: bool | None = None) -> Message:
            """Edit one message's text (marks it edited) or pin/unpin it. Omitted fields stay as they are."""
            return self.update(
                "messages", message_id, text=text, pinned=pinned, edited=True if text is not None else None
            )

        async def delete_message(message_id: str) -> Message:
            """Delete one message (takes one id). Returns the deleted message."""
            return self.delete("messages", message_id)

        async def list_channels(page: int = 1) -> ChannelPage:
            """List the channels, one page at a time."""
            return self.page("channels", page, ChannelPage)

        async def get_channel(channel_id: str) -> Channel:
            """Get one channel by id."""
            return self.get("channels", channel_id)

        async def create_channel(name: ChannelName, topic: Topic = "", private: bool = False) -> Channel:
            """Create one channel; its name must be new."""
            if any(c.name == name for c in self.rows["channels"].values()):
                raise retry(f"a channel named #{name} already exists")
            return self.create("channels", name=name, topic=topic, private=private, created_on=TODAY.isoformat())

        async def update_channel(
            channel_id: str, topic: Topic | None = None, private: bool | None = None, archived: bool | None = None
        ) -> Channel:
            """Change one channel's topic, privacy or archived flag. Omitted fields stay as they are."""
            return self.update("channels", channel_id, topic=topic, private=private, archived=archived)

        async def delete_channel(channel_id: str) -> Channel:
            """Delete one channel. Fails while it still has messages: delete them or archive the channel instead."""
            channel = self.get("channels", channel_id)
            count = sum(1 for message in self.rows["messages"].values() if message.channel == channel.name)
            if count:
                raise retry(f"channel #{channel.name} still has {count} message(s); archive it instead")
            return self.delete("channels", channel_id)

        return [
            list_messages,
            get_message,
            create_message,
            update_message,
            delete_message,
            list_channels,
            get_channel,
            create_channel,
            update_channel,
            delete_channel,
        ]


APP = Chatroom


# -- tasks: the catalog lives in workbench/apps/tasks_chatroom.py --------------------------------------------

TASKS = tasks_chatroom.TASKS
