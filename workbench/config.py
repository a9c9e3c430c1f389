"""User settings: defaults < the TOML config file < ``WORKBENCH_*`` environment variables < command-line flags.

The config file is ``config.toml`` in the user's config directory (``workbench locate`` prints where;
``WORKBENCH_CONFIG`` points elsewhere). Every key is optional; ``workbench config --template`` prints a
file with every key documented. Nested keys (``[sandbox]``) are set from the environment with a double
underscore: ``WORKBENCH_SANDBOX__MAX_MEMORY=268435456``.

This module imports nothing heavy (no pydantic-ai), so ``workbench config`` / ``locate`` and the store
can read settings cheaply. It also keeps the list of recently used model strings for the TUI's model
field (:func:`recent_models`, :func:`remember_model`).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from workbench.arm_spec import SANDBOX_RANGES, ArmConfig, ArmSpec, SandboxLimits, limit_field
from workbench.errors import BadInput
from workbench.events import Mode
from workbench.locations import APP_DIR_NAME, CONFIG_FILE_ENV, config_file, data_dir, recent_models_file
from workbench.recent import push_recent, read_recent
from workbench.untrusted import MAX_DEPTH, check_shape, load_toml, read_bounded, shown

config_path = config_file
"""The config file's path (:func:`workbench.locations.config_file`; the paths live there)."""
__all__ = [
    "APP_DIR_NAME",
    "CONFIG_FILE_ENV",
    "SANDBOX_RANGES",
    "ConfigError",
    "QueueSettings",
    "Settings",
    "config_path",
    "data_dir",
    "load_settings",
    "recent_models",
    "recent_models_file",
    "remember_model",
    "template",
]  # fmt: skip

if TYPE_CHECKING:
    from workbench.models import ModelOptions

ENV_PREFIX = "WORKBENCH_"
RECENT_MODELS_KEPT = 10


class ConfigError(BadInput):
    """The config file or a ``WORKBENCH_*`` variable holds something unusable; the message names it."""


class ArmSettings(BaseModel):
    """One custom arm (an ``[arms.NAME]`` table): its mode, model and mode options."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    mode: Mode
    """tool (plain tool calling), code (only run_code) or hybrid (both)."""
    model: str | None = None
    """This arm's model; unset: the comparison's model."""
    eager: bool | None = None
    speculate: bool | str | list[str] | None = None
    max_tool_calls: int | None = limit_field("max_tool_calls", None)
    max_duration_secs: float | None = limit_field("max_duration_secs", None)
    max_memory: int | None = limit_field("max_memory", None)
    max_suspensions: int | None = limit_field("max_suspensions", None)
    stream: bool | None = None
    """Stream this arm's model responses; unset: the global stream setting (false for a server that cannot
    stream tool calls)."""
    tool_retries: int | None = Field(None, ge=0, le=100)
    """Retries of one tool after bad calls in this arm; unset: the global tool_retries."""

    def spec(self, name: str) -> ArmSpec:
        options = self.model_dump(exclude={"mode", "model", "stream", "tool_retries"}, exclude_none=True)
        return ArmSpec(name, self.mode, self.model, options, stream=self.stream, tool_retries=self.tool_retries)


PROVIDER_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


class ProviderQueueSettings(BaseModel):
    """Limits on one provider's queued comparisons (a ``[queue.providers.NAME]`` table), across all workers."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    limit: int | None = Field(None, ge=1, le=1_000_000)
    """Most comparisons started per period_s, across all workers (a comparison, not a model request: it makes
    one or more requests per arm); unset: no rate limit."""
    period_s: float = Field(60.0, gt=0, le=86_400)
    """The window the limit counts in, in seconds."""
    concurrency: int | None = Field(None, ge=1, le=1_000)
    """Most of this provider's comparisons running at once, across all workers; unset: no limit of its own."""


