"""The DBOS workflow of one queued comparison: a single step that runs it with the ordinary runner and store.

Importing this module registers the workflow with DBOS (a process-wide registry), so only worker processes
import it. The step's body lives in :class:`workbench.queue.runtime.Runtime`, which the worker installs.
"""

from __future__ import annotations

import logging
from typing import Any

from dbos import DBOS
from dbos._error import DBOSWorkflowCancelledError

from workbench.queue.jobs import WORKFLOW_NAME
from workbench.queue.runtime import ComparisonFailed, Requeued, current_runtime

STEP_NAME = "workbench.run_comparison"


def _not_reported_yet(record: logging.LogRecord) -> bool:
    """DBOS logs every failed workflow with its traceback; a comparison that failed on this worker (a refused
    job, one that ended unfinished) has had its one line in the worker's log already."""
    error = record.exc_info[1] if record.exc_info else None
    return not isinstance(error, ComparisonFailed)


logging.getLogger("dbos").addFilter(_not_reported_yet)


@DBOS.workflow(name=WORKFLOW_NAME)
def comparison_workflow(job: dict[str, Any]) -> dict[str, Any]:
    return run_comparison(job)


@DBOS.step(name=STEP_NAME)
def run_comparison(job: dict[str, Any]) -> dict[str, Any]:
    workflow_id = DBOS.workflow_id
    assert workflow_id is not None
    try:
        return current_runtime().run(job, workflow_id)
    except Requeued:
        # DBOS records no outcome for a step that raises this, so the workflow runs the step afresh wherever
        # it is recovered; the worker re-queues it before it exits.
        raise DBOSWorkflowCancelledError(f"{workflow_id}: the worker is stopping; re-queued") from None
