"""Child processes the crash and load checks start, kill and watch.

``python -m reliability.child stream DB TASK MODEL`` runs one comparison into DB and prints
``arm seq`` for every event the moment it is emitted, so a parent that kills it knows exactly which
events existed before the kill. ``... sweep DB COUNT`` runs COUNT scripted comparisons one after
another into DB (a sweep writing while something else reads).
"""

from __future__ import annotations

import asyncio
import sys

import workbench
import workbench.apps as apps
from workbench.events import ArmEvent


async def stream(db: str, task: str, model: str) -> None:
    run = workbench.compare_stream(task=task, model=model, db=db)

    def announce(event: ArmEvent) -> None:
        sys.stdout.write(f"{event.arm} {event.seq}\n")
        sys.stdout.flush()

    run.subscribe(announce)
    sys.stdout.write(f"session {run.comparison.session_id}\n")
    sys.stdout.flush()
    await run.result()


async def sweep(db: str, count: int) -> None:
    tasks = [task.id for task in apps.tasks_for(tier="everyday")]
    for number in range(count):
        await workbench.compare(task=tasks[number % len(tasks)], db=db)
        sys.stdout.write(f"done {number + 1}\n")
        sys.stdout.flush()


def main(argv: list[str]) -> None:
    command, *args = argv
    if command == "stream":
        asyncio.run(stream(*args))
    elif command == "sweep":
        asyncio.run(sweep(args[0], int(args[1])))
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
