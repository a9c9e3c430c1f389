"""The code's version as DBOS sees it: workers run and recover only the workflows of their own version.

The package version is the same at every commit, so two checkouts with different code would run each other's
comparisons (and a fix would be recorded as the old code's). The version is therefore derived from the code
itself: a digest of every ``.py`` file of the installed ``workbench`` package, the demo apps included (paths and bytes),
the same for a wheel, an editable install or a checkout with uncommitted changes (a git commit would miss
those, and a wheel has none). It is computed once per process: about 170 files, a few milliseconds
(``python benchmarks/code_version.py`` prints the figure).
"""

from __future__ import annotations

import functools
import hashlib
from collections import Counter
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGES = ("workbench",)
"""The packages whose code decides what a comparison does (the engine and the demo apps with their tasks)."""
DIGEST_CHARS = 12


def code_files() -> list[tuple[str, Path]]:
    """(name relative to its package's parent, path) of every ``.py`` file of :data:`PACKAGES`, sorted."""
    import importlib

    files: list[tuple[str, Path]] = []
    for name in PACKAGES:
        root = Path(importlib.import_module(name).__file__ or "").parent
        files += [(path.relative_to(root.parent).as_posix(), path) for path in root.rglob("*.py")]
    return sorted(files)


def code_digest() -> str:
    """A digest of the code's files (uncached: :func:`application_version` caches it)."""
    digest = hashlib.sha256()
    for name, path in code_files():
        data = path.read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:DIGEST_CHARS]


def others_line(waiting: Counter[str]) -> str:
    """``12 comparisons wait for workers of another code version (workbench-0.1.0-3f9a1c0b27de: 12)``."""
    total = sum(waiting.values())
    versions = ", ".join(f"{name}: {count}" for name, count in waiting.most_common())
    plural = "comparison waits" if total == 1 else "comparisons wait"
    return f"{total} {plural} for workers of another code version ({versions})"


@functools.cache
def application_version() -> str:
    """``workbench-<package version>-<code digest>``, e.g. ``workbench-0.1.0-3f9a1c0b27de``."""
    try:
        package = version("code-mode-workbench")
    except PackageNotFoundError:
        package = "dev"
    return f"workbench-{package}-{code_digest()}"
