"""Is the process that wrote a "running" row still alive? One answer for sessions, sweeps and tools.

On this host the answer is the writer's pid; a shared database's rows written on other hosts are judged by
the writer's heartbeat instead (:func:`writer_alive`).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

_PROC = Path("/proc/self")
_START_SLACK_S = 2.0
"""/proc gives start times in clock ticks after a boot time in whole seconds."""
HEARTBEAT_INTERVAL_S = 5.0
"""How often a session's writer refreshes its heartbeat while it runs (with its events, or alone when idle)."""
HEARTBEAT_STALE_S = 60.0
"""A heartbeat older than this marks its writer, on another host, as gone. It outlasts the default
``store_busy_timeout_s`` (30 s) that a writer may spend waiting on a lock without beating."""
SILENT_WRITER_S = 600.0
"""A session written on another host by a workbench from before heartbeats (schema 2) is judged by its last
stored event instead: a live run stores something far more often (every request, every provider retry)."""


def writer_alive(
    pid: int,
    host: str,
    started: datetime,
    heartbeat_age_s: Callable[[], float | None],
    last_event_t: Callable[[], float | None],
) -> bool:
    """Whether the writer of a "running" session, started at ``started``, still runs: by ``pid`` on this
    host; elsewhere (a shared database, or this machine renamed, as a container is on every start) by the
    age of its heartbeat, by the database's clock so the hosts' clocks need not agree; and for a writer that
    never beat (a workbench from before schema 3) by how long its session has stored nothing.

    ``heartbeat_age_s`` and ``last_event_t`` (the latest event's seconds after ``started``) are asked only
    when the pid cannot answer."""
    alive = process_alive(pid, host, started)
    if alive is not None:
        return alive
    age_s = heartbeat_age_s()
    if age_s is not None:
        return age_s < HEARTBEAT_STALE_S
    silent_s = datetime.now(UTC).timestamp() - (started.timestamp() + (last_event_t() or 0.0))
    return silent_s < SILENT_WRITER_S


def process_alive(pid: int, host: str = "", since: datetime | None = None) -> bool | None:
    """Whether process ``pid`` (that wrote a row on ``host`` at ``since``) still runs; ``None`` when it ran
    under another host name, where this process cannot look.

    On Linux a zombie does not count, and neither does a process that started after ``since``: the
    writer died and its pid was reused (common in containers, where pids restart low).
    """
    if not on_this_host(host):
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


def on_this_host(host: str) -> bool:
    """Whether a row's writer ran here (rows from before hosts were recorded have none: assumed here)."""
    return not host or host == socket.gethostname()


def own_process(pid: int) -> bool:
    """Whether process ``pid`` runs as this user (on Linux the owner of ``/proc/<pid>``; elsewhere, whether
    this process may signal it)."""
    if pid <= 0:
        return False
    if _PROC.is_dir():
        try:
            return Path(f"/proc/{pid}").stat().st_uid == os.getuid()
        except OSError:
            return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True
