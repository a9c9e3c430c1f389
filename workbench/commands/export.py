"""``workbench export`` (a stored session or sweep as JSON, Markdown, CSV, HTML or an OTel trace) and
``workbench import`` (the fallback files of runs whose database failed, stored after all)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from workbench.commands.options import InputError, case_sort_option, db_option, open_store

if TYPE_CHECKING:
    from workbench.bench import BenchReport
    from workbench.config import Settings
    from workbench.session import Comparison
    from workbench.store import Store


@click.command()
@click.argument("item_id", metavar="ID")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("json", "md", "csv", "html")),
    default=None,
    help="Default: from --out, else json (nothing with --otel alone).",
)
@click.option("--out", "out_path", type=str, metavar="FILE", help="Write to FILE instead of standard output.")
@click.option(
    "--otel",
    is_flag=True,
    help="Send the session to an OpenTelemetry collector as one trace (otel_endpoint from the config, else "
    "$OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318).",
)
@case_sort_option
@db_option
def export(item_id: str, fmt: str | None, out_path: str | None, otel: bool, sort: str | None, db: str | None) -> None:
    """Export a stored session (or a sweep's report, for an id starting with "sweep-") as JSON, Markdown, CSV or a
    self-contained HTML page (a sweep's embeds its runs' sessions, each linked from the per-case matrix); or send
    a session to an OpenTelemetry collector (--otel)."""
    from workbench.bench.export import export_session
    from workbench.bench.manifest import SWEEP_PREFIX
    from workbench.bench.render import format_for, render
    from workbench.config import load_settings

    if otel and item_id.startswith(SWEEP_PREFIX):
        raise InputError("--otel sends one session; a sweep's runs are sessions (workbench sessions lists them)")
    if fmt is None and (out_path is not None or not otel):
        fmt = format_for(out_path) if out_path else "json"
    if sort is not None and (fmt != "md" or not item_id.startswith(SWEEP_PREFIX)):
        raise InputError(f"--sort {sort} orders a sweep's Markdown case table (--format md); JSON and CSV are data "
                         "in run order, and the HTML page sorts its matrix in place")  # fmt: skip
    settings = load_settings() if otel else None  # else the store reads the config (a --db needs none)
    store = open_store(db, settings)
    if item_id.startswith(SWEEP_PREFIX):
        report = _sweep_report(store, item_id)
        text = sweep_page(store, report) if fmt == "html" else render(report, fmt or "json", sort=sort)
    else:
        comparison = store.load(store.resolve_id(item_id))
        if settings is not None:
            _send_trace(comparison, settings)
        if fmt is None:
            return
        text = export_session(comparison, fmt)
    if out_path is None:
        click.echo(text, nl=not text.endswith("\n"))
        return
    target = Path(out_path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    click.echo(f"written to {target}", err=True)


def _send_trace(comparison: Comparison, settings: Settings) -> None:
    from workbench.share.tracing import otel_installed, trace_endpoint

    endpoint = trace_endpoint(settings.otel_endpoint, flag=True)
    assert endpoint is not None
    if not otel_installed():
        raise InputError("--otel needs the otel extra: pip install 'code-mode-workbench[otel]'")
    from workbench.share.otel import export_comparison

    spans = export_comparison(comparison, endpoint)
    click.echo(f"session {comparison.session_id}: {spans} spans sent to {endpoint}", err=True)


def sweep_page(store: Store, report: BenchReport) -> str:
    """The sweep's HTML page with each run's stored session embedded (the matrix's cells link to them)."""
    from workbench.share.sweep_html import sweep_html
    from workbench.store import UnknownSession

    sessions = {}
    for run in report.runs:
        if run.session_id in sessions:
            continue
        try:
            sessions[run.session_id] = store.load(run.session_id)
        except UnknownSession:  # deleted since: the page names it instead of embedding it
            continue
    return sweep_html(report, sessions)


def _sweep_report(store: Store, sweep_id: str) -> BenchReport:
    from workbench.bench import SweepStore, load_sweep

    return load_sweep(store, SweepStore(store).resolve_id(sweep_id))


@click.command("import")
@click.argument("files", nargs=-1)
@db_option
def import_command(files: tuple[str, ...], db: str | None) -> None:
    """Store the sessions of runs whose database failed (FILES, or every one waiting in the data dir).

    A run that could not store its session saves its events to a file in the data dir's `unsaved` folder
    and says so (a bench sweep its rows too); this adds what the database lacks (doing it twice adds
    nothing) and removes the file. A file never changes what is stored: one that disagrees with the
    database (a session that has ended, an event stored differently) is reported and left in place.

    Exit codes: 0 when everything waiting was imported (or nothing waits); 2 when a file is not a workbench
    fallback file or disagrees with the database; 3 when the database refused a file (import it again later).
    """
    from workbench.store.imports import EXIT_BAD_FILE, ImportReport, Refused, import_file, import_waiting, outcome
    from workbench.store.unsaved_sweeps import ImportedSweep

    store = open_store(db, import_unsaved=False)
    if files:
        report = ImportReport()
        for name in files:
            # click.Path would stat the name, and a NUL in it raises ValueError there (not OSError).
            path = Path(name.replace("\x00", "\\x00"))
            if "\x00" in name or not path.exists():
                report.refused.append(Refused(path, f"{path} does not exist", EXIT_BAD_FILE))
            elif path.is_dir():
                report.refused.append(Refused(path, f"{path} is a directory, not a fallback file", EXIT_BAD_FILE))
            else:
                outcome(report, path, lambda path=path: import_file(store, path))
    else:
        report = import_waiting(store)
    for done in report.imported:
        if isinstance(done, ImportedSweep):
            kept = f"; {done.waiting_runs} wait for their sessions, kept in the file" if done.waiting_runs else ""
            click.echo(f"sweep {done.sweep_id}: {done.added_runs} runs recorded from {done.path}{kept}")
        else:
            click.echo(f"session {done.session_id}: {done.added_events} events stored from {done.path}")
    for waiting in report.waiting:
        click.echo(waiting.why)
    if not report.imported and not report.waiting and not report.refused:
        click.echo(f"nothing to import into {store.name}")
    for refused in report.refused:
        click.echo(f"workbench: error: {' '.join(refused.message.split())}", err=True)
    if report.exit_code:
        sys.exit(report.exit_code)