class QueueSettings(BaseModel):
    """Queued sweeps (``bench --queue``, ``workbench worker``): the ``[queue]`` table."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    concurrency: int | None = Field(None, ge=1, le=1_000)
    """Most queued comparisons running at once across all workers (providers without a table of their
    own); unset: only each worker's --concurrency bounds it."""
    worker_concurrency: int = Field(2, ge=1, le=64)
    """Comparisons one `workbench worker` runs at once when --concurrency is not given."""
    heartbeat_s: float = Field(2.0, ge=0.1, le=600)
    """How often a worker records that it is alive."""
    stale_after_s: float = Field(30.0, ge=1, le=86_400)
    """A worker silent for this long is taken for dead: a live worker re-queues the comparisons it held."""
    poll_s: float = Field(1.0, ge=0.05, le=60)
    """How often a worker looks for queued comparisons."""
    system_database: str | None = None
    """DBOS's system database (queued comparisons, their state): a postgresql:// URL. Unset: the session
    store's own PostgreSQL database (DBOS keeps its own schema there), or for a SQLite store a SQLite file
    beside it (sessions.db.dbos.sqlite), which serves workers on that machine only."""
    providers: dict[str, ProviderQueueSettings] = Field(default_factory=dict)
    """Per-provider limits: [queue.providers.NAME] tables (NAME as in the model string: openai, anthropic,
    ollama, scripted, ...) with limit and period_s (comparisons started per window) and concurrency."""

    @model_validator(mode="after")
    def _consistent(self) -> QueueSettings:
        if self.stale_after_s < 2 * self.heartbeat_s:
            raise ValueError(
                f"stale_after_s ({self.stale_after_s:g}) must be at least twice heartbeat_s ({self.heartbeat_s:g})"
            )
        if self.system_database is not None and not self.system_database.startswith(("postgresql:", "postgresql+")):
            raise ValueError(f"system_database must be a postgresql:// URL, got {shown(self.system_database)}")
        for name in self.providers:
            if not PROVIDER_NAME.match(name):
                raise ValueError(f"provider name {name!r} must be lower case, as in a model string (openai:...)")
        return self


