"""Arms as data: what each arm of a comparison is (name, mode, model, mode options, sandbox limits), the
built-in presets and how screens name them. Nothing here imports pydantic-ai or the workbench's config; the
config builds these, and :mod:`workbench.arms` builds an arm's agent from them.

The modes:

- ``tool``: the app's tools as plain tool calls.
- ``code``: only ``run_code`` (CodeMode over the Monty sandbox), the tools callable inside it.
- ``hybrid``: both at once. CodeMode makes a tool either native or sandboxed, so the toolset is offered
  twice: the sandboxed copy under the tools' own names, the direct copy prefixed with ``direct_``.

Built-in presets (:data:`PRESETS`) cover the common arms; ``[arms.NAME]`` tables in the config file add
more. Nothing outside the arm definitions branches on a mode's name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from workbench.errors import BadInput
from workbench.events import RUN_CODE, Mode
from workbench.guards import DEFAULT_MAX_RESULT_BYTES

if TYPE_CHECKING:
    from workbench.config import Settings

MODES: tuple[Mode, ...] = get_args(Mode)
DIRECT_PREFIX = "direct"
"""The hybrid arm's directly callable copy of each tool is named ``direct_<tool>``."""
READ_PREFIXES = ("list_", "get_")
"""Read-only tools by name (the demo apps'), for ``speculate = "reads"`` when an app declares none."""

SANDBOX_RANGES: dict[str, tuple[float, float]] = {
    "max_tool_calls": (1, 1_000_000),
    "max_duration_secs": (0.01, 86_400.0),
    "max_memory": (64 * 1024, 1024**4),
    "max_suspensions": (1, 100_000_000),
}
"""The sandbox limits, by name, and the values that can work, inclusive. Monty refuses a duration past about
1.8e19 s (and inf, nan) and a memory or suspension count past 2^64 - 1, and a few microseconds or a few
kilobytes fail every snippet (running ``1 + 1`` takes 42 KB); a day per snippet and a terabyte of heap are far
past any use."""
SANDBOX_LIMITS: tuple[str, ...] = tuple(SANDBOX_RANGES)
"""The names of the sandbox limits: the ``[sandbox]`` keys, a sandboxed arm's options, CodeMode's limits."""


def limit_field(key: str, default: Any) -> Any:
    """A pydantic field for the sandbox limit ``key``, bounded by :data:`SANDBOX_RANGES`."""
    low, high = SANDBOX_RANGES[key]
    return (
        Field(default, ge=low, le=high, allow_inf_nan=False)
        if isinstance(low, float)
        else Field(default, ge=low, le=high)
    )


