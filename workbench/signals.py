"""SIGTERM and SIGHUP end the workbench the way Ctrl+C does.

A closed terminal (SIGHUP), ``docker stop`` or a CI timeout (SIGTERM) cancel what is running: every arm
records itself as cancelled and the session is saved before the process exits with 128 + the signal's
number (129 for SIGHUP, 130 for Ctrl+C, 143 for SIGTERM). Saving is bounded (a database that stopped
answering gets a few seconds, then the fallback file); a second signal while it saves ends the process at
once, after handing what is in memory to the fallback file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals handled like Ctrl+C (which asyncio and Textual already turn into a cancellation)."""

T = TypeVar("T")


def exit_code_for(signum: int) -> int:
    """The shell's convention: a process ended by signal N exits with 128 + N."""
    return 128 + signum


def install(loop: asyncio.AbstractEventLoop, on_signal: Any, signals: tuple[int, ...] = STOP_SIGNALS) -> list[int]:
    """Call ``on_signal(signum)`` on ``loop`` for each of ``signals``; returns the signals it could handle.

    Only the main thread of a process can handle signals (and Windows has no SIGHUP): elsewhere
    nothing is installed and the signals keep their default action.
    """
    installed = []
    for signum in signals:
        with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
            loop.add_signal_handler(signum, on_signal, signum)
            installed.append(signum)
    return installed


def skip_final_collection() -> None:
    """Let a stopped process exit without the interpreter's last garbage collection, which takes seconds
    for a run's heap on a busy machine (``gc.freeze``: what is alive now is left to the exit as it is)."""
    import gc

    gc.freeze()


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

    After a stop signal the coroutine is cancelled once; :meth:`run` then raises :class:`Stopped`, or
    returns the coroutine's value if it handled the cancellation itself (check :attr:`signum`). Ctrl+C
    raises :class:`KeyboardInterrupt` as usual. A second signal (any of them) while the coroutine saves what
    it ran calls ``on_second`` (which must be quick: hand what is in memory to a file) and exits at once.
    """

    def __init__(self, on_second: Callable[[], None] | None = None) -> None:
        self.signum: int | None = None
        """The stop signal received (SIGTERM, SIGHUP), if any; ``None`` after Ctrl+C."""
        self.interrupted = False
        """Whether Ctrl+C (SIGINT) stopped the coroutine."""
        self.on_second = on_second

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
            if self.interrupted:
                raise KeyboardInterrupt from None
            if self.signum is None:
                raise
            raise Stopped(self.signum) from None

    async def _guarded(self, main: Coroutine[Any, Any, T]) -> T:
        import asyncio

        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def stop(signum: int) -> None:
            if self.signum is not None or self.interrupted:
                self._exit_now(signum)
            elif signum == signal.SIGINT:
                self.interrupted = True
                task.cancel()
            else:
                self.signum = signum
                task.cancel()

        installed = install(loop, stop, (*STOP_SIGNALS, signal.SIGINT))
        try:
            return await main
        finally:
            uninstall(loop, installed)

    def _exit_now(self, signum: int) -> None:
        """The second signal: what is in memory goes to a file, and the process ends without waiting."""
        with contextlib.suppress(Exception):
            if self.on_second is not None:
                self.on_second()
        with contextlib.suppress(OSError, ValueError):
            print(f"workbench: stopped at once by a second {signal.Signals(signum).name}", file=sys.stderr, flush=True)
        os._exit(self.exit_code)
