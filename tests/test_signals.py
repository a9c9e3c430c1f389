"""SIGTERM, SIGHUP and SIGKILL sent to a real workbench process while its code arm runs a snippet.

A local OpenAI-compatible server makes the code arm write a snippet that never ends and the tool arm wait
for an answer that never comes, so both arms are mid-flight and a Monty worker is busy when the signal
lands. The checks live in :mod:`reliability.stops` (``python -m reliability`` prints
their figures: exit codes, and how long after the workbench's death its workers were gone).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from reliability import hostile, stops
from tests.support.fake_openai import FakeOpenAI, fake_openai
from workbench.store.liveness import process_alive


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with fake_openai(hang_s=120) as running:
        yield running


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stop_signal_ends_a_run_like_ctrl_c(tmp_path: Path, server: FakeOpenAI, signum: int) -> None:
    report = stops.stop_cli_run(tmp_path, signum, base_url=server.url)
    assert report.problems == []
    assert report.exit_code == 128 + signum
    assert report.listed_status == "cancelled"
    assert report.listed_arms == report.shown_arms == {"tool": "cancelled", "code": "cancelled"}
    assert report.workers >= 1 and report.orphaned == 0


def test_sigkill_leaves_no_sandbox_worker_behind(tmp_path: Path, server: FakeOpenAI) -> None:
    report = stops.stop_cli_run(tmp_path, signal.SIGKILL, base_url=server.url)
    assert report.problems == []
    assert report.exit_code == -signal.SIGKILL
    assert report.workers >= 1 and report.orphaned == 0
    assert report.listed_arms == report.shown_arms == {"tool": "interrupted", "code": "interrupted"}


def test_sigterm_stops_a_sweep_and_saves_its_comparison_as_cancelled(tmp_path: Path, server: FakeOpenAI) -> None:
    report = stops.stop_bench(tmp_path, signal.SIGTERM, base_url=server.url)
    assert report.problems == []
    assert report.exit_code == 143
    assert report.listed_arms == report.shown_arms == {"tool": "cancelled", "code": "cancelled"}
    assert report.orphaned == 0


def test_closing_the_tui_terminal_saves_the_running_comparison(tmp_path: Path, server: FakeOpenAI) -> None:
    report = stops.close_tui_terminal(tmp_path, base_url=server.url)
    assert report.problems == []
    assert report.exit_code == 129
    assert report.listed_arms == report.shown_arms
    assert report.shown_arms["code"] == "cancelled"
    assert report.orphaned == 0


CHILD = """
import asyncio, sys
from pydantic_monty import AsyncMonty

async def main():
    async with AsyncMonty(binary_path=sys.argv[1]) as pool:
        async with pool.checkout(limits={"max_feed_duration_secs": 60}) as session:
            print(session.worker_pid, flush=True)
            await session.feed_run("while True:\\n    pass")

asyncio.run(main())
"""


@pytest.mark.parametrize("setpriv", [True, False], ids=["setpriv", "python-prctl"])
def test_the_worker_launcher_ties_each_worker_to_its_parent(tmp_path: Path, setpriv: bool) -> None:
    """Both launchers (util-linux setpriv, or Python's prctl where there is none) make a busy worker die
    with the process that started it, even by SIGKILL."""
    import shutil
    import subprocess
    import sys
    import time

    from pydantic_monty._binary import find_monty_binary

    from workbench.sandbox import launcher_script, write_launcher

    found = shutil.which("setpriv")
    if setpriv and found is None:
        pytest.skip("util-linux setpriv is not installed")
    launcher = write_launcher(tmp_path, launcher_script(find_monty_binary(), setpriv=found if setpriv else None))
    assert launcher is not None
    parent = subprocess.Popen([sys.executable, "-c", CHILD, str(launcher)], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    worker = int(parent.stdout.readline())
    deadline = time.monotonic() + 60
    while stops._cpu_ticks(worker) < 10 and time.monotonic() < deadline:  # the snippet is spinning
        time.sleep(0.02)
    assert stops.sandbox_workers(parent.pid) == [worker]
    parent.kill()
    parent.wait()
    while process_alive(worker) and time.monotonic() < deadline:
        time.sleep(0.01)
    alive = process_alive(worker)
    if alive:
        os.kill(worker, signal.SIGKILL)
    assert not alive


@pytest.mark.parametrize(
    ("command", "signum"),
    [("bench", signal.SIGTERM), ("bench", signal.SIGINT), ("run", signal.SIGTERM)],
    ids=["bench-SIGTERM", "bench-SIGINT", "run-SIGTERM"],
)
def test_a_stop_signal_ends_the_process_while_its_mcp_servers_start(tmp_path: Path, command: str, signum: int) -> None:
    """A real stdio server that sleeps for minutes before it answers, under a start-up deadline of minutes:
    the signal ends the workbench (128 + N) without waiting for either, and no server is left."""
    outcome = hostile.stop_during_startup(tmp_path, signum, command)
    assert outcome.problems == []
    assert outcome.exit_code == 128 + signum
