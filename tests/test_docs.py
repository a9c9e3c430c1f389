"""The documentation stays true to the code: docs/cli.md is what the commands' own help says, and the README keeps
the test command that .ci/run runs and links only to pages that exist."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cli_reference():
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "scripts" / "cli_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_current() -> None:
    reference = _cli_reference()
    committed = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert committed == reference.render(), (
        "docs/cli.md is not what the commands' --help says: "
        "run `python scripts/cli_reference.py` and commit docs/cli.md"
    )


def test_cli_reference_covers_every_command() -> None:
    import click

    from workbench.cli import cli

    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        if command is not None and not command.hidden:
            assert f"## `workbench {name}`" in text, name


def test_readme_keeps_the_ci_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/pytest" in readme


def test_readme_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme) if "://" not in t]
    assert targets, "the README links into docs/"
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"
