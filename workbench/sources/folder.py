"""An arm's scratch space: its copy of the working folder, its servers' logs, and the setup command."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from workbench.sources.base import SourceError, tail


@dataclass
class ArmFolder:
    """``root`` holds ``logs/`` and, with a template, ``workdir`` (the arm's copy of it). Commands run in
    ``cwd`` (``None``: the current folder), so relative paths in them mean what they meant where typed."""

    arm: str
    root: Path
    workdir: Path | None
    cwd: Path | None = None

    @classmethod
    def create(cls, arm: str, template: Path | None, cwd: Path | None = None) -> ArmFolder:
        root = Path(tempfile.mkdtemp(prefix=f"workbench-{arm}-"))
        (root / "logs").mkdir()
        workdir = None
        if template is not None:
            workdir = root / template.name
            shutil.copytree(template, workdir, symlinks=True)
        return cls(arm, root, workdir, cwd)

    def log(self, name: str) -> Path:
        return self.root / "logs" / f"{name}.stderr"

    def fill(self, text: str, *, quote: bool) -> str:
        """``text`` with ``{workdir}`` and ``{arm}`` replaced (shell-quoted when ``quote``)."""
        values = {"{workdir}": str(self.workdir or ""), "{arm}": self.arm}
        for placeholder, value in values.items():
            text = text.replace(placeholder, shlex.quote(value) if quote else value)
        return text

    def environment(self) -> dict[str, str]:
        env = dict(os.environ, WORKBENCH_ARM=self.arm)
        if self.workdir is not None:
            env["WORKBENCH_WORKDIR"] = str(self.workdir)
        return env

    async def run_setup(self, command: str, timeout_s: float) -> None:
        """Run the setup command for the arm; raises :class:`SourceError` when it fails."""
        process = await asyncio.create_subprocess_shell(
            self.fill(command, quote=True),
            cwd=self.cwd,
            env=self.environment(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            async with asyncio.timeout(timeout_s):
                output, _ = await process.communicate()
        except TimeoutError:
            _kill_group(process)
            await process.wait()
            raise SourceError(f"the setup command did not finish within {timeout_s:g} s: {command}") from None
        except BaseException:
            _kill_group(process)
            await process.wait()
            raise
        if process.returncode != 0:
            text = tail(output.decode("utf-8", "replace"))
            raise SourceError(f"the setup command failed (exit {process.returncode}): {command}\n{text}".rstrip())

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, 9)
