"""``workbench serve`` attacked as issue 20 found it open: a page of another origin in the user's browser, a
local program without the token or with a wrong one, the token looked for in ``ps`` and in the log. Each
attack tries the keystrokes that pick the App field's "MCP server…", type ``sh -c 'touch MARKER'`` and run
(ctrl+r); with ``--allow-commands`` and the token, those keystrokes do start the command."""

from __future__ import annotations

import asyncio
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli_process import workbench_process
from tests.support.headless_chromium import Chromium
from tests.support.served import (
    CTRL_R,
    END,
    ENTER,
    SHIFT_TAB,
    UP,
    Keyboard,
    Served,
    another_origin,
    free_port,
    open_printed_url,
    processes_under,
    serving,
)

pytest.importorskip("textual_serve", reason="the serve extra is not installed")
aiohttp = pytest.importorskip("aiohttp")

CART_SERVER = f"{sys.executable} -m workbench serve-app cart --items 20"
TO_THE_APP_FIELD = [SHIFT_TAB] * 4
"""From the prompt (focused at start): task, model, items, app."""


def attack_command(marker: Path) -> str:
    return f"sh -c 'touch {marker}'"


async def pick_mcp_and_run(keyboard: Keyboard, marker: Path) -> None:
    """The attack: open the App field, pick "MCP server…" (second from the end), type the command, run."""
    await keyboard.type(*TO_THE_APP_FIELD, ENTER)
    await keyboard.until("MCP server…")
    await keyboard.type(END, UP, ENTER)
    await keyboard.until("An MCP server as the app")
    await asyncio.sleep(1.5)  # the dialog's field takes focus (keys before that reach no field)
    await keyboard.type(attack_command(marker))
    await asyncio.sleep(1)
    await keyboard.type(ENTER)
    await keyboard.until("each arm starts its own copy")
    await asyncio.sleep(1)
    await keyboard.type("hello", CTRL_R)


async def wait_for_file(path: Path, timeout: float = 90) -> bool:
    deadline = asyncio.get_running_loop().time() + timeout
    while not path.exists() and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
    return path.exists()


