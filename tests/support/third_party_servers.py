"""Real MCP servers nobody here wrote, each installed in an environment of its own for the tests.

PyPI's ``mcp-server-sqlite`` and ``mcp-server-git`` (on the mcp 1.x SDK, as their users run them) go into
one virtual environment; npm's ``@modelcontextprotocol/server-filesystem`` and ``server-memory`` into one
``npm install --prefix`` folder. Both live under ``$WORKBENCH_TEST_SERVERS`` (default
``~/.cache/workbench-tests``) and are reused once installed. Run by hand to install them:
``python tests/support/third_party_servers.py``. ``.ci/run`` does, and sets ``REQUIRE_MCP_SERVERS=1`` so that a
missing server fails the tests instead of skipping them.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PYPI = ("mcp-server-sqlite==2025.4.25", "mcp-server-git==2026.10.10", "mcp>=1.20,<2")
NPM = ("@modelcontextprotocol/server-filesystem@2026.8.31", "@modelcontextprotocol/server-memory@2026.8.31")
INSTALL_TIMEOUT_S = 900


def cache_dir() -> Path:
    return Path(os.environ.get("WORKBENCH_TEST_SERVERS") or Path.home() / ".cache" / "workbench-tests")


@dataclass(frozen=True)
class Servers:
    """Where the installed servers are; ``None`` (with ``why``) for a kind that could not be installed."""

    python_bin: Path | None
    node_modules: Path | None
    why_not_python: str = ""
    why_not_node: str = ""

    def script(self, package: str) -> Path | None:
        """The entry script of an npm server (``dist/index.js``)."""
        if self.node_modules is None:
            return None
        return self.node_modules / "@modelcontextprotocol" / package / "dist" / "index.js"


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One installer at a time (test sessions started side by side share the cache)."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def install() -> Servers:
    folder = cache_dir()
    with _locked(folder):
        python_bin, why_python = _python(folder / "py")
        node_modules, why_node = _node(folder / "npm")
    return Servers(python_bin, node_modules, why_python, why_node)


def _python(venv: Path) -> tuple[Path | None, str]:
    bin_dir = venv / "bin"
    if all((bin_dir / name).exists() for name in ("mcp-server-sqlite", "mcp-server-git")):
        return bin_dir, ""
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, capture_output=True,
                       timeout=INSTALL_TIMEOUT_S)  # fmt: skip
        subprocess.run([str(bin_dir / "pip"), "install", "-q", *PYPI], check=True, capture_output=True,
                       timeout=INSTALL_TIMEOUT_S)  # fmt: skip
    except (OSError, subprocess.SubprocessError) as error:
        return None, f"could not install {', '.join(PYPI)} into {venv}: {_reason(error)}"
    return bin_dir, ""


def _node(prefix: Path) -> tuple[Path | None, str]:
    modules = prefix / "node_modules"
    scripts = [modules / "@modelcontextprotocol" / name / "dist" / "index.js" for name in ("server-filesystem",
                                                                                          "server-memory")]  # fmt: skip
    if all(script.exists() for script in scripts):
        return modules, ""
    if shutil.which("npm") is None or shutil.which("node") is None:
        return None, "node and npm are not installed (apt-get install -y nodejs npm; .ci/run installs them)"
    try:
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(prefix), *NPM],
                       check=True, capture_output=True, timeout=INSTALL_TIMEOUT_S)  # fmt: skip
    except (OSError, subprocess.SubprocessError) as error:
        return None, f"could not npm install {', '.join(NPM)} into {prefix}: {_reason(error)}"
    return modules, ""


def _reason(error: BaseException) -> str:
    output = getattr(error, "stderr", None)
    text = output.decode("utf-8", "replace") if isinstance(output, bytes) else str(output or "")
    return " ".join((text.strip().splitlines() or [str(error)])[-1].split())[:300]


if __name__ == "__main__":
    servers = install()
    print(f"python servers: {servers.python_bin or servers.why_not_python}")
    print(f"npm servers:    {servers.node_modules or servers.why_not_node}")
    sys.exit(0 if servers.python_bin and servers.node_modules else 1)