class Settings(BaseSettings):
    """Every setting of the workbench, with the source each value came from (see :meth:`source`)."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        use_attribute_docstrings=True,
        validate_default=True,
        allow_inf_nan=False,
    )

    model: str = "scripted"
    """Model for both arms when --model is not given: 'scripted' (offline), 'scripted:paced', or any
    pydantic-ai model string such as 'openai:gpt-5-mini', 'anthropic:claude-sonnet-4-5', 'openai-chat:qwen3'."""
    base_url: str | None = None
    """Endpoint of a self-hosted OpenAI-compatible server (vLLM, LM Studio, llama.cpp, Ollama), e.g.
    'http://localhost:8000/v1', used by openai-chat:, openai:, ollama: and vllm: models (hosted providers
    keep their own). Unset: the provider's own variable applies (OPENAI_BASE_URL, OLLAMA_BASE_URL, ...)."""
    price_as: str = "openai:gpt-5-mini"
    """The real model whose prices the scripted model's token counts are charged at (genai-prices must know it)."""
    page_size: int = Field(50, ge=1, le=10_000)
    """Records per page of the demo apps' list tools (smaller pages mean more requests for the tool arm)."""
    db: str | None = None
    """Session database: a SQLite file path, or a PostgreSQL server as postgresql://user@host:port/dbname
    (shared by many machines; needs the postgres extra). Unset: sessions.db in the data directory. The same
    as the WORKBENCH_DB variable; --db on a command overrides both."""
    store_busy_timeout_s: float = Field(30.0, gt=0, le=86_400, allow_inf_nan=False)
    """Seconds a run waits for a session database another process holds locked (or, on PostgreSQL, a dropped
    connection or a restarting server) before its events go to a fallback file in the data directory instead
    (`workbench import` stores them later)."""
    request_limit: int = Field(50, ge=1, le=10_000)
    """Model requests per arm before it is stopped (a model that loops ends with status failed)."""
    concurrency: int = Field(8, ge=1, le=1_000)
    """Most model requests in flight at once per provider endpoint, across both arms and a sweep's runs."""
    timeout_s: float = Field(120.0, gt=0, le=86_400)
    """Seconds one attempt at a model request may take, from the first byte sent to the last byte received,
    whatever keep-alives the server sends meanwhile. An attempt past it fails (and is retried)."""
    retries: int = Field(3, ge=0, le=20)
    """Retries of a failed provider request (see retry_statuses; timeouts, dropped connections, streams cut
    short, malformed responses) before the arm fails; 0 makes a single attempt."""
    retry_statuses: list[Annotated[int, Field(ge=100, le=599)]] = Field(
        default_factory=lambda: [408, 409, 425, 429, 500, 502, 503, 504, 529], max_length=500
    )
    """HTTP statuses worth another attempt. Others (400, 401, 403, 404, 422, ...) fail at once, and so does a 5xx
    whose validation error repeats word for word."""
    retry_backoff_s: float = Field(1.0, ge=0, le=3_600)
    """First wait before a retry; it doubles each time (with jitter). A provider's Retry-After is honoured."""
    retry_max_wait_s: float = Field(20.0, ge=0, le=3_600)
    """Longest single wait between attempts (also caps Retry-After)."""
    retry_budget_s: float = Field(180.0, gt=0, le=86_400)
    """No new attempt at a request starts after this many seconds since its first attempt."""
    max_tokens: int | None = Field(None, ge=1, le=100_000_000)
    """Most tokens the model may write in one response (sent as the request's max_tokens); unset: the
    provider's default. The same as --max-tokens."""
    tool_retries: int | None = Field(None, ge=0, le=100)
    """Times the model may retry one tool after a bad call (bad arguments, an unknown id) before its arm fails;
    unset: pydantic-ai's default (1). Code mode's run_code keeps its own limit (3)."""
    arm_budget_s: float | None = Field(None, gt=0, le=7 * 86_400)
    """Wall-clock seconds one arm may run in all (requests, retries, tools, sandbox) before it is stopped with
    status failed; unset: no limit beyond request_limit and the per-request timeout."""
    stream: bool = True
    """Stream model responses (the panes fill as the model writes). false: every request goes through the
    provider's non-streaming API and the panes update once per response; for servers that cannot stream
    tool calls. The same as --no-stream."""
    max_result_bytes: int = Field(1024 * 1024, ge=1024, le=1024**3)
    """Largest result the model receives from one tool call or one snippet (its value, or its error,
    traceback or type-check output), in bytes of text; a larger one is clipped to this size with a note
    saying so, and the pane shows it (e.g. 'clipped: 100.0 MB → 1.0 MB'). The same for both arms."""
    sandbox: SandboxLimits = Field(default_factory=SandboxLimits)
    """Limits for the code arm's sandbox."""
    arms: dict[str, ArmSettings] = Field(default_factory=dict)
    """Custom arms, chosen by name with --arms: [arms.NAME] tables with mode (tool, code or hybrid), model
    (default: the comparison's) and, for code and hybrid, the options eager, speculate ("reads", "declared" or
    tool names), max_tool_calls, max_duration_secs, max_memory, max_suspensions. E.g. [arms.small-code] with
    mode="code", model="openai:gpt-5-nano", eager=true."""
    queue: QueueSettings = Field(default_factory=QueueSettings)
    """Queued sweeps: global and per-provider limits, worker defaults, heartbeats."""
    otel_endpoint: str | None = None
    """OTLP/HTTP collector to export every comparison to as OpenTelemetry traces, e.g. 'http://localhost:4318'
    (/v1/traces is added). Unset: traces go out only with --otel or when OTEL_EXPORTER_OTLP_ENDPOINT is set."""

    _sources: dict[str, str] = PrivateAttr(default_factory=dict)
    _file: Path | None = PrivateAttr(default=None)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=config_file())

    # -- what the engine takes ---------------------------------------------------------------------

    def model_options(self) -> ModelOptions:
        from workbench.models import ModelOptions
        from workbench.providers.retry import RetryPolicy

        return ModelOptions(
            base_url=self.base_url,
            price_as=self.price_as,
            retry=RetryPolicy(
                retries=self.retries,
                timeout_s=self.timeout_s,
                backoff_s=self.retry_backoff_s,
                max_backoff_s=self.retry_max_wait_s,
                budget_s=self.retry_budget_s,
                statuses=frozenset(self.retry_statuses),
            ),
            max_tokens=self.max_tokens,
            concurrency=self.concurrency,
            stream=self.stream,
        )

    def arm_config(self) -> ArmConfig:
        return ArmConfig(
            request_limit=self.request_limit,
            sandbox=self.sandbox,
            tool_retries=self.tool_retries,
            budget_s=self.arm_budget_s,
            max_result_bytes=self.max_result_bytes,
        )

    # -- where each value came from ----------------------------------------------------------------

    def source(self, key: str) -> str:
        """'default', 'file', 'env WORKBENCH_X' or 'flag' for a key like 'model' or 'sandbox.max_memory'."""
        return self._sources.get(key, "default")

    @property
    def file(self) -> Path:
        return self._file or config_file()

    def with_flags(self, **flags: Any) -> Settings:
        """These settings with command-line values over them (``None``: not given), validated as
        :func:`load_settings` validates them, without reading the config file again: a worker loads its settings
        once and applies each job's flags over them. Raises :class:`ConfigError`."""
        given = {key: value for key, value in flags.items() if value is not None}
        loaded = self.model_dump(exclude_unset=True)
        layers = (InitSettingsSource(Settings, given), InitSettingsSource(Settings, loaded))
        try:
            settings = Settings(_build_sources=(layers, given))
        except ValidationError as error:
            raise ConfigError(_explain(error, {**self._sources, **dict.fromkeys(given, "flag")}, self.file)) from None
        settings._sources = {**self._sources, **dict.fromkeys(_flat_keys(given), "flag")}
        settings._file = self._file
        return settings

    def rows(self) -> list[tuple[str, Any, str, str]]:
        """(key, value, source, description) for every setting, nested ones as 'sandbox.key'."""
        rows: list[tuple[str, Any, str, str]] = []
        for key, info in type(self).model_fields.items():
            value = getattr(self, key)
            if isinstance(value, BaseModel):
                for sub, sub_info in type(value).model_fields.items():
                    name = f"{key}.{sub}"
                    rows.append((name, getattr(value, sub), self.source(name), _doc(sub_info.description)))
            else:
                rows.append((key, value, self.source(key), _doc(info.description)))
        return rows


