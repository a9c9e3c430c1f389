"""Exporting the session on screen from the TUI (the command palette's *Export session* entries).

The same renderers as ``workbench export`` (:func:`workbench.bench.export.export_session`); the file goes to
``exports/`` in the data directory, named after the session, so a second export of the same session and format
replaces the first rather than piling up copies.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from workbench.locations import data_dir

if TYPE_CHECKING:
    from workbench.session import Comparison

EXPORT_FORMATS = (("html", "HTML"), ("md", "Markdown"), ("json", "JSON"))
"""(format, label) of the palette's export entries, in the order it lists them."""


def exports_dir() -> Path:
    return data_dir() / "exports"


def write_export(comparison: Comparison, fmt: str, directory: Path | None = None) -> Path:
    """Render ``comparison`` as ``fmt`` and write it to ``directory`` (default :func:`exports_dir`); the path."""
    from workbench.bench.export import export_session

    text = export_session(comparison, fmt)
    target = (directory or exports_dir()) / f"session-{comparison.session_id}.{fmt}"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target
