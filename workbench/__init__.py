"""Code Mode Workbench: one prompt, a tool-calling arm and a code-mode arm, side by side.

```python
import workbench

result = workbench.compare_sync(task="cart/remove-expensive")
print(result.to_dict())          # the same object as `workbench run --json`
for event in result.arms["code"].events:
    ...
```
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from workbench.events import ARM_NAMES

if TYPE_CHECKING:
    from workbench.arms import ArmConfig, SandboxLimits
    from workbench.events import ArmEvent
    from workbench.runner import AppUnavailable, BadInput, Comparison, ComparisonRun
    from workbench.store import Store

    DbArg = str | Path | Store | Literal[False] | None

_LAZY = {
    "ArmConfig": "workbench.arms",
    "SandboxLimits": "workbench.arms",
    "ArmEvent": "workbench.events",
    "AppUnavailable": "workbench.runner",
    "BadInput": "workbench.runner",
    "Comparison": "workbench.runner",
    "ComparisonRun": "workbench.runner",
    "Store": "workbench.store",
}
"""Public names imported on first use: pydantic-ai and SQLModel take over a second to import, which every
``workbench`` command (``--help`` included) would otherwise pay before doing anything."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'workbench' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "AppUnavailable",
    "ArmConfig",
    "ArmEvent",
    "BadInput",
    "Comparison",
    "ComparisonRun",
    "SandboxLimits",
    "Store",
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
    arms: Sequence[str] = ARM_NAMES,
    tool_model: str | Any | None = None,
    code_model: str | Any | None = None,
    config: ArmConfig | None = None,
    mcp: Sequence[str] | str = (),
    mcp_headers: Sequence[str] | Mapping[str, str] = (),
    toolset: str | Any | None = None,
    workdir: str | Path | None = None,
    setup: str | None = None,
) -> ComparisonRun:
    """Start nothing yet: return a run to ``async for arm, event in run`` (or ``await run.result()``).

    ``model`` is a model string (``"scripted"``, ``"openai:gpt-5-mini"``, ...) or a pydantic-ai ``Model``;
    ``None`` takes the configured default (``workbench config``; ``"scripted"`` when nothing is configured).
    ``db`` is a path, a :class:`Store`, ``None`` for the default database (``$WORKBENCH_DB`` or the user
    data directory) or ``False`` to store nothing. Bad arguments raise :class:`BadInput`; nothing a model
    does raises.

    Instead of a demo app, the arms can run on your own tools: ``mcp`` (MCP server commands, started per
    arm, or ``http(s)://`` URLs, with ``mcp_headers``), or ``toolset`` (``"package.module:attribute"`` or
    the object: a pydantic-ai toolset, a list of functions, or a factory called per arm). ``workdir`` is
    copied once per arm (``{workdir}`` in a command, ``WORKBENCH_WORKDIR`` in a server's environment) and
    its files and SQLite rows are diffed; ``setup`` is a shell command run before each arm. When no arm's
    server starts, :class:`AppUnavailable` (a :class:`BadInput`) is raised and nothing is stored.
    """
    from workbench.runner import BadInput, ComparisonRun, prepare
    from workbench.sources import make_source

    try:
        source = make_source(mcp=mcp, mcp_headers=mcp_headers, toolset=toolset, workdir=workdir, setup=setup)
    except ValueError as error:
        raise BadInput(str(error)) from None
    prepared = prepare(
        prompt, app=app, items=items, seed=seed, model=model, task=task, arms=arms,
        tool_model=tool_model, code_model=code_model, config=config, source=source,
    )  # fmt: skip
    return ComparisonRun(prepared, open_store(db))


async def compare(
    prompt: str | None = None,
    *,
    app: str | None = None,
    items: int | None = None,
    seed: int = 0,
    model: str | Any | None = None,
    task: str | None = None,
    db: DbArg = None,
    arms: Sequence[str] = ARM_NAMES,
    tool_model: str | Any | None = None,
    code_model: str | Any | None = None,
    config: ArmConfig | None = None,
    mcp: Sequence[str] | str = (),
    mcp_headers: Sequence[str] | Mapping[str, str] = (),
    toolset: str | Any | None = None,
    workdir: str | Path | None = None,
    setup: str | None = None,
) -> Comparison:
    """Run ``prompt`` against both arms and return the comparison (see :func:`compare_stream`)."""
    run = compare_stream(
        prompt, app=app, items=items, seed=seed, model=model, task=task, db=db, arms=arms,
        tool_model=tool_model, code_model=code_model, config=config,
        mcp=mcp, mcp_headers=mcp_headers, toolset=toolset, workdir=workdir, setup=setup,
    )  # fmt: skip
    return await run.result()


def compare_sync(prompt: str | None = None, **kwargs: Any) -> Comparison:
    """:func:`compare` for scripts: same arguments, runs its own event loop."""
    return asyncio.run(compare(prompt, **kwargs))


_open_stores: dict[Path, Store] = {}


def open_store(db: DbArg) -> Store | None:
    """The store for a ``db`` argument; stores opened by path are reused while their file exists."""
    from workbench.store import Store, default_db_path
    from workbench.store.store import expand_path

    if db is False:
        return None
    if isinstance(db, Store):
        return db
    if isinstance(db, str) and "://" in db:
        return Store(db)
    path = expand_path(db).resolve() if db is not None else default_db_path().resolve()
    store = _open_stores.get(path)
    if store is None or not path.exists():
        store = _open_stores[path] = Store(path)
    return store
