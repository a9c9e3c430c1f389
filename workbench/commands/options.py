"""What every ``workbench`` command shares: exit codes, the one-line error, and the common options.

The top-level group (:mod:`workbench.cli`) and the command modules under :mod:`workbench.commands` both
import from here, so neither imports the other's internals.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import click

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 1
EXIT_INTERRUPTED = 130


class InputError(Exception):
    """Bad input found after parsing; reported as one line with exit code 2."""


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """``workbench: error: <message on one line>`` on stderr, and exit with ``code``."""
    text = " ".join(str(message).split())
    click.echo(f"workbench: error: {text}", err=True)
    sys.exit(code)


db_option = click.option(
    "--db",
    "db",
    type=str,
    default=None,
    metavar="PATH",
    help="Session database (default: $WORKBENCH_DB or the user data dir).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
base_url_option = click.option(
    "--base-url",
    metavar="URL",
    help="Endpoint of a local OpenAI-compatible server (vLLM, LM Studio, llama.cpp, Ollama) for openai-chat:, "
    "openai:, ollama: and vllm: models; no key needed.",
)
request_limit_option = click.option(
    "--request-limit",
    type=click.IntRange(1, 10_000),
    help="Model requests per arm before it is stopped (default: from config, 50).",
)
