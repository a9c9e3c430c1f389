"""How long the ``workbench`` command takes to start: medians of process starts, next to ``python -c pass``.

Each command runs in a fresh process against a throw-away database, config and data directory (nothing of
yours is read or written). The TUI is started in a pseudo-terminal of the given size with a few letters
already typed: its time is from the process start to the moment those letters are drawn in the prompt
field, i.e. the first screen is up and the prompt takes typing. ``engine import`` is what the TUI loads in
the background after that (pydantic-ai, the harness, Monty, the tokenizer) before a first run needs it.

    python benchmarks/startup.py [--runs 5] [--size 80x24]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import resource
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
import tty
from pathlib import Path

BIN = Path(sys.executable).parent
WORKBENCH = str(BIN / "workbench")
COMMANDS: list[tuple[str, list[str], float]] = [
    ("python -c pass", [sys.executable, "-c", "pass"], 0.0),
    ("workbench --help", [WORKBENCH, "--help"], 0.3),
    ("workbench tasks", [WORKBENCH, "tasks"], 0.4),
    ("workbench sessions", [WORKBENCH, "sessions"], 0.4),
    ("workbench locate", [WORKBENCH, "locate"], 0.4),
    ("workbench config", [WORKBENCH, "config"], 0.4),
    ("engine import (TUI background)", [sys.executable, "-c", "import workbench.runner"], 0.0),
]
TUI_GOAL_S = 1.0
MARKER = "qzxv"
"""Typed before the TUI is up; seeing it drawn means the prompt field has focus and takes input."""


def isolated_env(root: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("WORKBENCH_")}
    env.update(
        WORKBENCH_DB=str(root / "sessions.db"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_DATA_HOME=str(root / "data"),
        TERM="xterm-256color",
        COLORTERM="truecolor",
    )
    return env


def time_command(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run; on a busy machine the CPU time is the steadier figure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a running process has used so far (Linux ``/proc``; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_tui(env: dict[str, str], columns: int, rows: int, timeout_s: float = 30.0) -> tuple[float, float]:
    """(wall seconds, CPU seconds) from process start until typed text shows in the TUI's prompt field."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    tty.setraw(slave)  # no echo by the terminal itself: only the app may draw the typed text
    started = time.perf_counter()
    process = subprocess.Popen([WORKBENCH], stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    os.write(master, MARKER.encode())
    seen = b""
    elapsed = cpu = float("nan")
    try:
        while time.perf_counter() - started < timeout_s:
            ready, _, _ = select.select([master], [], [], 0.05)
            if not ready:
                continue
            seen = (seen + os.read(master, 65536))[-4096:]
            if MARKER.encode() in seen:
                elapsed = time.perf_counter() - started
                cpu = cpu_seconds(process.pid)
                break
    finally:
        os.write(master, b"\x11")  # ctrl+q
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        os.close(master)
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="process starts per command (median shown)")
    parser.add_argument("--size", default="80x24", help="the TUI's terminal size, COLUMNSxROWS")
    args = parser.parse_args()
    columns, rows = (int(part) for part in args.size.split("x"))
    with tempfile.TemporaryDirectory(prefix="workbench-startup-") as tmp:
        env = isolated_env(Path(tmp))
        subprocess.run([WORKBENCH, "sessions"], env=env, stdout=subprocess.DEVNULL, check=True)  # create the db
        python = sys.version.split()[0]
        print(f"median of {args.runs} process starts (min-max), Python {python}, {os.cpu_count()} cores")
        print(f"load average {os.getloadavg()[0]:.1f} (figures stretch with it; the CPU time less so)")
        print(f"{'command':<34} {'median':>8} {'range':>15} {'CPU':>8} {'goal':>8}")
        for name, argv, goal in COMMANDS:
            runs = [time_command(argv, env) for _ in range(args.runs)]
            times = [wall for wall, _ in runs]
            cpu = statistics.median(cpu for _, cpu in runs)
            show_goal = f"<= {goal:.1f} s" if goal else ""
            print(
                f"{name:<34} {statistics.median(times):>6.3f} s {min(times):>6.3f}-{max(times):.3f} s "
                f"{cpu:>6.3f} s {show_goal:>8}"
            )
        runs = [time_tui(env, columns, rows) for _ in range(args.runs)]
        times = [wall for wall, _ in runs]
        cpu = statistics.median(cpu for _, cpu in runs)
        name = f"TUI: prompt takes typing ({columns}x{rows})"
        median = statistics.median(times)
        print(f"{name:<34} {median:>6.3f} s {min(times):>6.3f}-{max(times):.3f} s {cpu:>6.3f} s <= {TUI_GOAL_S:.1f} s")


if __name__ == "__main__":
    main()
