"""One queued comparison: the :class:`~workbench.request.RunRequest` a worker runs, as plain JSON data, with its
place in the sweep and its workflow id.

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
from dataclasses import dataclass, field, replace
from typing import Any

from workbench.bench.plan import BenchCase
from workbench.errors import BadInput
from workbench.request import RunRequest

WORKFLOW_NAME = "workbench.comparison"
"""The DBOS workflow every queued comparison runs (registered by :mod:`workbench.queue.workflow`)."""

JOB_FIELDS = ("sweep_id", "position", "tier", "repeat", "request", "settings")
"""Everything a job may hold: its place in the sweep, the request it runs, the sweep's flags. Any other field
is refused."""
REQUEST_FIELDS = ("task", "items", "seed", "model", "arms", "arm_models", "tool_model", "code_model")
"""The :class:`~workbench.request.RunRequest` fields a queued request may give: a built-in task at a size and
seed (a demo app's task, or a BFCL entry as ``bfcl/<entry id>``, which the worker builds from its own installed
BFCL), the arms by name and their models. No prompt, app source, turns, page size or config: a job names no
command, module or file, and the worker's config decides the rest."""
JOB_SETTINGS = ("base_url", "request_limit", "stream", "max_tokens")
"""The only settings a job may set over the worker's own config (the sweep's command-line flags). ``base_url``
is honoured only when the worker trusts it (:mod:`workbench.queue.trust`); the others bound what one
comparison spends. Sandbox limits, tracing, retries, arms' definitions and the store are the worker's own."""

SWEEP_ID = re.compile(r"^sweep-[0-9a-f]{1,64}$")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/=+-]{0,199}$")
"""An arm name, task id, tier or model spec: printable, no spaces, at most 200 characters."""
MAX_POSITION = 10_000_000
MAX_ARMS = 32


class JobRefused(BadInput):
    """A job a worker will not run as given; the message says which field and why (one line)."""


@dataclass(frozen=True)
class ComparisonJob:
    """A queued comparison: the :class:`RunRequest` it runs, where it stands in its sweep, and the sweep's flags.

    The request is what ``workbench run`` would be given (a built-in task, its size and seed, the arms and
    models); ``settings`` are the sweep's command-line settings among :data:`JOB_SETTINGS`, which a worker
    applies over its own config (which holds its keys and endpoints) only as :mod:`workbench.queue.trust`
    allows.
    """

    sweep_id: str
    position: int
    tier: str
    repeat: int
    request: RunRequest
    settings: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls, sweep_id: str, position: int, case: BenchCase, request: RunRequest, settings: dict[str, Any]
    ) -> ComparisonJob:
        """A sweep's case with the request every case of the sweep shares (its task, size and seed set)."""
        asked = replace(request, task=case.task, items=case.items, seed=case.seed)
        return cls(sweep_id, position, case.tier, case.repeat, asked, dict(settings))

    @property
    def case(self) -> BenchCase:
        """The sweep's case this job runs."""
        request = self.request
        return BenchCase(self.tier, request.task or "", request.items or 0, request.seed, self.repeat)

    @property
    def workflow_id(self) -> str:
        """Derived from the sweep and the comparison's place in it (plus a digest of what runs there): enqueueing
        the same sweep again, as ``bench --queue --resume`` does, finds every comparison already queued."""
        request = self.request
        identity = json.dumps(
            [request.task, request.items, request.seed, self.repeat, list(request.arms), dict(request.arm_models)],
            sort_keys=True,
        )
        digest = hashlib.sha256(identity.encode()).hexdigest()[:12]
        return workflow_id_for(self.sweep_id, self.position, digest)

    def to_dict(self) -> dict[str, Any]:
        """The job as JSON data; raises :class:`ValueError` for a request holding more than a queue takes."""
        request = {"arms": [str(arm) for arm in self.request.arms], **self.request.to_dict()}  # arms always named
        extra = sorted(set(request) - set(REQUEST_FIELDS))
        if extra:
            raise ValueError(f"a queued request gives only {', '.join(REQUEST_FIELDS)}, not {', '.join(extra)}")
        return {
            "sweep_id": self.sweep_id, "position": self.position, "tier": self.tier, "repeat": self.repeat,
            "request": request, "settings": dict(self.settings),
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: object) -> ComparisonJob:
        """The job in ``data``, every field checked; raises :class:`JobRefused` naming the first fault."""
        job = _mapping(data, "the job", JOB_FIELDS)
        for required in ("sweep_id", "position", "tier", "request"):
            if required not in job:
                raise JobRefused(f"the job has no {required}")
        sweep_id = job["sweep_id"]
        if not isinstance(sweep_id, str) or not SWEEP_ID.match(sweep_id):
            raise JobRefused(f"sweep_id must look like sweep-1a2b3c4d, got {_shown(sweep_id)}")
        return cls(
            sweep_id=sweep_id,
            position=_integer(job["position"], "position", 0, MAX_POSITION),
            tier=_name(job["tier"], "tier"),
            repeat=_integer(job.get("repeat", 0), "repeat", 0, 1_000_000),
            request=_request(job["request"]),
            settings=_settings(job.get("settings") or {}),
        )


def workflow_id_for(sweep_id: str, position: int, digest: str) -> str:
    return f"{sweep_id}/{position:05d}-{digest}"


def sweep_of(workflow_id: str) -> str:
    """The sweep a comparison's workflow id belongs to."""
    return workflow_id.partition("/")[0]


def _request(value: object) -> RunRequest:
    request = _mapping(value, "request", REQUEST_FIELDS)
    for required in ("task", "items", "model", "arms"):
        if required not in request:
            raise JobRefused(f"request has no {required}")
    arms = request["arms"]
    if not isinstance(arms, list | tuple) or not 1 <= len(arms) <= MAX_ARMS:
        raise JobRefused(f"request.arms must be a list of 1 to {MAX_ARMS} arm names, got {_shown(arms)}")
    arm_names = tuple(_name(arm, "request.arms: an arm name") for arm in arms)
    arm_models = _mapping(request.get("arm_models") or {}, "request.arm_models", arm_names)
    return RunRequest(
        task=_name(request["task"], "request.task"),
        items=_integer(request["items"], "request.items", 0, 10_000_000),
        seed=_integer(request.get("seed", 0), "request.seed", -(2**63), 2**63 - 1),
        model=_name(request["model"], "request.model"),
        arms=arm_names,
        arm_models={name: _name(spec, f"request.arm_models.{name}") for name, spec in arm_models.items()},
        tool_model=_optional_name(request.get("tool_model"), "request.tool_model"),
        code_model=_optional_name(request.get("code_model"), "request.code_model"),
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
