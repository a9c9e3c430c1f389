"""Reliability figures: sandbox attacks, crash safety, stop signals, storage faults, CLI fuzzing, huge results
and load.

``python -m reliability`` (from a checkout of the project) runs every section and prints what was tried
and what held; the tests under ``tests/`` run the same code and keep it that way. It is a development
tool, beside ``benchmarks/``: the installed package does not ship it, and it may use the test extras.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The checkout that holds this package (and ``tests/``)."""


def child_command(module: str, *args: str) -> list[str]:
    """``python -m reliability.<module> ARGS``; run it with :func:`child_env` so it finds this package."""
    return [sys.executable, "-m", f"reliability.{module}", *args]


def child_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with the checkout first on ``PYTHONPATH``."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
    return env
