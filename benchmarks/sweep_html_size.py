"""How big a sweep's HTML page gets with its sessions embedded: the offline suite's 87 comparisons.

    python benchmarks/sweep_html_size.py                       # runs the suite into a throwaway database
    python benchmarks/sweep_html_size.py --db /tmp/suite.db    # a database holding a sweep already (the newest)

Prints the page without sessions, with every session embedded whole (what naive embedding costs), and as
`workbench export SWEEP --format html` writes it (results clipped, end states shortened, the bound), each with
its gzip size, and the largest embedded sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="A database with a stored sweep (default: run the offline suite first)")
    parser.add_argument("--out", help="Also write the page as exported")
    args = parser.parse_args(argv)

    from workbench.bench import Sweep, SweepStore, load_sweep, plan
    from workbench.share import sweep_html as page
    from workbench.store import Store

    with tempfile.TemporaryDirectory() as scratch:
        store = Store(args.db or Path(scratch) / "suite.db")
        if not args.db:
            asyncio.run(Sweep(plan("all"), model="scripted", store=store, concurrency=2).run())
        report = load_sweep(store, SweepStore(store).resolve_id("sweep-"))
        sessions = {run.session_id: store.load(run.session_id) for run in report.runs}
        store.engine.dispose()

    def line(what: str, text: str) -> None:
        data = text.encode()
        print(f"  {what:52} {len(data):>12,} bytes   gzip {len(gzip.compress(data)):>10,}")

    print(f"sweep {report.sweep_id}: {len(report.runs)} comparisons, {len(sessions)} sessions")
    line("matrix and tiers, no sessions", page.sweep_html(report))
    clip, rows, bound = page.EMBED_CLIP, page.EMBED_DIFF_ROWS, page.SESSIONS_BOUND
    page.EMBED_CLIP, page.EMBED_DIFF_ROWS, page.SESSIONS_BOUND = 10**12, 200, 10**12
    line("every session whole (no clip, no bound)", page.sweep_html(report, sessions))
    page.EMBED_CLIP, page.EMBED_DIFF_ROWS, page.SESSIONS_BOUND = clip, rows, bound
    started = time.perf_counter()
    exported = page.sweep_html(report, sessions)
    elapsed = time.perf_counter() - started
    line(f"as exported (clip {clip:,} chars, {rows} end-state rows)", exported)
    embedded = exported.count('<details class="session"')
    print(f"  {embedded} of {len(sessions)} sessions embedded; bound {bound:,} bytes of sessions; {elapsed:.1f} s")
    weights = sorted(
        (
            len(page.session_body(c, page.Embedding("s-", clip, rows)).encode()),
            c.session_id,
            f"{c.task} ×{c.items}",
        )
        for c in sessions.values()
    )
    for weight, session_id, case in reversed(weights[-3:]):
        print(f"    largest: {session_id} {case:32} {weight:>10,} bytes")
    if args.out:
        Path(args.out).write_text(exported, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
