"""The key bar rebuilt on every bindings change keeps no removed keys alive (Textualize/textual#6666)."""

from __future__ import annotations

from tests.support.tui_helpers import wait_for
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.widgets.footer import Footer


def compact_watchers(footer: Footer) -> list[tuple[object, object]]:
    return getattr(footer, "__watchers", {}).get("compact", [])


async def test_rebuilding_the_footer_releases_the_keys_it_removed(store: Store) -> None:
    app = make_app(store=store)
    async with app.run_test(size=(120, 40)) as pilot:
        footer = app.screen.query_one(Footer)
        await wait_for(pilot, lambda: bool(compact_watchers(footer)), what="the footer's keys")
        for _ in range(10):  # as a run starting and ending does: the screen's bindings change, the keys are rebuilt
            before = {id(key) for key in footer.children}
            app.screen.refresh_bindings()
            await wait_for(pilot, lambda old=before: not old & {id(key) for key in footer.children}, what="new keys")
            await pilot.pause()
        keys = {id(key) for key in footer.children}
        watchers = [id(watcher) for watcher, _ in compact_watchers(footer)]
        assert keys and watchers and set(watchers) <= keys and len(watchers) == len(set(watchers))