class SandboxLimits(BaseModel):
    """Limits for a sandboxed arm's Monty sandbox (the ``[sandbox]`` table, and each arm's own).

    Time and heap are CodeMode's defaults (30 s per snippet, 256 MiB). The call budgets are raised from
    CodeMode's defaults (100 nested calls per snippet, 1,000 suspensions per session) so that one
    snippet can act on every record of a 500-item long-horizon task, as the published runs did.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    max_duration_secs: float = limit_field("max_duration_secs", 30.0)
    """Seconds one snippet may run (time spent waiting for tools is not counted)."""
    max_memory: int = limit_field("max_memory", 256 * 1024 * 1024)
    """Bytes of heap one sandbox session may use."""
    max_tool_calls: int = limit_field("max_tool_calls", 1_000)
    """Tool calls one snippet may make (CodeMode's default is 100; raised so one snippet can act on 500 items)."""
    max_suspensions: int = limit_field("max_suspensions", 20_000)
    """Pauses (about two per awaited call) one sandbox session may make across its snippets."""

    def to_codemode_kwargs(self) -> dict[str, Any]:
        """These limits as ``CodeMode(...)`` takes them."""
        return {
            "max_tool_calls": self.max_tool_calls,
            "resource_limits": {
                "max_duration_secs": self.max_duration_secs,
                "max_memory": self.max_memory,
                "max_suspensions": self.max_suspensions,
            },
        }


@dataclass(frozen=True)
class ArmConfig:
    request_limit: int = 50
    """Model requests per arm before it is stopped (a model that loops)."""
    sandbox: SandboxLimits = field(default_factory=SandboxLimits)
    tool_retries: int | None = None
    """Retries per tool after a bad call; ``None``: pydantic-ai's default."""
    budget_s: float | None = None
    """Wall-clock seconds the arm may run in all; ``None``: no limit."""
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES
    """What the model receives from one tool call or one snippet is clipped to this many bytes (both arms)."""


class ArmError(BadInput):
    """An arm name, option or model assignment that cannot be used; the message lists the valid ones."""


CODE_OPTIONS: dict[str, str] = {
    "eager": "true/false: run each complete statement while the model is still writing the snippet",
    "speculate": '"reads" (the app\'s list_/get_ tools), "declared", a list of tool names, or false: start those '
    "calls while the snippet streams",
    **{name: SandboxLimits.model_fields[name].description or name for name in SANDBOX_LIMITS},
}
"""The options of the sandboxed modes (``code``, ``hybrid``); a ``tool`` arm takes none."""


@dataclass(frozen=True)
class ArmSpec:
    """One arm: its name (unique in a comparison), mode, model (``None``: the comparison's) and mode options."""

    name: str
    mode: Mode
    model: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    title: str = ""
    """How screens and reports name the arm (default: its name)."""
    stream: bool | None = None
    """Whether this arm's requests stream (``None``: the ``stream`` setting)."""
    tool_retries: int | None = None
    """Retries per tool after a bad call for this arm (``None``: the ``tool_retries`` setting)."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ArmError(f"arm {self.name!r}: unknown mode {self.mode!r}; modes are: {', '.join(MODES)}")
        allowed = CODE_OPTIONS if self.sandboxed else {}
        unknown = sorted(set(self.options) - set(allowed))
        if unknown:
            valid = ", ".join(allowed) if allowed else f"none for mode {self.mode}"
            raise ArmError(f"arm {self.name!r}: unknown option {', '.join(unknown)}; options are: {valid}")
        for key in SANDBOX_LIMITS:
            value = self.options.get(key)
            low, high = SANDBOX_RANGES[key]
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high
            ):
                raise ArmError(f"arm {self.name!r}: option {key} must be between {low:,} and {high:,}, got {value!r}")
        if not isinstance(self.options.get("eager", False), bool):
            raise ArmError(f"arm {self.name!r}: option eager must be true or false, got {self.options['eager']!r}")
        speculate = self.options.get("speculate")
        if not (
            speculate in (None, False, "reads", "declared")
            or (isinstance(speculate, list | tuple) and all(isinstance(name, str) for name in speculate))
        ):
            raise ArmError(
                f'arm {self.name!r}: option speculate must be "reads", "declared", a list of tool names or false, '
                f"got {speculate!r}"
            )

    @property
    def sandboxed(self) -> bool:
        """Whether the arm runs code in the Monty sandbox."""
        return self.mode != "tool"

    @property
    def eager(self) -> bool:
        return bool(self.options.get("eager", False))

    def sandbox_limits(self, base: SandboxLimits) -> SandboxLimits:
        """``base`` with this arm's own limits applied."""
        return base.model_copy(update={key: self.options[key] for key in SANDBOX_LIMITS if key in self.options})

    def speculate(
        self, tool_names: Sequence[str], read_only: Sequence[str] = ()
    ) -> list[str] | Literal["declared"] | None:
        """The ``speculate`` argument of CodeMode for an app with these tools (``read_only``: those that declare
        they change nothing; without any, "reads" takes the ``list_`` / ``get_`` tools)."""
        chosen = self.options.get("speculate")
        if chosen in (None, False):
            return None
        if chosen == "declared":
            return "declared"
        if chosen == "reads":
            return list(read_only) or [name for name in tool_names if name.startswith(READ_PREFIXES)]
        return list(chosen)

    def model_for(self, *, tool_model: Any = None, code_model: Any = None) -> Any:
        """The model the ``--tool-model`` / ``--code-model`` flags give this arm (``None``: they do not)."""
        return tool_model if self.mode == "tool" else code_model

    def tools_seen(self, app_tools: Sequence[str]) -> list[str]:
        """The tool names the model is offered."""
        if self.mode == "tool":
            return list(app_tools)
        if self.mode == "code":
            return [RUN_CODE]
        return [RUN_CODE, *(f"{DIRECT_PREFIX}_{name}" for name in app_tools)]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "mode": self.mode, "model": self.model, "options": dict(self.options)}


