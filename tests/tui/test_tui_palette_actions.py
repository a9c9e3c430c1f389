"""The command palette's *Export session* and *Bench: run TASK* entries, driven through the real palette."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SESSION_ID
from textual.command import CommandPalette

from tests.support.tui_helpers import run_to_end, wait_for
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.bench import BenchScreen
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.screens.replay import ReplayScreen
from workbench.tui.widgets.run_form import RunForm

SIZE = (120, 40)
TASK = "cart/remove-expensive"


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The data directory (where exports go) under the test's own tmp path."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data" / "code-mode-workbench" / "exports"


async def palette(pilot, title: str) -> None:  # type: ignore[no-untyped-def]
    """Open ctrl+p, type ``title``, and run the first entry it finds."""
    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, CommandPalette), what="the palette")
    await pilot.press(*title)
    palette = pilot.app.screen
    await wait_for(pilot, lambda: palette.query_one("CommandList").option_count > 0, what="palette hits")
    await pilot.press("enter")
    await wait_for(pilot, lambda: not isinstance(pilot.app.screen, CommandPalette), what="the palette to close")


async def test_a_replayed_session_exports_as_markdown_html_and_json(stored: Store, data_home: Path) -> None:
    async with make_app(store=stored, replay=SESSION_ID, autoplay=False).run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ReplayScreen), what="the replay")
        screen = pilot.app.screen
        await wait_for(pilot, lambda: screen.session_id == SESSION_ID, what="the session to load")
        for label, fmt in (("Markdown", "md"), ("HTML", "html"), ("JSON", "json")):
            await palette(pilot, f"export session {label}")
            target = data_home / f"session-{SESSION_ID}.{fmt}"
            await wait_for(pilot, target.exists, what=f"the {fmt} export")
            await wait_for(pilot, lambda t=target: any(str(t) in n.message for n in pilot.app._notifications),
                           what="the notification naming the file")  # fmt: skip
    assert (data_home / f"session-{SESSION_ID}.md").read_text().startswith("#")
    assert "<html" in (data_home / f"session-{SESSION_ID}.html").read_text().lower()
    assert json.loads((data_home / f"session-{SESSION_ID}.json").read_text())["session_id"] == SESSION_ID


async def test_a_finished_live_run_exports_its_own_outcome(store: Store, data_home: Path) -> None:
    async with make_app(store=store).run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        screen.query_one(RunForm).choose_task(TASK)
        await wait_for(pilot, lambda: "$50" in screen.query_one("#prompt").text, what="the task's prompt")  # type: ignore[attr-defined]
        await pilot.press("ctrl+r")
        await run_to_end(pilot, screen)
        assert screen.last_comparison is not None
        session_id = screen.last_comparison.session_id
        await palette(pilot, "export session JSON")
        target = data_home / f"session-{session_id}.json"
        await wait_for(pilot, target.exists, what="the json export")
    data = json.loads(target.read_text())
    assert data["session_id"] == session_id
    assert data["task"] == TASK


async def test_bench_for_the_forms_task_runs_on_the_bench_screen(store: Store) -> None:
    async with make_app(store=store).run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        screen.query_one(RunForm).choose_task(TASK)
        await pilot.pause()
        await palette(pilot, f"bench run {TASK}")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, BenchScreen), what="the bench screen")
        bench = pilot.app.screen
        assert bench.sweep is not None
        assert {case.task for case in bench.sweep.cases} == {TASK}
        sweep_id = bench.sweep.sweep_id
        await wait_for(pilot, lambda: bench.report is not None and bench.report.sweep_id == sweep_id,
                       timeout_s=180, what="the sweep's report")  # fmt: skip
        assert bench.report.finished == len(bench.sweep.cases)
        assert any(info.id == sweep_id for info in bench.sweeps)
