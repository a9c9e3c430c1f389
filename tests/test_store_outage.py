"""A PostgreSQL server that stops answering under a real ``workbench run``: a throw-away cluster whose
postmaster and every backend are SIGSTOPped after the run has stored events (sockets open, the kernel still
acknowledging TCP), resumed within the wait, never resumed, SIGTERM during the freeze and Ctrl+C twice.

The checks live in :mod:`reliability.outages` (``python -m reliability --only outages`` prints their
figures); the cluster is always resumed (SIGCONT), whatever a check meets. Times are bounded generously for a
busy machine: the goals themselves (exit within 5 s of SIGTERM) are the issue's, and each check reports by how
much it met them.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from reliability import outages
from tests.support.postgres_cluster import PostgresCluster, postgres_bindir
from workbench.bench.manifest import SweepStore
from workbench.session import fold_comparison
from workbench.store import Store, StoreError


@pytest.fixture(scope="module")
def cluster(postgres_cluster: PostgresCluster) -> Iterator[PostgresCluster]:
    """A cluster of this module's own (the shared one is never frozen)."""
    bindir = postgres_bindir()
    assert bindir is not None  # postgres_cluster has skipped where PostgreSQL is missing
    with PostgresCluster(bindir) as own:
        yield own


def test_a_server_frozen_within_the_wait_is_waited_out_and_the_run_stored_whole(
    tmp_path: Path, cluster: PostgresCluster
) -> None:
    report = outages.frozen_and_resumed(tmp_path, cluster)
    assert report.problems == [] and report.held
    assert report.exit_code == 0 and report.stored_directly is True


def test_a_server_frozen_for_good_ends_the_run_with_exit_3_and_import_brings_it_back(
    tmp_path: Path, cluster: PostgresCluster
) -> None:
    report = outages.frozen_for_good(tmp_path, cluster)
    assert report.problems == [] and report.held  # one line naming the file; show == the run's JSON
    assert report.exit_code == 3 and report.stored_directly is False
    assert report.lost == 0 and report.recorded_twice == 0


def test_sigterm_during_the_freeze_ends_the_run_within_5_s_and_keeps_the_session(
    tmp_path: Path, cluster: PostgresCluster
) -> None:
    report = outages.stopped_while_frozen(tmp_path, cluster)
    assert report.problems == [] and report.held
    assert report.exit_code == 143 and report.exit_s is not None and report.exit_s < outages.SIGTERM_GOAL_S


def test_a_second_ctrl_c_while_saving_exits_at_once_and_keeps_the_session(
    tmp_path: Path, cluster: PostgresCluster
) -> None:
    report = outages.stopped_while_frozen(tmp_path, cluster, signal.SIGINT, twice=True)
    assert report.problems == [] and report.held
    assert report.exit_code == 130 and report.exit_s is not None and report.exit_s < outages.SIGTERM_GOAL_S


def test_every_call_of_a_store_to_a_frozen_server_is_cut_at_its_deadline(cluster: PostgresCluster) -> None:
    """Opening, writing, reading (sessions and sweeps) each end with a one-line StoreError, never a hang."""
    url = cluster.database()
    store = Store(url, busy_timeout_s=1.0)
    store.save(fold_comparison([], session_id="frozen", app="cart", items=5))
    results: dict[str, str] = {}

    def attempt(name: str, call: Callable[[], object]) -> None:
        try:
            call()
            results[name] = "returned"
        except StoreError as error:
            results[name] = str(error)

    with outages.frozen(cluster):
        calls = {
            "write": lambda: store.beat("frozen"),
            "read": lambda: store.sessions(),
            "sweeps": lambda: SweepStore(store).sweeps(),
            "open": lambda: Store(url, busy_timeout_s=1.0),
        }
        threads = [threading.Thread(target=attempt, args=item, daemon=True) for item in calls.items()]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 120
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        hung = [name for name, thread in zip(calls, threads, strict=True) if thread.is_alive()]
    assert hung == [], f"still waiting on the frozen server: {hung}"
    assert "did not answer for 1 s while refreshing session frozen" in results["write"], results
    # A new connection to a frozen server times out connecting (its own deadline), or stalls once connected.
    assert "while opening it" in results["open"], results
    assert "did not answer for 1 s" in results["open"] or "cannot be reached" in results["open"], results
    assert results["read"] != "returned" and url.split("@")[1] in results["read"], results
    assert results["sweeps"] != "returned" and "reading sweeps" in results["sweeps"], results
    assert [info.id for info in store.sessions()] == ["frozen"]  # the same store works once the server is back


def test_the_freeze_is_undone_whatever_happens(cluster: PostgresCluster) -> None:
    postmaster = int((cluster.data / "postmaster.pid").read_text().split()[0])
    with pytest.raises(RuntimeError), outages.frozen(cluster):
        deadline = time.monotonic() + 60
        while _state(postmaster) != "T" and time.monotonic() < deadline:  # a signal lands soon, not at once
            time.sleep(0.01)
        assert _state(postmaster) == "T"
        raise RuntimeError("a check that fails mid-freeze")
    deadline = time.monotonic() + 60
    while _state(postmaster) == "T" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _state(postmaster) != "T"
    os.kill(postmaster, 0)  # alive, and answering again:
    assert Store(cluster.database()).count_sessions() == 0


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
