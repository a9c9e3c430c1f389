"""The workbench's terminal output is its own: no third-party first-run banners."""

from __future__ import annotations

import os


def own_the_terminal() -> None:
    """Switch off pydantic-ai's first-run (Logfire) banner the supported way, without importing pydantic-ai.

    The banner goes to stderr before an agent's first run in any process attached to a terminal or a coding
    agent; ``PYDANTIC_AI_NO_BANNER`` is read at that moment, so setting it here covers the CLI, the TUI and
    the processes they start.
    """
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
