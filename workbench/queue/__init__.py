"""Sweeps as durable DBOS workflows: ``workbench bench --queue`` enqueues, ``workbench worker`` runs them.

Every comparison of a queued sweep is one DBOS workflow (one step: the ordinary runner, storing its session
with the ordinary writer) on a queue in DBOS's system database: the session store's own PostgreSQL database
(DBOS keeps its tables in their own ``dbos`` schema) or, for a SQLite store, an embedded SQLite file beside it
(:func:`workbench.queue.system_db.system_database_url`). Any number of worker processes, on any machines that
reach that database, dequeue and run them; a worker killed mid-run has its comparisons recovered by a live peer.

Nothing here is imported by ``workbench --help`` or ``import workbench``: DBOS loads only in the commands that
use it (:mod:`workbench.queue.workflow` and :mod:`workbench.queue.worker` import it; the rest reads plain SQL).
"""
