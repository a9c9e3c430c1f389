"""Who may drive ``workbench serve``: the holder of the token, from a page of the served origin.

textual-serve starts a workbench process for every websocket on ``/ws`` and types into it whatever the socket
sends, so an open websocket is the keyboard of a workbench running as the serving user. This guard sits in
front of every route (aiohttp middleware on textual-serve's application):

- a random token, printed in the URL as Jupyter does, is needed on the page and on the websocket; a valid
  ``?token=`` on the page sets an HttpOnly, SameSite=Strict cookie (compared with :func:`hmac.compare_digest`)
  and sends the browser on to the address without the token, so it stays out of the address bar and the history;
- a request whose ``Origin`` is not the served origin is refused even with the cookie: a page on another port
  of the same host is the same *site* (cookies ignore ports), and browsers send its websocket our cookie;
- the token never reaches a log line: the access log's request lines and every other record are redacted.

Without aiohttp or textual-serve (the ``serve`` extra) nothing here is imported.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import logging
import re
import secrets
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from workbench.errors import UserError

TOKEN_ENV = "WORKBENCH_SERVE_TOKEN"
"""A fixed token for users who need one (a bookmark, a proxy's health check); read from the environment, never
from the command line, which every local user can read with ``ps``."""
TOKEN_RULE = re.compile(r"[A-Za-z0-9._~-]{16,256}")
TOKEN_RULE_TEXT = "16 to 256 of the characters A-Z a-z 0-9 . _ ~ -"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
TITLE = "Code Mode Workbench"
OPEN_PRINTED = "workbench serve: open the URL the terminal printed when the server started (it holds the token)."
_DEFAULT_PORTS = {"http": 80, "https": 443}

log = logging.getLogger("workbench.serve")

Handler = Callable[[Any], Awaitable[Any]]


class BadToken(UserError, ValueError):
    """``WORKBENCH_SERVE_TOKEN`` is too short or has characters a URL would have to escape."""


def new_token(fixed: str | None) -> str:
    """The token for this server: the fixed one if it is acceptable, else 32 random bytes (43 characters)."""
    if fixed is None:
        return secrets.token_urlsafe(32)
    if not TOKEN_RULE.fullmatch(fixed):
        raise BadToken(f"{TOKEN_ENV} must be {TOKEN_RULE_TEXT} (it is a password); got {len(fixed)} characters")
    return fixed


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url`` as a browser writes it in ``Origin`` (no default port, lower case)."""
    parts = urlsplit(url)
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    return f"{scheme}://{host}" if port in (None, _DEFAULT_PORTS.get(scheme)) else f"{scheme}://{host}:{port}"


def loopback_aliases(origin: str) -> set[str]:
    """The other spellings of a loopback origin (127.0.0.1, localhost, [::1] at the same port); none for
    another host."""
    scheme, _, netloc = origin.partition("://")
    host, _, port = netloc.rpartition(":") if not netloc.endswith("]") and ":" in netloc else (netloc, "", "")
    if host not in LOOPBACK_NAMES:
        return set()
    suffix = f":{port}" if port else ""
    return {f"{scheme}://{name}{suffix}" for name in LOOPBACK_NAMES} - {origin}


class Guard:
    """The token, its cookie and the allowed origins of one server, and the middleware that applies them."""

    def __init__(self, token: str, public_url: str) -> None:
        self._token = token.encode()
        self.public_url = public_url.rstrip("/")
        self.origin = origin_of(self.public_url)
        self.aliases = loopback_aliases(self.origin)
        """Loopback spellings of the served origin: accepted as an ``Origin``, and a page asked for under one
        is sent to the printed address (the page's websocket and assets are addressed there)."""
        self.origins = {self.origin, *self.aliases}
        parts = urlsplit(self.public_url)
        self.cookie_name = f"workbench-serve-{parts.port or _DEFAULT_PORTS.get(parts.scheme, 0)}"
        """Named by port: cookies ignore ports, so two servers on one host would overwrite one name."""
        self.cookie_path = parts.path.rstrip("/") + "/"
        self.cookie_secure = parts.scheme == "https"
        self._cookie = hmac.new(self._token, b"workbench serve cookie", hashlib.sha256).hexdigest()
        """The cookie holds a value derived from the token, not the token."""
        self.secrets = (token, self._cookie)

    @property
    def url(self) -> str:
        """The address to print: the one place the token is shown."""
        return f"{self.public_url}/?token={quote(self._token.decode(), safe='')}"

    def token_matches(self, given: str) -> bool:
        return _same(given, self._token)

    def cookie_matches(self, request: Any) -> bool:
        given = request.cookies.get(self.cookie_name)
        return given is not None and _same(given, self._cookie.encode())

    def middleware(self) -> Callable[[Any, Handler], Awaitable[Any]]:
        """The aiohttp middleware that lets a request through only with the token or its cookie, from the served
        origin (or no origin: a program that is not a browser, which then needs the token)."""
        from aiohttp import web

        @web.middleware
        async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
            origin = request.headers.get("Origin")
            if origin is not None and origin.lower() not in self.origins:
                log.warning("refused %s %s: a page of %s is not this server's page", request.method, request.path,
                            ascii(origin))  # fmt: skip
                return refusal(f"workbench serve: refused: a page of {origin!a} may not drive this workbench.")
            if request.method in ("GET", "HEAD") and not _is_websocket(request) and self._is_alias(request.host):
                return redirect(f"{self.public_url}{request.rel_url.path_qs}")
            given = request.query.get("token")
            if given is not None:
                if not self.token_matches(given):
                    log.warning("refused %s %s: a wrong token", request.method, request.path)
                    return refusal(OPEN_PRINTED)
                if request.path == "/" and not _is_websocket(request):
                    return self._signed_in(request)
            elif not self.cookie_matches(request):
                if _is_websocket(request):
                    log.warning("refused %s %s: no token", request.method, request.path)
                return refusal(OPEN_PRINTED)
            response: web.StreamResponse = await handler(request)
            return response

        return guard

    def _is_alias(self, host: str) -> bool:
        return f"{urlsplit(self.public_url).scheme}://{host.lower()}" in self.aliases

    def _signed_in(self, request: Any) -> Any:
        """The page asked for with the right token: the cookie, and a page that goes on to the same address
        without the token (relative, so a proxy's path prefix is kept), replacing it in the history.

        Not a 303: a browser that followed a link from another site treats the redirect's request as that
        site's, and sends no SameSite=Strict cookie; a navigation this page starts is our own."""
        from aiohttp import web

        rest = urlencode([(key, value) for key, value in request.query.items() if key != "token"])
        target = f"./?{rest}" if rest else "./"  # URL-encoded: nothing in it can close the tag or the script
        body = (
            f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0; url={html.escape(target)}">'
            f"<title>{html.escape(TITLE)}</title><script>location.replace({json.dumps(target)})</script>"
        )
        response = web.Response(text=body, content_type="text/html")
        response.set_cookie(
            self.cookie_name, self._cookie, path=self.cookie_path, httponly=True, samesite="Strict",
            secure=self.cookie_secure,
        )  # fmt: skip
        return response


def _same(given: str, expected: bytes) -> bool:
    """Constant-time comparison (any text may be sent; only bytes compare safely)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected)


def _is_websocket(request: Any) -> bool:
    return request.headers.get("Upgrade", "").lower() == "websocket"


def refusal(line: str) -> Any:
    from aiohttp import web

    return web.Response(status=403, text=line + "\n", content_type="text/plain")


def redirect(location: str) -> Any:
    from aiohttp import web

    return web.Response(status=303, headers={"Location": location})


async def add_safety_headers(request: Any, response: Any) -> None:
    """No framing (a page of the same site could frame ours and steer clicks), no referrer (the first address
    holds the token), and nothing cached."""
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("Content-Security-Policy", "frame-ancestors 'none'")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    response.headers.setdefault("Cache-Control", "no-store")


class Redact(logging.Filter):
    """Removes the token (and its cookie value, and any ``token=`` query value) from every log record: the
    access log writes each request line, ``GET /?token=...`` included."""

    def __init__(self, secrets_: Iterable[str]) -> None:
        super().__init__()
        self._secrets = tuple(secret for secret in secrets_ if secret)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = re.sub(r"(token=)[^&\s\"']*", r"\1…", message)
        for secret in self._secrets:
            cleaned = cleaned.replace(secret, "…")
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True