PRESETS: dict[str, ArmSpec] = {
    arm.name: arm
    for arm in (
        ArmSpec("tool", "tool", title="Tool calling"),
        ArmSpec("code", "code", title="Code mode"),
        ArmSpec("code-eager", "code", options={"eager": True, "speculate": "reads"}, title="Code mode, eager"),
        ArmSpec("hybrid", "hybrid", title="Hybrid"),
    )
}
"""The built-in arms: plain tool calling, code mode, code mode with eager execution and speculative reads,
and hybrid (every tool callable directly and from code)."""


def arm_catalog(settings: Settings | None = None) -> dict[str, ArmSpec]:
    """The presets and the config file's ``[arms.NAME]`` arms (which may not reuse a preset's name)."""
    catalog = dict(PRESETS)
    for name, configured in (settings.arms if settings is not None else {}).items():
        if name in PRESETS:
            raise ArmError(f"[arms.{name}] in the config file reuses a built-in arm's name; choose another name")
        catalog[name] = configured.spec(name)
    return catalog


def known_modes(arms: Iterable[str], settings: Settings | None = None) -> dict[str, str]:
    """The modes of those of ``arms`` the catalog knows (presets, the settings' ``[arms.NAME]``): a screen
    titles their panes before the first run. A catalog the config spoils knows none (the run says why)."""
    try:
        catalog = arm_catalog(settings)
    except ArmError:
        return {}
    return {arm: catalog[arm].mode for arm in arms if arm in catalog}


def parse_arm_names(text: str | Iterable[str]) -> list[str]:
    """``"tool, code-eager"`` (or a list) as a list of names."""
    parts = text.split(",") if isinstance(text, str) else list(text)
    return [part.strip() for part in parts if part.strip()]


def choose_arms(names: Iterable[str], catalog: Mapping[str, ArmSpec]) -> tuple[ArmSpec, ...]:
    """The arms named, in the order named (the first is the baseline)."""
    names = list(names)
    unknown = [name for name in names if name not in catalog]
    if unknown or not names:
        raise ArmError(f"unknown arm {', '.join(unknown) or '(none)'}; arms are: {', '.join(catalog)}")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ArmError(f"arm {', '.join(repeated)} is listed twice; list each arm once")
    return tuple(catalog[name] for name in names)


def parse_model_assignments(values: Iterable[str]) -> tuple[str | None, dict[str, str]]:
    """``--model`` values: ``SPEC`` sets every arm's model, ``NAME=SPEC`` one arm's. Returns (SPEC, {NAME: SPEC})."""
    shared: str | None = None
    per_arm: dict[str, str] = {}
    for value in values:
        name, equals, spec = value.partition("=")
        if equals and name.strip() and ":" not in name:
            if not spec.strip():
                raise ArmError(f"--model {value}: give a model after '=' (e.g. {name.strip()}=openai:gpt-5-mini)")
            per_arm[name.strip()] = spec.strip()
        elif shared is not None and shared != value:
            raise ArmError(f"--model given twice ({shared}, {value}); use NAME=SPEC to give one arm its own model")
        else:
            shared = value
    return shared, per_arm
