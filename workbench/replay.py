"""A replay clock: plays a stored session's events back at their recorded pace (no Textual here).

Every arm's events are merged into one timeline by their recorded time ``t``. The clock keeps a
*replay time* that advances with the real clock times the speed while playing; every event whose ``t``
has been reached is *due*. Stepping plays exactly one event and pauses; jumping to the end makes every
remaining event due at once. Time is injected (``now``) so tests need no sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable, Iterable, Sequence

from workbench.events import ArmEvent

INSTANT = math.inf
SPEEDS: tuple[float, ...] = (1.0, 4.0, INSTANT)
"""The speeds a replay cycles through: recorded pace, four times faster, and no waiting at all."""


def speed_label(speed: float) -> str:
    return "instant" if math.isinf(speed) else f"x{speed:g}"


def timeline(events: Iterable[ArmEvent]) -> list[ArmEvent]:
    """Every arm's events in the order they happened (each arm keeps its own seq order; on a tie in time,
    arms keep the order they come in)."""
    events = list(events)
    order = {name: index for index, name in enumerate(dict.fromkeys(event.arm for event in events))}
    return sorted(events, key=lambda event: (event.t, order[event.arm], event.seq))


class ReplayClock:
    """Decides which recorded events are due; the caller delivers them."""

    def __init__(
        self,
        events: Sequence[ArmEvent],
        *,
        speed: float = 1.0,
        playing: bool = True,
        complete: bool = True,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.events = timeline(events)
        self.complete = complete
        """Whether every event of the session is here (a replay may start on the first page of a long one)."""
        self.position = 0
        """How many events have been delivered."""
        self.speed = speed
        self._now = now
        self._playing = playing
        self._replay_t = 0.0
        self._to_end = False
        self._anchor = now()
        self._changed = asyncio.Event()

    # -- state -----------------------------------------------------------------------------------

    @property
    def total(self) -> int:
        return len(self.events)

    @property
    def finished(self) -> bool:
        return self.position >= len(self.events) and self.complete

    @property
    def playing(self) -> bool:
        return self._playing and not self.finished

    @property
    def duration(self) -> float:
        """Recorded seconds from the first arm's start to the last event."""
        return self.events[-1].t if self.events else 0.0

    @property
    def replay_t(self) -> float:
        """Where the replay is on the recorded timeline, in recorded seconds."""
        if self.finished:
            return self.duration
        if self._playing:
            if math.isinf(self.speed):
                return self.duration
            return min(self._replay_t + (self._now() - self._anchor) * self.speed, self.duration)
        return self._replay_t

    # -- controls --------------------------------------------------------------------------------

    def play(self) -> None:
        if not self._playing:
            self._anchor = self._now()
            self._playing = True
            self._poke()

    def pause(self) -> None:
        if self._playing:
            self._replay_t = self.replay_t
            self._playing = False
            self._poke()

    def toggle(self) -> bool:
        """Play if paused, pause if playing; returns whether it now plays."""
        if self._playing:
            self.pause()
        else:
            self.play()
        return self._playing

    def set_speed(self, speed: float) -> None:
        """Go on from where the replay is, at ``speed``; leaving instant for a pace while the rest of the
        session still loads plays that rest as its time comes (not all at once)."""
        self._replay_t = self.replay_t
        self._anchor = self._now()
        self.speed = speed
        if not math.isinf(speed):
            self._to_end = False
        self._poke()

    def cycle_speed(self) -> float:
        index = SPEEDS.index(self.speed) if self.speed in SPEEDS else -1
        self.set_speed(SPEEDS[(index + 1) % len(SPEEDS)])
        return self.speed

    def restart(self) -> None:
        """Back to the first event, playing at the current speed (the caller clears what was delivered)."""
        self.position = 0
        self._replay_t = 0.0
        self._to_end = False
        self._anchor = self._now()
        self._playing = True
        self._poke()

    def step(self, count: int = 1) -> list[ArmEvent]:
        """Deliver exactly the next ``count`` events and pause there."""
        self.pause()
        self._to_end = False
        stepped = self.events[self.position : self.position + max(count, 0)]
        self.position += len(stepped)
        if stepped:
            self._replay_t = max(self._replay_t, stepped[-1].t)
        return stepped

    def to_end(self) -> list[ArmEvent]:
        """Deliver every remaining event (and any still loading, as it arrives: see :meth:`extend`)."""
        remaining = self.events[self.position :]
        self.position = len(self.events)
        self._replay_t = self.duration
        self._to_end = True
        self._poke()
        return remaining

    def extend(self, events: Sequence[ArmEvent], *, complete: bool = True) -> list[ArmEvent]:
        """Add the next events of the timeline (they follow the ones already here, in order).

        Returns the ones to deliver at once: all of them if the replay was already jumped to the end.
        """
        self.events.extend(events)
        self.complete = complete
        self._poke()
        return self.to_end() if self._to_end else []

    def due(self) -> list[ArmEvent]:
        """The events whose recorded time has been reached and that were not delivered yet."""
        if not self._playing or self.finished:
            return []
        if math.isinf(self.speed):
            return self.to_end()
        now_t = self.replay_t
        start = end = self.position
        while end < len(self.events) and self.events[end].t <= now_t:
            end += 1
        self.position = end
        return self.events[start:end]

    def wait_s(self) -> float | None:
        """Real seconds until the next event is due; ``None`` while paused or when finished."""
        if not self.playing or self.position >= len(self.events):
            return None
        if math.isinf(self.speed):
            return 0.0
        return max(0.0, (self.events[self.position].t - self.replay_t) / self.speed)

    # -- driving ---------------------------------------------------------------------------------

    async def run(self, deliver: Callable[[list[ArmEvent]], None], *, max_wait_s: float = 0.25) -> None:
        """Deliver due events as their time comes until the replay is finished (or the task is cancelled).

        Pausing, stepping and speed changes take effect at once: they wake the loop.
        """
        while not self.finished:
            due = self.due()
            if due:
                deliver(due)
            wait = self.wait_s()
            self._changed.clear()
            if wait is None or wait > 0:
                timeout = max_wait_s if wait is None else min(wait, max_wait_s)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), timeout)
            else:
                await asyncio.sleep(0)

    def _poke(self) -> None:
        self._changed.set()
