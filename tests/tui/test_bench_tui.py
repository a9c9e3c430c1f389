"""The bench screen: lists stored sweeps, shows the newest one's report, and cycles its scaling charts."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from textual.app import App
from textual.widgets import DataTable, Static

from workbench.bench import Sweep, plan
from workbench.store import Store
from workbench.tui.screens.bench import CHART_METRICS, BenchScreen


class Host(App[None]):
    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store

    def on_mount(self) -> None:
        self.push_screen(BenchScreen(self.store))


def text_of(screen: BenchScreen, selector: str) -> str:
    """What a Static shows, as plain text (its Rich renderable or Content printed to a wide console)."""
    content = screen.query_one(selector, Static).content
    console = Console(width=200, color_system=None)
    with console.capture() as captured:
        console.print(content)
    return captured.get()


async def test_bench_screen_shows_the_newest_sweep(db_path: Path) -> None:
    store = Store(db_path)
    cases = [case for case in plan("scaling") if case.items <= 20 and case.app in ("cart", "kanban")]
    cases += plan("everyday", tasks=["cart/cap-quantity"], items=20)
    outcome = await Sweep(cases, store=store).run()

    async with Host(store).run_test(size=(180, 60)) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, BenchScreen)
        for _ in range(100):
            await pilot.pause(0.05)
            if screen.report is not None:
                break
        assert screen.report is not None and screen.report.sweep_id == outcome.sweep_id
        await pilot.pause()
        assert screen.query_one("#sweeps", DataTable).row_count == 1
        assert "everyday" in text_of(screen, "#bench-tiers") and "scaling" in text_of(screen, "#bench-tiers")
        assert "cart/wrap-pricey" in text_of(screen, "#bench-scaling")
        assert screen.metric == CHART_METRICS[0]

        await pilot.press("m")
        assert screen.metric == CHART_METRICS[1]
        await pilot.press("right_square_bracket")
        assert "kanban/tag-open" in text_of(screen, "#bench-scaling")
        await pilot.press("escape")
        assert not isinstance(pilot.app.screen, BenchScreen)


async def test_bench_screen_without_sweeps(db_path: Path) -> None:
    async with Host(Store(db_path)).run_test(size=(120, 40)) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, BenchScreen)
        for _ in range(40):
            await pilot.pause(0.05)
            if "No sweeps yet" in text_of(screen, "#bench-status"):
                break
        assert "workbench bench" in text_of(screen, "#bench-headline")  # the whole hint, in the report pane


async def test_bench_screen_follows_a_queued_sweep_live(db_path: Path) -> None:
    """A queued sweep (real DBOS rows, enqueued by a subprocess; no worker): the screen shows its counts per
    state, and when a comparison is recorded (as a worker would) the runs and the partial report follow."""
    import json
    import subprocess
    import sys

    from workbench.bench import BenchCase, RunResult, SweepStore
    from workbench.runner import ComparisonRun, RunRequest, prepare

    enqueue = (
        "import json; from workbench import open_store; from workbench.bench import plan;"
        "from workbench.config import load_settings; from workbench.queue.enqueue import enqueue_sweep;"
        "from workbench.runner import RunRequest;"
        f"q = enqueue_sweep(open_store({str(db_path)!r}), plan('everyday', tasks=['cart/cap-quantity', "
        "'cart/save-category']), request=RunRequest(model='scripted'), settings=load_settings(), options={}, flags={});"
        "print(json.dumps(q.sweep_id))"
    )
    done = subprocess.run([sys.executable, "-c", enqueue], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    sweep_id = json.loads(done.stdout)
    store = Store(db_path)

    async with Host(store).run_test(size=(180, 60)) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, BenchScreen)
        for _ in range(400):
            await pilot.pause(0.05)
            if screen.query_one("#bench-queue").display and "2 queued" in text_of(screen, "#bench-queue"):
                break
        assert "2 planned · 2 queued · 0 running · 0 finished" in text_of(screen, "#bench-queue")
        assert "0 of 2 runs (running)" in text_of(screen, "#bench-headline")

        case = BenchCase("everyday", "cart/cap-quantity", 60, 0)
        setup = prepare(RunRequest(model="scripted", task=case.task, items=case.items, seed=case.seed))
        result = RunResult.from_comparison(case, await ComparisonRun(setup, store).result())
        assert SweepStore(store).record_once(sweep_id, result, 0)
        for _ in range(400):
            await pilot.pause(0.05)
            if "1 of 2 runs (running)" in text_of(screen, "#bench-headline"):
                break
        assert "1 of 2 runs (running)" in text_of(screen, "#bench-headline")
        assert screen.query_one("#sweeps", DataTable).get_row_at(0)[3] == "1/2"
