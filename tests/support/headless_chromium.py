"""A real headless Chromium driven over the DevTools protocol (a small CDP client on aiohttp's websocket).

Records every network request the page makes and every console error or uncaught exception, evaluates
JavaScript, and takes PNG screenshots. Tests that need it use the ``chromium`` fixture, which skips with a
one-line reason on a machine without Debian's ``chromium`` package (CI installs it in ``.ci/run``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--mute-audio",
    "--remote-debugging-port=0",
    "--remote-allow-origins=*",
)
"""What works on this machine's closed network (see the machine notes): no background connections."""


def keep_screenshot(path: Path) -> None:
    """Copy a screenshot where a person can look at it, when KEEP_SCREENSHOTS names a directory."""
    target = os.environ.get("KEEP_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / path.name)


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class Page:
    """One tab: its requests, its console errors, and a way to evaluate and capture it."""

    browser: Chromium
    session_id: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    loaded: asyncio.Event = field(default_factory=asyncio.Event)

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        return await self.browser.send(method, params, session_id=self.session_id)

    async def goto(self, url: str, timeout: float = 60) -> None:
        self.loaded.clear()
        await self.send("Page.navigate", url=url)
        await asyncio.wait_for(self.loaded.wait(), timeout)

    async def evaluate(self, expression: str) -> Any:
        reply = await self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in reply:
            raise AssertionError(f"JavaScript failed: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    async def wait_for(self, expression: str, timeout: float = 60, interval: float = 0.2) -> Any:
        """Poll ``expression`` until it is truthy (a generous bound: CI machines are busy)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            value = await self.evaluate(expression)
            if value:
                return value
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"timed out waiting for {expression}")
            await asyncio.sleep(interval)

    async def screenshot(self, path: Path, *, full_page: bool = True) -> Path:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full_page}
        reply = await self.send("Page.captureScreenshot", **params)
        path.write_bytes(base64.b64decode(reply["data"]))
        return path

    def on_event(self, method: str, params: dict[str, Any]) -> None:
        if method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Page.loadEventFired":
            self.loaded.set()
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.errors.append(details.get("exception", {}).get("description") or details.get("text", "exception"))
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            self.errors.append(" ".join(str(arg.get("value", arg.get("description", ""))) for arg in params["args"]))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            self.errors.append(f"{params['entry']['source']}: {params['entry']['text']}")


class Chromium:
    """A headless Chromium process and one DevTools connection to it."""

    def __init__(self, executable: str) -> None:
        self.executable = executable
        self._profile = tempfile.TemporaryDirectory(prefix="share-chromium-")
        self._process: subprocess.Popen[bytes] | None = None
        self._ws: Any = None
        self._http: Any = None
        self._ids = 0
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._pages: dict[str, Page] = {}
        self._reader: asyncio.Task[None] | None = None

    async def start(self, timeout: float = 60) -> None:
        import aiohttp

        self._process = subprocess.Popen(
            [self.executable, *FLAGS, f"--user-data-dir={self._profile.name}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        url = await asyncio.wait_for(asyncio.to_thread(self._devtools_url), timeout)
        self._http = aiohttp.ClientSession()
        self._ws = await self._http.ws_connect(url, max_msg_size=0)
        self._reader = asyncio.create_task(self._read())

    def _devtools_url(self) -> str:
        assert self._process is not None and self._process.stderr is not None
        for raw in self._process.stderr:
            match = re.search(rb"DevTools listening on (ws://\S+)", raw)
            if match:
                threading_drain(self._process.stderr)
                return match.group(1).decode()
        raise RuntimeError(f"chromium exited ({self._process.wait()}) before it listened")

    async def _read(self) -> None:
        async for message in self._ws:
            data = json.loads(message.data)
            if "id" in data:
                future = self._waiting.pop(data["id"], None)
                if future is not None and not future.done():
                    if "error" in data:
                        future.set_exception(RuntimeError(f"CDP error: {data['error']}"))
                    else:
                        future.set_result(data.get("result", {}))
            elif (page := self._pages.get(data.get("sessionId", ""))) is not None:
                page.on_event(data["method"], data.get("params", {}))

    async def send(self, method: str, params: dict[str, Any] | None = None, *, session_id: str | None = None) -> Any:
        self._ids += 1
        message: dict[str, Any] = {"id": self._ids, "method": method, "params": params or {}}
        if session_id:
            message["sessionId"] = session_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[self._ids] = future
        await self._ws.send_str(json.dumps(message))
        return await asyncio.wait_for(future, 120)

    async def new_page(self, width: int = 1280, height: int = 900) -> Page:
        target = await self.send("Target.createTarget", {"url": "about:blank"})
        attached = await self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
        page = Page(self, attached["sessionId"])
        self._pages[page.session_id] = page
        for domain in ("Page", "Network", "Runtime", "Log"):
            await page.send(f"{domain}.enable")
        await page.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                        mobile=False)  # fmt: skip
        return page

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        if self._ws is not None:
            await self._ws.close()
        if self._http is not None:
            await self._http.close()
        if self._process is not None and self._process.poll() is None:
            os.killpg(self._process.pid, signal.SIGTERM)
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self._process.pid, signal.SIGKILL)
                self._process.wait()
        self._profile.cleanup()


def threading_drain(stream: Any) -> None:
    """Keep reading Chromium's stderr in the background so it never blocks on a full pipe."""
    import threading

    threading.Thread(target=lambda: [None for _ in stream], daemon=True).start()