def status_of(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """Status, headers and body of a GET that follows no redirect."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=60) as reply:
            return reply.status, dict(reply.headers), reply.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


async def refused_status(url: str, origin: str | None = None, cookie: str | None = None) -> int:
    """The HTTP status a websocket handshake to ``url`` got (it must not open)."""
    headers = {key: value for key, value in (("Origin", origin), ("Cookie", cookie)) if value is not None}
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            async with http.ws_connect(url, headers=headers, timeout=aiohttp.ClientWSTimeout(ws_receive=60)):
                pass
    return refused.value.status


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """A server as a user starts it for their own MCP server: no --allow-commands."""
    with serving(tmp_path, "--mcp", CART_SERVER) as server:
        yield server


ATTACK_PAGE = r"""<!doctype html><meta charset="utf-8"><title>waiting</title><script>
// What a page of another origin would do: open the workbench's socket, wait for each screen, type the attack.
const socket = new WebSocket("ws://127.0.0.1:PORT/ws?width=140&height=45");
socket.binaryType = "arraybuffer";
const decoder = new TextDecoder();
let opened = false, screen = "", wake = () => {};
socket.onmessage = (event) => {
  if (typeof event.data !== "string")
    screen += decoder.decode(event.data, {stream: true}).replace(/\x1b\[[0-9;?<>=]*[ -\/]*[@-~]/g, "");
  wake();
};
const until = async (text) => {
  document.title = "opened, waiting for " + text;
  while (!screen.includes(text)) await new Promise((resolve) => { wake = resolve; });
};
const type = async (...keys) => {
  for (const key of keys) { socket.send(JSON.stringify(["stdin", key])); await new Promise((r) => setTimeout(r, 300)); }
};
socket.onopen = async () => {
  opened = true;
  await until("Prompt");
  await type("\x1b[Z", "\x1b[Z", "\x1b[Z", "\x1b[Z", "\r");
  await until("MCP server…");
  await type("\x1b[F", "\x1b[A", "\r");
  await until("An MCP server as the app");
  await new Promise((r) => setTimeout(r, 1500));  // the dialog's field takes focus
  await type("sh -c 'touch MARKER'");
  await new Promise((r) => setTimeout(r, 1000));
  await type("\r");
  await until("each arm starts its own copy");
  await new Promise((r) => setTimeout(r, 1000));
  await type("hello", "\x12");
  document.title = "typed";
};
socket.onclose = (event) => { if (!opened) document.title = "refused " + event.code; };
</script>"""


async def test_a_page_of_another_origin_cannot_drive_the_workbench(
    chromium: Chromium, served: Served, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    page = await chromium.new_page()
    await open_printed_url(page, served)  # the user opened the workbench: the browser holds the cookie, and sends
    await page.wait_for("document.body.classList.contains('-first-byte')", timeout=120)  # it to the site's sockets
    await page.goto("about:blank")  # that tab's workbench ends with its socket
    attack = ATTACK_PAGE.replace("PORT", str(served.port)).replace("MARKER", str(marker))
    with another_origin(attack) as address:
        attacker = await chromium.new_page()
        await attacker.goto(address)
        title = await attacker.wait_for("/^(refused|opened)/.test(document.title) && document.title", timeout=120)
    assert title == "refused 1006", title  # the handshake was refused: the socket never opened
    origin = address.rstrip("/")
    assert f"refused GET /ws: a page of '{origin}' is not this server's page" in served.log()
    await asyncio.sleep(3)  # what the page would have typed, had it opened, would have run by now
    assert not marker.exists()


async def test_a_program_needs_the_token_and_the_served_origin(served: Served, tmp_path: Path) -> None:
    socket_url = f"ws://127.0.0.1:{served.port}/ws?width=140&height=45"
    assert await refused_status(socket_url) == 403
    assert await refused_status(socket_url, origin=served.origin) == 403
    assert await refused_status(f"{socket_url}&token=wrong-{served.token}", origin=served.origin) == 403
    assert await refused_status(f"{socket_url}&token={served.token}", origin="http://127.0.0.1:1") == 403
    assert await refused_status(f"{socket_url}&token={served.token}", origin="null") == 403

    status, headers, body = status_of(served.url)
    cookie = headers["Set-Cookie"].split(";")[0]
    assert status == 200 and 'location.replace("./")' in body
    assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= {part.strip() for part in headers["Set-Cookie"].split(";")}
    assert served.token not in cookie  # the cookie holds a value derived from the token
    assert await refused_status(socket_url, origin="http://localhost:1", cookie=cookie) == 403  # cookie, other page
    assert processes_under(served.process.pid) == [served.process.pid]  # no workbench was started for any of them

    marker = tmp_path / "marker"
    headers = {"Origin": served.origin, "Cookie": cookie}
    async with aiohttp.ClientSession() as http, http.ws_connect(socket_url, headers=headers) as websocket:
        keyboard = Keyboard(websocket)
        await keyboard.until("Prompt")  # the workbench works, on the app given to serve
        await keyboard.type(*TO_THE_APP_FIELD, ENTER)
        await keyboard.until("MCP server / toolset: off here")
        assert "your tools" in keyboard.screen
        assert "MCP server…" not in keyboard.screen and "Toolset…" not in keyboard.screen
        await keyboard.type(END, ENTER)
        await keyboard.until("`workbench serve --allow-commands` enables them.")
        await keyboard.type(attack_command(marker), ENTER, "hello", CTRL_R)  # the rest of the attack, typed blind
    assert not marker.exists()


async def test_with_allow_commands_and_the_token_the_keystrokes_run_the_command(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    with serving(tmp_path, "--allow-commands") as server:
        first = server.log().splitlines()[1]
        assert first.startswith("workbench: whoever opens this URL can run comparisons with your model keys")
        assert first.endswith("and run any command as you (--allow-commands); the URL is a password")
        socket_url = f"ws://127.0.0.1:{server.port}/ws?width=140&height=45&token={server.token}"
        headers = {"Origin": f"http://localhost:{server.port}"}  # the other spelling of the loopback origin
        async with aiohttp.ClientSession() as http, http.ws_connect(socket_url, headers=headers) as websocket:
            keyboard = Keyboard(websocket)
            await keyboard.until("Prompt")
            await pick_mcp_and_run(keyboard, marker)
            assert await wait_for_file(marker)  # the attack's keystrokes are real: here they run the command


def test_pages_need_the_token_or_its_cookie(served: Served) -> None:
    status, _, body = status_of(f"{served.origin}/")
    assert (status, body) == (403, "workbench serve: open the URL the terminal printed when the server started "
                                   "(it holds the token).\n")  # fmt: skip
    assert status_of(f"{served.origin}/?token=nope")[0] == 403
    assert status_of(f"{served.origin}/static/js/textual.js")[0] == 403
    status, headers, body = status_of(f"{served.url}&fontsize=20")
    assert status == 200 and 'location.replace("./?fontsize=20")' in body  # the token leaves the address
    assert served.token not in body and headers["Cache-Control"] == "no-store"
    cookie = {"Cookie": headers["Set-Cookie"].split(";")[0]}
    status, headers, body = status_of(f"{served.origin}/", cookie)
    assert status == 200 and "textual" in body and served.token not in body
    assert headers["X-Frame-Options"] == "DENY" and headers["Referrer-Policy"] == "no-referrer"
    assert status_of(f"{served.origin}/static/js/textual.js", cookie)[0] == 200
    assert status_of(f"{served.origin}/", {**cookie, "Origin": "http://127.0.0.1:1"})[0] == 403
    status, headers, _ = status_of(f"http://localhost:{served.port}/?token={served.token}")
    assert (status, headers["Location"]) == (303, served.url)  # one address, where the page's socket points
    log = served.stop()
    assert log.count(served.token) == 1, log  # printed once, in the URL; never in an access-log line
    assert '"GET /?token=…' in log  # the access log's request line, redacted


def test_the_token_is_in_no_command_line_and_no_tab_environment(tmp_path: Path) -> None:
    token = "fixed-token-for-the-test-0123456789"
    with serving(tmp_path, env={"WORKBENCH_SERVE_TOKEN": token}) as server:
        assert server.token == token

        async def open_a_tab() -> list[int]:
            socket_url = f"ws://127.0.0.1:{server.port}/ws?token={token}"
            headers = {"Origin": server.origin}
            async with aiohttp.ClientSession() as http, http.ws_connect(socket_url, headers=headers) as websocket:
                await Keyboard(websocket).until("Prompt")
                return processes_under(server.process.pid)

        processes = asyncio.run(open_a_tab())
        assert len(processes) >= 2, "the tab's workbench runs under serve"
        for pid in processes:
            command_line = Path(f"/proc/{pid}/cmdline").read_bytes()
            assert token.encode() not in command_line, command_line
            if pid != server.process.pid:  # serve's own environment is the user's; its tabs' do not inherit it
                assert token.encode() not in Path(f"/proc/{pid}/environ").read_bytes()
        served_tab = [Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") for pid in processes[1:]]
        assert any(args[3:5] == [b"--served", b"no-commands"] for args in served_tab), served_tab


def test_a_weak_fixed_token_is_refused(tmp_path: Path) -> None:
    done = workbench_process("serve", "--port", str(free_port()), db=tmp_path / "s.db",
                             env={"WORKBENCH_SERVE_TOKEN": "short"})  # fmt: skip
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr.startswith("workbench: error: WORKBENCH_SERVE_TOKEN must be 16 to 256 of the characters")
    assert "short" not in done.stderr


def test_the_hostile_rows_requests_all_hold(tmp_path: Path) -> None:
    from reliability.serve_attacks import serve_attacks

    outcomes = serve_attacks(tmp_path / "serve", tmp_path / "CANARY")
    assert len(outcomes) == 9
    assert [outcome.problems for outcome in outcomes if not outcome.held] == []
    assert not (tmp_path / "CANARY").exists()
