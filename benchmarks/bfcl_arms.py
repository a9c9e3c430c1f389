"""BFCL v4 multi-turn through the workbench's arms: the offline ground-truth player on every entry, in every arm,
graded by BFCL's own checker on the calls each arm made per turn (the code arm's inner calls included).

The same path as ``workbench bench --suite bfcl`` (a sweep of BfclSource conversations through the runner), without
a store. Prints, per category and arm: entries passed, and the means per entry of requests, input and output
tokens, cost (the scripted model's real BPE counts, priced as its named model), wall time and turns; then every
entry an arm failed, with BFCL's reason.

    python benchmarks/bfcl_arms.py [--category multi_turn_base ...] [--entries 0-199] [--arms tool,code,...]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from workbench.bench import BenchCase, Sweep
from workbench.runner import RunRequest
from workbench.suites import bfcl, bfcl_plan

ARMS = ("tool", "code", "code-eager", "hybrid")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--category", choices=bfcl.CATEGORIES, action="append")
    parser.add_argument("--entries", default=None, help="Entry numbers, e.g. 0-19 (default: all 200).")
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--concurrency", type=int, default=2)
    options = parser.parse_args()
    try:
        bfcl.require()
    except bfcl.SuiteMissing as error:
        print(f"bfcl_arms: {error}", file=sys.stderr)
        return 2
    arms = tuple(name.strip() for name in options.arms.split(",") if name.strip())
    print(f"bfcl-eval {bfcl.status().version}; arms {', '.join(arms)}; model scripted (BFCL's ground truth)")
    header = f"{'category':<24} {'arm':<11} {'passed':>13} {'requests':>9} {'input':>9} {'output':>7} "
    print(header + f"{'cost $':>8} {'wall s':>7} {'turns':>6}")
    for category in options.category or ["multi_turn_base"]:
        selected = bfcl_plan.select([category], options.entries)
        tasks = [bfcl_plan.suite_task(entry) for entry in selected]
        cases = [BenchCase(category, task.id, 0, 0) for task in tasks]
        sweep = Sweep(
            cases,
            request=RunRequest(model="scripted", arms=arms),
            concurrency=options.concurrency,
            custom_tasks=tasks,  # type: ignore[arg-type]  # a suite's tasks have a task file's fields
        )
        started = time.perf_counter()
        outcome = asyncio.run(sweep.run())
        seconds = time.perf_counter() - started
        tier = outcome.report().tier(category)
        assert tier is not None
        for name in arms:
            stats = tier.arms[name]
            means = stats.means
            rate = f"{stats.succeeded}/{stats.runs} {100 * (stats.success_rate or 0):5.1f}%"
            figures = {key: means.get(key) or 0 for key in ("requests", "input_tokens", "output_tokens")}
            print(
                f"{category:<24} {name:<11} {rate:>13} {figures['requests']:>9.1f} {figures['input_tokens']:>9,.0f} "
                f"{figures['output_tokens']:>7.0f} {means['cost_usd'] or 0:>8.4f} {means['wall_s'] or 0:>7.2f} "
                f"{means.get('turns') or 0:>6.1f}"
            )
        for result in outcome.results:
            for name, figures in result.arms.items():
                if not figures.succeeded:
                    print(f"  {name} failed {result.case.task}: {figures.failure_reason()[:200]}")
        print(f"  ({len(cases)} entries x {len(arms)} arms in {seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
