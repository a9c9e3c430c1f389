"""BFCL v4 multi-turn as a suite: entries, their classes as tools, and BFCL's own checker as the grade.

The Berkeley Function Calling Leaderboard (PyPI ``bfcl-eval``, Apache-2.0) ships its multi-turn data, the
stateful Python classes the calls run on, their function docs and the checker in one wheel. Only the standard
library and ``mpmath`` are needed for those parts, so ``workbench suites install bfcl`` installs the pinned
wheel with ``--no-deps`` (its declared dependencies pull in torch and pinned provider SDKs).

This module follows BFCL's own rules, read from bfcl-eval's code: the classes are built and loaded from the
entry's ``initial_config`` as ``multi_turn_utils.execute_multi_turn_func_call`` does (``_load_scenario``,
``long_context`` for that category, nothing for stateless classes); a method name maps to the last involved
class that has it; ``miss_func`` holds a function back until the turn ``missed_function`` names (that turn's
user message is BFCL's "I have updated some more functions" prompt). BFCL 2026.3.23 ignores
``excluded_function``, so this does too. The checker caches its instances by model name in its module's
globals, so every grade uses a fresh name and removes its instances afterwards.

pydantic-ai and bfcl-eval are imported inside the functions that need them: listing the suites stays quick
and works without the suite installed.
"""

from __future__ import annotations

import ast
import copy
import importlib
import importlib.util
import inspect
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import BadInput

if TYPE_CHECKING:
    from pydantic_ai.toolsets import FunctionToolset

PINNED_VERSION = "2026.3.23"
"""The bfcl-eval release the suite is verified against (newest on PyPI on 2026-12-01)."""

DISTRIBUTION = "bfcl-eval"
CATEGORIES = ("multi_turn_base", "multi_turn_long_context", "multi_turn_miss_func", "multi_turn_miss_param")
HOLDOUT_PROMPT = "I have updated some more functions you can choose from. What about now?"
"""BFCL's user message for a turn where held-back functions come back (its DEFAULT_USER_PROMPT_FOR_ADDITIONAL_...)."""

_BACKEND = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
CLASS_MODULES = {
    "GorillaFileSystem": f"{_BACKEND}.gorilla_file_system",
    "MathAPI": f"{_BACKEND}.math_api",
    "MessageAPI": f"{_BACKEND}.message_api",
    "TwitterAPI": f"{_BACKEND}.posting_api",
    "TicketAPI": f"{_BACKEND}.ticket_api",
    "TradingBot": f"{_BACKEND}.trading_bot",
    "TravelAPI": f"{_BACKEND}.travel_booking",
    "VehicleControlAPI": f"{_BACKEND}.vehicle_control",
}
"""The classes the four multi-turn categories involve, and where bfcl-eval keeps them."""
FUNC_DOCS = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
}
STATELESS = frozenset({"MathAPI"})
CHECKER_MODULE = "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker"
NEEDED_MODULES = ("mpmath", CHECKER_MODULE, *CLASS_MODULES.values())


class SuiteMissing(BadInput):
    """bfcl-eval (or a module the suite needs) is not importable; the message says what is missing. A kind of
    ``BadInput`` (exit 2): an entry of a suite that is not installed cannot be run here, as an unknown entry."""


# ---------------------------------------------------------------------------------------------- status


@dataclass(frozen=True)
class Status:
    """Whether the suite can run here, and what is missing when it cannot."""

    installed: bool
    version: str | None
    pinned: str
    missing: tuple[str, ...]
    entries: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": "bfcl",
            "installed": self.installed,
            "version": self.version,
            "pinned": self.pinned,
            "missing": list(self.missing),
            "entries": self.entries,
        }


def _installed_version() -> str | None:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing
        return False


