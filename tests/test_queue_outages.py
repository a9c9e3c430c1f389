"""Queued sweeps through outages, on a real PostgreSQL cluster of the test's own, with real worker processes
and real signals: a server restarted (``pg_ctl stop -m fast`` / ``-m immediate``, then started again) under
two workers, a worker stalled (SIGSTOP) past its lease and resumed, a server that never comes back, and a
SIGTERM while every server process is SIGSTOPped.

The checks live in :mod:`reliability.worker_outages` (``python -m reliability --only outages`` prints their
figures). What they assert are properties, not timings: each comparison recorded exactly once, the provider's
limit of one comparison at a time never exceeded (by the sessions' start and end times), the exit codes and
the one-line messages; every wait is bounded generously for a loaded 2-core machine.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reliability import worker_outages
from tests.support.postgres_cluster import PostgresCluster, postgres_bindir


@pytest.fixture
def cluster(postgres_cluster: PostgresCluster) -> Iterator[PostgresCluster]:
    """A cluster of the test's own: its server is stopped, restarted and frozen (the shared one never is)."""
    bindir = postgres_bindir()
    assert bindir is not None  # postgres_cluster has skipped where PostgreSQL is missing
    with PostgresCluster(bindir) as own:
        yield own


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_two_workers_ride_out_a_server_restart(tmp_path: Path, cluster: PostgresCluster, mode: str) -> None:
    """Both workers exit 0, every comparison recorded once, none ran twice, the limit held, DBOS said at most
    one line per worker, and each worker said when the database went and came back."""
    report = worker_outages.restarted_under_two_workers(tmp_path, cluster, mode)
    assert report.problems == [] and report.held, report
    assert report.exit_code == 0 and report.lost == 0 and report.recorded_twice == 0
    assert "answered again after" in report.note and "?" not in report.note


def test_a_worker_stalled_past_its_lease_is_taken_over_once_and_stops_when_it_resumes(
    tmp_path: Path, cluster: PostgresCluster
) -> None:
    """The stalled worker sends no request after the take-over, records nothing and exits 3 with one line;
    the peer finishes the sweep: each comparison recorded once, by one worker, never two at once."""
    report = worker_outages.stalled_worker(tmp_path, cluster)
    assert report.problems == [] and report.held, report
    assert report.exit_code == 3 and report.lost == 0 and report.recorded_twice == 0


def test_a_worker_whose_server_never_comes_back_exits_3_with_one_line(tmp_path: Path, cluster: PostgresCluster) -> None:
    report = worker_outages.gone_for_good(tmp_path, cluster)
    assert report.problems == [] and report.held, report
    assert report.exit_code == 3


def test_sigterm_ends_a_worker_whose_server_is_frozen(tmp_path: Path, cluster: PostgresCluster) -> None:
    """Exit 143 without a traceback; the time it took is the report's (goal 5 s), bounded here by 60 s."""
    report = worker_outages.sigterm_while_frozen(tmp_path, cluster)
    assert report.problems == [] and report.held, report
    assert report.exit_code == 143 and report.exit_s is not None
