"""One queued comparison: what a worker needs to run it, as plain JSON-friendly data, and its workflow id."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.bench.plan import BenchCase

WORKFLOW_NAME = "workbench.comparison"
"""The DBOS workflow every queued comparison runs (registered by :mod:`workbench.queue.workflow`)."""


@dataclass(frozen=True)
class ComparisonJob:
    """A sweep's case with the request every case of the sweep shares.

    ``flags`` are the sweep's command-line settings (``base_url``, ``request_limit``, ``stream``,
    ``max_tokens``); a worker applies them over its own config file, which holds its keys and endpoints.
    """

    sweep_id: str
    position: int
    case: BenchCase
    model: str
    arms: tuple[str, ...]
    arm_models: dict[str, str] = field(default_factory=dict)
    tool_model: str | None = None
    code_model: str | None = None
    flags: dict[str, Any] = field(default_factory=dict)

    @property
    def workflow_id(self) -> str:
        """Unique per (sweep, task, items, seed, repeat, arm set): enqueueing the same case twice finds it."""
        identity = json.dumps(
            [self.case.task, self.case.items, self.case.seed, self.case.repeat, list(self.arms), self.arm_models],
            sort_keys=True,
        )
        digest = hashlib.sha256(identity.encode()).hexdigest()[:12]
        return f"{self.sweep_id}/{self.position:05d}-{digest}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["case"] = self.case.to_dict()
        data["arms"] = list(self.arms)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ComparisonJob:
        return cls(
            sweep_id=data["sweep_id"],
            position=int(data["position"]),
            case=BenchCase.from_dict(data["case"]),
            model=data["model"],
            arms=tuple(data["arms"]),
            arm_models=dict(data.get("arm_models") or {}),
            tool_model=data.get("tool_model"),
            code_model=data.get("code_model"),
            flags=dict(data.get("flags") or {}),
        )


def sweep_of(workflow_id: str) -> str:
    """The sweep a comparison's workflow id belongs to."""
    return workflow_id.partition("/")[0]
