"""Arms as data: what each arm of a comparison is (name, mode, model, mode options) and how its agent is built.

Every arm gets the same app toolset, instructions and model machinery; its mode decides how the tools
reach the model:

- ``tool``: the app's tools as plain tool calls.
- ``code``: only ``run_code`` (CodeMode over the Monty sandbox), the tools callable inside it.
- ``hybrid``: both at once. CodeMode makes a tool either native or sandboxed, so the toolset is offered
  twice: the sandboxed copy under the tools' own names, the direct copy prefixed with ``direct_``.

Built-in presets (:data:`PRESETS`) cover the common arms; ``[arms.NAME]`` tables in the config file add
more. Nothing outside this module branches on a mode's name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, get_args

from workbench.config import SANDBOX_RANGES
from workbench.events import DEFAULT_ARMS, RUN_CODE, Mode
from workbench.guards import DEFAULT_MAX_RESULT_BYTES
from workbench.sandbox import local_pool

if TYPE_CHECKING:
    from pydantic_ai import Agent
    from pydantic_ai.models import Model

    from apps import DemoApp
    from workbench.config import Settings
    from workbench.recorder import Recorder
    from workbench.sources.base import AppInstance

MODES: tuple[Mode, ...] = get_args(Mode)
DIRECT_PREFIX = "direct"
"""The hybrid arm's directly callable copy of each tool is named ``direct_<tool>``."""
READ_PREFIXES = ("list_", "get_")
"""Read-only tools by name (the demo apps'), for ``speculate = "reads"`` when an app declares none."""

INSTRUCTIONS = """\
You operate the {title} demo app: {about}. Use its tools to do what the user asks.
Lists are paginated: keep reading pages while has_more is true. Change only what the request asks for.
When you are done, reply with a one- or two-sentence summary of what you did."""
HYBRID_INSTRUCTIONS = f"""
Each tool is callable two ways: directly (named {DIRECT_PREFIX}_<tool>), or from Python inside run_code under its
own name. Use whichever suits each step."""


@dataclass(frozen=True)
class SandboxLimits:
    """Limits for a sandboxed arm's Monty sandbox.

    Time and heap are CodeMode's defaults (30 s per snippet, 256 MiB). The call budgets are raised from
    CodeMode's defaults (100 nested calls per snippet, 1,000 suspensions per session) so that one
    snippet can act on every record of a 500-item long-horizon task, as the published runs did.
    """

    max_duration_secs: float = 30.0
    max_memory: int = 256 * 1024 * 1024
    max_tool_calls: int = 1_000
    max_suspensions: int = 20_000

    def as_dict(self) -> dict[str, Any]:
        return {
            "max_duration_secs": self.max_duration_secs,
            "max_memory": self.max_memory,
            "max_tool_calls": self.max_tool_calls,
            "max_suspensions": self.max_suspensions,
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


def instructions_for(app: DemoApp) -> str:
    return INSTRUCTIONS.format(title=app.title, about=app.about)


class ArmError(ValueError):
    """An arm name, option or model assignment that cannot be used; the message lists the valid ones."""


CODE_OPTIONS: dict[str, str] = {
    "eager": "true/false: run each complete statement while the model is still writing the snippet",
    "speculate": '"reads" (the app\'s list_/get_ tools), "declared", a list of tool names, or false: start those '
    "calls while the snippet streams",
    "max_tool_calls": "tool calls one snippet may make",
    "max_duration_secs": "seconds one snippet may run",
    "max_memory": "bytes of heap one sandbox session may use",
    "max_suspensions": "pauses one sandbox session may make across its snippets",
}
"""The options of the sandboxed modes (``code``, ``hybrid``); a ``tool`` arm takes none."""
_LIMIT_OPTIONS = ("max_tool_calls", "max_duration_secs", "max_memory", "max_suspensions")


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
        for key in _LIMIT_OPTIONS:
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
        return replace(base, **{key: self.options[key] for key in _LIMIT_OPTIONS if key in self.options})

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
DEFAULT_ARM_NAMES: tuple[str, ...] = DEFAULT_ARMS


def arm_title(name: str) -> str:
    """A preset's title, or the arm's name."""
    preset = PRESETS.get(name)
    return preset.title if preset is not None and preset.title else name


def arm_catalog(settings: Settings | None = None) -> dict[str, ArmSpec]:
    """The presets and the config file's ``[arms.NAME]`` arms (which may not reuse a preset's name)."""
    catalog = dict(PRESETS)
    for name, configured in (settings.arms if settings is not None else {}).items():
        if name in PRESETS:
            raise ArmError(f"[arms.{name}] in the config file reuses a built-in arm's name; choose another name")
        catalog[name] = configured.spec(name)
    return catalog


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


def build_agent(
    arm: ArmSpec, model: Model, app: AppInstance, recorder: Recorder, config: ArmConfig
) -> Agent[None, str]:
    """The arm's agent. pydantic-ai and the harness are imported here, not with the arm definitions, which the
    CLI and the TUI read at start-up."""
    from pydantic_ai import Agent
    from pydantic_ai_harness import CodeMode

    capabilities: list[Any] = []
    toolsets: list[Any] = [app.toolset]
    instructions = app.instructions
    if arm.sandboxed:
        limits = arm.sandbox_limits(config.sandbox)
        capabilities.append(
            CodeMode(
                tools=list(app.tool_names),
                max_tool_calls=limits.max_tool_calls,
                monty_sandbox=local_pool,  # type: ignore[arg-type]  # any pool factory works, not only remote ones
                resource_limits={
                    "max_duration_secs": limits.max_duration_secs,
                    "max_memory": limits.max_memory,
                    "max_suspensions": limits.max_suspensions,
                },
                eager=arm.eager,
                speculate=arm.speculate(app.tool_names, app.read_only_tools),
            )
        )
    if arm.mode == "hybrid":
        toolsets.append(app.toolset.prefixed(DIRECT_PREFIX))
        instructions += HYBRID_INSTRUCTIONS
    capabilities.append(recorder)
    return Agent(streamable(model), toolsets=toolsets, instructions=instructions, capabilities=capabilities)


def streamable(model: Model) -> Model:
    """Arms always stream (that is how events arrive live). A FunctionModel written with only a plain
    ``function`` gets a stream function that sends each of its responses in one piece."""
    from pydantic_ai._utils import is_async_callable
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

    if not isinstance(model, FunctionModel) or model.stream_function is not None or model.function is None:
        return model
    function = model.function

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        if is_async_callable(function):
            response: ModelResponse = await function(messages, info)  # type: ignore[misc]
        else:
            response = function(messages, info)  # type: ignore[assignment]
        calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
        if not calls:
            yield "".join(part.content for part in response.parts if isinstance(part, TextPart)) or " "
            return
        yield {
            index: DeltaToolCall(name=call.tool_name, json_args=call.args_as_json_str(), tool_call_id=call.tool_call_id)
            for index, call in enumerate(calls)
        }

    return FunctionModel(function, stream_function=stream, model_name=model.model_name, profile=model.profile)
