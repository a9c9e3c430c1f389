"""``workbench serve`` in a subprocess for tests: the URL it printed (with its token), and a keyboard that
types into a tab's workbench over the real websocket, reading the terminal it sends back."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.cli_process import WORKBENCH

SERVING = re.compile(r"^workbench: serving on (?P<url>http://\S+?:\d+/\?token=(?P<token>\S+)) ", re.MULTILINE)
ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[()][A-Z0-9]|\x1b[=>]")
START_S = 90.0
"""Longest a server (or a tab's workbench) may take to start on a busy machine."""

SHIFT_TAB, ENTER, END, UP, CTRL_R = "\x1b[Z", "\r", "\x1b[F", "\x1b[A", "\x12"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    port: int
    url: str
    """As printed: ``http://127.0.0.1:PORT/?token=...``."""
    token: str
    output: Path

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.output.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> str:
        """Stop the server and every tab's process (its process group); what it printed."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        return self.log()


@contextlib.contextmanager
def serving(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """``workbench serve ARGS`` on a free port and a database of its own, until it has printed its URL."""
    port = free_port()
    output = tmp_path / f"serve-{port}.out"
    with output.open("wb") as sink:
        process = subprocess.Popen(
            [WORKBENCH, "serve", "--port", str(port), "--db", str(tmp_path / "served.db"), *args],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**os.environ, "COLUMNS": "200", **(env or {})},
            start_new_session=True,
        )
    served: Served | None = None
    try:
        deadline = time.monotonic() + START_S
        while served is None:
            found = SERVING.search(output.read_text(encoding="utf-8", errors="replace"))
            if found and listening(port):  # it prints the URL as it starts, a moment before it listens
                served = Served(process, port, found["url"], found["token"], output)
                break
            assert process.poll() is None, output.read_text()
            assert time.monotonic() < deadline, f"serve printed no URL: {output.read_text()}"
            time.sleep(0.1)
        yield served
    finally:
        if served is not None:
            served.stop()
        elif process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


class Keyboard:
    """A tab over a plain websocket: what its workbench drew (escape codes left out) and keys to type."""

    def __init__(self, websocket: Any) -> None:
        self.websocket = websocket
        self.screen = ""

    async def until(self, text: str, timeout: float = START_S) -> None:
        """Read the terminal until ``text`` has been drawn."""
        import aiohttp

        deadline = asyncio.get_running_loop().time() + timeout
        while text not in self.screen:
            left = deadline - asyncio.get_running_loop().time()
            assert left > 0, f"{text!r} was never drawn; the last of the screen: {self.screen[-800:]!r}"
            with contextlib.suppress(TimeoutError):
                message = await self.websocket.receive(timeout=left)
                if message.type == aiohttp.WSMsgType.BINARY:
                    self.screen += ANSI.sub("", message.data.decode("utf-8", "replace"))
                elif message.type != aiohttp.WSMsgType.TEXT:
                    raise AssertionError(f"the websocket ended ({message.type.name}) before {text!r} was drawn")

    async def type(self, *keys: str) -> None:
        """Each key as the browser's terminal sends it, with a pause for the app to take it."""
        for key in keys:
            await self.websocket.send_json(["stdin", key])
            await asyncio.sleep(0.3)


def processes_under(pid: int) -> list[int]:
    """``pid`` and every process below it (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found, waiting = [], [pid]
    while waiting:
        current = waiting.pop()
        found.append(current)
        waiting += children.get(current, [])
    return found


@contextlib.contextmanager
def another_origin(page: str) -> Iterator[str]:
    """``page`` served at ``/`` from another port of 127.0.0.1 (the same site to the browser, another origin)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


async def open_printed_url(page: Any, served: Served, timeout: float = START_S) -> None:
    """Open the URL serve printed in a Chromium page, until the page has gone on to the address without it."""
    await page.goto(served.url)
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        with contextlib.suppress(AssertionError, RuntimeError):  # the page may be between documents
            if await page.evaluate("location.href") == f"{served.origin}/":
                return
        assert asyncio.get_running_loop().time() < deadline, "the page kept the token in its address"
        await asyncio.sleep(0.2)
