"""``python -m reliability``: run every reliability check and print what was tried and what held.

Sections: sandbox attacks, hostile files and requests (task and config files, variables, flags, fallback
files, signals during MCP start-up, odd tool names, ``workbench serve``), crash safety (SIGKILL, Ctrl+C),
stop signals, storage faults, outages (a frozen PostgreSQL server, a crawling trace collector), limits and
cancellation, CLI fuzzing, unusual prompts, huge results, load. ``--only attacks,crash`` runs some of them;
``--examples N`` sets the hypothesis examples of the fuzz; ``--hold S`` how long the waited-out lock of the
storage section is held; ``--json`` prints the figures as JSON instead. Exit status 1 when anything did not
hold (or a figure missed its goal).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console

from reliability import ROOT, report

SECTIONS = (
    "attacks", "hostile", "crash", "stops", "storage", "outages", "limits", "fuzz", "prompts", "huge", "load",
)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reliability", description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections: {', '.join(SECTIONS)}")
    parser.add_argument("--examples", type=int, default=400, help="hypothesis examples for the CLI fuzz")
    parser.add_argument(
        "--hold", type=float, default=5.0, help="seconds another process holds the lock the storage run waits out"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress lines, only the tables")
    options = parser.parse_args(argv)
    chosen = [name.strip() for name in options.only.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown section(s): {', '.join(unknown)}")
    console = Console(highlight=False, soft_wrap=False, width=max(Console().width, 120))
    err = Console(stderr=True, highlight=False)
    progress: Callable[[str], None] = (lambda _: None) if options.quiet or options.json else err.print
    results: dict[str, Any] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="workbench-reliability-") as scratch:
        root = Path(scratch)
        for section in chosen:
            progress(f"[dim]running {section}…[/dim]")
            results[section] = RUNNERS[section](root / section, options, progress)
    results["seconds"] = round(time.perf_counter() - started, 1)
    results["machine"] = f"{platform.system()} {platform.machine()}, Python {platform.python_version()}"
    if options.json:
        print(json.dumps(_jsonable(results), indent=2, ensure_ascii=False))
    else:
        report.print_all(console, results)
    return 0 if report.all_held(results) else 1


def _attacks(directory: Path, options: argparse.Namespace, progress: Callable[[str], None]) -> Any:
    from reliability.attacks import run_corpus

    directory.mkdir(parents=True)
    return asyncio.run(run_corpus(directory, on_report=lambda r: progress(report.attack_line(r))))


def _hostile(directory: Path, options: argparse.Namespace, progress: Callable[[str], None]) -> Any:
    from reliability.hostile import run_all

    return run_all(directory, on_outcome=lambda o: progress(report.hostile_line(o)))


def _crash(directory: Path, options: argparse.Namespace, progress: Callable[[str], None]) -> Any:
    from reliability.crash import all_checks

    directory.mkdir(parents=True)
    return all_checks(directory, on_report=lambda r: progress(f"  {r.name}: {'held' if r.recovered else r.problems}"))


def _stops(directory: Path, options: argparse.Namespace, progress: Callable[[str], None]) -> Any:
    sys.path.insert(0, str(ROOT))  # tests.support: the fake OpenAI-compatible server the tests use
    from reliability.stops import all_checks
    from tests.support.fake_openai import fake_openai

    directory.mkdir(parents=True)
    with fake_openai(hang_s=300) as server:
        return all_checks(
            directory,
            server.url,
            on_report=lambda r: progress(f"  {r.name}, {r.signal}: {'held' if r.held else r.problems}"),
        )


def _storage(directory: Path, options: argparse.Namespace, progress: Callable[[str], None]) -> Any:
    from reliability.storage import all_checks

    directory.mkdir(parents=True)
    return all_checks(
        directory,
        hold_s=options.hold,
        on_report=lambda r: progress(f"  {r.fault}: {r.note if not r.tried else 'held' if r.held else r.problems}"),
    )


def _outages(directory: Path, options: argparse.Namespace, progress: Callable[[str], None]) -> Any:
    sys.path.insert(0, str(ROOT))  # tests.support: the throw-away PostgreSQL cluster and the crawling collector
    from reliability.outages import all_checks
    from tests.support.postgres_cluster import PostgresCluster, postgres_bindir

    directory.mkdir(parents=True)

    def on_report(report: Any) -> None:
        progress(f"  {report.fault}: {'held' if report.held else report.problems}")

    bindir = postgres_bindir()
    if bindir is None:
        progress("  PostgreSQL is not installed: only the collector fault runs")
        return all_checks(directory, None, on_report=on_report)
    with PostgresCluster(bindir) as cluster:
        return all_checks(directory, cluster, on_report=on_report)


def _huge(directory: Path, options: argparse.Namespace, progress: Callable[[str], None]) -> Any:
    from reliability.huge import measure

    return [measure(directory)]


def _limits(directory: Path, options: argparse.Namespace, progress: Callable[[str], None]) -> Any:
    from reliability.limits import all_checks

    directory.mkdir(parents=True)
    return asyncio.run(all_checks(directory, on_report=lambda r: progress(f"  {r.name}: {r.statuses}")))


def _fuzz(directory: Path, options: argparse.Namespace, progress: Callable[[str], None]) -> Any:
    from reliability.fuzz import discover, fuzz

    directory.mkdir(parents=True)
    outcomes = fuzz(directory, examples=options.examples)
    return {"outcomes": outcomes, "params": discover()}


def _prompts(directory: Path, options: argparse.Namespace, progress: Callable[[str], None]) -> Any:
    from reliability.prompts import all_checks

    directory.mkdir(parents=True)
    return asyncio.run(all_checks(directory, on_report=lambda r: progress(f"  prompt {r.name}: {r.engine}")))


def _load(directory: Path, options: argparse.Namespace, progress: Callable[[str], None]) -> Any:
    from reliability.load import run_all

    return run_all(directory, on_result=lambda r: progress(f"  {r.name}: {r.seconds:.2f} s"))


RUNNERS: dict[str, Callable[[Path, argparse.Namespace, Callable[[str], None]], Any]] = {
    "attacks": _attacks,
    "hostile": _hostile,
    "crash": _crash,
    "stops": _stops,
    "storage": _storage,
    "outages": _outages,
    "limits": _limits,
    "fuzz": _fuzz,
    "prompts": _prompts,
    "huge": _huge,
    "load": _load,
}


def _jsonable(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return _jsonable(asdict(value))
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if callable(value):  # an attack's builder
        return getattr(value, "__qualname__", type(value).__name__)
    return value


if __name__ == "__main__":
    sys.exit(main())
