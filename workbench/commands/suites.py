"""``workbench suites``: the suites the workbench can run (its own tiers, BFCL v4 multi-turn) and
``workbench suites install bfcl``, which installs BFCL's pinned wheel without its heavy dependencies.

bfcl-eval declares numpy, torch (via sentence-transformers), faiss and pinned provider SDKs; the multi-turn
classes and checker need only the standard library and mpmath, so the install is ``pip install --no-deps``
of the pinned wheel plus mpmath, into the interpreter running the workbench, then an import check in a fresh
interpreter. A pyproject extra cannot say ``--no-deps``, which is why this is a command.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

import click

from workbench.commands.options import InputError, fail, json_option

PIP_TIMEOUT = 600
"""Seconds pip may take (a slow index); after that the install is reported as failed."""
VERIFY_TIMEOUT = 120

SUITES = ("bfcl",)


def _tiers() -> list[dict[str, object]]:
    import workbench.apps as apps

    return [
        {"name": tier, "kind": "tier", "installed": True, "tasks": len(apps.tasks_for(None, tier))}
        for tier in apps.TIERS
    ]


@click.group("suites", invoke_without_command=True)
@json_option
@click.pass_context
def suites_command(context: click.Context, as_json: bool) -> None:
    """List the suites this workbench can run, and whether each is installed."""
    if context.invoked_subcommand is not None:
        return
    from workbench.suites import bfcl

    found = bfcl.status()
    tiers = _tiers()
    if as_json:
        click.echo(json.dumps({"tiers": tiers, "suites": [{"kind": "suite", **found.to_dict()}]}))
        return
    for tier in tiers:
        click.echo(f"{tier['name']:<10} built-in tier, {tier['tasks']} tasks")
    if found.installed:
        counts = ", ".join(f"{category} {count}" for category, count in found.entries.items())
        click.echo(f"{'bfcl':<10} BFCL v4 multi-turn, bfcl-eval {found.version} installed: {counts}")
    else:
        click.echo(f"{'bfcl':<10} BFCL v4 multi-turn (bfcl-eval {found.pinned}), not installed:")
        for reason in found.missing:
            click.echo(f"{'':<10} - {reason}")
        click.echo(f"{'':<10} install it with: workbench suites install bfcl")
    click.echo("run one entry: workbench run --suite bfcl --entry multi_turn_base_0; a category: workbench bench "
               "--suite bfcl --category multi_turn_base --entries 0-19")  # fmt: skip


def suite_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--suite`` and ``--entry`` for ``run``: one entry of a suite (BFCL) instead of a demo app's task."""
    command = click.option(
        "--entry", "entry_id", metavar="ID", help="The suite's entry to run, e.g. multi_turn_base_0 (BFCL)."
    )(command)
    return click.option("--suite", metavar="NAME", help="Run an entry of this suite (bfcl; `workbench suites`).")(
        command
    )


def suite_entry(suite: str | None, entry_id: str | None, conflicting: Sequence[str]) -> dict[str, Any]:
    """``run --suite bfcl --entry ID``: the run request's fields for the entry (its turns and app source);
    bad input exits 2."""
    from workbench.suites import bfcl_plan

    if entry_id is None:
        raise InputError(f"--suite {suite} needs --entry ID (e.g. multi_turn_base_0); bench --suite runs many")
    if conflicting:
        raise InputError(f"--entry runs the suite's own prompt and app; drop {', '.join(conflicting)}")
    bfcl_plan.check_suite(suite or "bfcl")
    task = bfcl_plan.suite_task(bfcl_plan.find_entry(entry_id))
    return task.request_fields()


@suites_command.command("install")
@click.argument("name", metavar="SUITE")
def install_command(name: str) -> None:
    """Install a suite into this workbench's Python environment (today: bfcl)."""
    if name not in SUITES:
        raise InputError(f"unknown suite {name!r}; choose one of: {', '.join(SUITES)}")
    from workbench.suites import bfcl

    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "-q",
        "--no-deps",
        f"{bfcl.DISTRIBUTION}=={bfcl.PINNED_VERSION}",
        "mpmath",
    ]
    click.echo(f"installing: {' '.join(command[2:])}", err=True)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        fail(f"pip did not finish within {PIP_TIMEOUT} s; nothing verified")
    except OSError as error:
        fail(f"cannot run pip with {sys.executable}: {error}")
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip() and "WARNING" not in line]
        fail(f"pip failed (exit {done.returncode}): {lines[-1] if lines else 'no output'}")
    # A fresh interpreter: this one may have cached the absence of the modules.
    probe = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    try:
        check = subprocess.run(
            [sys.executable, "-c", probe, *bfcl.NEEDED_MODULES],
            capture_output=True,
            text=True,
            timeout=VERIFY_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        fail(f"importing the suite's modules took over {VERIFY_TIMEOUT} s")
    if check.returncode != 0:
        last = [line for line in check.stderr.splitlines() if line.strip()]
        fail(f"installed, but the suite's modules do not import: {last[-1] if last else 'no output'}")
    click.echo(f"bfcl-eval {bfcl.PINNED_VERSION} installed (no dependencies but mpmath); its modules import")
