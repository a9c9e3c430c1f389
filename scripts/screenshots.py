"""Write SVG screenshots of the workbench's screens into docs/screenshots/, from the real app.

    python scripts/screenshots.py [--out docs/screenshots] [--db PATH] [--theme textual-light] [--png]

It runs a real comparison on the offline ``scripted:paced`` model (the one built-in task picked from
the form, as a person would), photographs it mid-run and finished, then replays the stored session and
opens a call in full, the sessions screen, the snippet inspector and the help; last, a small bench
sweep for the bench screen. Nothing here is mocked; figures such as wall time are whatever this
machine measured. ``--png`` also renders each SVG to PNG (needs cairosvg) with an installed
monospace font, since the SVG names Fira Code, which a machine may not have.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual.pilot import Pilot
from textual.widgets import TextArea

from workbench.bench import Sweep, plan
from workbench.store import Store
from workbench.tui.app import WorkbenchApp, make_app
from workbench.tui.screens.bench import BenchScreen
from workbench.tui.screens.compare import CompareScreen, ComparisonScreen
from workbench.tui.screens.help import HelpScreen
from workbench.tui.screens.inspector import InspectorScreen
from workbench.tui.screens.replay import ReplayScreen
from workbench.tui.screens.sessions import SessionsScreen
from workbench.tui.widgets.run_form import RunForm

WIDE = (160, 48)
NARROW = (100, 56)
SMALL = (80, 24)
"""The smallest terminal the workbench is made for: each screen is photographed there too (``*-80x24.svg``)."""
LARGE = (180, 50)
TASK = "cart/remove-expensive"


async def until(pilot: Pilot, condition: Callable[[], bool], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the app did not get there in time")
        await pilot.pause(0.05)


async def settle(pilot: Pilot) -> None:
    screen = pilot.app.screen
    if isinstance(screen, ComparisonScreen):
        await until(pilot, lambda: screen.feed.idle)
    for _ in range(4):
        await pilot.pause(0.05)


THEME = "textual-dark"
PNG = False


def save(app: WorkbenchApp, out: Path, name: str) -> None:
    path = out / f"{name}.svg"
    svg = app.export_screenshot(title="Code Mode Workbench")
    path.write_text(svg)
    print(f"wrote {path}")
    if PNG:
        import re

        import cairosvg  # type: ignore[import-untyped]

        svg = re.sub(r'font-family:[^;"]*', "font-family: DejaVu Sans Mono", svg)
        cairosvg.svg2png(bytestring=svg.encode(), write_to=str(path.with_suffix(".png")), output_width=1600)


def themed(app: WorkbenchApp) -> WorkbenchApp:
    app.theme = THEME
    return app


def with_task(app: WorkbenchApp) -> CompareScreen:
    """The compare screen, themed, with the built-in task picked as a person would."""
    themed(app)
    screen = app.screen
    assert isinstance(screen, CompareScreen)
    screen.query_one("#prompt", TextArea).cursor_blink = False
    screen.query_one(RunForm).choose_task(TASK)
    return screen


async def finished(pilot: Pilot, screen: CompareScreen) -> None:
    await until(pilot, lambda: screen.last_comparison is not None)
    await settle(pilot)


async def live(store: Store, out: Path) -> str:
    """Pick the task, run it, photograph it mid-run and finished; returns the session id."""
    app = make_app(store=store, model="scripted:paced")
    async with app.run_test(size=WIDE) as pilot:
        screen = with_task(app)
        await pilot.pause()
        save(app, out, "compare-ready")
        await pilot.press("ctrl+r")
        await until(pilot, lambda: screen.panes["code"].summary.inner_calls >= 12)
        await settle(pilot)
        save(app, out, "compare-mid-run")
        await finished(pilot, screen)
        save(app, out, "compare-finished")
        assert screen.last_comparison is not None
        return screen.last_comparison.session_id


async def sizes(store: Store, out: Path) -> None:
    """Three arms (tool, code, code-eager) side by side at 180x50, mid-run and finished."""
    app = make_app(store=store, model="scripted:paced", arms=["tool", "code", "code-eager"])
    async with app.run_test(size=LARGE) as pilot:
        screen = with_task(app)
        await pilot.pause()  # a key pressed before the first screen is up is lost
        await pilot.press("ctrl+r")
        await until(pilot, lambda: "code-eager" in screen.panes and screen.panes["code-eager"].summary.inner_calls >= 8)
        await settle(pilot)
        save(app, out, "compare-three-arms-mid-run")
        await finished(pilot, screen)
        save(app, out, "compare-three-arms")


async def stored(store: Store, session_id: str, out: Path) -> None:
    app = make_app(store=store, replay=session_id, autoplay=False)
    async with app.run_test(size=WIDE) as pilot:
        themed(app)
        replay = app.screen
        assert isinstance(replay, ReplayScreen)
        await until(pilot, lambda: replay.clock is not None)
        assert replay.clock is not None
        replay.feed.put_many(replay.clock.step(replay.clock.total * 2 // 3))
        await settle(pilot)
        save(app, out, "replay-paused")
        await pilot.press("end")
        await settle(pilot)
        transcript = replay.panes["tool"].transcript
        transcript.focus()
        await pilot.press("up", "up", "up", "enter")
        await settle(pilot)
        save(app, out, "call-expanded")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await pilot.press("down", "down", "down", "down")
        await settle(pilot)
        save(app, out, "inspector")
        await pilot.press("escape", "ctrl+o")
        await until(pilot, lambda: isinstance(app.screen, SessionsScreen) and bool(app.screen.sessions))
        await settle(pilot)
        save(app, out, "sessions")
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settle(pilot)
        save(app, out, "help")

    app = make_app(store=store, replay=session_id, autoplay=False)
    async with app.run_test(size=NARROW) as pilot:
        themed(app)
        replay = app.screen
        assert isinstance(replay, ReplayScreen)
        await until(pilot, lambda: replay.clock is not None)
        await pilot.press("end")
        await settle(pilot)
        save(app, out, "compare-narrow")


async def bench(store: Store, out: Path) -> None:
    """A small sweep (everyday tasks of one app, and one scaling rule at small sizes), then the bench screen
    (its report, and at the wide size its per-case matrix)."""
    cases = [case for case in plan("scaling") if case.items <= 20 and case.app == "cart"]
    cases += plan("everyday", app="cart", items=20)
    await Sweep(cases, store=store).run()
    for size, name in ((WIDE, "bench"), (SMALL, "bench-80x24")):
        app = make_app(store=store)
        async with app.run_test(size=size) as pilot:
            themed(app)
            await pilot.press("f3")
            await until(pilot, lambda app=app: isinstance(app.screen, BenchScreen) and app.screen.report is not None)
            await settle(pilot)
            if size == SMALL:
                await pilot.press("m")  # the chart comes into view
                await settle(pilot)
            save(app, out, name)
            if size == WIDE:
                await pilot.press("c")  # the sweep's per-case matrix
                await settle(pilot)
                save(app, out, "bench-cases")


async def small(store: Store, session_id: str, out: Path) -> None:
    """The finished comparison, the sessions list and the inspector at 80x24."""
    app = make_app(store=store, replay=session_id, autoplay=False)
    async with app.run_test(size=SMALL) as pilot:
        themed(app)
        replay = app.screen
        assert isinstance(replay, ReplayScreen)
        await until(pilot, lambda: replay.clock is not None)
        await pilot.press("end")
        await settle(pilot)
        save(app, out, "compare-80x24")
        await pilot.press("ctrl+t")  # the roster keeps both arms in sight: expand the code arm's pane
        await settle(pilot)
        save(app, out, "compare-80x24-code")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await pilot.press("down", "down", "down")
        await settle(pilot)
        save(app, out, "inspector-80x24")
        await pilot.press("escape", "ctrl+o")
        await until(pilot, lambda: isinstance(app.screen, SessionsScreen) and bool(app.screen.sessions))
        await settle(pilot)
        save(app, out, "sessions-80x24")


async def main() -> None:
    global THEME, PNG
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "screenshots")
    parser.add_argument("--db", type=Path, help="session database to use (default: a temporary one)")
    parser.add_argument("--theme", default=THEME, help="a Textual theme, such as textual-light")
    parser.add_argument("--png", action="store_true", help="also render each screenshot to PNG (cairosvg)")
    args = parser.parse_args()
    THEME, PNG = args.theme, args.png
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        if args.db is None:
            os.environ["HOME"] = folder  # titles name the database as a person's own would be: ~/screenshots.db
        store = Store(args.db or Path(folder) / "screenshots.db")
        session_id = await live(store, args.out)
        await stored(store, session_id, args.out)
        await small(store, session_id, args.out)
        await sizes(store, args.out)
        await bench(store, args.out)


if __name__ == "__main__":
    asyncio.run(main())
