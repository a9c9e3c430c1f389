"""Wall time of the full offline suite: every tier, both arms, the scripted model, stored like `workbench bench`.

    python benchmarks/offline_suite.py                 # concurrency 2, a throwaway database
    python benchmarks/offline_suite.py --concurrency 4 --db /tmp/suite.db --out /tmp/suite.md
    python benchmarks/offline_suite.py --profile       # where the time goes (cProfile, top 25)

Prints the wall time (goal: at most 20 s on 2 cores at concurrency 2), runs per tier, failures, and the
scripted model's code/tool input-token ratio at each scaling size per app.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

GOAL_S = 20.0
"""The offline suite's goal on an idle 2-core machine at concurrency 2."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--tier", default="all", choices=("everyday", "long", "scaling", "all"))
    parser.add_argument("--db", help="Session database (default: a temporary file, deleted afterwards)")
    parser.add_argument("--out", help="Also write the report (.md, .json or .csv)")
    parser.add_argument("--profile", action="store_true", help="Profile the sweep and print the top functions")
    args = parser.parse_args(argv)

    from workbench.bench import Sweep, plan, write_report
    from workbench.store import Store

    with tempfile.TemporaryDirectory() as scratch:
        store = Store(args.db or Path(scratch) / "suite.db")
        cases = plan(args.tier)
        sweep = Sweep(cases, model="scripted", store=store, concurrency=args.concurrency)
        profiler = cProfile.Profile() if args.profile else None
        started = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        outcome = asyncio.run(sweep.run())
        if profiler is not None:
            profiler.disable()
        elapsed = time.perf_counter() - started
        report = outcome.report()
        if args.out:
            write_report(report, args.out)
        store.engine.dispose()

    cpus = os.cpu_count() or 1
    verdict = "within" if elapsed <= GOAL_S else "OVER"
    print(
        f"offline suite: {len(outcome.results)} of {len(cases)} comparisons ({2 * len(outcome.results)} arm runs), "
        f"concurrency {args.concurrency}, {cpus} CPUs: {elapsed:.1f} s ({verdict} the {GOAL_S:.0f} s goal)"
    )
    for tier in report.tiers:
        tool, code = tier.arms["tool"], tier.arms["code"]
        print(
            f"  {tier.tier:9} {tier.runs:3} runs  failed tool {tool.failed}/{tool.runs}, code {code.failed}/{code.runs}"
            f"  input tokens code vs tool {tier.change_pct['input_tokens']:+.0f}%"
            f"  cost {tier.change_pct['cost_usd']:+.0f}%"
        )
    if report.scaling:
        sizes = report.scaling[0].sizes
        print("  code/tool input-token ratio by item count: " + "  ".join(f"{size:>5}" for size in sizes))
        for series in report.scaling:
            ratios = "  ".join("    –" if r is None else f"{r:5.2f}" for r in series.ratio("input_tokens"))
            print(f"    {series.task:34}        {ratios}")
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    failed = sum(tier.arms[arm].failed for tier in report.tiers for arm in tier.arms)
    return 0 if not failed and not outcome.interrupted else 1


if __name__ == "__main__":
    sys.exit(main())