def status() -> Status:
    """The suite's status without importing bfcl-eval (only finding its modules and counting its data lines)."""
    version = _installed_version()
    missing: list[str] = []
    if version is None or not _importable("bfcl_eval"):
        missing.append(f"{DISTRIBUTION} is not installed")
    else:
        if version != PINNED_VERSION:
            missing.append(f"{DISTRIBUTION} {version} is installed, the suite is pinned to {PINNED_VERSION}")
        missing += [f"module {name} is not importable" for name in NEEDED_MODULES if not _importable(name)]
    entries: dict[str, int] = {}
    if version is not None and _importable("bfcl_eval"):
        for category in CATEGORIES:
            path = _data_dir() / f"BFCL_v4_{category}.json"
            if path.is_file():
                entries[category] = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
            else:
                missing.append(f"data file {path.name} is missing")
    return Status(not missing, version, PINNED_VERSION, tuple(missing), entries)


def _data_dir() -> Path:
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or spec.origin is None:
        raise SuiteMissing(f"{DISTRIBUTION} is not installed; run: workbench suites install bfcl")
    return Path(spec.origin).parent / "data"


def require() -> None:
    """Raise :class:`SuiteMissing` with every missing piece in one line, unless the suite can run."""
    found = status()
    if not found.installed:
        raise SuiteMissing("; ".join(found.missing) + "; run: workbench suites install bfcl")


# --------------------------------------------------------------------------------------------- entries


@dataclass(frozen=True)
class Entry:
    """One multi-turn conversation: its turns, its classes' starting state, the ground truth per turn."""

    id: str
    category: str
    turns: list[list[dict[str, str]]]
    initial_config: dict[str, Any]
    involved_classes: list[str]
    ground_truth: list[list[str]]
    functions: list[dict[str, Any]]
    """The function docs offered from the first turn (held-back ones removed)."""
    held_back: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    """miss_func: turn index -> the docs that come back at that turn."""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    """The entry as BFCL stores it, which its checker takes."""

    @property
    def long_context(self) -> bool:
        return "long_context" in self.category

    def functions_at(self, turn: int) -> list[dict[str, Any]]:
        """The docs offered at ``turn``: the first turn's plus every held-back doc returned by then."""
        docs = list(self.functions)
        for index in sorted(self.held_back):
            if index <= turn:
                docs += self.held_back[index]
        return docs

    def user_messages(self, turn: int) -> list[dict[str, str]]:
        """The turn's messages; a held-back turn (empty in the data) gets BFCL's "updated functions" prompt."""
        if not self.turns[turn] and turn in self.held_back:
            return [{"role": "user", "content": HOLDOUT_PROMPT}]
        return self.turns[turn]


def _read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@cache
def function_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    if class_name not in FUNC_DOCS:
        raise SuiteMissing(f"class {class_name} is not part of the multi-turn categories")
    path = _data_dir() / "multi_turn_func_doc" / FUNC_DOCS[class_name]
    return tuple(_read_lines(path))


def load_entries(category: str) -> list[Entry]:
    """Every entry of ``category``, with its ground truth and its function docs (miss_func's held back)."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown BFCL category {category!r}; choose one of: {', '.join(CATEGORIES)}")
    require()
    data = _data_dir()
    answers = {
        row["id"]: row["ground_truth"] for row in _read_lines(data / "possible_answer" / f"BFCL_v4_{category}.json")
    }
    entries = []
    for row in _read_lines(data / f"BFCL_v4_{category}.json"):
        docs = [copy.deepcopy(doc) for name in row["involved_classes"] for doc in function_docs(name)]
        held_back: dict[int, list[dict[str, Any]]] = {}
        for turn, names in (row.get("missed_function") or {}).items():
            for name in names:
                index = next((i for i, doc in enumerate(docs) if doc["name"] == name), None)
                if index is not None:  # as BFCL: the first doc of that name leaves the list
                    held_back.setdefault(int(turn), []).append(docs.pop(index))
        entries.append(
            Entry(
                id=row["id"],
                category=category,
                turns=row["question"],
                initial_config=row["initial_config"],
                involved_classes=list(row["involved_classes"]),
                ground_truth=answers[row["id"]],
                functions=docs,
                held_back=held_back,
                raw=row,
            )
        )
    return entries


# ------------------------------------------------------------------------------------------- schemas

_TYPES = {"dict": "object", "float": "number", "tuple": "array", "int": "integer", "str": "string", "bool": "boolean"}


def json_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """BFCL's parameter spec (``type: dict``, ``float``, ``tuple``, ``any``) as standard JSON schema."""
    schema: dict[str, Any] = {}
    for key, value in parameters.items():
        if key == "type":
            if value != "any":
                schema["type"] = _TYPES.get(value, value)
        elif key == "properties":
            schema["properties"] = {name: json_schema(spec) for name, spec in value.items()}
        elif key == "items" and isinstance(value, dict):
            schema["items"] = json_schema(value)
        elif key in ("description", "enum", "required", "default", "format"):
            schema[key] = value
    if schema.get("type") == "object" and "properties" in schema:
        schema.setdefault("required", [])
        schema["additionalProperties"] = False
    return schema


