"""The replay clock decides which recorded events are due; time is injected, nothing sleeps."""

from __future__ import annotations

import asyncio
import math

from workbench.events import ArmEvent, RequestStarted
from workbench.replay import INSTANT, ReplayClock, speed_label, timeline


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def events(*times: tuple[str, float]) -> list[ArmEvent]:
    seqs: dict[str, int] = {}
    result = []
    for arm, t in times:
        seq = seqs.get(arm, 0)
        seqs[arm] = seq + 1
        result.append(ArmEvent(arm, seq, t, RequestStarted(seq + 1)))
    return result


def test_timeline_merges_arms_by_time_and_keeps_each_arms_order() -> None:
    merged = timeline(events(("code", 0.5), ("tool", 0.2), ("code", 0.5), ("tool", 0.9)))
    assert [(e.arm, e.seq) for e in merged] == [("tool", 0), ("code", 0), ("code", 1), ("tool", 1)]


def test_plays_at_recorded_pace_and_faster() -> None:
    clock_time = FakeTime()
    clock = ReplayClock(events(("tool", 0.0), ("tool", 1.0), ("tool", 2.0)), now=clock_time)
    assert [e.t for e in clock.due()] == [0.0]
    clock_time.now += 0.9
    assert clock.due() == []
    assert math.isclose(clock.wait_s() or 0, 0.1)
    clock_time.now += 0.1
    assert [e.t for e in clock.due()] == [1.0]
    clock.set_speed(4.0)
    clock_time.now += 0.25
    assert [e.t for e in clock.due()] == [2.0]
    assert clock.finished and not clock.playing
    assert clock.replay_t == clock.duration == 2.0  # the bar reads "at 2.00 s / 2.00 s", not back at the start


def test_pause_step_and_jump_to_end() -> None:
    clock_time = FakeTime()
    clock = ReplayClock(events(("tool", 0.0), ("code", 0.5), ("tool", 3.0), ("code", 4.0)), now=clock_time)
    clock.pause()
    clock_time.now += 10
    assert clock.due() == [] and clock.wait_s() is None
    assert [e.t for e in clock.step()] == [0.0]
    assert [e.t for e in clock.step(2)] == [0.5, 3.0]
    assert clock.replay_t == 3.0 and not clock.playing
    assert [e.t for e in clock.to_end()] == [4.0]
    assert clock.finished and clock.position == clock.total == 4
    assert clock.step() == []


def test_instant_and_speed_cycle() -> None:
    clock = ReplayClock(events(("tool", 0.0), ("tool", 50.0)), now=FakeTime(), speed=INSTANT)
    assert len(clock.due()) == 2
    clock = ReplayClock([], now=FakeTime())
    assert [clock.cycle_speed(), clock.cycle_speed(), clock.cycle_speed()] == [4.0, INSTANT, 1.0]
    assert [speed_label(s) for s in (1.0, 4.0, INSTANT)] == ["x1", "x4", "instant"]
    assert clock.finished and clock.duration == 0.0


async def test_run_delivers_everything_and_wakes_on_changes() -> None:
    clock = ReplayClock(events(("tool", 0.0), ("tool", 0.05), ("code", 0.1)), speed=4.0)
    delivered: list[ArmEvent] = []
    await asyncio.wait_for(clock.run(delivered.extend), 60)  # a bound against a hang, not a pace
    assert len(delivered) == 3

    paused = ReplayClock(events(("tool", 0.0), ("tool", 3600.0)), playing=False)  # an hour apart: instant or never
    task = asyncio.ensure_future(paused.run(delivered.extend))
    await asyncio.sleep(0.01)
    paused.set_speed(INSTANT)
    paused.play()
    await asyncio.wait_for(task, 60)
    assert len(delivered) == 5


def test_leaving_instant_while_the_rest_loads_plays_the_rest_at_the_new_pace() -> None:
    """Instant delivers what is loaded; back at x1 before the rest of a long session has loaded, the rest
    plays as its time comes, not all at once."""
    clock_time = FakeTime()
    recorded = events(("tool", 0.0), ("tool", 1.0), ("tool", 2.0), ("tool", 3.0))
    clock = ReplayClock(recorded[:2], complete=False, now=clock_time)
    clock.set_speed(INSTANT)
    assert len(clock.due()) == 2
    clock.set_speed(1.0)
    assert clock.extend(recorded[2:], complete=True) == []
    assert clock.replay_t == 1.0 and clock.playing
    clock_time.now += 1.0
    assert [e.t for e in clock.due()] == [2.0]
    clock_time.now += 1.0
    assert [e.t for e in clock.due()] == [3.0] and clock.finished
