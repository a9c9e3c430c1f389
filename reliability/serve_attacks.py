"""``workbench serve`` attacked over HTTP and its websocket, for the ``hostile`` row (:class:`HostileReport.extra`):
what a page of another origin or a local program without the token can send, and the keystrokes that would
pick the App field's "MCP server…" and run a command that creates the canary.

Each attack is one :class:`~reliability.hostile.Outcome` (kind ``request``): held when the server refused it
(403, one line, no tab's workbench started) or, for the keystrokes over an authorised socket of a server without
``--allow-commands``, when the entry is not there and the canary is never created. A real headless Chromium
page of another origin is tried in ``tests/test_share_serve_attacks.py``.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from reliability.hostile import Attack, Outcome

CHECKOUT = Path(__file__).resolve().parent.parent
"""The checkout, whose ``tests.support`` holds the helpers that start serve and type into a tab."""


def _attack(name: str, expect: str = "403") -> Attack:
    return Attack(name, "request", lambda folder, canary: ([], {}), expect)


def serve_attacks(folder: Path, canary: Path) -> list[Outcome]:
    """Start a real ``workbench serve`` (no ``--allow-commands``) and try every request on it."""
    sys.path.insert(0, str(CHECKOUT))  # tests.support: the helpers that start serve and type into a tab
    from tests.support.served import serving

    folder.mkdir(parents=True, exist_ok=True)
    with serving(folder) as served:
        return asyncio.run(_try_all(served, canary))


async def _try_all(served: object, canary: Path) -> list[Outcome]:
    import aiohttp

    from tests.support.served import CTRL_R, END, ENTER, SHIFT_TAB, UP, Keyboard, processes_under

    origin, token, port = served.origin, served.token, served.port  # type: ignore[attr-defined]
    socket_url = f"ws://127.0.0.1:{port}/ws?width=140&height=45"
    outcomes: list[Outcome] = []
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{origin}/?token={token}", allow_redirects=False) as signed_in:
            cookie = signed_in.headers["Set-Cookie"].split(";")[0]
        tries = [
            ("page without the token", f"{origin}/", {}),
            ("page with a wrong token", f"{origin}/?token=wrong-{token[:8]}", {}),
            ("page with the cookie, from another origin", f"{origin}/", {"Cookie": cookie, "Origin": "http://127.0.0.1:1"}),
            ("socket without the token", socket_url, {"Origin": origin}),
            ("socket with a wrong token", f"{socket_url}&token=wrong", {"Origin": origin}),
            ("socket with the token, from another origin", f"{socket_url}&token={token}", {"Origin": "http://evil.example"}),
            ("socket with the cookie, from another port", socket_url, {"Cookie": cookie, "Origin": "http://127.0.0.1:1"}),
            ("socket from a sandboxed page (Origin null)", f"{socket_url}&token={token}", {"Origin": "null"}),
        ]  # fmt: skip
        for name, url, headers in tries:
            started = time.perf_counter()
            websocket = url.startswith("ws:")
            if websocket:
                headers = {**headers, "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                           "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}  # fmt: skip
            async with http.get(url.replace("ws:", "http:", 1), headers=headers, allow_redirects=False) as reply:
                body = (await reply.text()).strip()
                status = reply.status
            problems = [] if status == 403 and "\n" not in body else [f"answered {status}: {body[:120]!r}"]
            if websocket and processes_under(served.process.pid)[1:]:  # type: ignore[attr-defined]
                problems.append("a tab's workbench was started")
            outcomes.append(Outcome(_attack(name), status, time.perf_counter() - started, None, body, problems))

        started = time.perf_counter()
        problems: list[str] = []
        async with http.ws_connect(f"{socket_url}&token={token}", headers={"Origin": origin}) as tab:
            keyboard = Keyboard(tab)
            await keyboard.until("Prompt")
            await keyboard.type(*[SHIFT_TAB] * 4, ENTER)
            await keyboard.until("off here")
            if "MCP server…" in keyboard.screen or "Toolset…" in keyboard.screen:
                problems.append("the App field offers MCP server… or Toolset…")
            await keyboard.type(END, UP, ENTER, f"sh -c 'touch {canary}'", ENTER, "hello", CTRL_R)
            await asyncio.sleep(5)  # what the keystrokes would have started has started by now
        if canary.exists():
            problems.append("the command ran")
        name = 'keystrokes for "MCP server…" with the token, without --allow-commands'
        outcomes.append(Outcome(_attack(name, "off here"), None, time.perf_counter() - started, None,
                                "the entry is not offered", problems))  # fmt: skip
    return outcomes