# ----------------------------------------------------------------------------------------- the world


def call_string(name: str, arguments: dict[str, Any]) -> str:
    """A call as BFCL's checker takes it: ``mv(source='a', destination='b')`` (keyword arguments, repr values)."""
    return f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"


class World:
    """An entry's classes, built from its ``initial_config`` as BFCL's executor builds them, one per arm.

    Every tool call goes through :meth:`call`, which records it (as a call string) in the current turn, so the
    calls an arm actually made are what :func:`grade` feeds to the checker.
    """

    def __init__(self, entry: Entry) -> None:
        require()
        self.entry = entry
        self.instances: dict[str, Any] = {}
        self.methods: dict[str, tuple[str, Callable[..., Any]]] = {}
        for class_name in entry.involved_classes:
            module = importlib.import_module(CLASS_MODULES[class_name])
            instance = getattr(module, class_name)()
            if class_name not in STATELESS:
                instance._load_scenario(
                    copy.deepcopy(entry.initial_config.get(class_name, {})), long_context=entry.long_context
                )
            self.instances[class_name] = instance
            for method_name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not method_name.startswith("_"):
                    self.methods[method_name] = (class_name, method)  # the last class wins, as in BFCL
        self.calls: list[list[str]] = [[] for _ in entry.turns]
        self.turn = 0

    def start_turn(self, turn: int) -> None:
        if not 0 <= turn < len(self.calls):
            raise ValueError(f"{self.entry.id} has {len(self.calls)} turns; there is no turn {turn}")
        self.turn = turn

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run one method with ``arguments`` and return its result; an error is returned as BFCL's executor words it."""
        if name not in self.methods:
            raise KeyError(f"{self.entry.id} has no function {name!r}")
        self.calls[self.turn].append(call_string(name, arguments))
        try:
            return self.methods[name][1](**arguments)
        except Exception as error:  # the model sees what BFCL's executor shows it
            return f"Error during execution: {error}"

    def bind(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Positional arguments (the ground truth has a few, e.g. ``sort('final_report.pdf')``) named by the method."""
        bound = inspect.signature(self.methods[name][1]).bind_partial(*args, **kwargs)
        return dict(bound.arguments)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Each stateful class's public attributes (what BFCL's state checker compares), JSON-ready."""
        return {
            class_name: {key: _plain(value) for key, value in vars(instance).items() if not key.startswith("_")}
            for class_name, instance in self.instances.items()
            if class_name not in STATELESS
        }


def _plain(value: Any, seen: frozenset[int] = frozenset()) -> Any:
    """JSON-ready copy; a back-reference (a directory's ``parent``) becomes ``"<parent>"`` instead of a cycle."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if id(value) in seen:
        return "<parent>"
    inner = seen | {id(value)}
    if isinstance(value, dict):
        return {str(key): _plain(item, inner) for key, item in value.items() if key != "parent"}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(item, inner) for item in value]
    if hasattr(value, "__dict__"):
        return {
            key: _plain(item, inner) for key, item in vars(value).items() if not key.startswith("_") and key != "parent"
        }
    return repr(value)


def parse_call(text: str) -> tuple[str, list[Any], dict[str, Any]]:
    """``"mv(source='a', destination='b')"`` -> (name, positional, keyword), literals only."""
    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a single function call: {text!r}")
    args = [ast.literal_eval(arg) for arg in node.args]
    kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg is not None}
    return node.func.id, args, kwargs


def toolset(world: World, turn: int = 0) -> FunctionToolset[Any]:
    """The functions offered at ``turn`` as a pydantic-ai toolset over ``world``'s instances (docs as schemas)."""
    from pydantic_ai.tools import Tool
    from pydantic_ai.toolsets import FunctionToolset

    tools: dict[str, Tool[Any]] = {}
    for doc in world.entry.functions_at(turn):
        name = doc["name"]
        if name not in world.methods:
            continue
        tools[name] = Tool.from_schema(
            _caller(world, name),
            name=name,
            description=doc.get("description", ""),
            json_schema=json_schema(doc.get("parameters", {"type": "dict", "properties": {}})),
        )
    return FunctionToolset(list(tools.values()))


def _caller(world: World, name: str) -> Callable[..., Any]:
    def call(**arguments: Any) -> Any:
        return world.call(name, arguments)

    call.__name__ = name
    return call


# ------------------------------------------------------------------------------------------- grading


def grade(entry: Entry, calls_per_turn: list[list[str]]) -> dict[str, Any]:
    """BFCL's ``multi_turn_checker`` on the calls made per turn (one call per step); its dict (``valid``, and on
    failure ``error_type`` / ``error_message`` naming the turn). Like BFCL's own eval runner (2026.3.23), this
    does not run ``multi_turn_irrelevance_checker``: calls in a turn whose ground truth is empty are executed,
    not failed."""
    require()
    checker = importlib.import_module(CHECKER_MODULE)
    utils = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    if len(calls_per_turn) != len(entry.ground_truth):
        raise ValueError(f"{entry.id} has {len(entry.ground_truth)} turns; got calls for {len(calls_per_turn)}")
    steps = [[[call] for call in turn] for turn in calls_per_turn]
    model_name = f"workbench_{uuid.uuid4().hex}"
    try:
        return checker.multi_turn_checker(steps, entry.ground_truth, entry.raw, entry.category, model_name)
    finally:
        for key in [key for key in vars(utils) if key.startswith(model_name)]:
            del vars(utils)[key]


# ------------------------------------------------------------------------------------- ground truth


async def play_ground_truth(entry: Entry, wrong: Callable[[int, str], str | None] | None = None) -> World:
    """Run the entry's ground truth through :func:`toolset`, turn by turn, one call at a time, as a model's
    tool calls would: each call's arguments are validated against the turn's schemas and run on a fresh
    :class:`World`, whose recorded calls are then what :func:`grade` takes.

    ``wrong(turn, call)`` may replace a ground-truth call (``None`` drops it), to make a broken player.
    """
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.tools import RunContext
    from pydantic_ai.usage import RunUsage

    world = World(entry)
    context = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    for turn, calls in enumerate(entry.ground_truth):
        world.start_turn(turn)
        tools = toolset(world, turn)
        offered = await tools.get_tools(context)
        for text in calls:
            if wrong is not None:
                replaced = wrong(turn, text)
                if replaced is None:
                    continue
                text = replaced
            name, args, kwargs = parse_call(text)
            if name not in offered:
                raise KeyError(f"{entry.id} turn {turn}: {name} is not offered at this turn")
            arguments = offered[name].args_validator.validate_python(world.bind(name, args, kwargs))
            await tools.call_tool(name, arguments, context, offered[name])
    return world


def failed_turn(result: dict[str, Any]) -> int | None:
    """The turn a failed :func:`grade` result is about (the checker stops at the first failing turn)."""
    if result.get("valid"):
        return None
    words = str(result.get("error_message", "")).rstrip(".").split()
    if len(words) >= 2 and words[-2] == "turn" and words[-1].isdigit():
        return int(words[-1])
    executed = result.get("execution_result")
    return len(executed) - 1 if isinstance(executed, list) and executed else None
