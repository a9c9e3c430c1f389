"""The built-in demo apps as an app source: each arm gets its own in-memory instance, a copy of the app seeded once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import cached_property

from workbench.apps import DemoApp, Snapshot
from workbench.sources.base import AppInstance, AppSource


@dataclass(frozen=True)
class DemoSource(AppSource):
    app: type[DemoApp]
    items: int
    seed: int
    page_size: int

    @property
    def label(self) -> str:  # type: ignore[override]
        return self.app.name

    @cached_property
    def seeded(self) -> DemoApp:
        """The app as seeded, built once per source (a comparison's :class:`workbench.runner.Setup` holds one):
        each arm's instance, and the expected end state's, is a copy of it. Never changed itself."""
        return self.app(self.items, self.seed, page_size=self.page_size)

    def build(self) -> DemoApp:
        """A fresh instance of the seeded app, independent of every other."""
        return self.seeded.copy()

    @asynccontextmanager
    async def open(self, arm: str) -> AsyncIterator[AppInstance]:
        yield demo_instance(self.build())


def demo_instance(app: DemoApp) -> AppInstance:
    """An arm's view of a demo app instance."""
    from workbench.arms import instructions_for

    async def snapshot() -> Snapshot:
        return app.snapshot()

    return AppInstance(app.toolset(), app.tool_names(), instructions_for(app), snapshot, app.read_only_tool_names())
