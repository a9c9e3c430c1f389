"""Is the process that wrote a "running" row still alive? One answer for sessions, sweeps and tools."""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime
from pathlib import Path

_PROC = Path("/proc/self")
_START_SLACK_S = 2.0
"""/proc gives start times in clock ticks after a boot time in whole seconds."""


def process_alive(pid: int, host: str = "", since: datetime | None = None) -> bool | None:
    """Whether process ``pid`` (that wrote a row on ``host`` at ``since``) still runs; ``None`` when it ran
    under another host name, where this process cannot look.

    On Linux a zombie does not count, and neither does a process that started after ``since``: the
    writer died and its pid was reused (common in containers, where pids restart low).
    """
    if host and host != socket.gethostname():
        return None
    if pid <= 0:
        return False
    if _PROC.is_dir():
        started = process_started(pid)
        if started is None:
            return False
        if since is None:
            return True
        moment = (since if since.tzinfo else since.replace(tzinfo=UTC)).timestamp()
        return started <= moment + _START_SLACK_S
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_started(pid: int) -> float | None:
    """When a live, non-zombie process started (epoch seconds, from Linux /proc), or ``None``."""
    try:
        after_name = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        boot = next(line for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime "))
    except (OSError, StopIteration):
        return None
    if after_name[0] in ("Z", "X"):
        return None
    return int(boot.split()[1]) + int(after_name[19]) / os.sysconf("SC_CLK_TCK")


def this_host() -> str:
    return socket.gethostname()
