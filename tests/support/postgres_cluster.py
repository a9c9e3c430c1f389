"""A throw-away PostgreSQL cluster for tests and benchmarks: ``initdb`` in a temporary directory, started on a
free port on 127.0.0.1, stopped and deleted afterwards.

It is a real server (PostgreSQL 15 here; any version with ``initdb`` and ``pg_ctl``), not SQLite pretending.
``initdb`` refuses to run as root, so as root the cluster belongs to the ``postgres`` user (Debian's package
creates it); as anyone else it belongs to the caller. Used by the ``postgres`` fixture in ``conftest.py`` and by
``benchmarks/``; run ``python tests/support/postgres_cluster.py`` to start one by hand and print its URL.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path


def postgres_bindir() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``, or None where PostgreSQL is not installed."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if candidates:  # Debian's layout: the newest version's own directory (pg_ctl, createdb, psql beside initdb)
        return Path(candidates[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).resolve().parent if on_path else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PostgresCluster:
    """One running cluster; ``database()`` creates a fresh, empty database and returns its URL."""

    def __init__(self, bindir: Path, *, durable: bool = False) -> None:
        self.bindir = bindir
        self.durable = durable
        """Keep fsync and synchronous commits on, as a real server does (for benchmarks); tests run without."""
        self.root = Path(tempfile.mkdtemp(prefix="workbench-pg-"))
        self.data = self.root / "data"
        self.port = 0
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres")
            os.chmod(self.root, 0o700)
            self._as_user = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self._as_user, *args], capture_output=True, text=True, check=False, cwd=self.root, timeout=120
        )

    def start(self) -> PostgresCluster:
        initdb = str(self.bindir / "initdb")
        done = self._run(initdb, "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8")
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {done.stderr.strip()[-400:]}")
        # Throw-away data: no fsync (unless durable). Enough connections for several workers, each with a pool.
        options = f"-c max_connections=200 -k {self.root}"
        if not self.durable:
            options = f"-c fsync=off -c synchronous_commit=off -c full_page_writes=off {options}"
        self._options = options
        for _attempt in range(5):
            self.port = _free_port()
            done = self._pg_ctl_start()
            if done.returncode == 0:
                return self
        raise RuntimeError(f"pg_ctl start failed: {done.stderr.strip()[-400:]} {self._log_tail()}")

    def _pg_ctl_start(self) -> subprocess.CompletedProcess[str]:
        return self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"), "-w",
            "-t", "60", "-o", f"-p {self.port} -h 127.0.0.1 {self._options}", "start",
        )  # fmt: skip

    def _log_tail(self) -> str:
        server_log = self.root / "server.log"
        return server_log.read_text(errors="replace")[-400:] if server_log.exists() else ""

    def stop_server(self, mode: str = "fast") -> None:
        """Stop the server (``pg_ctl stop -m fast``: connections are cut), keeping its data for :meth:`restart`."""
        done = self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctl stop failed: {done.stderr.strip()[-400:]}")

    def restart(self) -> None:
        """Start a stopped server again, on the same port, with its data."""
        done = self._pg_ctl_start()
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {done.stderr.strip()[-400:]} {self._log_tail()}")

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def database(self, prefix: str = "wb") -> str:
        """Create a fresh database and return its ``postgresql://`` URL."""
        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        done = self._run(str(self.bindir / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)
        if done.returncode != 0:
            raise RuntimeError(f"createdb failed: {done.stderr.strip()[-400:]}")
        return self.url(name)

    def stop(self) -> None:
        if self.port:
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


if __name__ == "__main__":
    import signal
    import sys
    import time

    def _stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM (kill) or SIGHUP stops and deletes the cluster like Ctrl+C

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGHUP, _stop)

    bindir = postgres_bindir()
    if bindir is None:
        sys.exit("PostgreSQL is not installed (apt-get install -y postgresql)")
    with PostgresCluster(bindir) as cluster:
        print(cluster.database(), flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
