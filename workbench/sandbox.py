"""Monty sandbox workers that never outlive the workbench.

pydantic-monty runs each snippet in a ``monty`` worker subprocess. A worker busy with a snippet does not
notice its parent dying, so after SIGKILL (or any death that skips cleanup) it would keep burning a core
until the snippet's time limit. On Linux the code arm's pool therefore starts its workers through a tiny
launcher that asks the kernel to SIGKILL the worker when the workbench dies (``PR_SET_PDEATHSIG``) and
then becomes the real ``monty`` binary. The pool spawns its workers from its runtime's long-lived
threads, so the signal fires only when the process ends, never earlier.

The launcher is a shell script in the data directory, named after its content; it uses util-linux's
``setpriv`` when there is one and a one-line Python otherwise. Where it cannot be written or executed
(another OS, a read-only or ``noexec`` directory), the pool starts ``monty`` directly, as before.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic_monty import AsyncMonty

LAUNCHER_PREFIX = "monty-worker-"

_PRCTL = "import ctypes, os, sys; ctypes.CDLL(None).prctl(1, 9); os.execv(sys.argv[1], sys.argv[1:])"
"""``prctl(PR_SET_PDEATHSIG, SIGKILL)``, then exec the real binary (its path is the first argument)."""


def local_pool() -> AsyncMonty:
    """The code arm's worker pool (CodeMode's ``monty_sandbox`` factory): workers die with this process."""
    from pydantic_monty import AsyncMonty

    return AsyncMonty(binary_path=worker_launcher())


@functools.cache
def worker_launcher() -> str | None:
    """Path of the launcher for this process's workers, or ``None`` where none can be used."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        # Private: pydantic-monty 0.0.x exports no public way to find its worker binary (nothing in
        # `pydantic_monty.__all__`); a launcher is optional, so a rename only costs the launcher.
        from pydantic_monty._binary import find_monty_binary

        real = find_monty_binary()
    except (ImportError, FileNotFoundError):
        return None
    script = launcher_script(real, setpriv=shutil.which("setpriv"))
    for directory in _launcher_dirs():
        path = write_launcher(directory, script)
        if path is not None:
            return str(path)
    return None


def launcher_script(real_binary: str, *, setpriv: str | None) -> str:
    """The launcher's text. Workers start with an empty environment, so every path in it is absolute."""
    real = shlex.quote(real_binary)
    if setpriv:
        command = f'exec {shlex.quote(setpriv)} --pdeathsig KILL -- {real} "$@"'
    else:
        command = f'exec {shlex.quote(sys.executable)} -IS -c {shlex.quote(_PRCTL)} {real} "$@"'
    return f"#!/bin/sh\n# A Monty sandbox worker that is killed when the workbench that started it dies.\n{command}\n"


def _launcher_dirs() -> list[Path]:
    from workbench.locations import data_dir

    return [data_dir(), Path(tempfile.gettempdir()) / f"code-mode-workbench-{os.getuid()}"]


def write_launcher(directory: Path, script: str) -> Path | None:
    """Write ``script`` once under a name derived from its content; ``None`` if it cannot be run from there."""
    digest = hashlib.sha256(script.encode()).hexdigest()[:16]
    path = directory / f"{LAUNCHER_PREFIX}{digest}"
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        if directory.stat().st_uid != os.getuid():  # a shared temp dir someone else created: not ours to run
            return None
        if not (path.is_file() and path.read_text() == script):
            handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{LAUNCHER_PREFIX}")
            with os.fdopen(handle, "w") as file:
                file.write(script)
            os.chmod(temporary, 0o755)
            os.replace(temporary, path)
    except OSError:
        return None
    return path if os.access(path, os.X_OK) else None
