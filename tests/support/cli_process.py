"""The real ``workbench`` command in a subprocess, for tests that compare its outputs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

WORKBENCH = str(Path(sys.executable).parent / "workbench")


def workbench_process(
    *args: str, db: Path | str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``workbench ARGS`` on database ``db`` (extra environment variables in ``env``)."""
    environment = {**os.environ, "WORKBENCH_DB": str(db), **(env or {})}
    return subprocess.run([WORKBENCH, *args], capture_output=True, text=True, env=environment, timeout=600, check=False)


def workbench(*args: str, db: Path | str, env: dict[str, str] | None = None) -> str:
    """Standard output of ``workbench ARGS`` (failing the test on a non-zero exit)."""
    done = workbench_process(*args, db=db, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout
