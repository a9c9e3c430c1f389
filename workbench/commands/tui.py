"""The terminal workbench as a command: ``workbench`` with no command, ``workbench replay`` and ``serve``'s check.

Everything the first screen needs is checked here before it is drawn (an unknown model or arm, a missing key,
a bad config: one line and exit 2); the store, when it opens cleanly, is opened behind the first screen.
"""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, Any

from workbench.commands.options import arm_choice, open_store, quick_listing
from workbench.signals import exit_code_for

if TYPE_CHECKING:
    from workbench.config import Settings


def preflight(
    *,
    model: str | None,
    arms: str | None,
    base_url: str | None,
    request_limit: int | None,
    otel: bool,
    stream: bool | None = None,
    max_tokens: int | None = None,
) -> tuple[Settings, tuple[str, ...]]:
    """The settings and arms a workbench opens with, checked before it opens: an unknown model or arm, a missing
    key, a config error or tracing without its extra is a one-line error, not a broken screen."""
    from workbench.arm_spec import arm_catalog, choose_arms
    from workbench.config import load_settings
    from workbench.scripted import SCRIPTED_MODELS
    from workbench.share.tracing import apply_otel_flag, resolve_tracing

    names, _, _ = arm_choice(arms, ())
    settings = load_settings(
        model=model, base_url=base_url, request_limit=request_limit, stream=stream, max_tokens=max_tokens
    )
    apply_otel_flag(settings, otel)
    resolve_tracing(settings.otel_endpoint)
    choose_arms(names, arm_catalog(settings))
    if settings.model not in SCRIPTED_MODELS:  # pre-flight: an unknown model or a missing key, before the TUI
        from workbench.models import resolve_model

        resolve_model(settings.model, settings.model_options())
    return settings, names


def opens_cleanly(db: str | None, settings: Settings) -> bool:
    """Whether the database is a current-schema SQLite file that reads without SQLAlchemy and has no fallback
    files waiting for it (the quick listing's check): the TUI then opens the store behind its first screen."""
    return quick_listing(db, settings, limit=1) is not None


def run_tui(
    *,
    db: str | None,
    model: str | None = None,
    arms: str | None = None,
    base_url: str | None = None,
    request_limit: int | None = None,
    stream: bool | None = None,
    max_tokens: int | None = None,
    replay: str | None = None,
    otel: bool = False,
    source: Any = None,
    allow_commands: bool = True,
) -> None:
    """The TUI; ``allow_commands=False`` (a tab of ``workbench serve``) keeps off every entry by which keystrokes
    would start a command or import code."""
    from workbench.tui.app import make_app

    settings, names = preflight(
        model=model, arms=arms, base_url=base_url, request_limit=request_limit, otel=otel, stream=stream,
        max_tokens=max_tokens,
    )  # fmt: skip
    if replay is None and opens_cleanly(db, settings):  # SQLAlchemy and the open wait for the first paint
        store, open_later = None, functools.partial(open_store, db, settings)
    else:  # a new, old, damaged or server database: opened (or refused, one line) before anything shows
        store, open_later = open_store(db, settings), None
    session_id = store.resolve_id(replay) if replay and store is not None else None
    app = make_app(
        store=store, open_store=open_later, model=settings.model, settings=settings, replay=session_id,
        arms=names, source=source, allow_commands=allow_commands,
    )  # fmt: skip
    app.run()
    if open_later is not None and app.store is not None:
        app.store.close()  # opened behind the first screen, on the app's thread: the command's close misses it
    if app.stopped_by is not None:  # SIGTERM or SIGHUP (a closed terminal): 143 / 129
        sys.exit(exit_code_for(app.stopped_by))
