"""BFCL v4 multi-turn: every entry's ground truth played through the workbench's toolset, graded by BFCL's checker.

Each call goes through the pydantic-ai toolset built from the function docs (arguments validated against the
schemas, run on the entry's own instances), the calls recorded per turn are fed to ``multi_turn_checker``.
Prints the pass rate and time per category, and every entry the checker rejects with its reason.

    python benchmarks/bfcl_ground_truth.py [--category multi_turn_base] [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from workbench.suites import bfcl


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--category", choices=bfcl.CATEGORIES, action="append")
    parser.add_argument("--limit", type=int, default=None, help="Only the first N entries of each category.")
    options = parser.parse_args()
    try:
        bfcl.require()
    except bfcl.SuiteMissing as error:
        print(f"bfcl_ground_truth: {error}", file=sys.stderr)
        return 2
    print(f"bfcl-eval {bfcl.status().version}")
    for category in options.category or bfcl.CATEGORIES:
        entries = bfcl.load_entries(category)[: options.limit]
        started = time.perf_counter()
        failures = []
        for entry in entries:
            try:
                world = asyncio.run(bfcl.play_ground_truth(entry))
            except KeyError as error:  # BFCL's data: a ground truth calling a function held back at that turn
                failures.append((entry.id, "not offered", str(error).strip("'\"")))
                continue
            result = bfcl.grade(entry, world.calls)
            if not result.get("valid"):
                failures.append((entry.id, result.get("error_type"), result.get("error_message")))
        seconds = time.perf_counter() - started
        passed = len(entries) - len(failures)
        print(
            f"{category:<26} {passed}/{len(entries)} pass ({100 * passed / max(len(entries), 1):.1f}%)  {seconds:.2f} s"
        )
        for entry_id, kind, message in failures:
            print(f"  rejected {entry_id}: {kind}: {message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