def load_settings(**flags: Any) -> Settings:
    """The effective settings; ``flags`` are command-line values (``None`` means the flag was not given).

    The config file is read once, bounded, and the settings are built from what was read (pydantic-settings'
    own TOML source would open it again); a command calls this once and passes the result down.
    Raises :class:`ConfigError` naming the file or variable at fault.
    """
    path = config_file()
    given = {key: value for key, value in flags.items() if value is not None}
    if path.exists() and not path.is_file():
        raise ConfigError(f"config file {path} is a directory, not a file; point {CONFIG_FILE_ENV} at a .toml file")
    try:
        from_file = load_toml(read_bounded(path)) if path.exists() else {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"config file {path} is not valid TOML: {error}") from None
    except OSError as error:
        raise ConfigError(f"cannot read config file {path}: {error.strerror or error}") from None
    except ValueError as error:
        raise ConfigError(f"config file {path}: {error}") from None
    _check_environment()
    try:
        from_env = EnvSettingsSource(Settings)()
    except SettingsError as error:
        raise ConfigError(_explain_env(error)) from None
    sources: dict[str, str] = {}
    for origin, values in (("file", from_file), ("env", from_env), ("flag", given)):
        for key in _flat_keys(values):
            sources[key] = f"env {ENV_PREFIX}{key.replace('.', '__').upper()}" if origin == "env" else origin
    # The variables as read above, not a second EnvSettingsSource: reading them is most of this function's time.
    layers = tuple(InitSettingsSource(Settings, values) for values in (given, from_env, from_file))
    try:
        settings = Settings(_build_sources=(layers, given))  # flags over variables over the file
    except ValidationError as error:
        raise ConfigError(_explain(error, sources, path)) from None
    settings._sources = sources
    settings._file = path
    return settings


MAX_VARIABLE_CHARS = 64 * 1024
"""Longest ``WORKBENCH_*`` value read (a whole ``[arms]`` table as JSON is a few hundred characters)."""


def _check_environment() -> None:
    """Refuse a ``WORKBENCH_*`` variable that is too long, or holds JSON nested or sized past what the config file
    may (a JSON array nested 50,000 deep would recurse the JSON parser to death)."""
    for name, value in os.environ.items():
        if not name.upper().startswith(ENV_PREFIX):
            continue
        if len(value) > MAX_VARIABLE_CHARS:
            raise ConfigError(f"{name} is {len(value):,} characters long; at most {MAX_VARIABLE_CHARS:,}")
        if value.lstrip()[:1] in ("{", "["):
            try:
                check_shape(json.loads(value))
            except RecursionError:
                raise ConfigError(f"{name}: nested more than {MAX_DEPTH} levels deep") from None
            except ValueError as error:
                if not isinstance(error, json.JSONDecodeError):
                    raise ConfigError(f"{name}: {error}") from None


_TABLES = ("sandbox", "queue")
"""Settings that are tables of their own, whose keys are reported one by one (``sandbox.max_memory``)."""


def _flat_keys(values: dict[str, Any], prefix: str = "") -> list[str]:
    keys: list[str] = []
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and key in _TABLES:
            keys += _flat_keys(value, f"{name}.")
        else:
            keys.append(name)
    return keys


def _explain(error: ValidationError, sources: dict[str, str], path: Path) -> str:
    by_origin: dict[str, list[str]] = {}
    for item in error.errors():
        key = shown(".".join(str(part) for part in item["loc"]), 100)
        parts = key.split(".")
        prefixes = (".".join(parts[:length]) for length in range(len(parts), 0, -1))
        within = (source for name, source in sources.items() if name.startswith(f"{key}."))
        origin = next((sources[prefix] for prefix in prefixes if prefix in sources), next(within, "default"))
        where = f"config file {path}" if origin == "file" else origin.removeprefix("env ")
        bounds = _bounds(item["loc"]) if item["type"] in _RANGE_ERRORS else None
        if item["type"] == "extra_forbidden":
            message = "unknown setting"
        elif bounds is not None:
            low, high, above = bounds
            lower = f"more than {_number(low)}" if above else f"between {_number(low)}"
            message = f"must be {lower} and {'at most ' if above else ''}{_number(high)}, got {shown(item['input'])}"
        else:
            message = item["msg"]
        by_origin.setdefault(where, []).append(f"{key}: {message}")
    problems = [f"{where}: {', '.join(found)}" for where, found in by_origin.items()]
    return "; ".join(problems) + " (`workbench config --template` lists every setting)"


