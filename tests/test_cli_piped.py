"""The CLI as people pipe it: no blanks at line ends, no wrapping to a width nobody has, ids never cut."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

import workbench
from tests.support.cli_process import workbench as workbench_command
from workbench.bench import Sweep, plan
from workbench.cli import cli
from workbench.printer import sessions_table
from workbench.session import SessionHeader
from workbench.store import Store
from workbench.store.listing import ArmListing, SessionInfo

FOUR_ARMS = ["tool", "code", "code-eager", "hybrid"]


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A four-arm comparison, a two-arm one and a small bench sweep; the four-arm session's id."""
    path = tmp_path_factory.mktemp("piped") / "sessions.db"
    store = Store(path)
    four = workbench.compare_sync(task="cart/remove-expensive", items=20, db=store, arms=FOUR_ARMS)
    workbench.compare_sync("Write me a poem about carts", app="cart", items=5, db=store)
    cases = [case for case in plan("scaling", app="cart") if case.items <= 20][:1]
    asyncio.run(Sweep(cases, store=store, options={"tier": "scaling", "app": "cart"}).run())
    return path, four.session_id


def _invoke(*args: str, env: dict[str, str] | None = None) -> str:
    result = CliRunner(env=env).invoke(cli, list(args), prog_name="workbench")
    assert result.exit_code == 0, result.output
    return result.stdout


def _no_trailing_blanks(text: str) -> None:
    assert text.strip()
    assert [line for line in text.splitlines() if line != line.rstrip()] == []


def test_piped_show_has_no_padding_and_an_unwrapped_header(stored: tuple[Path, str]) -> None:
    path, four = stored
    out = _invoke("show", four, "--db", str(path), env={"COLUMNS": ""})
    _no_trailing_blanks(out)
    header = out.splitlines()[0]
    assert header.startswith(f"session {four}") and header.endswith("task cart/remove-expensive")
    answers = [line for line in out.splitlines() if " answered: " in line]
    assert len(answers) == 4 and all(line.endswith("remain.") for line in answers)


def test_a_real_pipe_gets_the_same_unpadded_output(stored: tuple[Path, str]) -> None:
    path, four = stored
    for args in (("show", four), ("sessions", "--bench"), ("tasks",), ("bench", "--list")):
        _no_trailing_blanks(workbench_command(*args, db=path))
    shown = workbench_command("show", four, db=path)
    assert shown.splitlines()[0].endswith("task cart/remove-expensive")


def test_width_lays_the_output_out_for_that_many_columns(stored: tuple[Path, str]) -> None:
    path, four = stored
    for width in (60, 80, 120):
        out = _invoke("show", four, "--width", str(width), "--db", str(path))
        _no_trailing_blanks(out)
        assert max(len(line) for line in out.splitlines()) <= width
        listed = _invoke("sessions", "--bench", "--width", str(width), "--db", str(path))
        assert max(len(line) for line in listed.splitlines()) <= width


def test_sessions_at_80_columns_keep_every_id_whole(stored: tuple[Path, str]) -> None:
    path, _ = stored
    ids = [row["session_id"] for row in json.loads(_invoke("sessions", "--bench", "--json", "--db", str(path)))]
    assert len(ids) == 3
    out = _invoke("sessions", "--bench", "--db", str(path), env={"COLUMNS": "80"})
    assert all(session_id in out for session_id in ids)
    assert "…" not in "".join(line.split()[0] for line in out.splitlines()[2:])
    assert max(len(line) for line in out.splitlines()) <= 80


def test_ids_are_whole_at_any_width_with_many_arms() -> None:
    created = datetime(2026, 12, 1, 9, 38, tzinfo=UTC)
    arms = ["tool", "code", "code-eager", "hybrid", "code-speculative", "tool-parallel"]
    prompt = "Remove everything over $50 " * 3
    infos = [
        SessionInfo(
            SessionHeader(f"{n:02d}9549fbd5", "cart", 20, 0, prompt, None, "scripted", created),
            "completed", [ArmListing(name, name, "scripted", "completed", True, 0.0011) for name in arms[: n + 2]],
        )
        for n in range(5)
    ]  # fmt: skip
    for width in (40, 50, 60, 80, 100, 140):
        console = Console(width=width, record=True)
        console.print(sessions_table(infos, width))
        text = console.export_text()
        assert all(info.id in text for info in infos), (width, text)
        assert max(len(line) for line in text.splitlines()) <= width


def test_items_is_a_dash_for_an_app_of_ones_own() -> None:
    created = datetime(2026, 12, 1, 9, 38, tzinfo=UTC)
    own = SessionInfo(SessionHeader("a1b2c3d4e5", "weather", 0, 0, "Weather?", None, "scripted", created), "completed")
    demo = SessionInfo(SessionHeader("f6e5d4c3b2", "cart", 0, 0, "Empty cart", None, "scripted", created), "completed")
    console = Console(width=200, record=True)
    console.print(sessions_table([own, demo], 200))
    rows = {line.split()[0]: line for line in console.export_text().splitlines()[2:]}
    assert "│     – │" in rows["a1b2c3d4e5"] and "│     0 │" in rows["f6e5d4c3b2"]


def test_sessions_leave_out_bench_runs_unless_asked(stored: tuple[Path, str]) -> None:
    path, _ = stored
    own = json.loads(_invoke("sessions", "--json", "--db", str(path)))
    everything = json.loads(_invoke("sessions", "--bench", "--json", "--db", str(path)))
    assert len(own) == 2 and len(everything) == 3
    assert "1 bench run left out (--bench lists them)" in _invoke("sessions", "--db", str(path))


def test_the_sweep_list_names_the_tier(stored: tuple[Path, str]) -> None:
    path, _ = stored
    lines = _invoke("bench", "--list", "--db", str(path)).splitlines()
    assert lines[0].split(" ┃ ")[3].strip() == "tier"
    assert lines[2].split(" │ ")[3].strip() == "scaling"
