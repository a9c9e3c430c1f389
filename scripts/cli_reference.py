"""Write docs/cli.md, the command-line reference, from the click command definitions themselves.

    python scripts/cli_reference.py            # rewrite docs/cli.md
    python scripts/cli_reference.py --check    # exit 1 when docs/cli.md is not current

The reference is each command's own ``--help`` at a fixed width, so it can never say something the command does not:
``tests/test_docs.py`` regenerates it in memory and fails when the committed file differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a checkout: import the workbench beside it
    sys.path.insert(0, str(ROOT))

from workbench.cli import cli  # noqa: E402

OUTPUT = ROOT / "docs" / "cli.md"
WIDTH = 100  # fixed, so the text does not depend on the terminal that ran the script

HEADER = """# CLI reference

Generated from the command definitions by `python scripts/cli_reference.py`; do not edit by hand
(`tests/test_docs.py` fails when this page is not what the commands say). Each section is the command's own
`--help`. What the commands are for, with examples, is on the other pages: [the workbench](usage.md),
[bench](bench.md), [your own tools](own-tools.md), [scale](scale.md) and [share](share.md).
"""


def _help(command: click.Command, path: list[str], parent: click.Context | None) -> tuple[str, click.Context]:
    """A command's help text as click prints it, at ``WIDTH`` columns."""
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = click.Context(command, info_name=path[-1], parent=parent, **settings)
    return command.get_help(ctx), ctx


def _sections(command: click.Command, path: list[str], parent: click.Context | None) -> list[str]:
    text, ctx = _help(command, path, parent)
    title = " ".join(path)
    out = [f"## `{title}`", "", "```text", text.rstrip(), "```", ""]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            out += _sections(sub, [*path, name], ctx)
    return out


def render() -> str:
    """The whole of docs/cli.md."""
    lines = [HEADER, *_sections(cli, ["workbench"], None)]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/cli.md is not current")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT.relative_to(ROOT)} is not current: run python scripts/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
