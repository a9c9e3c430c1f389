"""A Python toolset as an app source: ``--toolset package.module:attribute``.

The attribute is a pydantic-ai toolset, a list of functions, or a factory (any other callable) that
returns one of those. A factory is called once per arm, with ``workdir=`` (the arm's copy of
``--workdir``) when it takes a ``workdir`` parameter, so each arm gets state of its own; a toolset or
list is shared by the arms, whose isolation is then the toolset's business.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset
from pydantic_ai.usage import RunUsage

from workbench.apps import Snapshot
from workbench.errors import BadInput
from workbench.sources.agreement import Rules
from workbench.sources.base import AppInstance, AppSource, SourceError, instructions_for_tools
from workbench.sources.catalog import CatalogToolset, offered, plan_catalog
from workbench.sources.expect import Expectation, expectation_grader
from workbench.sources.folder import ArmFolder
from workbench.sources.workdir import snapshot_folder


def load_attribute(reference: str, search: Path | None = None) -> Any:
    """``package.module:attribute`` -> the object; raises ``BadInput`` with a one-line message.

    Modules are found as ``python -m`` would: from ``search`` (default: the current folder) first.
    """
    module_name, colon, attribute = reference.partition(":")
    if not colon or not module_name or not attribute:
        raise BadInput(f"--toolset {reference}: expected package.module:attribute")
    folder = str((search or Path.cwd()).resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        module = importlib.import_module(module_name)
    except Exception as error:
        raise BadInput(f"--toolset {reference}: cannot import {module_name}: {type(error).__name__}: {error}") from None
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise BadInput(f"--toolset {reference}: {module_name} has no attribute {attribute!r}")
        target = getattr(target, part)
    return target


def as_toolset(value: Any, where: str) -> AbstractToolset[Any]:
    """The toolset ``value`` is (a list of functions becomes one); :class:`SourceError` when it is none."""
    if isinstance(value, AbstractToolset):
        return value
    if _is_function_list(value):
        return FunctionToolset(list(value))
    raise SourceError(_not_a_toolset(value, where))


def _is_function_list(value: Any) -> bool:
    return isinstance(value, list | tuple) and bool(value) and all(callable(item) for item in value)


def _not_a_toolset(value: Any, where: str) -> str:
    return f"--toolset {where}: expected a pydantic-ai toolset or a list of functions, got {type(value).__name__}"


@dataclass(frozen=True)
class ToolsetSource(AppSource):
    reference: str
    value: Any
    workdir: Path | None = None
    setup: str | None = None
    setup_timeout_s: float = 30.0
    cwd: Path | None = None
    expect: Expectation | None = None
    rules: Rules = field(default_factory=Rules)

    @classmethod
    def load(
        cls,
        reference: str | Any,
        *,
        workdir: Path | None = None,
        setup: str | None = None,
        setup_timeout_s: float = 30,
        cwd: Path | None = None,
        expect: Expectation | None = None,
        rules: Rules | None = None,
    ) -> ToolsetSource:
        """From ``package.module:attribute`` or the object itself (Python API); ``BadInput`` (a ``ValueError``)
        when unusable."""
        value = load_attribute(reference, cwd) if isinstance(reference, str) else reference
        name = reference if isinstance(reference, str) else _name_of(value)
        source = cls(name, value, workdir, setup, setup_timeout_s, cwd, expect, rules or Rules())
        if not source.is_factory and not isinstance(value, AbstractToolset) and not _is_function_list(value):
            raise BadInput(_not_a_toolset(value, source.reference))
        return source

    @property
    def is_factory(self) -> bool:
        return callable(self.value) and not isinstance(self.value, AbstractToolset | list | tuple)

    @property
    def label(self) -> str:  # type: ignore[override]
        return "toolset:" + self.reference.rpartition(":")[2]

    @asynccontextmanager
    async def open(self, arm: str) -> AsyncIterator[AppInstance]:
        folder = ArmFolder.create(arm, self.workdir, self.cwd)
        try:
            if self.setup:
                await folder.run_setup(self.setup, self.setup_timeout_s)
            toolset = as_toolset(self._build(folder), self.reference)
            async with toolset:
                names, read_only, schemas = await _tool_names(toolset)
                plans = plan_catalog(zip(names, schemas, strict=True), f"--toolset {self.reference}")
                if plans:
                    toolset = CatalogToolset(toolset, plans=plans)
                    names, read_only = offered(names, plans), offered(read_only, plans)

                async def snapshot() -> Snapshot:
                    if folder.workdir is None:
                        return {}
                    return await asyncio.to_thread(snapshot_folder, folder.workdir)

                title = self.reference.rpartition(":")[2]
                instructions = instructions_for_tools(title, f"the tools of the Python toolset {self.reference}")
                grade = expectation_grader(self.expect, folder)
                yield AppInstance(toolset, names, instructions, snapshot, read_only, grade=grade)
        finally:
            folder.cleanup()

    def _build(self, folder: ArmFolder) -> Any:
        if not self.is_factory:
            return self.value
        factory: Callable[..., Any] = self.value
        try:
            wants_workdir = "workdir" in inspect.signature(factory).parameters
        except (TypeError, ValueError):
            wants_workdir = False
        try:
            return factory(workdir=folder.workdir) if wants_workdir else factory()
        except Exception as error:
            raise SourceError(
                f"--toolset {self.reference}: the factory failed: {type(error).__name__}: {error}"
            ) from None


async def _tool_names(toolset: AbstractToolset[Any]) -> tuple[list[str], list[str], list[Any]]:
    """The toolset's tool names, the read-only ones, and each tool's input schema, asked the way an agent run
    asks."""
    context = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    try:
        tools = await toolset.get_tools(context)
    except Exception as error:
        raise SourceError(f"the toolset cannot list its tools: {type(error).__name__}: {error}") from None
    read_only = [name for name, tool in tools.items() if (tool.tool_def.metadata or {}).get("read_only")]
    return list(tools), read_only, [tool.tool_def.parameters_json_schema for tool in tools.values()]


def _name_of(value: Any) -> str:
    return getattr(value, "__name__", None) or type(value).__name__
