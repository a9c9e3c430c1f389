"""What deriving the queue's code version costs (:mod:`workbench.queue.version`): a digest of every ``.py`` file
of the installed ``workbench`` package (the demo apps included), computed once per process (``bench --queue``, each
``workbench worker``, ``bench --list``).

Prints the files and bytes hashed, the first digest in a fresh process (files read from disk or the page
cache, as a worker starting up reads them) and the median of repeated digests in one process.

    python benchmarks/code_version.py [--runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

FIRST = """
import time
from workbench.queue import version
import workbench, workbench.apps  # imported by every command anyway: not part of the digest's cost
began = time.perf_counter()
version.application_version()
print(time.perf_counter() - began)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    from workbench.queue import version

    files = version.code_files()
    size = sum(path.stat().st_size for _, path in files)
    firsts = []
    for _ in range(5):
        done = subprocess.run([sys.executable, "-c", FIRST], capture_output=True, text=True, check=True)
        firsts.append(float(done.stdout))
    again = []
    for _ in range(runs):
        began = time.perf_counter()
        version.code_digest()
        again.append(time.perf_counter() - began)
    version.application_version()
    began = time.perf_counter()
    version.application_version()
    cached = time.perf_counter() - began
    print(f"version          {version.application_version()}")
    print(f"files hashed     {len(files)} ({size / 1024:.0f} KiB)")
    print(f"first, fresh process  median {statistics.median(firsts) * 1000:.1f} ms (of 5)")
    print(f"digest again     median {statistics.median(again) * 1000:.1f} ms (of {runs})")
    print(f"cached call      {cached * 1e6:.1f} µs")


if __name__ == "__main__":
    main()
