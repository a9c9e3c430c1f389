"""The offline ``scripted`` model: plays the built-in tasks with real token counts."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Literal

SCRIPTED_MODELS = ("scripted", "scripted:paced")
"""The model specs the scripted model answers to; anything else is a real model, checked before any arm starts."""

Surface = Literal["cli", "tui"]
SURFACE: ContextVar[Surface] = ContextVar("workbench_scripted_surface", default="cli")
"""Where the comparison was started, so that the scripted model's reply to a prompt it does not know names
what to do there: CLI flags, or the TUI's Task list and Model field. The TUI sets it for its runs."""
