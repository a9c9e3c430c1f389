"""The TUI's memory over many comparisons in one session: does its RSS reach a plateau?

Not a test: run it and read the figures.

    python benchmarks/tui_memory.py [--runs 100] [--every 10] [--top 0]

Starts the app headless (Textual's Pilot, 160x48, a throw-away database), types the cart task's prompt and
runs it ``--runs`` times on the scripted model, one comparison after another as a user would (ctrl+r, wait
until it finished and painted). Prints the process's RSS (VmRSS) and the live Python objects every ``--every``
runs. With ``--top N`` it traces allocations (tracemalloc) from the first report on and prints the N sites
that grew most by the end: what a run leaves behind. Goal (issue 22): RSS <= 250 MiB after 100 comparisons.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

GOAL_MIB = 250.0
SIZE = (160, 48)
PROMPT = "Remove everything in the cart that costs more than $50 apiece."


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def main(runs: int, every: int, top: int) -> int:
    from textual.widgets import TextArea

    from workbench.store import Store
    from workbench.tui.app import make_app
    from workbench.tui.screens.compare import CompareScreen

    with tempfile.TemporaryDirectory(prefix="workbench-tui-memory-") as scratch:
        store = Store(Path(scratch) / "sessions.db")
        app = make_app(store=store)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, CompareScreen)
            screen.query_one("#prompt", TextArea).load_text(PROMPT)
            await pilot.pause()
            gc.collect()
            print(f"{'runs':>5} {'RSS MiB':>8} {'objects':>9} {'s/run':>6}   (load {os.getloadavg()[0]:.2f})")
            print(f"{0:>5} {rss_mib():8.1f} {len(gc.get_objects()):>9,}")
            snapshot = None
            started = time.perf_counter()
            for number in range(1, runs + 1):
                screen.last_comparison = None
                await pilot.press("ctrl+r")
                deadline = time.monotonic() + 120
                while (screen.last_comparison is None or not screen.feed.idle) and time.monotonic() < deadline:
                    await pilot.pause(0.02)
                if screen.last_comparison is None:
                    raise SystemExit(f"comparison {number} did not finish within 120 s")
                await pilot.pause()
                if number % every == 0:
                    gc.collect()
                    per_run = (time.perf_counter() - started) / every
                    print(f"{number:>5} {rss_mib():8.1f} {len(gc.get_objects()):>9,} {per_run:6.2f}", flush=True)
                    started = time.perf_counter()
                    if top and snapshot is None:
                        tracemalloc.start(12)
                        snapshot = tracemalloc.take_snapshot()
            final = rss_mib()
            if snapshot is not None:
                gc.collect()
                grown = tracemalloc.take_snapshot().compare_to(snapshot, "traceback")
                for stat in grown[:top]:
                    print(f"{stat.size_diff / 1024:+10.1f} KiB {stat.count_diff:+8} blocks")
                    for line in stat.traceback.format()[-8:]:
                        print("    " + line)
            await app.action_quit()
        store.engine.dispose()
    verdict = "within" if final <= GOAL_MIB else "OVER"
    print(f"RSS after {runs} comparisons: {final:.1f} MiB ({verdict} the {GOAL_MIB:.0f} MiB goal)")
    return 0 if final <= GOAL_MIB else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--top", type=int, default=0, help="print the N allocation sites that grew most")
    arguments = parser.parse_args()
    raise SystemExit(asyncio.run(main(arguments.runs, arguments.every, arguments.top)))
