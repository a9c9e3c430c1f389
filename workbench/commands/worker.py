"""``workbench worker``: run queued comparisons (``bench --queue``) until stopped, or until the queue is idle."""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING

import click

from workbench.commands.options import InputError, db_option, open_store

if TYPE_CHECKING:
    from workbench.queue.runtime import Finished


@click.command()
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    default=None,
    help="Comparisons this worker runs at once (default: worker_concurrency in [queue], 2).",
)
@click.option("--exit-when-idle", is_flag=True, help="Exit once no comparison is queued or running anywhere.")
@click.option(
    "--allow-base-url",
    "allow_base_urls",
    multiple=True,
    metavar="URL",
    help="An endpoint this worker may send its keys to when a queued sweep asks for it (--base-url), besides "
    "its own config's base_url (repeatable). A job asking for any other is refused.",
)
@db_option
def worker(concurrency: int | None, exit_when_idle: bool, allow_base_urls: tuple[str, ...], db: str | None) -> None:
    """Run the comparisons of queued sweeps (`workbench bench --queue`) from the database every worker shares.

    Start one or more on any machine that reaches the same --db. One line per finished comparison on stdout.
    Ctrl+C or SIGTERM cancels the running comparisons (their sessions are saved as cancelled) and puts them
    back on the queue for another worker; a killed or stalled worker's comparisons are re-queued by a live one
    once its lease (stale_after_s) lapses. A database restart is waited out; a database gone for longer than
    store_busy_timeout_s, or a lease a peer took over, stops the worker with one line and exit code 3.

    A queued job chooses only what a comparison is (task, size, seed, arms by name, models, request and token
    limits); this worker's config decides the rest, and its keys go only to the providers' own endpoints, its
    config's base_url and each --allow-base-url. A job asking for another endpoint fails with the reason.
    """
    from workbench.config import load_settings

    settings = load_settings()
    from workbench.queue.trust import WorkerTrust

    try:
        trust = WorkerTrust.of(settings, allow_base_urls)
    except ValueError as error:
        raise InputError(f"--allow-base-url: {error}") from None
    store = open_store(db, settings)
    store.require_writable()
    from workbench.queue.worker import Worker

    lock = threading.Lock()

    def on_finished(finished: Finished) -> None:
        with lock:
            click.echo(_line(finished))
            sys.stdout.flush()

    def on_failed(workflow_id: str, reason: str) -> None:
        with lock:
            click.echo(f"worker {runner.executor_id}: {workflow_id} failed: {reason}", err=True)

    def on_recovered(executor_id: str, count: int) -> None:
        with lock:
            click.echo(f"worker {executor_id} went silent: {count} of its comparisons re-queued", err=True)

    def on_note(line: str) -> None:
        with lock:
            click.echo(line, err=True)

    runner = Worker(
        store, settings.queue, concurrency=concurrency or settings.queue.worker_concurrency,
        exit_when_idle=exit_when_idle, on_finished=on_finished, on_recovered=on_recovered, trust=trust,
        on_failed=on_failed, on_note=on_note,
    )  # fmt: skip
    from workbench.queue.system_db import application_version

    click.echo(
        f"worker {runner.executor_id}: {runner.concurrency} at a time, database {store.name}, "
        f"code {application_version()}",
        err=True,
    )
    outcome = runner.run()  # QueueUnavailable, StoreError: one line, exit 2
    why = "queue idle" if outcome.code == 0 else "stopped"
    if outcome.message is not None:
        why = f"stopped: {outcome.message}"
    click.echo(f"worker {runner.executor_id}: {why}; {outcome.finished} comparisons finished", err=True)
    if outcome.other_versions:
        from workbench.queue.version import others_line

        click.echo(f"worker {runner.executor_id}: {others_line(outcome.other_versions)}", err=True)
    if outcome.parked:
        # Threads of cancelled comparisons wait on their re-queued workflows; nothing of theirs is left to save.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(outcome.code)
    if outcome.code:
        sys.exit(outcome.code)


def _line(finished: Finished) -> str:
    job = finished.job
    arms = " ".join(
        f"{name}={'pass' if arm['passed'] else 'fail' if arm['passed'] is False else arm['status']}"
        for name, arm in finished.arms.items()
    )
    note = "" if finished.recorded else " (superseded: an earlier attempt was recorded)"
    stored = f" · not fully stored: {finished.store_error}" if finished.store_error else ""
    return (
        f"{job.sweep_id} #{job.position + 1} {job.case.label()} · {finished.status} · {arms} · "
        f"session {finished.session_id}{note}{stored}"
    ).replace(" ·  ·", " ·")
