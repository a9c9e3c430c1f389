"""SIGTERM and SIGHUP end the workbench the way Ctrl+C does.

A closed terminal (SIGHUP), ``docker stop`` or a CI timeout (SIGTERM) cancel what is running: every arm
records itself as cancelled and the session is saved before the process exits with 128 + the signal's
number (129 for SIGHUP, 130 for Ctrl+C, 143 for SIGTERM). Saving is bounded (a database that stopped
answering gets a few seconds, then the fallback file); a second signal while it saves ends the process at
once, after handing what is in memory to the fallback file.

Before a command has its own handling (while the interpreter imports, the store opens, a migration waits for
a lock), :func:`stop_early` ends it the same way: one line, 143 / 129 (Ctrl+C is Python's own
:class:`KeyboardInterrupt`, 130).
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


class StoppedEarly(BaseException):
    """A stop signal before the command handled signals itself. A ``BaseException``, as
    :class:`KeyboardInterrupt` is: an ``except Exception`` on its way (a store open turning faults into its
    one-line errors) must not take it for a fault."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.exit_code = exit_code_for(signum)
        super().__init__(f"stopped by {signal.Signals(signum).name}")


def _stop_early(signum: int, _frame: object) -> None:
    raise StoppedEarly(signum)


def stop_early() -> dict[int, Any]:
    """From the process's start: SIGTERM and SIGHUP raise :class:`StoppedEarly` where the main thread is,
    so the CLI says so in one line and exits 128 + N, instead of the silent default death. SIGTERM or SIGHUP
    ignored when the process started (``nohup``) stays ignored; SIGINT is Ctrl+C throughout, even for a process
    a script started in the background (``&`` starts it with SIGINT ignored, and Python then leaves it so):
    a run's event loop handles it all the same, so the store's open must too. Commands that run an event loop
    take the signals over with :func:`install` and hand them back with :func:`uninstall`. Returns the handlers
    it replaced, for :func:`restore` (the CLI called in a process of its own, a test's)."""
    replaced: dict[int, Any] = {}
    with contextlib.suppress(ValueError, OSError):  # not the main thread
        if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
            replaced[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
        for signum in STOP_SIGNALS:
            if signal.getsignal(signum) == signal.SIG_DFL:
                replaced[signum] = signal.signal(signum, _stop_early)
    return replaced


def restore(replaced: dict[int, Any]) -> None:
    """Put back what :func:`stop_early` replaced."""
    for signum, handler in replaced.items():
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signum, handler)


def default_stops() -> None:
    """The default action again (a server process a parent stops: it must end at once, saying nothing)."""
    for signum in STOP_SIGNALS:
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(signum) is _stop_early:
                signal.signal(signum, signal.SIG_DFL)


_before_loop: dict[int, Any] = {}
"""What each signal's handler was before :func:`install` gave it to a loop: :func:`uninstall` puts it back."""


def install(loop: asyncio.AbstractEventLoop, on_signal: Any, signals: tuple[int, ...] = STOP_SIGNALS) -> list[int]:
    """Call ``on_signal(signum)`` on ``loop`` for each of ``signals``; returns the signals it could handle.

    Only the main thread of a process can handle signals (and Windows has no SIGHUP): elsewhere
    nothing is installed and the signals keep their default action.
    """
    installed = []
    for signum in signals:
        with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
            before = signal.getsignal(signum)
            loop.add_signal_handler(signum, on_signal, signum)
            _before_loop.setdefault(signum, before)
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
            loop.remove_signal_handler(signum)  # sets the default action (SIGINT: KeyboardInterrupt)
            before = _before_loop.pop(signum, None)
            if before is _stop_early:
                signal.signal(signum, before)


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
