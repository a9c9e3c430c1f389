"""``workbench serve`` on a free port, opened in a real headless Chromium: the terminal renders, a comparison
started from the browser completes, and its session is stored (``workbench sessions`` lists it)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli_process import workbench, workbench_process
from tests.support.headless_chromium import Chromium, Page, keep_screenshot
from tests.support.served import Served, another_origin, open_printed_url, serving

pytest.importorskip("textual_serve", reason="the serve extra is not installed")

PROMPT = "Remove everything in the cart that costs more than $50 apiece."


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with serving(tmp_path) as server:
        yield server


async def press(page: Page, key: str, code: str, key_code: int, *, ctrl: bool = False) -> None:
    for kind in ("keyDown", "keyUp"):
        await page.send(
            "Input.dispatchKeyEvent", type=kind, key=key, code=code, windowsVirtualKeyCode=key_code,
            modifiers=2 if ctrl else 0,
        )  # fmt: skip


async def test_a_run_started_in_the_browser_is_stored(chromium: Chromium, served: Served, tmp_path: Path) -> None:
    db = tmp_path / "served.db"
    page = await chromium.new_page(width=1400, height=900)
    await open_printed_url(page, served)  # its token sets the cookie, and the page drops it from the address
    await page.wait_for("document.body.classList.contains('-first-byte')", timeout=120)
    await page.wait_for("document.querySelector('.textual-terminal canvas') !== null", timeout=60)
    await asyncio.sleep(2)  # let the first frame paint before the screenshot
    await page.screenshot(tmp_path / "share-serve.png", full_page=False)

    await page.evaluate("document.querySelector('.xterm-helper-textarea').focus(), true")
    await press(page, "r", "KeyR", 82, ctrl=True)  # an empty prompt: the form focuses the prompt and says so
    await asyncio.sleep(1)
    await page.send("Input.insertText", text=PROMPT)
    await asyncio.sleep(1)
    await press(page, "r", "KeyR", 82, ctrl=True)

    sessions: list[dict[str, object]] = []
    for _ in range(240):  # up to 120 s
        sessions = json.loads(workbench("sessions", "--json", db=db))
        if sessions and sessions[0]["status"] == "completed":
            break
        await asyncio.sleep(0.5)
    assert len(sessions) == 1 and sessions[0]["status"] == "completed", sessions
    assert sessions[0]["prompt"] == PROMPT and sessions[0]["app"] == "cart"
    assert sessions[0]["task"] == "cart/remove-expensive"
    await asyncio.sleep(1)
    shot = await page.screenshot(tmp_path / "share-serve-run.png", full_page=False)
    keep_screenshot(tmp_path / "share-serve.png")
    keep_screenshot(shot)
    assert served.process.poll() is None, "the server keeps serving"


def test_serve_says_where_it_listens_and_refuses_a_taken_port(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = workbench_process("serve", "--port", str(port), db=tmp_path / "s.db")
    assert done.returncode == 2
    assert done.stderr.startswith(f"workbench: error: cannot listen on 127.0.0.1:{port}: ")
    assert done.stderr.count("\n") == 1
    bad = workbench_process("serve", "--model", "nonsense-provider:x", db=tmp_path / "s.db")
    assert bad.returncode == 2 and bad.stderr.startswith("workbench: error: ")


def test_serve_binds_loopback_and_says_so(served: Served) -> None:
    first = served.stop().splitlines()[0]
    assert first == (
        f"workbench: serving on {served.url} (this machine only); each browser tab runs its own workbench. "
        "Ctrl+C stops."
    )
    assert len(served.token) == 43  # secrets.token_urlsafe(32)


async def test_the_printed_url_opens_the_workbench_from_a_link_on_another_site(
    chromium: Chromium, served: Served
) -> None:
    """A link clicked in a chat or a tracker page: the browser sends no SameSite=Strict cookie on a redirect that
    another site started, so the token page goes on by itself (a navigation of our own origin)."""
    with another_origin(f'<!doctype html><a id="go" href="{served.url}">workbench</a>') as address:
        page = await chromium.new_page()
        await page.goto(address.replace("127.0.0.1", "localhost"))  # another site, not only another origin
        await page.evaluate("document.getElementById('go').click(), true")
        await page.wait_for(f"location.href === '{served.origin}/'", timeout=60)
        await page.wait_for("document.querySelector('.textual-terminal') !== null", timeout=60)
        assert "open the URL the terminal printed" not in await page.evaluate("document.body.innerText")


def test_serve_on_every_interface_says_what_anyone_with_the_url_can_do(tmp_path: Path) -> None:
    with serving(tmp_path, "--host", "0.0.0.0") as server:
        assert "(every machine that can reach this one)" in server.log().splitlines()[0]
        assert server.log().splitlines()[1] == (
            "workbench: warning: anyone who can open this URL can run comparisons with your model keys, read and "
            "delete your stored sessions; the URL is a password"
        )
    with serving(tmp_path, "--host", "0.0.0.0", "--allow-commands") as server:
        warning = server.log().splitlines()[1]
        assert warning.endswith("and run any command as you (--allow-commands); the URL is a password"), warning