_RANGE_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal", "finite_number"}


def _bounds(loc: tuple[int | str, ...]) -> tuple[float, float, bool] | None:
    """The range of the setting at ``loc`` (``sandbox.max_memory``, ``queue.providers.NAME.limit``):
    ``(low, high, low excluded)``, or ``None`` when it is bounded on one side only."""
    name = str(loc[-1])
    if name in SANDBOX_RANGES:
        low, high = SANDBOX_RANGES[name]
        return low, high, False
    model: Any = Settings
    info: Any = None
    for part in loc:
        fields = getattr(model, "model_fields", {})
        info = fields.get(part) if isinstance(part, str) else None
        if info is not None:  # else a table's own name (arms.NAME) or a list's index
            kinds = [info.annotation, *typing.get_args(info.annotation)]
            model = next((kind for kind in kinds if isinstance(kind, type) and issubclass(kind, BaseModel)), model)
    rules = info.metadata if info is not None else []
    low = next((rule.ge for rule in rules if getattr(rule, "ge", None) is not None), None)
    above = next((rule.gt for rule in rules if getattr(rule, "gt", None) is not None), None)
    high = next((rule.le for rule in rules if getattr(rule, "le", None) is not None), None)
    if high is None or (low is None and above is None):
        return None
    return (low, high, False) if low is not None else (above, high, True)


def _number(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) or (float(value).is_integer() and value >= 1000) else f"{value:g}"


def _explain_env(error: SettingsError) -> str:
    """A ``WORKBENCH_*`` variable whose value cannot be parsed (a nested table given as bad JSON)."""
    found = re.search(r'field "(\w+)"', str(error))
    name = f"{ENV_PREFIX}{found.group(1).upper()}" if found else f"a {ENV_PREFIX}* variable"
    return (
        f"{name} is not valid JSON (give a JSON object, or set one key with {name}__KEY); "
        "`workbench config --template` lists every setting"
    )


def _doc(description: str | None) -> str:
    return " ".join((description or "").split())


def template() -> str:
    """A config file with every key commented out at its default, each with its description."""
    lines = [
        "# Code Mode Workbench settings. Every key is optional; uncomment to change one.",
        f"# Precedence: defaults < this file < {ENV_PREFIX}* environment variables < command-line flags.",
        "",
    ]
    defaults = Settings.model_construct()
    for key, info in Settings.model_fields.items():
        if key in _TABLES:
            continue
        lines += _template_entry(key, getattr(defaults, key), info.description)
    for table, model in (("sandbox", SandboxLimits), ("queue", QueueSettings)):
        lines += [f"[{table}]"]
        for key, info in model.model_fields.items():
            lines += _template_entry(key, getattr(model(), key), info.description)
    example = "# e.g. [queue.providers.openai] with limit=60, period_s=60 (60 comparisons a minute), concurrency=8"
    lines[-1:-1] = [example]
    return "\n".join(lines).rstrip() + "\n"


def _template_entry(key: str, value: Any, description: str | None) -> list[str]:
    comment = [f"# {line}" for line in _wrap(_doc(description))]
    shown = f"# {key} = {json.dumps(value)}" if value is not None else f'# {key} = ""'
    return [*comment, shown, ""]


def _wrap(text: str, width: int = 100) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines


# -- recently used models (the TUI's model field) --------------------------------------------------


def recent_models(limit: int = RECENT_MODELS_KEPT) -> list[str]:
    """Model strings used recently, most recent first (an unreadable file reads as none)."""
    return [spec for spec in read_recent(recent_models_file()) if isinstance(spec, str) and spec.strip()][:limit]


def remember_model(spec: str) -> list[str]:
    """Put ``spec`` first in the recent models (once), keep the newest few, and return the list.

    Call it after a comparison with that model started (so only usable strings are remembered).
    Writing is best effort: a read-only data directory loses the list, not the run.
    """
    spec = spec.strip()
    if not spec:
        return recent_models()
    return push_recent(recent_models_file(), spec, RECENT_MODELS_KEPT)
