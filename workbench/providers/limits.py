"""The workbench's own cap on concurrent requests per provider endpoint, shared by every arm and sweep run
that reaches the same endpoint."""

from __future__ import annotations

import asyncio
import time
import weakref

from pydantic_ai.concurrency import AbstractConcurrencyLimiter, ConcurrencyLimiter

from workbench.providers.hooks import request_hooks


class ProviderLimiter(AbstractConcurrencyLimiter):
    """At most ``max_running`` requests in flight to one provider endpoint, across arms and sweep runs.

    One semaphore per event loop, so a limiter made before ``asyncio.run`` (or shared by several runs
    in turn) never waits on a loop that is gone.
    """

    def __init__(self, name: str, max_running: int) -> None:
        self.name = name
        self.max_running = max_running
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ConcurrencyLimiter] = (
            weakref.WeakKeyDictionary()
        )

    def _current(self) -> ConcurrencyLimiter:
        loop = asyncio.get_running_loop()
        limiter = self._by_loop.get(loop)
        if limiter is None:
            limiter = self._by_loop[loop] = ConcurrencyLimiter(self.max_running, name=self.name)
        return limiter

    async def acquire(self, source: str) -> None:
        """Take a slot; a request that found none tells the arm how long it waited (time in the workbench's
        own queue, which the arm's wall time leaves out: the model was not working on it)."""
        limiter = self._current()
        if limiter.available_count > 0:
            await limiter.acquire(source)
            return
        started = time.monotonic()
        try:
            await limiter.acquire(source)
        finally:
            listener = request_hooks.get().on_limiter_wait
            if listener is not None:
                listener(time.monotonic() - started)

    def release(self) -> None:
        self._current().release()

    @property
    def running_count(self) -> int:
        """Requests in flight on the current event loop."""
        return self._current().running_count

    @property
    def waiting_count(self) -> int:
        """Requests waiting for a slot on the current event loop."""
        return self._current().waiting_count


# Process-wide on purpose, like an HTTP client's connection pool: the cap is on this process's requests to an
# endpoint, whichever comparison sends them (both arms, every run of a sweep, the TUI's runs, a worker's slots),
# and each of those resolves its models on its own. An object passed in would have to be threaded through every
# entry point only to be this one again. It holds no run's state: the slots are per event loop, held weakly.
_limiters: dict[tuple[str, int], ProviderLimiter] = {}


def limiter_for(endpoint: str, max_running: int) -> ProviderLimiter:
    """The process-wide limiter for one provider endpoint (e.g. ``openai@https://api.openai.com/v1/``)."""
    key = (endpoint, max_running)
    found = _limiters.get(key)
    return found if found is not None else _limiters.setdefault(key, ProviderLimiter(endpoint, max_running))
