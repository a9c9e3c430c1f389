"""What to compare, as asked: one :class:`RunRequest` for the CLI, the TUI, the bench, the Python API and the queue.

A request is data: names, numbers and text, so it travels as JSON (:meth:`RunRequest.to_dict`,
:meth:`RunRequest.from_dict`); a queued comparison's job carries one, and the worker runs it with the same
``prepare`` as ``workbench run``. An in-process caller may also hand it objects (a pydantic-ai model, an
:class:`ArmSpec`, an :class:`ArmConfig`, an app source of its own): those do not serialise, and
:meth:`~RunRequest.to_dict` says which. This module imports nothing of the engine, so the queue's job checks
and listings stay light.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from workbench.arm_spec import ArmConfig, ArmSpec
from workbench.events import DEFAULT_ARMS

if TYPE_CHECKING:
    from workbench.sources import AppSource

NOT_DATA = ("config", "source")
"""Fields that hold objects of the caller's own and never serialise (the queue's worker uses its own)."""


@dataclass(frozen=True)
class RunRequest:
    """What to compare, as asked: built by the CLI, the TUI, the bench, the Python API and the queue alike.

    ``arms`` are names from the arm catalog (presets and ``[arms.NAME]`` config tables) or
    :class:`ArmSpec` objects, in display order; the first is the baseline the others are compared with.
    Model precedence per arm: ``arm_models[name]`` > ``tool_model`` / ``code_model`` (by the arm's mode:
    ``code_model`` covers the sandboxed modes) > the arm's own model > ``model`` > the configured default.
    """

    prompt: str | None = None
    app: str | None = None
    items: int | None = None
    seed: int = 0
    model: str | Any | None = None
    task: str | None = None
    arms: Sequence[str | ArmSpec] = DEFAULT_ARMS
    arm_models: Mapping[str, str | Any] = field(default_factory=dict)
    tool_model: str | Any | None = None
    code_model: str | Any | None = None
    config: ArmConfig | None = None
    page_size: int | None = None
    source: AppSource | None = None
    """Run the arms on MCP servers or a toolset instead of a demo app (see :mod:`workbench.sources`)."""
    turns: Sequence[str] = ()
    """A conversation: the user turns, in order (instead of ``prompt``); each arm answers them one after the
    other on its own app instance with its own message history (see :mod:`workbench.turns`)."""

    def to_dict(self) -> dict[str, Any]:
        """The fields given (those not at their default) as JSON data. Raises :class:`ValueError` naming a field
        that holds an object rather than data (a model object, an ArmSpec, a config or source of one's own)."""
        data: dict[str, Any] = {}
        for spec in fields(self):
            value = getattr(self, spec.name)
            if value == _default(spec.name):
                continue
            if spec.name in NOT_DATA:
                raise ValueError(f"a request's {spec.name} is an object of the caller's own; it does not serialise")
            if spec.name in ("arms", "turns"):
                value = list(value)
            elif spec.name == "arm_models":
                value = dict(value)
            if not _is_data(value):
                raise ValueError(f"a request's {spec.name} holds {type(value).__name__} objects, not names or text")
            data[spec.name] = value
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunRequest:
        """The request :meth:`to_dict` gave (fields left out take their defaults). The values are taken as they
        are: a caller reading untrusted data checks them first (the queue's job does, :mod:`workbench.queue.jobs`)."""
        unknown = sorted(set(data) - {spec.name for spec in fields(cls)} | set(data) & set(NOT_DATA))
        if unknown:
            raise ValueError(f"a request has no field {unknown[0]!r} that serialises")
        values = dict(data)
        for name in ("arms", "turns"):
            if name in values:
                values[name] = tuple(values[name])
        return cls(**values)


def _default(name: str) -> Any:
    spec = next(spec for spec in fields(RunRequest) if spec.name == name)
    return spec.default_factory() if callable(spec.default_factory) else spec.default


def _is_data(value: Any) -> bool:
    if value is None or isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, list):
        return all(_is_data(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _is_data(item) for key, item in value.items())
    return False
