"""``workbench serve``: the terminal workbench in a browser, served by textual-serve.

Each browser tab gets its own ``workbench`` process (with the options given to ``serve``), talking to the
page over a websocket. The server binds to 127.0.0.1 unless told otherwise and says where it listens, with
the token a browser needs (:mod:`workbench.share.serve_guard` refuses everything without it, and every page of
another origin). Needs the ``serve`` extra (textual-serve), imported only here.
"""

from __future__ import annotations

import logging
import shlex
import socket
import sys
from collections.abc import Sequence
from typing import Any

from workbench.errors import UserError
from workbench.share.serve_guard import TITLE

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
_MISSING = "workbench serve needs the serve extra: pip install 'code-mode-workbench[serve]'"


class ServeUnavailable(UserError, RuntimeError):
    """``serve`` was asked for but the ``serve`` extra is not installed."""


def app_command(options: Sequence[str], *, allow_commands: bool = False) -> str:
    """The shell command textual-serve starts for each browser tab: this Python, this workbench, these options,
    and ``--served``, which keeps the entries that start a command or import code off unless ``allow_commands``
    (a visitor only has keystrokes, so cannot change it). The token is never in it: ``ps`` shows it to all."""
    served = ["--served", "commands" if allow_commands else "no-commands"]
    return shlex.join([sys.executable, "-m", "workbench", *served, *options])


def public_url(host: str, port: int) -> str:
    """The address browsers use (a wildcard bind is reached through this machine's name)."""
    shown = socket.getfqdn() if host in ("0.0.0.0", "::", "") else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


def check_port(host: str, port: int) -> None:
    """Raise ``OSError`` (with the reason) now if the address cannot be listened on."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))


def exposure(allow_commands: bool) -> str:
    """What a person who can open the page can do, said where the server starts."""
    what = "run comparisons with your model keys, read and delete your stored sessions"
    return f"{what} and run any command as you (--allow-commands)" if allow_commands else what


def make_server(
    options: Sequence[str], *, host: str, port: int, token: str, url: str | None = None, allow_commands: bool = False
) -> Any:
    """textual-serve's server for these tab options, behind the token and origin guard."""
    try:
        from textual_serve.server import Server
    except ImportError:
        raise ServeUnavailable(_MISSING) from None
    from workbench.share.serve_guard import Guard, Redact, add_safety_headers

    address = (url or public_url(host, port)).rstrip("/")
    guard = Guard(token, address)

    class WorkbenchServer(Server):
        """textual-serve's server with the guard as the first middleware of its aiohttp application, the token
        kept out of its logs, and one line about itself instead of its logo."""

        async def _make_app(self) -> Any:
            app = await super()._make_app()
            app.middlewares.insert(0, guard.middleware())  # before the app is frozen at start-up
            app.on_response_prepare.append(add_safety_headers)
            return app

        def initialize_logging(self) -> None:
            super().initialize_logging()
            for handler in logging.getLogger().handlers:
                handler.addFilter(Redact(guard.secrets))
                if hasattr(handler, "tracebacks_show_locals"):
                    handler.tracebacks_show_locals = False  # a frame's locals could hold the request's query

        async def on_startup(self, app: Any) -> None:
            where = "this machine only" if host in LOOPBACK else "every machine that can reach this one"
            self._say(
                f"workbench: serving on {guard.url} ({where}); each browser tab runs its own workbench. Ctrl+C stops."
            )
            if host not in LOOPBACK:
                self._say(f"workbench: warning: anyone who can open this URL can {exposure(allow_commands)}; "
                          "the URL is a password", style="yellow")  # fmt: skip
            elif allow_commands:
                self._say(f"workbench: whoever opens this URL can {exposure(True)}; the URL is a password",
                          style="yellow")  # fmt: skip

        def _say(self, line: str, style: str | None = None) -> None:
            self.console.print(line, style=style, highlight=False, markup=False, soft_wrap=True)

    command = app_command(options, allow_commands=allow_commands)
    return WorkbenchServer(command, host=host, port=port, title=TITLE, public_url=address)
