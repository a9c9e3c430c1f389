"""What reading a fallback file as hostile input costs: the time and memory of checking a large genuine file.

    python benchmarks/fallback_read.py                # 2,000 events of 8,000 non-ASCII characters (~107 MiB)
    python benchmarks/fallback_read.py --events 500

The file is written by the writer's own ``FallbackFile`` (so its lines are split as a run's are), then read
by ``read_unsaved`` in a fresh process: every line bounded, every field checked, every event's data parsed
as its payload. Printed: the file's size, its longest line, the read's wall time and that process's peak RSS.
The file is near the read's bound (``MAX_FILE_BYTES``); a real session of 10,000 events is a few MB.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]


def write(directory: Path, events: int) -> Path:
    from workbench.store.fallback import FallbackFile

    file = FallbackFile(directory, "0123456789")
    session = {"id": "0123456789", "created": datetime.now(UTC).isoformat(), "app": "cart", "items": 5, "seed": 0,
               "prompt": "p", "task": None, "model": "m", "status": "running", "pid": 0, "host": ""}  # fmt: skip
    file.start("benchmark", session, [{"name": "tool", "mode": "tool", "model": "m", "status": "running"}])
    data = json.dumps({"status": "completed", "error": None, "output": "é" * 8000}, ensure_ascii=False)
    file.events([("tool", seq, float(seq), "run_finished", data) for seq in range(events)])
    return file.path


def read(path: Path) -> None:
    from workbench.store.fallback_read import read_unsaved

    started = time.perf_counter()
    unsaved = read_unsaved(path)
    took = time.perf_counter() - started
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"events": len(unsaved.events), "seconds": round(took, 2), "peak_rss_mb": round(rss_mb)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--read", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.read:
        read(options.read)
        return
    with tempfile.TemporaryDirectory() as scratch:
        path = write(Path(scratch), options.events)
        size_mib = path.stat().st_size / 2**20
        longest_mib = max(len(line) for line in path.read_bytes().splitlines()) / 2**20
        child = subprocess.run([sys.executable, __file__, "--read", str(path)], capture_output=True, text=True)
        if child.returncode:
            sys.exit(child.stderr.strip().splitlines()[-1])
        figures = json.loads(child.stdout)
    print(f"{figures['events']:,} events, {size_mib:.1f} MiB file, longest line {longest_mib:.2f} MiB: "
          f"read and checked in {figures['seconds']:.2f} s, peak RSS {figures['peak_rss_mb']} MB")  # fmt: skip


if __name__ == "__main__":
    main()
