"""SIGTERM and SIGHUP end the workbench the way Ctrl+C does.

A closed terminal (SIGHUP), ``docker stop`` or a CI timeout (SIGTERM) cancel what is running: every arm
records itself as cancelled and the session is saved before the process exits with 128 + the signal's
number (129 for SIGHUP, 130 for Ctrl+C, 143 for SIGTERM).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals handled like Ctrl+C (which asyncio and Textual already turn into a cancellation)."""

T = TypeVar("T")


def exit_code_for(signum: int) -> int:
    """The shell's convention: a process ended by signal N exits with 128 + N."""
    return 128 + signum


def install(loop: asyncio.AbstractEventLoop, on_signal: Any) -> list[int]:
    """Call ``on_signal(signum)`` on ``loop`` for each stop signal; returns the signals it could handle.

    Only the main thread of a process can handle signals (and Windows has no SIGHUP): elsewhere
    nothing is installed and the signals keep their default action.
    """
    installed = []
    for signum in STOP_SIGNALS:
        with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
            loop.add_signal_handler(signum, on_signal, signum)
            installed.append(signum)
    return installed


def uninstall(loop: asyncio.AbstractEventLoop, installed: list[int]) -> None:
    for signum in installed:
        with contextlib.suppress(ValueError, RuntimeError):
            loop.remove_signal_handler(signum)


class Stopped(Exception):
    """A run cancelled by SIGTERM or SIGHUP, once it has saved what it ran."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.signal_name = signal.Signals(signum).name
        self.exit_code = exit_code_for(signum)
        super().__init__(f"stopped by {self.signal_name}")


class SignalStop:
    """Runs a coroutine like :func:`asyncio.run`, with SIGTERM and SIGHUP cancelling it as Ctrl+C does.

    After a stop signal the coroutine is cancelled once (a second signal changes nothing while it saves
    what it ran); :meth:`run` then raises :class:`Stopped`, or returns the coroutine's value if it handled
    the cancellation itself (check :attr:`signum`). Ctrl+C raises :class:`KeyboardInterrupt` as usual.
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        """The stop signal received, if any."""

    @property
    def exit_code(self) -> int:
        """What the process should exit with after being stopped: 143, 129, or 130 for Ctrl+C."""
        return exit_code_for(self.signum or signal.SIGINT)

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum or signal.SIGINT).name

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        import asyncio  # here, not at the top: the CLI imports this module before it knows it will run anything

        try:
            return asyncio.run(self._guarded(main))
        except asyncio.CancelledError:
            if self.signum is None:
                raise
            raise Stopped(self.signum) from None

    async def _guarded(self, main: Coroutine[Any, Any, T]) -> T:
        import asyncio

        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def stop(signum: int) -> None:
            if self.signum is None:
                self.signum = signum
                task.cancel()

        installed = install(loop, stop)
        try:
            return await main
        finally:
            uninstall(loop, installed)
