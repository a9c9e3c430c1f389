"""How fast the compare screen takes events, and how fast a big stored session opens for replay.

Not a test: run it and read the figures.

    python benchmarks/tui_throughput.py [--rate 5000] [--seconds 4] [--replay-events 10000]

1. Sustained: a synthetic event stream (``--arms`` arms, 4 by default: tool, code, code-eager, hybrid;
   requests, streamed text, parallel tool calls, a snippet with hundreds of inner calls, and eager
   progress and speculated calls in the eager arm) is pushed through the compare screen's feed at ``--rate``
   events per second, headless, at 160x48. It prints the events per second painted and the lag
   between an event reaching the feed and the frame that shows it (p50 / p95 / max).
2. Burst: the same kind of stream pushed all at once; events per second until the last paint.
3. Replay open: a stored session of ``--replay-events`` events; the time from asking for the replay
   screen to its first paint with the session loaded (store read + JSON decode + screen mount).

Goals (issue 3): >= 5,000 events/s sustained with <= 100 ms lag; replay open <= 0.3 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.events import (
    ArmEvent,
    EagerProgress,
    EndState,
    Graded,
    InnerCall,
    InnerResult,
    Payload,
    RequestStarted,
    RunFinished,
    RunStarted,
    Snippet,
    SnippetDelta,
    Speculation,
    TextDelta,
    ToolCall,
    ToolResult,
    Usage,
)
from workbench.session import fold_comparison
from workbench.store import Store
from workbench.tui.app import WorkbenchApp, make_app
from workbench.tui.messages import ArmEvents
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.screens.replay import ReplayScreen

SIZE = (160, 48)
PREVIEW = '{"id":"line-0001","product":"Linen Duvet Cover","sku":"HOM-9273","category":"Home","unit_price":133.43}'
CODE = """import asyncio
import os

items = []
page = 1
while True:
    result = await list_cart_items(page=page)
    items.extend(result['items'])
    if not result['has_more']:
        break
    page += 1

