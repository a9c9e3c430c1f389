"""A stdio MCP server, and every process it starts, ends with its arm (and with the workbench).

The MCP client starts a server in a session of its own and kills that group only when the server does
not exit after its input closes; a server that exits on time leaves its own children running (a helper
``sleep 600``, a browser, a database), reparented to init. So each stdio server is started through a
keeper: a small Python process that starts the real command in a process group of its own, passes the
pipes on untouched, and ends that whole group (SIGTERM, then SIGKILL after :data:`GRACE_S`) when

- the server exits (its children go with it), and the keeper exits with the server's code;
- the keeper is told to stop (the client's SIGTERM, or Ctrl+C of a terminal it was attached to);
- the workbench dies, even by SIGKILL: on Linux the kernel sends the keeper SIGTERM then
  (``PR_SET_PDEATHSIG``); elsewhere the keeper polls for its parent's end.

A daemon that leaves the group on purpose (``setsid``) escapes, as it would any process manager.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

GRACE_S = 2.0
"""How long a server's group has between SIGTERM and SIGKILL."""

KEEPER = r"""
import os, signal, sys, threading, time
GRACE = float(sys.argv[1])
try:
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: SIGTERM when the workbench dies
except Exception:
    pass
parent = os.getppid()
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    except OSError as error:
        os.write(2, f"workbench: cannot run {sys.argv[2]}: {error.strerror}\n".encode())
    os._exit(127)
try:
    os.setpgid(pid, pid)
except OSError:
    pass
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 0)
os.dup2(null, 1)  # only the server holds the pipes: its exit is their end
done = threading.Event()

def end_group():
    try:
        os.killpg(pid, signal.SIGTERM)
    except OSError:
        return
    deadline = time.monotonic() + GRACE
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except OSError:
            return
        time.sleep(0.02)
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass

def stop(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    end_group()

def orphaned():
    while not done.wait(0.5):
        if os.getppid() != parent:
            stop(None, None)
            return

signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGHUP, stop)
threading.Thread(target=orphaned, daemon=True).start()
while True:
    try:
        _, status = os.waitpid(pid, 0)
        break
    except ChildProcessError:
        status = 0
        break
    except InterruptedError:
        continue
done.set()
end_group()
code = os.waitstatus_to_exitcode(status)
os._exit(code if code >= 0 else 128 - code)
"""


def kept(command: str, args: list[str], cwd: Path | None = None) -> tuple[str, list[str]]:
    """The command line that runs ``command args`` (in ``cwd``) under the keeper; unchanged where the command
    cannot be found (the client's own error says so) or on Windows (where the client ends the server's job)."""
    found = (cwd or Path.cwd()) / command if "/" in command else shutil.which(command)
    if sys.platform == "win32" or found is None or not os.access(found, os.X_OK):
        return command, args
    return sys.executable, ["-I", "-S", "-c", KEEPER, str(GRACE_S), command, *args]
