"""How queued jobs are written to DBOS's tables: JSON only, never pickle.

DBOS's default serializer is :mod:`pickle`, and a row's ``serialization`` column decides how a worker reads
its inputs: a row marked ``py_pickle`` is unpickled whatever the application's own serializer is. Anyone who
can insert a row in the workflow table could then run code in every worker. So the enqueuer and the worker
both use DBOS's portable JSON serializer (a job is plain JSON data, :mod:`workbench.queue.jobs`), and a
worker refuses to unpickle anything (:func:`refuse_pickle`): such a workflow ends in error, as DBOS records
any input it cannot read, and nothing of it runs.
"""

from __future__ import annotations

from typing import Any

# Private: DBOS 3.4 exports the serializer classes but not the portable-JSON instance its rows are tagged with,
# nor the default (pickle) serializer that `refuse_pickle` must disarm (see its docstring); pinned <3.5.
from dbos._serialization import DBOSPortableJSON, DefaultSerializer, Serializer

from workbench.errors import UserError

SERIALIZER: Serializer = DBOSPortableJSON
"""The serializer every workbench DBOS process and client uses."""


class PickleRefused(UserError, ValueError):
    """A row asked a worker to unpickle it."""


def _refuse(self: DefaultSerializer, serialized_data: str) -> Any:
    raise PickleRefused("a workbench worker does not unpickle queued data; enqueue with `workbench bench --queue`")


def refuse_pickle() -> None:
    """Make this process refuse to unpickle DBOS data (worker processes only).

    DBOS 3.4 offers no public way to refuse a row's own serialization (``deserialize_value`` and
    ``deserialize_args`` in ``dbos._serialization`` honour ``py_pickle`` whatever serializer is configured),
    so the pickle reader itself is replaced, once per process.
    """
    DefaultSerializer.deserialize = _refuse  # type: ignore[method-assign]
