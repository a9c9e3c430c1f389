"""Code Mode Workbench: one prompt, side by side on several arms (tool calling, code mode, eager, hybrid).

```python
import workbench

result = workbench.compare_sync(task="cart/remove-expensive")
print(result.to_dict())          # the same object as `workbench run --json`
for event in result.arms["code"].events:
    ...
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from workbench.events import DEFAULT_ARMS
from workbench.lazy import lazy_attributes

if TYPE_CHECKING:
    from workbench.arm_spec import ArmConfig, ArmSpec, SandboxLimits
    from workbench.config import Settings
    from workbench.errors import BadInput, UserError, WorkbenchError
    from workbench.events import ArmEvent
    from workbench.request import RunRequest
    from workbench.runner import AppUnavailable, ComparisonRun
    from workbench.session import Comparison
    from workbench.store import Store

    DbArg = str | Path | Store | Literal[False] | None

_LAZY = {
    "ArmConfig": "workbench.arm_spec",
    "ArmSpec": "workbench.arm_spec",
    "SandboxLimits": "workbench.arm_spec",
    "ArmEvent": "workbench.events",
    "AppUnavailable": "workbench.runner",
    "RunRequest": "workbench.request",
    "BadInput": "workbench.errors",
    "UserError": "workbench.errors",
    "WorkbenchError": "workbench.errors",
    "Comparison": "workbench.session",
    "ComparisonRun": "workbench.runner",
    "Store": "workbench.store",
}
"""Public names imported on first use: pydantic-ai and SQLModel take over a second to import, which every
``workbench`` command (``--help`` included) would otherwise pay before doing anything."""


__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "AppUnavailable",
    "ArmConfig",
    "ArmEvent",
    "ArmSpec",
    "BadInput",
    "Comparison",
    "ComparisonRun",
    "RunRequest",
    "SandboxLimits",
    "Store",
    "UserError",
    "WorkbenchError",
    "compare",
    "compare_stream",
    "compare_sync",
]


def compare_stream(
    prompt: str | None = None,
    *,
    app: str | None = None,
    items: int | None = None,
    seed: int = 0,
    model: str | Any | None = None,
    task: str | None = None,
    db: DbArg = None,
    arms: Sequence[str | ArmSpec] = DEFAULT_ARMS,
    arm_models: Mapping[str, str | Any] | None = None,
    tool_model: str | Any | None = None,
    code_model: str | Any | None = None,
    config: ArmConfig | None = None,
    mcp: Sequence[str] | str = (),
    mcp_headers: Sequence[str] | Mapping[str, str] = (),
    toolset: str | Any | None = None,
    workdir: str | Path | None = None,
    setup: str | None = None,
    startup_timeout: float | None = None,
    call_timeout: float | None = None,
    turns: Sequence[str] = (),
    settings: Settings | None = None,
) -> ComparisonRun:
    """Start nothing yet: return a run to ``async for arm, event in run`` (or ``await run.result()``).

    ``model`` is a model string (``"scripted"``, ``"openai:gpt-5-mini"``, ...) or a pydantic-ai ``Model``;
    ``None`` takes the configured default (``workbench config``; ``"scripted"`` when nothing is configured).
    ``arms`` names arms (presets ``tool``, ``code``, ``code-eager``, ``hybrid``, or ``[arms.NAME]`` from the
    config file) or gives :class:`ArmSpec` objects, in order: the first is the baseline. ``arm_models``
    gives single arms their own model. ``db`` is a path, a :class:`Store`, ``None`` for the configured
    database (``$WORKBENCH_DB``, the config's ``db``, else the user data directory) or ``False`` to store
    nothing; the result's ``stored`` says whether the whole session reached it. A database opened here
    (anything but a :class:`Store`) is closed when the run ends; pass a :class:`Store` to keep one open
    across runs. Bad arguments raise
    :class:`BadInput`; nothing a model does raises.

    Instead of a demo app, the arms can run on your own tools: ``mcp`` (MCP server commands, started per
    arm, or ``http(s)://`` URLs, with ``mcp_headers``), or ``toolset`` (``"package.module:attribute"`` or
    the object: a pydantic-ai toolset, a list of functions, or a factory called per arm). ``workdir`` is
    copied once per arm (``{workdir}`` in a command, ``WORKBENCH_WORKDIR`` in a server's environment) and
    its files and SQLite rows are diffed; ``{arm}`` in a command or an HTTP URL is the arm's name (a URL
    ``http://host/{arm}/mcp`` gives each arm its own state on one server); ``setup`` is a shell command run
    before each arm. ``startup_timeout`` / ``call_timeout`` (seconds) bound a server's start and each tool
    call, as ``run --startup-timeout`` / ``--call-timeout`` do. When no arm's server starts,
    :class:`AppUnavailable` (a :class:`BadInput`) is raised and nothing is stored.

    ``turns`` (instead of ``prompt``) makes the run a conversation: each arm answers the prompts one after the
    other on its own app instance, keeping its message history (see :mod:`workbench.turns`).

    ``settings`` are what the defaults (model, limits, database) come from: ``None`` reads the config file and
    the ``WORKBENCH_*`` variables for this run; a caller running many comparisons can read them once with
    :func:`workbench.config.load_settings` and pass them to each.
    """
    from workbench.config import load_settings
    from workbench.runner import ComparisonRun, RunRequest, prepare
    from workbench.sources import make_source

    source = make_source(
        mcp=mcp, mcp_headers=mcp_headers, toolset=toolset, workdir=workdir, setup=setup,
        startup_timeout_s=startup_timeout, call_timeout_s=call_timeout,
    )  # fmt: skip
    request = RunRequest(
        prompt, app=app, items=items, seed=seed, model=model, task=task, arms=tuple(arms),
        arm_models=dict(arm_models or {}), tool_model=tool_model, code_model=code_model, config=config,
        source=source, turns=tuple(turns),
    )  # fmt: skip
    settings = settings or load_settings()  # the request's defaults and the database both come from it
    setup = prepare(request, settings=settings)
    store = open_store(db, settings)
    return ComparisonRun(setup, store, close_store=store is not None and store is not db)


async def compare(prompt: str | None = None, **kwargs: Any) -> Comparison:
    """Run ``prompt`` against the arms and return the comparison (arguments as :func:`compare_stream`)."""
    return await compare_stream(prompt, **kwargs).result()


def compare_sync(prompt: str | None = None, **kwargs: Any) -> Comparison:
    """:func:`compare` for scripts: same arguments, runs its own event loop."""
    import asyncio

    return asyncio.run(compare(prompt, **kwargs))


def open_store(db: DbArg, settings: Settings | None = None, *, import_unsaved: bool = True) -> Store | None:
    """The store for a ``db`` argument (a path or URL, a :class:`Store`, ``None`` for the configured one,
    ``False`` for none). A store given is handed back as it is; any other is opened anew, and the caller
    closes it (:meth:`Store.close`, or ``with``). Without ``import_unsaved`` (``workbench import``, which
    reports each file itself) the store leaves the data directory's fallback files to its caller.

    The database is the one :func:`workbench.locations.resolve_db` names: ``db`` > ``$WORKBENCH_DB`` >
    the config file's ``db`` > the default file. Raises :class:`workbench.store.StoreError` when it cannot
    be opened, naming the database, and :class:`workbench.config.ConfigError` when the config file (which
    might name the database) cannot be read.
    """
    from workbench.config import ConfigError, Settings, load_settings
    from workbench.locations import resolve_db
    from workbench.store import Store

    if db is False:
        return None
    if isinstance(db, Store):
        return db
    try:
        settings = settings or load_settings()
    except ConfigError:
        if db is None:  # the config file might have named the database
            raise
        settings = Settings.model_construct()  # a database given outright needs no config file
    location = resolve_db(db, settings)
    return Store(location, busy_timeout_s=settings.store_busy_timeout_s, import_unsaved=import_unsaved)
