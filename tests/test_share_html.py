"""The HTML export: self-contained pages opened in a real headless Chromium (no network, no console errors),
screenshots taken, and the DOM's figures equal to ``run --json`` and ``bench --json``."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.support.cli_process import workbench
from tests.support.headless_chromium import Chromium, Page, keep_screenshot
from workbench.events import (
    ArmEvent,
    EndState,
    Graded,
    InnerCall,
    InnerResult,
    ProviderRetry,
    RequestStarted,
    RunFinished,
    RunStarted,
    Snippet,
    TextDelta,
    ToolCall,
    ToolResult,
    Usage,
)
from workbench.session import ArmRun, Comparison, SessionHeader
from workbench.share.session_html import session_html
from workbench.store import Store

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
FIGURES = (
    "status", "passed", "requests", "input_tokens", "output_tokens", "tool_calls", "inner_calls", "snippets",
    "cost_usd", "wall_s", "diff",
)  # fmt: skip
"""The figures of run --json every session page shows per arm."""


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width >= 800 and height >= 600, (width, height)


async def open_offline(chromium: Chromium, path: Path, screenshot: Path) -> Page:
    """Open the file, check it fetched nothing but itself and logged no error, and take a full-page screenshot."""
    page = await chromium.new_page()
    await page.goto(path.as_uri())
    await page.evaluate("new Promise(resolve => requestAnimationFrame(() => resolve(true)))")
    assert page.requests == [path.as_uri()], f"the page fetched more than itself: {page.requests}"
    assert page.errors == []
    assert_png(await page.screenshot(screenshot))
    keep_screenshot(screenshot)
    return page


async def figures(page: Page, scope: str) -> dict[tuple[str, str], Any]:
    """(arm, key) -> the figure a table cell under ``scope`` carries."""
    cells = await page.evaluate(
        f"[...document.querySelectorAll('{scope} td[data-key]')]"
        ".map(td => [td.dataset.arm, td.dataset.key, JSON.parse(td.dataset.value)])"
    )
    return {(arm, key): value for arm, key, value in cells}


async def test_session_page_in_chromium(chromium: Chromium, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    arms = "tool,code,code-eager,hybrid"  # arms are data: every one is shown, in order, the first the baseline
    run = json.loads(workbench("run", "--task", "cart/remove-expensive", "--arms", arms, "--json", db=db))
    assert [arm["name"] for arm in run["arms"]] == arms.split(",")
    out = tmp_path / "session.html"
    workbench("export", run["session_id"][:6], "--format", "html", "--out", str(out), db=db)
    html = out.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), "no external resource"

    page = await open_offline(chromium, out, tmp_path / "share-session.png")

    shown_arms = await page.evaluate("[...document.querySelectorAll('article.arm')].map(a => a.dataset.arm)")
    assert shown_arms == arms.split(",")
    strips = await page.evaluate("[...document.querySelectorAll('#strip .strip')].map(s => s.dataset.arm)")
    assert strips == arms.split(",")[1:], "each other arm against the baseline"
    shown = await figures(page, "#counter-table")
    for arm in run["arms"]:
        for key in FIGURES:
            assert shown[(arm["name"], key)] == arm[key], (arm["name"], key)
    for (name, key), value in shown.items():  # whatever else the page shows of run --json, it shows as is
        arm = next(arm for arm in run["arms"] if arm["name"] == name)
        if key in arm:
            assert value == arm[key], (name, key)
    bars = await page.evaluate(
        "Object.fromEntries([...document.querySelectorAll('.bars')].map(b => "
        "[b.dataset.arm, [...b.querySelectorAll('.bar')].map(bar => Number(bar.dataset.tokens))]))"
    )
    for arm in run["arms"]:
        assert len(bars[arm["name"]]) == arm["requests"]
        assert sum(bars[arm["name"]]) == arm["input_tokens"]
    widths = await page.evaluate("[...document.querySelectorAll('.bar')].map(b => b.getBoundingClientRect().width)")
    tokens = [value for name in bars for value in bars[name]]
    largest = max(tokens)
    biggest_width = max(widths)
    for width, value in zip(widths, tokens, strict=True):  # one scale: width proportional to tokens
        assert abs(width - value / largest * biggest_width) <= 2

    code = next(arm for arm in run["arms"] if arm["snippets"])
    facts = await page.evaluate(
        f"(() => {{ const a = document.querySelector('article[data-arm=\"{code['name']}\"]');"
        "return {snippets: a.querySelectorAll('.snippet .hl').length, inner: a.querySelectorAll('.inner-call').length,"
        " keywords: a.querySelectorAll('.snippet .hl .k, .snippet .hl .kn').length,"
        " answer: a.querySelector('.answer').textContent,"
        " deleted: a.querySelector('.end-state-counts').textContent}})()"
    )
    assert facts["snippets"] == code["snippets"]
    assert facts["inner"] == code["inner_calls"]
    assert facts["keywords"] > 0, "the snippet is highlighted"
    assert facts["answer"].startswith("Removed 35 items")
    assert f"{code['diff']['deleted']} deleted" in facts["deleted"]
    tool = next(arm for arm in run["arms"] if arm["tool_calls"] > 1)
    tool_calls = await page.evaluate(
        f"document.querySelectorAll('article[data-arm=\"{tool['name']}\"] .tool-call').length"
    )
    assert tool_calls == tool["tool_calls"]
    folded = await page.evaluate("document.querySelectorAll('details:not([open]) > pre').length")
    assert folded > 0, "long results are folded"

    dark = await chromium.new_page()
    await dark.send("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": "dark"}])
    await dark.goto(out.as_uri())
    background = await dark.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(13, 17, 23)"
    assert dark.errors == []
    dark_shot = await dark.screenshot(tmp_path / "share-session-dark.png", full_page=False)
    assert_png(dark_shot)
    keep_screenshot(dark_shot)


async def test_sweep_page_in_chromium(chromium: Chromium, tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    selection = ["--task", "cart/wrap-pricey", "--task", "cart/remove-expensive", "--request-limit", "3"]
    selection += ["--arms", "tool,code,code-eager"]
    report = json.loads(workbench("bench", *selection, "--json", db=db))
    assert report["failures"], "the request limit makes the tool arm fail at the larger sizes"
    out = tmp_path / "sweep.html"
    workbench("export", report["sweep_id"], "--out", str(out), db=db)

    page = await open_offline(chromium, out, tmp_path / "share-sweep.png")

    tiers = await page.evaluate("[...document.querySelectorAll('section.tier')].map(s => s.dataset.tier)")
    assert tiers == [tier["tier"] for tier in report["tiers"]]
    for tier in report["tiers"]:
        conversations = any(stats["means"]["turns"] > 1 for stats in tier["arms"].values())
        assert await figures(page, f'section.tier[data-tier=\\"{tier["tier"]}\\"]') == {
            (arm, key): value
            for arm, stats in tier["arms"].items()
            for key, value in stats["means"].items()
            if key != "turns" or conversations  # the turns row is for conversations only
        }
        headers = await page.evaluate(
            f"[...document.querySelectorAll('section.tier[data-tier=\"{tier['tier']}\"] th .arm-name')]"
            ".map(th => th.textContent)"
        )
        assert headers == list(tier["arms"])
    charts = await page.evaluate(
        "[...document.querySelectorAll('section.scaling')].map(s => [s.dataset.task, "
        "s.querySelectorAll('svg.chart').length, s.querySelectorAll('svg.chart polyline').length])"
    )
    assert charts == [[series["task"], 4, 4 * len(series["values"])] for series in report["scaling"]]
    failures = await page.evaluate("document.querySelectorAll('#failures tr').length - 1")
    assert failures == len(report["failures"])


def test_session_page_lists_every_arm_in_order(tmp_path: Path) -> None:
    """Arms are data: a session with three arms under any names shows all three, the first as the baseline."""
    db = tmp_path / "s.db"
    run = json.loads(workbench("run", "--task", "cart/cap-quantity", "--json", db=db))
    store = Store(str(db))
    stored = store.load(run["session_id"])
    renamed: dict[str, ArmRun] = {}
    sources = [*stored.arms.values(), next(iter(stored.arms.values()))]
    for new_name, arm in zip(("baseline ✓", "<b>code</b>", "third"), sources, strict=True):
        copy = ArmRun(new_name)
        for event in arm.events:
            copy.add(event)
        renamed[new_name] = copy
    comparison = replace(stored, arms=renamed)
    html = session_html(comparison)
    assert re.findall(r'<article class="arm" id="[^"]*" data-arm="([^"]*)"', html) == [
        "baseline ✓", "&lt;b&gt;code&lt;/b&gt;", "third",
    ]  # fmt: skip
    assert "<b>code</b>" not in html, "names are escaped"
    assert "&lt;b&gt;code&lt;/b&gt; vs baseline ✓" in html
    assert "third vs baseline ✓" in html


def test_session_page_shows_retries_failures_updates_and_mismatches() -> None:
    """What a real model's run can hold: a provider retry, a failed call, an update, a failed grade."""
    payloads = [
        RunStarted("code", "openai:gpt-5-mini", "cart", 10, 0, "Cap quantities", ["run_code"], ["update_cart_item"]),
        ProviderRetry(1, 4, "HTTP 429: slow down", 0.5),
        RequestStarted(1),
        Usage(1, 900, 60, 0, 900, 60, 0.001, 0.001),
        ToolCall("c1", "run_code", {"code": "await update_cart_item(item_id='x', quantity=2)"}),
        Snippet("c1", "await update_cart_item(item_id='x', quantity=2)"),
        InnerCall("i1", "c1", "update_cart_item", {"item_id": "x", "quantity": 2}),
        InnerResult("i1", "c1", "update_cart_item", "failed", "", 40, 0.2, error="no item x", content=""),
        ToolResult("c1", "run_code", "retried", "", 80, 3.0, error="<script>alert(1)</script>", content=""),
        RequestStarted(2),
        TextDelta("I could not find item x."),
        Usage(2, 1000, 20, 0, 1900, 80, 0.001, 0.002),
        EndState([], [{"entity": "cart_items", "id": "y", "changes": {"quantity": [5, 2]}}], []),
        Graded(False, "cart/cap-quantity", ["cart_items x: quantity is 5, expected 2"], []),
        RunFinished("completed", None, "I could not find item x."),
    ]
    arm = ArmRun("code")
    for seq, payload in enumerate(payloads):
        arm.add(ArmEvent("code", seq, seq * 0.1, payload))
    header = SessionHeader("abc", "cart", 10, 0, "Cap quantities", "cart/cap-quantity", "openai:gpt-5-mini",
                           datetime(2026, 12, 1, tzinfo=UTC))  # fmt: skip
    comparison = Comparison(header, {"code": arm})
    html = session_html(comparison)
    assert "provider retry 1 of 4 after HTTP 429: slow down; waited 0.5 s" in html
    assert 'class="call failed inner-call"' in html and "no item x" in html
    assert 'class="call retried snippet"' in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert" not in html
    assert "~ cart_items y: quantity 5 → 2" in html
    assert "1 mismatches" in html and "quantity is 5, expected 2" in html
    assert 'id="strip"' not in html, "one arm: nothing to compare against"
