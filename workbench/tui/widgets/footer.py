"""Textual's footer without its leak: every screen's key bar.

Textual's ``Footer`` rebuilds its keys on every bindings change (a run starting or ending, a focus move), and
each ``FooterKey`` binds ``compact`` to the footer (``data_bind``), which stores ``(key, callback)`` on the
footer. Textual prunes such entries only when ``compact`` changes, which it never does, so every rebuild kept
its ~35 removed keys alive with their styles and caches: ~0.8 MiB per comparison in one TUI session
(Textual 8.2, upstream issue Textualize/textual#6666). This footer drops the entries of removed keys after
each rebuild.
"""

from __future__ import annotations

from textual.widgets import Footer as TextualFooter


class Footer(TextualFooter):
    async def recompose(self) -> None:
        await super().recompose()
        release_removed_watchers(self)


def release_removed_watchers(node: object) -> None:
    """Forget the watchers on ``node`` that belong to nodes already removed from the DOM.

    Textual keeps them in the node's ``__watchers`` (name -> list of (watcher, callback)); there is no
    public API to drop them (Textualize/textual#6666).
    """
    watchers: dict[str, list[tuple[object, object]]] = getattr(node, "__watchers", {})
    for entries in watchers.values():
        entries[:] = [entry for entry in entries if not _removed(entry[0])]


def _removed(watcher: object) -> bool:
    return bool(getattr(watcher, "_closing", False) or getattr(watcher, "_closed", False))
