"""A sweep's HTML page with its sessions embedded: each run's session folded until opened, the matrix's verdicts
linking to them inside the one file, long results clipped with a mark, and a bound past which sessions are
named instead of embedded. Opened in a real headless Chromium: the rows, a link opening its session, no
network request."""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_process import workbench
from tests.support.headless_chromium import Chromium, keep_screenshot
from workbench.bench import BenchReport, SweepStore, load_sweep
from workbench.share.sweep_html import EMBED_CLIP, session_anchor, sessions_section, sweep_html
from workbench.store import Store

TASKS = ("cart/remove-expensive", "cart/wrap-category", "calendar/invite-upcoming")
REPEATS = 2


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real sweep of the scripted model: three tasks, two repeats, exported as HTML by the CLI."""
    root = tmp_path_factory.mktemp("sweephtml")
    db = root / "bench.db"
    args = ["bench", "--arms", "tool,code", "--repeat", str(REPEATS), "--chart", "none", "--items", "60"]
    for task in TASKS:
        args += ["--task", task]
    report = json.loads(workbench(*args, "--json", db=db))
    out = root / "sweep.html"
    workbench("export", report["sweep_id"], "--format", "html", "--out", str(out), db=db)
    return {"db": db, "report": report, "html": out}


def _sessions(sweep: dict[str, Any]) -> list[str]:
    return [run["session_id"] for run in sweep["report"]["runs"]]


def test_every_session_is_embedded_once_folded_and_every_verdict_links_to_its_own(sweep: dict[str, Any]) -> None:
    html = sweep["html"].read_text(encoding="utf-8")
    sessions = _sessions(sweep)
    assert len(sessions) == len(TASKS) * REPEATS
    for session_id in sessions:
        assert html.count(f'<details class="session" id="{session_anchor(session_id)}"') == 1
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), "every element id is unique across the embedded sessions"
    cases = html.split('<section id="cases">')[1].split("</section>")[0]
    linked = set(re.findall(r'href="#session-([0-9a-f]+)"', cases))
    assert linked == set(sessions)
    assert cases.count('class="session-link"') >= len(sessions) * 2, "each arm's verdict links (tool and code)"
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), "no external resource"


def test_long_results_are_clipped_with_a_visible_mark(sweep: dict[str, Any]) -> None:
    html = sweep["html"].read_text(encoding="utf-8")
    sections = html.split('<section id="sessions">')[1]
    assert "clipped: 1,000 of" in sections and EMBED_CLIP == 1_000
    results = re.findall(r"<summary>(?:result|arguments) .*?</summary><pre>(.*?)</pre>", sections, re.DOTALL)
    assert results and max(len(html_lib.unescape(text)) for text in results) == EMBED_CLIP + 1  # and its "…"


def test_past_the_bound_sessions_are_named_not_embedded(sweep: dict[str, Any]) -> None:
    store = Store(sweep["db"])
    report: BenchReport = load_sweep(store, SweepStore(store).resolve_id(sweep["report"]["sweep_id"]))
    sessions = {run.session_id: store.load(run.session_id) for run in report.runs}
    one = min(len(sweep_html(report, {sid: c}).encode()) for sid, c in sessions.items())
    section, embedded = sessions_section(report, sessions, bound=one)
    assert 1 <= len(embedded) < len(sessions)
    left = set(sessions) - embedded
    assert f"{len(left)} not embedded ({len(left)} past the page's bound of" in section
    assert all(session_id in section for session_id in left)
    page = sweep_html(report, {sid: c for sid, c in sessions.items() if sid in embedded})
    cases = page.split('<section id="cases">')[1].split("</section>")[0]
    assert set(re.findall(r'href="#session-([0-9a-f]+)"', cases)) == embedded, "no link to a missing section"
    without = sweep_html(report)
    assert 'id="sessions"' not in without and "session-link" not in without


async def test_the_page_in_chromium_opens_a_cells_session_and_fetches_nothing(
    sweep: dict[str, Any], chromium: Chromium, tmp_path: Path
) -> None:
    path: Path = sweep["html"]
    page = await chromium.new_page()
    await page.goto(path.as_uri())
    await page.evaluate("new Promise(resolve => requestAnimationFrame(() => resolve(true)))")
    rows = await page.evaluate("[...document.querySelectorAll('#cases tbody tr')].map(tr => tr.cells[0].textContent)")
    assert sorted(rows) == sorted(
        f"{task} ×60 seed {seed}" for task in TASKS for seed in {run["seed"] for run in sweep["report"]["runs"]}
    )
    assert await page.evaluate("document.querySelectorAll('details.session[open]').length") == 0, "folded"
    # The matrix's own filters and sort, in the page.
    visible = "[...document.querySelectorAll('#cases tbody tr')].filter(tr => !tr.hidden)"
    await page.evaluate(
        "(() => { const q = document.getElementById('cases-text'); q.value = 'cart/';"
        " q.dispatchEvent(new Event('input')); })()"
    )
    shown = await page.evaluate(f"{visible}.map(tr => tr.cells[0].textContent)")
    assert shown and all(text.startswith("cart/") for text in shown) and len(shown) < len(rows)
    await page.evaluate(
        "(() => { const q = document.getElementById('cases-text'); q.value = '';"
        " q.dispatchEvent(new Event('input'));"
        " const f = document.getElementById('cases-filter'); f.value = 'failures';"
        " f.dispatchEvent(new Event('change')); })()"
    )
    assert await page.evaluate(f"{visible}.length") == 0, "the scripted model fails no case"
    await page.evaluate(
        "(() => { const f = document.getElementById('cases-filter'); f.value = '';"
        " f.dispatchEvent(new Event('change'));"
        " [...document.querySelectorAll('#cases thead th')].find(th => th.textContent === 'code vs tool').click(); })()"
    )
    sizes = await page.evaluate(
        f"{visible}.map(tr => Math.max(...(tr.lastElementChild.previousElementSibling.textContent"
        ".match(/[-+]\\d+(?=%)/g) || ['0']).map(v => Math.abs(+v))))"
    )
    assert len(sizes) == len(rows) and sizes == sorted(sizes, reverse=True), sizes
    # The code arm's verdict on the last row: its link opens that session's section and brings it into view.
    href = await page.evaluate(
        "(() => { const links = document.querySelectorAll('#cases tbody tr:last-child a.session-link');"
        " links[links.length - 1].click(); return links[links.length - 1].getAttribute('href'); })()"
    )
    target = href.removeprefix("#")
    await page.wait_for(f"document.getElementById('{target}').open")
    visible = await page.evaluate(
        f"(() => {{ const box = document.getElementById('{target}').getBoundingClientRect();"
        " return box.top >= -1 && box.top < innerHeight; })()"
    )
    assert visible, "the opened session is scrolled into view"
    assert await page.evaluate("document.querySelectorAll('details.session[open]').length") == 1
    arms = await page.evaluate(f"[...document.querySelectorAll('#{target} article.arm')].map(a => a.dataset.arm)")
    assert arms == ["tool", "code"]
    screenshot = await page.screenshot(tmp_path / "sweep-session-open.png", full_page=False)
    keep_screenshot(screenshot)
    # Opened by address too: the page's own link to a session unfolds it on load.
    second = await chromium.new_page()
    first = session_anchor(_sessions(sweep)[0])
    await second.goto(f"{path.as_uri()}#{first}")
    await second.wait_for(f"document.getElementById('{first}').open")
    for each in (page, second):
        assert each.requests == [path.as_uri()], f"the page fetched more than itself: {each.requests}"
        assert each.errors == []
    print(f"sweep page with {len(_sessions(sweep))} sessions embedded: {path.stat().st_size:,} bytes")
