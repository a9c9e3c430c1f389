"""Load figures: 500-item long tasks in both arms, a 10,000-event session loaded and replayed, 1,000 stored
sessions listed and filtered, and reads while a sweep writes. Times and peak memory for each.

    python benchmarks/load.py                 # every case
    python benchmarks/load.py --task kanban/quarter-cleanup --json

The measuring code lives in :mod:`reliability.load` (``python -m reliability --only load``
prints the same table among the other reliability figures).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the reliability package beside benchmarks/
from reliability.load import long_tasks, run_all
from reliability.report import load_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", action="append", help="long task(s) to run at 500 items (default: every one)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--keep", type=Path, help="keep the databases in this directory")
    options = parser.parse_args(argv)
    err = Console(stderr=True, highlight=False)
    with tempfile.TemporaryDirectory(prefix="workbench-load-") as scratch:
        directory = options.keep or Path(scratch)
        results = run_all(
            directory,
            tasks=options.task or long_tasks(),
            on_result=lambda r: err.print(f"[dim]{r.name}: {r.seconds:.2f} s[/dim]"),
        )
    if options.json:
        print(json.dumps([asdict(result) for result in results], indent=2))
    else:
        Console(highlight=False, width=140).print(load_table(results))
    return 0 if all(result.ok for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
