"""The DBOS workflow of one queued comparison: a single step that runs it with the ordinary runner and store.

Importing this module registers the workflow with DBOS (a process-wide registry), so only worker processes
import it. The step's body lives in :class:`workbench.queue.runtime.Runtime`, which the worker installs.
"""

from __future__ import annotations

from typing import Any

from workbench.queue.dbos_gateway import WorkflowCancelled, already_reported, current_workflow_id, step, workflow
from workbench.queue.jobs import WORKFLOW_NAME
from workbench.queue.runtime import ComparisonFailed, Requeued, current_runtime

STEP_NAME = "workbench.run_comparison"

# A comparison that failed on this worker (a refused job, one that ended unfinished) has had its one line in
# the worker's log already: DBOS's own record of it (with a traceback) is not shown.
already_reported(ComparisonFailed)


@workflow(name=WORKFLOW_NAME)
def comparison_workflow(job: dict[str, Any]) -> dict[str, Any]:
    return run_comparison(job)


@step(name=STEP_NAME)
def run_comparison(job: dict[str, Any]) -> dict[str, Any]:
    workflow_id = current_workflow_id()
    try:
        return current_runtime().run(job, workflow_id)
    except Requeued as why:
        # DBOS records no outcome for a step that raises this, so the workflow runs the step afresh wherever
        # it is resumed: the stopping worker re-queues it, or the peer that took its lease over already did.
        raise WorkflowCancelled(f"{workflow_id}: {type(why).__name__.lower()}; runs again elsewhere") from None
