"""``workbench serve``: the terminal workbench in a browser, served by textual-serve.

Each browser tab gets its own ``workbench`` process (with the options given to ``serve``), talking to the
page over a websocket. The server binds to 127.0.0.1 unless told otherwise, and says where it listens.
Needs the ``serve`` extra (textual-serve), imported only here.
"""

from __future__ import annotations

import shlex
import socket
import sys
from collections.abc import Sequence
from typing import Any

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
TITLE = "Code Mode Workbench"
_MISSING = "workbench serve needs the serve extra: pip install 'code-mode-workbench[serve]'"


class ServeUnavailable(RuntimeError):
    """``serve`` was asked for but the ``serve`` extra is not installed."""


def app_command(options: Sequence[str]) -> str:
    """The shell command textual-serve starts for each browser tab: this Python, this workbench, these options."""
    return shlex.join([sys.executable, "-m", "workbench", *options])


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


def make_server(options: Sequence[str], *, host: str, port: int, url: str | None = None) -> Any:
    try:
        from textual_serve.server import Server
    except ImportError:
        raise ServeUnavailable(_MISSING) from None

    class WorkbenchServer(Server):
        """textual-serve's server, announcing itself in one line instead of its logo."""

        async def on_startup(self, app: Any) -> None:
            where = "this machine only" if host in LOOPBACK else "every machine that can reach this one"
            self.console.print(
                f"workbench: serving on {self.public_url} ({where}); each browser tab runs its own workbench. "
                "Ctrl+C stops.",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
            if host not in LOOPBACK:
                self.console.print(
                    "workbench: warning: anyone who can open this address can run comparisons with your model "
                    "keys and read your stored sessions",
                    style="yellow",
                    highlight=False,
                    markup=False,
                    soft_wrap=True,
                )

    address = url or public_url(host, port)
    return WorkbenchServer(app_command(options), host=host, port=port, title=TITLE, public_url=address)
