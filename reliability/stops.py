"""Stop signals to a live run whose code arm is inside a snippet: SIGTERM, SIGHUP and SIGKILL.

Each check starts a real workbench process (``workbench run``, ``workbench bench``, or the TUI on a
pseudo-terminal) against an OpenAI-compatible server whose code arm writes a snippet that never ends
(``while True: pass``) while its tool arm waits for an answer that never comes. Once the snippet is
running in a Monty worker (its ``snippet`` event is stored and the worker is burning CPU), the check
signals the process (for the TUI: closes its terminal, so the kernel sends SIGHUP) and measures:

- the exit code: 143 after SIGTERM, 129 after SIGHUP (-9 for SIGKILL, which cannot be handled);
- after SIGTERM / SIGHUP, the session saved as cancelled, with ``sessions`` and ``show`` agreeing on every
  arm's status (after SIGKILL: interrupted, and still agreeing);
- how long after the workbench's death its sandbox workers were gone (goal: within 1 s; found as the
  descendants of the process started here that run the ``monty`` binary, never by name).
"""

from __future__ import annotations

import os
import pty
import select
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from reliability.crash import cli_json, descendants, run_checks, workbench_command
from workbench.store.liveness import process_alive

TASK = "cart/remove-expensive"
TOOL_MODEL = "openai-chat:gpt-4o-mini-hang"
CODE_MODEL = "openai-chat:gpt-4o-mini-spin"
WAIT_S = 90.0
"""Most this waits for anything (the snippet to start, the process to exit, the workers to go): a bound for a
busy machine, not an expected time."""
WORKER_GONE_GOAL_S = 1.0


@dataclass
class StopReport:
    name: str
    signal: str
    exit_code: int | None = None
    exit_s: float | None = None
    """Signal to the process's exit."""
    workers: int = 0
    """Sandbox workers of the run alive when it was signalled."""
    workers_gone_s: float | None = None
    """The process's exit to the last of its workers gone (0 when they were gone first)."""
    orphaned: int = 0
    """Workers still alive at the end of the wait."""
    session_id: str | None = None
    listed_status: str | None = None
    listed_arms: dict[str, str] = field(default_factory=dict)
    """Each arm's status as ``workbench sessions --json`` lists it."""
    shown_arms: dict[str, str] = field(default_factory=dict)
    """Each arm's status as ``workbench show ID --json`` gives it."""
    stderr: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def held(self) -> bool:
        return not self.problems


def stop_cli_run(directory: Path, signum: int, *, base_url: str) -> StopReport:
    """Signal ``workbench run`` while its code arm's snippet runs."""
    report = StopReport("workbench run", signal.Signals(signum).name)
    _signal_headless("run", directory, signum, base_url, report)
    if signum != signal.SIGKILL:
        lines = [line for line in report.stderr.splitlines() if line.strip()]
        _expect(report, len(lines) == 1 and "cancelled" in lines[0], f"stderr was {report.stderr!r}")
    return report


def stop_bench(directory: Path, signum: int, *, base_url: str) -> StopReport:
    """Signal ``workbench bench`` while a comparison of its sweep is inside a snippet."""
    report = StopReport("workbench bench", signal.Signals(signum).name)
    db = _signal_headless("bench", directory, signum, base_url, report)
    sweeps = cli_json("bench", "--list", "--json", "--db", str(db), report=report) or []
    statuses = [sweep.get("status") for sweep in sweeps]
    _expect(report, statuses == ["interrupted"], f"the sweep is listed as {statuses}, not interrupted")
    return report


def _signal_headless(command: str, directory: Path, signum: int, base_url: str, report: StopReport) -> Path:
    """``workbench run`` / ``bench`` on the task with a hanging tool arm and a spinning code arm, signalled
    inside the snippet; checks the exit code and what was stored. Returns the database."""
    stem = directory / f"{command}-{report.signal}"
    db = stem.with_suffix(".db")
    models = ("--tool-model", TOOL_MODEL, "--code-model", CODE_MODEL, "--base-url", base_url)
    watched = Watched.start(workbench_command(command, "--task", TASK, *models, "--db", str(db), "--json"), stem)
    watched.stop_in_snippet(db, lambda: os.kill(watched.pid, signum), report)
    watched.await_exit(report)
    killed = signum == signal.SIGKILL
    _read_back(db, report, expect_status="interrupted" if killed else "cancelled")
    expected_code = -signum if killed else 128 + signum
    _expect(report, report.exit_code == expected_code, f"exit code {report.exit_code}, not {expected_code}")
    return db


