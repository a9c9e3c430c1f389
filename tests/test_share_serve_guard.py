"""The guard of ``workbench serve`` on its own: an aiohttp application with only the guard and a handler that
says "ok", driven by aiohttp's test client (fast; the real server is attacked in test_share_serve_attacks.py)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest

from workbench.share.serve_guard import BadToken, Guard, Redact, add_safety_headers, new_token, origin_of

aiohttp = pytest.importorskip("aiohttp")
from aiohttp import web  # noqa: E402
from aiohttp.test_utils import TestClient, TestServer  # noqa: E402

TOKEN = "a-token-for-the-guard-tests"


async def client_for(public_url: str) -> TestClient:
    guard = Guard(TOKEN, public_url)
    app = web.Application(middlewares=[guard.middleware()])
    app.on_response_prepare.append(add_safety_headers)

    async def ok(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app.add_routes([web.get("/", ok), web.get("/ws", ok), web.get("/static/x.js", ok)])
    client = TestClient(TestServer(app))
    await client.start_server()
    return client


@pytest.fixture
async def proxied() -> AsyncIterator[TestClient]:
    """Behind a proxy with TLS and a path prefix: ``--public-url https://wb.example.com/bench``."""
    client = await client_for("https://wb.example.com/bench/")
    yield client
    await client.close()


async def test_behind_a_proxy_only_the_public_origin_is_accepted(proxied: TestClient) -> None:
    signed_in = await proxied.get(f"/?token={TOKEN}", headers={"Host": "127.0.0.1:8000"})
    assert signed_in.status == 200 and 'location.replace("./")' in await signed_in.text()  # relative: keeps /bench
    cookie = signed_in.headers["Set-Cookie"]
    assert "Secure" in cookie and "Path=/bench/" in cookie and cookie.startswith("workbench-serve-443=")
    value = cookie.split(";")[0]
    page = await proxied.get("/", headers={"Cookie": value, "Origin": "https://wb.example.com"})
    assert page.status == 200 and await page.text() == "ok"  # no redirect loop through the proxy's Host
    for foreign in ("https://wb.example.com:8443", "http://wb.example.com", "http://127.0.0.1:8000", "null"):
        refused = await proxied.get("/ws", headers={"Cookie": value, "Origin": foreign, "Upgrade": "websocket"})
        assert refused.status == 403, foreign
    assert (await proxied.get("/static/x.js")).status == 403
    assert (await proxied.get("/static/x.js", headers={"Cookie": value})).status == 200
    assert (await proxied.get(f"/ws?token={TOKEN}", headers={"Upgrade": "websocket"})).status == 200  # a program


async def test_a_loopback_spelling_is_sent_to_the_printed_address() -> None:
    client = await client_for("http://127.0.0.1:8000")
    try:
        moved = await client.get(f"/?token={TOKEN}&fontsize=20", headers={"Host": "localhost:8000"},
                                 allow_redirects=False)  # fmt: skip
        assert moved.status == 303 and moved.headers["Location"] == f"http://127.0.0.1:8000/?token={TOKEN}&fontsize=20"
        for origin in ("http://localhost:8000", "http://[::1]:8000", "http://127.0.0.1:8000"):
            reply = await client.get(f"/ws?token={TOKEN}", headers={"Origin": origin, "Upgrade": "websocket"})
            assert reply.status == 200, origin
        assert (await client.get(f"/ws?token={TOKEN}", headers={"Origin": "http://localhost:8001"})).status == 403
        framed = await client.get(f"/?token={TOKEN}")
        assert framed.headers["X-Frame-Options"] == "DENY"
        assert framed.headers["Content-Security-Policy"] == "frame-ancestors 'none'"
    finally:
        await client.close()


def test_origins_are_written_as_browsers_write_them() -> None:
    assert origin_of("https://WB.example.com:443/bench") == "https://wb.example.com"
    assert origin_of("http://127.0.0.1:8000/") == "http://127.0.0.1:8000"
    assert origin_of("http://[::1]:8000") == "http://[::1]:8000"


def test_a_fixed_token_must_be_long_and_url_safe() -> None:
    assert len(new_token(None)) == 43 and new_token(None) != new_token(None)
    assert new_token("0123456789abcdef") == "0123456789abcdef"
    for weak in ("short", "has space in it....", "x" * 257, "ünicode-ünicode-ü"):
        with pytest.raises(BadToken) as refused:
            new_token(weak)
        assert weak not in str(refused.value)  # a password is not repeated in the error


def record(message: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("aiohttp.access", logging.INFO, __file__, 1, message, args, None)


def test_log_records_lose_the_token_and_its_cookie() -> None:
    guard = Guard(TOKEN, "http://127.0.0.1:8000")
    redact = Redact(guard.secrets)
    access = record('"GET %s HTTP/1.1" %s', f"/?token={TOKEN}&x=1", 303)
    assert redact.filter(access) and access.getMessage() == '"GET /?token=…&x=1 HTTP/1.1" 303'
    cookie = guard.secrets[1]
    error = record("cookie %s, token %s", cookie, TOKEN)
    redact.filter(error)
    assert TOKEN not in error.getMessage() and cookie not in error.getMessage()
