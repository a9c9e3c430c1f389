"""This worker's lease as the worker itself sees it, and the fence every model request and record passes.

The lease row lives in the store (:mod:`workbench.store.workers`); this is the worker's local view of it.
A renewal sent at monotonic time ``t`` keeps the lease safe until ``t + lease_s``: a peer takes it over
only after watching the renewals stand still for ``lease_s`` of its own time, which starts no earlier than
the renewal it last saw. So a worker that was stalled (SIGSTOP, a frozen VM, a long GC pause) or cut off
from the database knows, from its own clock alone, that its lease may be gone, and holds every model
request and every record until a renewal says whether it still holds the lease (then it goes on) or a peer
took it over (then its comparisons stop without being recorded: the peer runs them, once).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import Any

from pydantic_ai.models.wrapper import WrapperModel

from workbench.errors import InternalError

SAFETY_S = 1.0
"""How long before the lease's end a worker stops counting on it (a request or record then in flight has
this long to reach the database)."""


class LeaseLost(InternalError):
    """A peer took this worker's lease over: the comparison stops and is not recorded (the peer runs it)."""


class Lease:
    """Thread-safe: renewed by the worker's liveness thread, checked by every comparison's thread."""

    def __init__(self, lease_s: float) -> None:
        self.lease_s = lease_s
        self.token = 0
        self.lost = False
        self._valid_until = 0.0
        self._changed = threading.Condition()

    def renewed(self, token: int, sent_at: float) -> None:
        """A renewal sent at ``sent_at`` (monotonic) succeeded with ``token``."""
        with self._changed:
            self.token = token
            self._valid_until = sent_at + self.lease_s - min(SAFETY_S, self.lease_s / 4)
            self._changed.notify_all()

    def lose(self) -> None:
        with self._changed:
            self.lost = True
            self._changed.notify_all()

    def valid(self, token: int | None = None) -> bool:
        """Held now, by this token (any token: ``None``), without waiting."""
        return not self.lost and (token is None or token == self.token) and time.monotonic() < self._valid_until

    def admit(self, stopping: threading.Event) -> int:
        """Wait until the lease is held (after a stall or an outage, until a renewal answers); its token.
        Raises :class:`LeaseLost` once a peer took it over, or when the worker stops."""
        with self._changed:
            while not self.valid():
                if self.lost or stopping.is_set():
                    raise LeaseLost("this worker's lease was taken over by a peer")
                self._changed.wait(timeout=0.2)
            return self.token

    def check(self, token: int, stopping: threading.Event) -> None:
        """The fence: wait until the lease is held, then raise :class:`LeaseLost` unless by ``token``."""
        if self.admit(stopping) != token:
            raise LeaseLost("this worker's lease was taken over by a peer")

    async def fence(self, token: int) -> None:
        """:meth:`check` for a comparison's event loop (polls: the loop must stay free for the arms)."""
        while not self.valid(token):
            if self.lost or (token != self.token and self.token):
                raise asyncio.CancelledError  # the comparison is being cancelled by the worker (lease lost)
            await asyncio.sleep(0.1)


class FencedModel(WrapperModel):
    """A model whose every request first passes the lease's fence, so a worker that lost its lease (or does
    not know yet whether it still holds it) sends no request to the provider."""

    def __init__(self, wrapped: Any, fence: Callable[[], Any]) -> None:
        super().__init__(wrapped)
        self._fence = fence

    async def request(self, *args: Any, **kwargs: Any) -> Any:
        await self._fence()
        return await self.wrapped.request(*args, **kwargs)

    @asynccontextmanager
    async def request_stream(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any]:
        await self._fence()
        async with self.wrapped.request_stream(*args, **kwargs) as response_stream:
            yield response_stream
