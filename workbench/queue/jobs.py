"""One queued comparison: what a worker needs to run it, as plain JSON data, and its workflow id.

A job is data written by whoever can enqueue on the shared database (or insert a row in DBOS's tables), so a
worker reads it as untrusted input: :meth:`ComparisonJob.from_dict` takes an explicit list of fields, checks
each one's type and range, and refuses anything else (:class:`JobRefused`). No field names a command, a
module, a file or a setting beyond :data:`JOB_SETTINGS`; which of those a worker honours, and where it sends
its keys, is :mod:`workbench.queue.trust`'s decision, not the job's.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from workbench.bench.plan import BenchCase
from workbench.errors import UserError

WORKFLOW_NAME = "workbench.comparison"
"""The DBOS workflow every queued comparison runs (registered by :mod:`workbench.queue.workflow`)."""

JOB_FIELDS = (
    "sweep_id", "position", "case", "model", "arms", "arm_models", "tool_model", "code_model", "settings",
)  # fmt: skip
"""Everything a job may hold. Any other field is refused."""
CASE_FIELDS = ("tier", "task", "items", "seed", "repeat")
JOB_SETTINGS = ("base_url", "request_limit", "stream", "max_tokens")
"""The only settings a job may set over the worker's own config (the sweep's command-line flags). ``base_url``
is honoured only when the worker trusts it (:mod:`workbench.queue.trust`); the others bound what one
comparison spends. Sandbox limits, tracing, retries, arms' definitions and the store are the worker's own."""

SWEEP_ID = re.compile(r"^sweep-[0-9a-f]{1,64}$")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/=+-]{0,199}$")
"""An arm name, task id, tier or model spec: printable, no spaces, at most 200 characters."""
MAX_POSITION = 10_000_000
MAX_ARMS = 32


class JobRefused(UserError, ValueError):
    """A job a worker will not run as given; the message says which field and why (one line)."""


@dataclass(frozen=True)
class ComparisonJob:
    """A sweep's case with the request every case of the sweep shares.

    ``settings`` are the sweep's command-line settings among :data:`JOB_SETTINGS`; a worker applies them over
    its own config file (which holds its keys and endpoints) only as :mod:`workbench.queue.trust` allows.
    """

    sweep_id: str
    position: int
    case: BenchCase
    model: str
    arms: tuple[str, ...]
    arm_models: dict[str, str] = field(default_factory=dict)
    tool_model: str | None = None
    code_model: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def workflow_id(self) -> str:
        """Derived from the sweep and the comparison's place in it (plus a digest of what runs there): enqueueing
        the same sweep again, as ``bench --queue --resume`` does, finds every comparison already queued."""
        identity = json.dumps(
            [self.case.task, self.case.items, self.case.seed, self.case.repeat, list(self.arms), self.arm_models],
            sort_keys=True,
        )
        digest = hashlib.sha256(identity.encode()).hexdigest()[:12]
        return workflow_id_for(self.sweep_id, self.position, digest)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sweep_id": self.sweep_id, "position": self.position, "case": self.case.to_dict(), "model": self.model,
            "arms": list(self.arms), "arm_models": dict(self.arm_models), "tool_model": self.tool_model,
            "code_model": self.code_model, "settings": dict(self.settings),
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: object) -> ComparisonJob:
        """The job in ``data``, every field checked; raises :class:`JobRefused` naming the first fault."""
        job = _mapping(data, "the job", JOB_FIELDS)
        for required in ("sweep_id", "position", "case", "model", "arms"):
            if required not in job:
                raise JobRefused(f"the job has no {required}")
        sweep_id = job["sweep_id"]
        if not isinstance(sweep_id, str) or not SWEEP_ID.match(sweep_id):
            raise JobRefused(f"sweep_id must look like sweep-1a2b3c4d, got {_shown(sweep_id)}")
        arms = job["arms"]
        if not isinstance(arms, list | tuple) or not 1 <= len(arms) <= MAX_ARMS:
            raise JobRefused(f"arms must be a list of 1 to {MAX_ARMS} arm names, got {_shown(arms)}")
        arm_names = tuple(_name(arm, "an arm name") for arm in arms)
        arm_models = _mapping(job.get("arm_models") or {}, "arm_models", arm_names)
        return cls(
            sweep_id=sweep_id,
            position=_integer(job["position"], "position", 0, MAX_POSITION),
            case=_case(job["case"]),
            model=_name(job["model"], "model"),
            arms=arm_names,
            arm_models={name: _name(spec, f"arm_models.{name}") for name, spec in arm_models.items()},
            tool_model=_optional_name(job.get("tool_model"), "tool_model"),
            code_model=_optional_name(job.get("code_model"), "code_model"),
            settings=_settings(job.get("settings") or {}),
        )


def workflow_id_for(sweep_id: str, position: int, digest: str) -> str:
    return f"{sweep_id}/{position:05d}-{digest}"


def sweep_of(workflow_id: str) -> str:
    """The sweep a comparison's workflow id belongs to."""
    return workflow_id.partition("/")[0]


def position_of(workflow_id: str) -> int | None:
    """A comparison's place in its sweep, from its workflow id (``None`` for an id of another shape)."""
    place = workflow_id.partition("/")[2].partition("-")[0]
    return int(place) if place.isdigit() else None


def _case(value: object) -> BenchCase:
    case = _mapping(value, "case", CASE_FIELDS)
    missing = [name for name in ("tier", "task", "items", "seed") if name not in case]
    if missing:
        raise JobRefused(f"case has no {missing[0]}")
    return BenchCase(
        _name(case["tier"], "case.tier"),
        _name(case["task"], "case.task"),
        _integer(case["items"], "case.items", 0, 10_000_000),
        _integer(case["seed"], "case.seed", -(2**63), 2**63 - 1),
        _integer(case.get("repeat", 0), "case.repeat", 0, 1_000_000),
    )


def _settings(value: object) -> dict[str, Any]:
    settings = _mapping(value, "settings", JOB_SETTINGS)
    checked: dict[str, Any] = {}
    for key, given in settings.items():
        if given is None:
            continue
        if key == "base_url":
            if not isinstance(given, str) or not given.startswith(("http://", "https://")) or len(given) > 2000:
                raise JobRefused(f"settings.base_url must be an http(s) URL, got {_shown(given)}")
            checked[key] = given
        elif key == "stream":
            if not isinstance(given, bool):
                raise JobRefused(f"settings.stream must be true or false, got {_shown(given)}")
            checked[key] = given
        else:
            checked[key] = _integer(given, f"settings.{key}", 1, 10_000_000)
    return checked


def _mapping(value: object, what: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise JobRefused(f"{what} must be a table of fields, got {_shown(value)}")
    unknown = sorted(str(key)[:60] for key in value if key not in allowed)
    if unknown:
        takes = ", ".join(allowed)
        raise JobRefused(f"{what} holds {', '.join(unknown)}, which a worker does not take (it takes {takes})")
    return value


def _name(value: object, what: str) -> str:
    if not isinstance(value, str) or not NAME.match(value):
        raise JobRefused(f"{what} must be a name or model spec without spaces, got {_shown(value)}")
    return value


def _optional_name(value: object, what: str) -> str | None:
    return None if value is None else _name(value, what)


def _integer(value: object, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise JobRefused(f"{what} must be a whole number between {low:,} and {high:,}, got {_shown(value)}")
    return value


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