def close_tui_terminal(directory: Path, *, base_url: str) -> StopReport:
    """Close the terminal of the TUI (the kernel sends SIGHUP) while a comparison's snippet runs."""
    report = StopReport("TUI, terminal closed", "SIGHUP")
    db = directory / "tui.db"
    command = workbench_command("--model", CODE_MODEL, "--base-url", base_url, "--db", str(db))
    watched = Watched.start_on_terminal(command)
    assert watched.terminal is not None
    watched.wait_for_screen(b"Run")
    os.write(watched.terminal, b"Remove everything in the cart that costs more than $50 apiece.")
    watched.wait_for_screen(b"$50 apiece")
    os.write(watched.terminal, b"\x12")  # ctrl+r
    watched.stop_in_snippet(db, watched.close_terminal, report)
    watched.await_exit(report)
    _read_back(db, report, expect_status="cancelled", also=("completed",))  # one model: the tool arm may be done
    _expect(report, report.exit_code == 129, f"exit code {report.exit_code}, not 129")
    return report


def all_checks(
    directory: Path, base_url: str, on_report: Callable[[StopReport], None] | None = None
) -> list[StopReport]:
    checks: list[Callable[[], StopReport]] = [
        *(lambda signum=signum: stop_cli_run(directory, signum, base_url=base_url)
          for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGKILL)),
        lambda: stop_bench(directory, signal.SIGTERM, base_url=base_url),
        lambda: close_tui_terminal(directory, base_url=base_url),
    ]  # fmt: skip
    return run_checks(checks, on_report)


# -- processes -------------------------------------------------------------------------------------


