"""A BFCL entry as an app source: each arm gets its own :class:`~workbench.suites.bfcl.World`.

The entry's classes, loaded from its ``initial_config``, are the arm's tools (their function docs as
schemas): the tool arm calls the methods directly, the code arm from ``run_code``, hybrid both. Every call,
nested ones included, goes through :meth:`World.call`, which files it under the current turn, so the grade
is BFCL's ``multi_turn_checker`` on exactly the calls the arm made. The end state is the classes' public
attributes as records (a file system's files by path), so the end-state diff shows what each arm changed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from pydantic_ai.tools import RunContext, Tool, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset

from workbench.apps import Snapshot
from workbench.events import Graded
from workbench.sources.base import AppInstance, AppSource, Policy
from workbench.suites import bfcl

TASK_PREFIX = "bfcl/"
"""Session task ids are ``bfcl/<entry id>`` (the workbench's ``app/slug`` shape)."""

INSTRUCTIONS = """\
You operate {classes} from the Berkeley Function Calling Leaderboard's multi-turn world: stateful APIs whose \
state carries over from one user turn to the next. Use their tools to do what the user asks, in as many calls \
as it takes. If a request cannot be done with the functions you have, or lacks a value you need, say so \
instead of guessing. When a turn is done, reply in a sentence or two."""


def entry_task_id(entry: bfcl.Entry) -> str:
    return TASK_PREFIX + entry.id


def label() -> str:
    """What sessions call the app: the suite and the bfcl-eval version that ran (recorded in every session)."""
    return f"bfcl@{bfcl.status().version or bfcl.PINNED_VERSION}"


@dataclass(frozen=True)
class BfclSource(AppSource):
    """One BFCL entry, a fresh world per arm, graded by BFCL's own checker once the conversation ends."""

    entry: bfcl.Entry

    @property
    def label(self) -> str:  # type: ignore[override]
        return label()

    @property
    def task_id(self) -> str:  # type: ignore[override]
        return entry_task_id(self.entry)

    def offline_player(self) -> Policy:
        from workbench.suites.bfcl_player import GroundTruthPlayer

        return GroundTruthPlayer(self.entry)

    @asynccontextmanager
    async def open(self, arm: str) -> AsyncIterator[AppInstance]:
        world = bfcl.World(self.entry)
        toolset = world_toolset(world)

        async def snapshot() -> Snapshot:
            return records(world)

        async def begin_turn(turn: int) -> None:
            """The runner's turns count from 1, BFCL's from 0; the tools offered follow the turn (miss_func)."""
            world.start_turn(turn - 1)
            instance.tool_names[:] = offered_names(world)

        async def grade(start: Snapshot, end: Snapshot) -> Graded:
            return graded(self.entry, world.calls)

        instance = AppInstance(
            toolset,
            offered_names(world),
            INSTRUCTIONS.format(classes=", ".join(self.entry.involved_classes)),
            snapshot,
            label=label(),
            grade=grade,
            begin_turn=begin_turn,
        )
        yield instance


def offered_names(world: bfcl.World) -> list[str]:
    """The functions offered at the world's current turn (held-back ones appear at their turn)."""
    names = [doc["name"] for doc in world.entry.functions_at(world.turn) if doc["name"] in world.methods]
    return list(dict.fromkeys(names))


def graded(entry: bfcl.Entry, calls: list[list[str]]) -> Graded:
    """BFCL's verdict on the calls made per turn, as the workbench's grade event (the checker's own words)."""
    result = bfcl.grade(entry, calls)
    if result.get("valid"):
        return Graded(True, entry_task_id(entry), [], [])
    turn = bfcl.failed_turn(result)
    where = f"BFCL turn {turn} (from 0): " if turn is not None else ""
    problem = f"{where}{result.get('error_type', 'failed')}: {result.get('error_message', '')}".strip().rstrip(":")
    return Graded(False, entry_task_id(entry), [problem], [])


def world_toolset(world: bfcl.World) -> AbstractToolset[Any]:
    """Every function the entry ever offers, over ``world``; a held-back one (miss_func) is hidden until the
    turn that brings it back, the way BFCL offers it."""
    docs = {doc["name"]: doc for doc in world.entry.functions_at(len(world.entry.turns))}
    tools = [
        Tool.from_schema(
            _caller(world, name),
            name=name,
            description=doc.get("description", ""),
            json_schema=bfcl.json_schema(doc.get("parameters", {"type": "dict", "properties": {}})),
        )
        for name, doc in docs.items()
        if name in world.methods
    ]

    def offered(context: RunContext[Any], tool: ToolDefinition) -> bool:
        return any(doc["name"] == tool.name for doc in world.entry.functions_at(world.turn))

    return FunctionToolset(tools).filtered(offered)


def _caller(world: bfcl.World, name: str) -> Callable[..., Any]:
    async def call(**arguments: Any) -> Any:  # on the event loop: calls run, and are filed, in the order made
        return json_ready(world.call(name, arguments))

    call.__name__ = name
    return call


def json_ready(value: Any) -> Any:
    """A method's result as JSON values, for the model and the sandbox alike: MathAPI answers in mpmath numbers
    (``mpf``), which neither pydantic nor Monty can serialize; they become floats (what BFCL's own executor
    shows is their text, the same digits)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(key): json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_ready(item) for item in value]
    if hasattr(value, "__float__"):
        return float(value)
    return str(value)


# ------------------------------------------------------------------------------------------ the state


def records(world: bfcl.World) -> Snapshot:
    """The world's state as the workbench's snapshot: one entity per stateful class. A directory tree becomes
    one record per path; a mapping of records (tweets by id) one record per key; anything else one record."""
    snapshot: Snapshot = {}
    for class_name, state in world.snapshot().items():
        rows: dict[str, dict[str, Any]] = {}
        instance = world.instances[class_name]
        for attribute, value in state.items():
            tree = getattr(instance, attribute, None)
            if hasattr(tree, "contents") and isinstance(getattr(tree, "contents", None), dict):
                _walk(tree, "", rows)
            elif isinstance(value, dict) and value and all(isinstance(item, dict) for item in value.values()):
                for key, item in value.items():
                    rows[f"{attribute}[{key}]"] = item
            else:
                rows[attribute] = {"value": value}
        snapshot[class_name] = rows
    return snapshot


def _walk(directory: Any, path: str, rows: dict[str, dict[str, Any]]) -> None:
    here = f"{path}/{directory.name}"
    rows[here + "/"] = {"kind": "directory"}
    for item in directory.contents.values():
        if isinstance(getattr(item, "contents", None), dict):
            _walk(item, here, rows)
        else:
            rows[f"{here}/{item.name}"] = {"kind": "file", "content": getattr(item, "content", None)}