targets = [it for it in items if it['unit_price'] > 50]
removed = await asyncio.gather(*(delete_cart_item(item_id=it['id']) for it in targets))
{'removed': len(removed), 'remaining': len(items) - len(removed)}
"""


WORDS = [
    "Page",
    "{page}",
    "lists",
    "fifty",
    "more",
    "items;",
    "I",
    "will",
    "keep",
    "reading",
    "until",
    "every",
    "page",
    "is",
    "in,",
    "then",
    "remove",
    "the",
    "expensive",
    "ones.",
]


ANSWER = "Removed the items that cost more than $50 apiece; the rest remain."


ARMS = (("tool", "tool", False), ("code", "code", False), ("code-eager", "code", True), ("hybrid", "hybrid", False))
"""(name, mode, eager) of the arms the stream interleaves, the first ``--arms`` of them."""


def _arm(mode: str, eager: bool = False) -> Iterator[Payload]:
    """An endless mix of one arm's payloads, shaped like the scripted model's runs at a large item count.

    Tool arm: ten requests that each stream a sentence (one delta per word, as models stream tokens) and
    list a page, then one response with 200 parallel calls, then the answer. Code arm: a snippet streamed
    in 40-character deltas, 600 inner calls, then the answer. That is one model request per ~40 events:
    at 5,000 events/s, over a hundred requests a second, far more than any real model makes.
    """
    run = 0
    while True:
        run += 1
        yield RunStarted(mode, "scripted", "cart", 1000, 0, "Remove everything over $50.", ["list_cart_items"])
        if mode == "tool":
            for request in range(1, 11):
                yield RequestStarted(request)
                for word in WORDS:
                    yield TextDelta(word.format(page=request) + " ")
                yield Usage(request, 700 * request, 20, 0, 700 * request * request, 20 * request, 0.001, 0.01)
                yield ToolCall(f"r{run}_page_{request}", "list_cart_items", {"page": request})
                yield ToolResult(f"r{run}_page_{request}", "list_cart_items", "ok", PREVIEW, 8800, 0.2)
            yield RequestStarted(11)
            yield Usage(11, 15000, 4000, 0, 160000, 4200, 0.01, 0.05)
            for call in range(200):
                yield ToolCall(f"r{run}_del_{call}", "delete_cart_item", {"item_id": f"line-{call:04d}"})
            for call in range(200):
                yield ToolResult(f"r{run}_del_{call}", "delete_cart_item", "ok", PREVIEW, 180, 0.1)
        else:
            call_id = f"r{run}_run_code"
            yield RequestStarted(1)
            for end in range(40, len(CODE) + 40, 40):
                yield SnippetDelta(call_id, CODE[:end])
                if eager:
                    statements = CODE[:end].count("\n")
                    yield EagerProgress(call_id, statements, statements)
            if eager:
                for n in range(20):
                    launch = f"{call_id}_spec_{n}"
                    args = {"item_id": f"line-{n:04d}"}
                    yield Speculation(call_id, launch, "launched", "delete_cart_item", args, line_start=14, line_end=14)
                    yield Speculation(call_id, launch, "settled", "delete_cart_item", outcome="ready", elapsed_ms=2.0)
                    yield Speculation(call_id, launch, "claimed" if n % 4 else "missed", "delete_cart_item",
                                      hidden_ms=1.5 if n % 4 else None)  # fmt: skip
            yield Usage(1, 1600, 140, 0, 1600, 140, 0.0007, 0.0007)
            yield ToolCall(call_id, "run_code", {"code": CODE})
            yield Snippet(call_id, CODE)
            for inner in range(600):
                inner_id = f"{call_id}__{inner}"
                yield InnerCall(inner_id, call_id, "delete_cart_item", {"item_id": f"line-{inner:04d}"})
                yield InnerResult(inner_id, call_id, "delete_cart_item", "ok", PREVIEW, 180, 0.1)
            yield ToolResult(call_id, "run_code", "ok", '{"removed": 600}', 16, 150.0)
        yield RequestStarted(99)
        for word in ANSWER.split(" "):
            yield TextDelta(word + " ")
        yield Usage(99, 1750, 18, 0, 3350, 158, 0.0005, 0.0012)
        yield EndState([], [], [{"entity": "cart_items", "id": f"line-{n:04d}", "record": {"n": n}} for n in range(50)])
        yield Graded(True, "cart/remove-expensive", [], [])
        yield RunFinished("completed", None, ANSWER)


def synthetic_events(count: int, arms: int = 4) -> list[ArmEvent]:
    """``count`` events in total, the first ``arms`` arms interleaved, with recorded times 0.2 ms apart."""
    chosen = ARMS[:arms]
    sources = {name: _arm(mode, eager) for name, mode, eager in chosen}
    seqs = dict.fromkeys(sources, 0)
    events = []
    for index in range(count):
        arm = chosen[index % len(chosen)][0]
        events.append(ArmEvent(arm, seqs[arm], index * 0.0002, next(sources[arm])))
        seqs[arm] += 1
    return events


class Painted:
    """Collects (events, lag) per painted batch."""

    def __init__(self) -> None:
        self.events = 0
        self.lags: list[float] = []
        self.last = 0.0

    def __call__(self, message: ArmEvents) -> None:
        now = time.perf_counter()
        self.events += len(message.events)
        self.lags.append(now - message.received)
        self.last = now


async def _wait_idle(screen: CompareScreen, painted: Painted, total: int, timeout_s: float = 120) -> None:
    deadline = time.perf_counter() + timeout_s
    while painted.events < total and time.perf_counter() < deadline:
        await asyncio.sleep(0.005)


def _lag_text(lags: list[float]) -> str:
    ms = sorted(lag * 1000 for lag in lags)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    return f"lag p50 {statistics.median(ms):.0f} ms, p95 {p95:.0f} ms, max {ms[-1]:.0f} ms ({len(ms)} batches)"


async def warm_up(screen: CompareScreen, arms: int) -> None:
    """Pay the one-off costs first (lexers, parsers, first layouts), then start from empty panes."""
    painted = Painted()
    screen.batch_painted = painted
    warm = synthetic_events(3000, arms)
    screen.feed.put_many(warm)
    await _wait_idle(screen, painted, len(warm))
    await screen.action_new()
    await asyncio.sleep(0.2)


def app_for(arms: int) -> WorkbenchApp:
    return make_app(store=None, arms=[name for name, _, _ in ARMS[:arms]])


async def sustained(rate: int, seconds: float, arms: int) -> tuple[float, list[float], float]:
    """Events per second painted, the lag of each batch's oldest event, and the share of a CPU used."""
    events = synthetic_events(int(rate * seconds), arms)
    app = app_for(arms)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await warm_up(screen, arms)
        painted = Painted()
        screen.batch_painted = painted
        tick = 0.01
        per_tick = max(1, int(rate * tick))
        start, cpu_start = time.perf_counter(), time.process_time()
        for index in range(0, len(events), per_tick):
            screen.feed.put_many(events[index : index + per_tick])
            due = start + (index // per_tick + 1) * tick
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
        await _wait_idle(screen, painted, len(events))
        elapsed, cpu = painted.last - start, time.process_time() - cpu_start
    return painted.events / elapsed, painted.lags, cpu / elapsed


async def burst(count: int, arms: int) -> tuple[float, float]:
    """Events per second painted (wall clock) and per CPU second of this process (load-independent)."""
    events = synthetic_events(count, arms)
    app = app_for(arms)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await warm_up(screen, arms)
        painted = Painted()
        screen.batch_painted = painted
        start, cpu_start = time.perf_counter(), time.process_time()
        screen.feed.put_many(events)
        await _wait_idle(screen, painted, len(events))
        cpu = time.process_time() - cpu_start
        return painted.events / (painted.last - start), painted.events / cpu


def stored_session(store: Store, count: int, arms: int) -> str:
    session_id = "bench10k"
    comparison = fold_comparison(
        synthetic_events(count, arms), session_id=session_id, created=datetime(2026, 1, 1, tzinfo=UTC), app="cart",
        items=1000, prompt="Remove everything over $50.",
    )  # fmt: skip
    store.save(comparison)
    return session_id


async def replay_open(store: Store, session_id: str) -> tuple[float, float]:
    app = make_app(store=store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        read_start = time.perf_counter()
        store.events(session_id)
        read_s = time.perf_counter() - read_start
        opened = asyncio.get_running_loop().create_future()
        start = time.perf_counter()
        app.open_replay(session_id)
        screen = app.screen
        assert isinstance(screen, ReplayScreen)

        async def wait_loaded() -> None:
            while screen.clock is None:
                await asyncio.sleep(0.001)
            screen.call_after_refresh(lambda: opened.set_result(time.perf_counter()))

        await wait_loaded()
        painted_at = await opened
        return painted_at - start, read_s


def load_average() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "?"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=int, default=5000, help="events per second to push (sustained)")
    parser.add_argument("--seconds", type=float, default=4.0, help="how long to push (sustained)")
    parser.add_argument("--burst", type=int, default=20000, help="events pushed at once (burst)")
    parser.add_argument("--replay-events", type=int, default=10000, help="events in the stored session (replay)")
    parser.add_argument("--arms", type=int, default=4, choices=range(1, 5), help="arms in the stream (1-4)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the sustained and replay figures (medians)")
    args = parser.parse_args()

    print(f"machine:   {os.cpu_count()} CPUs, load average {load_average()} at start; {args.arms} arms")
    print(
        f"sustained: push {args.rate:,} events/s for {args.seconds:g} s ({args.repeat} runs; the rate counts the"
        " tail too: the last events paint one lag after the last push)"
    )
    lag_medians = []
    for run in range(args.repeat):
        rate, lags, cpu_share = await sustained(args.rate, args.seconds, args.arms)
        lag_medians.append(statistics.median(lags))
        print(
            f"  run {run + 1}: painted {rate:,.0f} events/s using {cpu_share:.0%} of a CPU; {_lag_text(lags)}; "
            f"load {load_average()}"
        )
    print(f"  median of the runs' lag p50: {statistics.median(lag_medians) * 1000:.0f} ms")
    burst_rate, cpu_rate = await burst(args.burst, args.arms)
    print(
        f"burst:     {args.burst:,} events at once -> painted at {burst_rate:,.0f} events/s "
        f"({cpu_rate:,.0f} events per CPU second of this process)"
    )
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "bench.db")
        session_id = stored_session(store, args.replay_events, args.arms)
        opens = []
        for _ in range(args.repeat):
            opened_s, read_s = await replay_open(store, session_id)
            opens.append(opened_s)
    print(
        f"replay:    opening a stored {args.replay_events:,}-event session took "
        f"{statistics.median(opens) * 1000:.0f} ms to its first paint (median of "
        f"{', '.join(f'{s * 1000:.0f}' for s in opens)} ms; it reads the first page, the rest behind; "
        f"reading all at once takes {read_s * 1000:.0f} ms)"
    )


if __name__ == "__main__":
    asyncio.run(main())