@dataclass
class Watched:
    """A workbench process started here: its pid, how it ended, and its sandbox workers when signalled."""

    pid: int
    process: subprocess.Popen[bytes] | None = None
    terminal: int | None = None
    """The pty's master side, for the TUI."""
    stderr_path: Path | None = None
    exit_status: int | None = None
    workers: list[int] = field(default_factory=list)
    signalled_at: float = 0.0
    screen: bytes = b""

    @classmethod
    def start(cls, command: list[str], stem: Path) -> Watched:
        """Output goes to files: a pipe would stay open as long as any worker holding it lived."""
        stderr_path = stem.with_suffix(".err")
        with open(stem.with_suffix(".out"), "wb") as out, open(stderr_path, "wb") as err:
            process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        return cls(process.pid, process=process, stderr_path=stderr_path)

    @classmethod
    def start_on_terminal(cls, command: list[str]) -> Watched:
        """Start ``command`` as a session leader whose controlling terminal is a new pty."""
        pid, terminal = pty.fork()
        if pid == 0:
            os.environ.update(COLUMNS="120", LINES="40", TERM="xterm-256color")
            os.execv(command[0], command)
        return cls(pid, terminal=terminal)

    def poll(self) -> int | None:
        if self.exit_status is None:
            if self.process is not None:
                self.exit_status = self.process.poll()
            else:
                done, status = os.waitpid(self.pid, os.WNOHANG)
                if done:
                    self.exit_status = os.waitstatus_to_exitcode(status)
        return self.exit_status

    def close_terminal(self) -> None:
        assert self.terminal is not None
        os.close(self.terminal)
        self.terminal = None

    def drain(self) -> None:
        """Read what the TUI drew, so that it never blocks on a full terminal."""
        while self.terminal is not None and select.select([self.terminal], [], [], 0)[0]:
            try:
                chunk = os.read(self.terminal, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.screen = (self.screen + chunk)[-200_000:]

    def wait_for_screen(self, text: bytes) -> None:
        deadline = time.monotonic() + WAIT_S
        while text not in self.screen:
            if self.poll() is not None or time.monotonic() > deadline:
                self._give_up(f"the TUI never showed {text!r}")
            self.drain()
            time.sleep(0.02)

    def stop_in_snippet(self, db: Path, stop: Callable[[], None], report: StopReport) -> None:
        """Wait until the code arm's snippet runs in a busy worker, then ``stop()`` the process."""
        deadline = time.monotonic() + WAIT_S
        while True:
            if self.poll() is not None:
                self._give_up(f"{report.name} ended (exit {self.poll()}) before its snippet ran")
            if time.monotonic() > deadline:
                self._give_up(f"{report.name}: no snippet was running after {WAIT_S:.0f} s")
            self.drain()
            workers = sandbox_workers(self.pid)
            if workers and _snippet_stored(db) and max(_cpu_ticks(worker) for worker in workers) >= 10:
                break
            time.sleep(0.02)
        self.workers, report.workers = workers, len(workers)
        self.signalled_at = time.monotonic()
        stop()

    def await_exit(self, report: StopReport) -> None:
        """Wait for the exit, then poll until every worker seen at the signal is gone."""
        while self.poll() is None and time.monotonic() - self.signalled_at < WAIT_S:
            self.drain()
            time.sleep(0.01)
        if self.poll() is None:
            os.kill(self.pid, signal.SIGKILL)
            report.problems.append(f"the process did not exit within {WAIT_S:.0f} s of the signal")
            while self.poll() is None:
                time.sleep(0.01)
        exited = time.monotonic()
        report.exit_code = self.exit_status
        report.exit_s = round(exited - self.signalled_at, 3)
        living = list(self.workers)
        while living and time.monotonic() - exited < WAIT_S:
            living = [worker for worker in living if process_alive(worker)]
            time.sleep(0.005)
        report.workers_gone_s = round(time.monotonic() - exited, 3) if self.workers else None
        report.orphaned = len(living)
        for worker in living:  # do not leave them burning the machine
            os.kill(worker, signal.SIGKILL)
        if self.terminal is not None:
            self.close_terminal()
        if self.stderr_path is not None:
            report.stderr = self.stderr_path.read_text(errors="replace")[-2000:]
        _expect(report, report.workers > 0, "no sandbox worker was running when the signal was sent")
        _expect(report, not living, f"{len(living)} sandbox worker(s) outlived the workbench")

    def _give_up(self, problem: str) -> NoReturn:
        if self.poll() is None:
            os.kill(self.pid, signal.SIGKILL)
        for worker in sandbox_workers(self.pid):
            os.kill(worker, signal.SIGKILL)
        raise RuntimeError(problem)


def sandbox_workers(pid: int) -> list[int]:
    """The live descendants of ``pid`` that run the ``monty`` binary (Linux /proc)."""
    from pydantic_monty._binary import find_monty_binary

    binary = os.path.realpath(find_monty_binary())
    found = []
    for child in descendants(pid):
        try:
            if os.path.realpath(f"/proc/{child}/exe") == binary and process_alive(child):
                found.append(child)
        except OSError:
            continue
    return found


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


# -- the database, read back -----------------------------------------------------------------------


def _snippet_stored(db: Path) -> bool:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as connection:
            return connection.execute("SELECT 1 FROM events WHERE kind = 'snippet' LIMIT 1").fetchone() is not None
    except sqlite3.Error:
        return False


def _read_back(db: Path, report: StopReport, *, expect_status: str, also: tuple[str, ...] = ()) -> None:
    """What a user sees afterwards: ``workbench sessions --json`` and ``workbench show ID --json`` agree.

    The code arm (stopped inside its snippet) has ``expect_status``; any other arm that, or one of ``also``.
    """
    listed = cli_json("sessions", "--json", "--db", str(db), report=report)
    if not listed:
        report.problems.append("the session is not listed")
        return
    session = listed[0]
    report.session_id, report.listed_status = session["session_id"], session["status"]
    report.listed_arms = {arm["name"]: arm["status"] for arm in session.get("arms", [])}
    shown = cli_json("show", session["session_id"], "--json", "--db", str(db), report=report)
    if shown:
        report.shown_arms = {arm["name"]: arm["status"] for arm in shown["arms"]}
    _expect(report, report.listed_status == expect_status, f"listed as {report.listed_status}, not {expect_status}")
    _expect(
        report,
        report.shown_arms.get("code") == expect_status and set(report.shown_arms.values()) <= {expect_status, *also},
        f"show gives the arms as {report.shown_arms}",
    )
    _expect(
        report,
        report.listed_arms == report.shown_arms,
        f"sessions lists the arms as {report.listed_arms}, show as {report.shown_arms}",
    )


def _expect(report: StopReport, condition: bool, problem: str) -> None:
    if not condition:
        report.problems.append(problem)
