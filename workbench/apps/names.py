"""The names of the demo apps and task tiers, importable without loading the apps themselves."""

from __future__ import annotations

from typing import Literal

APP_NAMES: tuple[str, ...] = ("cart", "calendar", "chatroom", "kanban", "inventory")
"""The demo apps, in display order (``apps.APPS`` holds their classes under these names)."""

Tier = Literal["everyday", "long", "scaling"]
TIERS: tuple[Tier, ...] = ("everyday", "long", "scaling")

DEFAULT_PAGE_SIZE = 50
"""Records per page of the demo apps' list tools, unless a command or the config says otherwise."""
