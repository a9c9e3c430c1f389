"""Wall time of code mode with and without eager execution, paired in one comparison.

Runs the cart example (``cart/remove-expensive``) at 200 items on ``scripted:paced`` (a model that waits
like a real one: time to first token, prefill, output rate) with the arms ``code`` and ``code-eager``
side by side in each round, so both arms share the machine's load at the same moment. Prints each
round's wall times, the paired difference, and what eager execution and speculation did (statements
run while the snippet streamed; speculative calls launched / claimed / missed / evicted and the
latency they hid). Nothing is stored.

    python benchmarks/eager.py [--items 200] [--rounds 5] [--task cart/remove-expensive] [--model scripted:paced]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics

import workbench
from workbench.summary import ArmSummary

ARMS = ("code", "code-eager")


def _speculation(summary: ArmSummary) -> str:
    return (
        f"{summary.speculation_launched}/{summary.speculation_claimed}/{summary.speculation_missed}/"
        f"{summary.speculation_evicted}, {summary.speculation_hidden_ms:.0f} ms hidden"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="cart/remove-expensive")
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--model", default="scripted:paced")
    args = parser.parse_args()
    print(f"{args.task} at {args.items} items on {args.model}, arms {' vs '.join(ARMS)}, {args.rounds} rounds")
    print(f"{'round':>5}  {'code':>8}  {'eager':>8}  {'saved':>8}  eager stmts  speculation l/c/m/e")
    saved: list[float] = []
    for number in range(1, args.rounds + 1):
        result = await workbench.compare(task=args.task, items=args.items, model=args.model, arms=ARMS, db=False)
        code, eager = (result.arms[name].summary for name in ARMS)
        if not (code.passed and eager.passed):
            raise SystemExit(f"round {number}: an arm did not pass ({code.status}/{eager.status})")
        saved.append(code.wall_s - eager.wall_s)
        print(
            f"{number:>5}  {code.wall_s:>7.2f}s  {eager.wall_s:>7.2f}s  {saved[-1]:>+7.2f}s  "
            f"{eager.eager_statements:>11}  {_speculation(eager)}"
        )
    print(f"median saved by eager execution: {statistics.median(saved):+.2f} s per comparison")


if __name__ == "__main__":
    asyncio.run(main())
