"""A catalog every arm can call: tool names the providers accept, argument names the code arm can write.

An MCP server or toolset may name a tool ``get weather.v2`` (OpenAI and Anthropic accept only
``^[a-zA-Z0-9_-]{1,64}$``: the tool arm would fail on the provider's 400) or give a tool a property named
``from`` (server-memory's ``create_relations``: CodeMode renders ``from: str`` in its catalog, which is not
Python, and its type check refuses both ``{"from": ...}`` and ``{"from_": ...}``, so the code arm cannot
call the tool at all). Refusing such apps would shut users out of servers they did not write, so the
workbench maps the names instead, the same for every arm (one catalog, so the comparison stays fair):

- a tool name providers refuse: each character outside ``a-z A-Z 0-9 _ -`` becomes ``_``, and a name past
  64 characters keeps 55 and gains ``_`` and 8 hex digits of its hash (``get weather.v2`` -> ``get_weather_v2``);
- a property that is not a Python identifier, or is a keyword: the same characters become ``_``, a leading
  digit gains a ``_`` before it, a keyword one after it (``from`` -> ``from_``, ``2fa`` -> ``_2fa``), in the
  tool's input schema at any depth (nested objects, list items, ``$defs``).

The tool's description tells the model the server's own names, and every call is translated back
before it reaches the server, which sees exactly its own names. What cannot be mapped is refused when the
app opens, in one line naming the tool and the rule: two names that map to the same one, an input schema
that is not a JSON Schema object, or one nested past :data:`MAX_SCHEMA_DEPTH`.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import keyword
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError
from pydantic_ai.exceptions import ModelRetry
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import ToolsetTool, WrapperToolset
from pydantic_ai.toolsets.external import TOOL_SCHEMA_VALIDATOR

from workbench.sources.base import SourceError
from workbench.untrusted import shown

PROVIDER_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""The tool names OpenAI and Anthropic accept."""
TOOL_NAME_RULE = "providers accept only letters, digits, _ and - (at most 64)"
MAX_SCHEMA_DEPTH = 64
_NOT_NAME = re.compile(r"[^a-zA-Z0-9_-]")
_NOT_IDENTIFIER = re.compile(r"\W|-", re.ASCII)
_SUBSCHEMAS = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")


def provider_name(name: str) -> str:
    """``name`` as a tool name providers accept (itself when it already is one)."""
    if PROVIDER_TOOL_NAME.fullmatch(name):
        return name
    mapped = _NOT_NAME.sub("_", name) or "_"
    if len(mapped) > 64:
        mapped = f"{mapped[:55]}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"
    return mapped


def python_name(name: str) -> str:
    """A property name as a Python keyword argument (itself when it already is one)."""
    if name.isidentifier() and name.isascii() and not keyword.iskeyword(name):
        return name
    mapped = _NOT_IDENTIFIER.sub("_", name) or "_"
    if mapped[0].isdigit():
        mapped = f"_{mapped}"
    return f"{mapped}_" if keyword.iskeyword(mapped) else mapped


@dataclass(frozen=True)
class ToolPlan:
    """How one tool is offered: under ``name``, with ``schema`` (``None``: its own), told ``note``."""

    original: str
    name: str
    schema: dict[str, Any] | None
    original_schema: dict[str, Any]
    note: str


def plan_catalog(tools: Iterable[tuple[str, Any]], where: str) -> dict[str, ToolPlan]:
    """The plans of the tools that need one, by their offered name; ``tools`` are (name, input schema).

    Raises :class:`SourceError` (one line starting with ``where``) for a tool that cannot be offered.
    """
    plans: dict[str, ToolPlan] = {}
    owners: dict[str, str] = {}
    for original, schema in tools:
        name = provider_name(original)
        if name in owners:
            other = owners[name]
            raise SourceError(
                f"{where}: tools {shown(other)!r} and {shown(original)!r} would both be offered as {name!r} "
                f"({TOOL_NAME_RULE}); rename one in the server"
            )
        owners[name] = original
        schema = _checked_schema(original, schema, where)
        renamed: list[tuple[str, str]] = []
        rewritten = _rewrite(schema, renamed, original, where)
        notes = []
        if name != original:
            notes.append(f"the server names this tool `{original}`")
        if renamed:
            pairs = ", ".join(f"`{new}` is the server's `{old}`" for old, new in dict(renamed).items())
            notes.append(f"arguments renamed to be Python names: {pairs}")
        if notes:
            plans[name] = ToolPlan(
                original, name, rewritten if renamed else None, schema, "\n\n(" + "; ".join(notes) + ".)"
            )
    return plans


def _checked_schema(tool: str, schema: Any, where: str) -> dict[str, Any]:
    if schema is None:
        return {"type": "object", "properties": {}}
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise SourceError(
            f"{where}: tool {shown(tool)!r}: its input schema must be a JSON Schema object "
            f'({{"type": "object", ...}}), got {shown(schema)}'
        )
    stack = [(schema, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            raise SourceError(f"{where}: tool {shown(tool)!r}: its input schema is nested past {MAX_SCHEMA_DEPTH}")
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return schema


def _rewrite(schema: dict[str, Any], renamed: list[tuple[str, str]], tool: str, where: str) -> dict[str, Any]:
    """A copy of ``schema`` with every property renamed by :func:`python_name`; ``renamed`` gains (old, new)."""
    result = copy.deepcopy(schema)
    stack: list[Any] = [result]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        properties = node.get("properties")
        if isinstance(properties, dict):
            mapping = _property_names(properties, tool, where)
            if any(old != new for old, new in mapping.items()):
                node["properties"] = {mapping[key]: value for key, value in properties.items()}
                if isinstance(node.get("required"), list):
                    node["required"] = [mapping.get(key, key) for key in node["required"]]
                renamed.extend((old, new) for old, new in mapping.items() if old != new)
        for key in _SUBSCHEMAS + _SCHEMA_LISTS:
            if key in node:
                stack.append(node[key])
        for key in _SCHEMA_MAPS:
            if isinstance(node.get(key), dict):
                stack.extend(node[key].values())
    return result


def _property_names(properties: dict[str, Any], tool: str, where: str) -> dict[str, str]:
    mapping = {key: python_name(key) for key in properties}
    taken: dict[str, str] = {}
    for old, new in mapping.items():
        if new in taken:
            raise SourceError(
                f"{where}: tool {shown(tool)!r}: properties {shown(taken[new])!r} and {shown(old)!r} would both be "
                f"{new!r} as Python names; the code arm could not call it"
            )
        taken[new] = old
    return mapping


def to_original(schema: dict[str, Any], value: Any, root: dict[str, Any] | None = None, depth: int = 0) -> Any:
    """``value`` (the arguments as the model wrote them, against the rewritten schema) with every renamed
    property back under the server's own name, following ``schema`` (the server's own)."""
    root = schema if root is None else root
    if depth > MAX_SCHEMA_DEPTH or not isinstance(schema, dict):
        return value
    schema = _resolved(schema, root)
    if isinstance(value, dict):
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            branch = _branch(schema, value)
            return value if branch is None else to_original(branch, value, root, depth + 1)
        back = {python_name(key): key for key in properties}
        extra = schema.get("additionalProperties")
        result = {}
        for key, item in value.items():
            original = back.get(key, key)
            sub = properties.get(original, extra if isinstance(extra, dict) else None)
            result[original] = to_original(sub, item, root, depth + 1) if isinstance(sub, dict) else item
        return result
    if isinstance(value, list):
        items, prefix = schema.get("items"), schema.get("prefixItems")
        if isinstance(prefix, list):
            return [
                to_original(prefix[index] if index < len(prefix) else items, item, root, depth + 1)
                for index, item in enumerate(value)
            ]
        if isinstance(items, dict):
            return [to_original(items, item, root, depth + 1) for item in value]
    return value


def _resolved(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """``schema``'s local ``$ref`` (``#/$defs/Name``), followed a few times; the schema itself otherwise."""
    for _ in range(8):
        ref = schema.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return schema
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        if not isinstance(target, dict):
            return schema
        schema = target
    return schema


def _branch(schema: dict[str, Any], value: dict[str, Any]) -> dict[str, Any] | None:
    """The ``anyOf`` / ``oneOf`` / ``allOf`` branch with properties whose (renamed) names cover ``value``'s keys."""
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key) or []:
            properties = branch.get("properties") if isinstance(branch, dict) else None
            if isinstance(properties, dict) and {python_name(name) for name in properties} >= set(value):
                return branch
    return None


@dataclass
class CatalogToolset(WrapperToolset[Any]):
    """The wrapped tools under their offered names and schemas (:func:`plan_catalog`); calls go back translated."""

    plans: dict[str, ToolPlan] = field(kw_only=True)
    """By offered name."""

    def __post_init__(self) -> None:
        self._by_original = {plan.original: plan for plan in self.plans.values()}
        self._originals: dict[str, ToolsetTool[Any]] = {}

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await super().get_tools(ctx)
        offered: dict[str, ToolsetTool[Any]] = {}
        for name, tool in tools.items():
            plan = self._by_original.get(name)
            if plan is None:
                offered[name] = tool
                continue
            self._originals[plan.name] = tool
            definition = replace(
                tool.tool_def,
                name=plan.name,
                description=(tool.tool_def.description or "") + plan.note,
                parameters_json_schema=plan.schema or tool.tool_def.parameters_json_schema,
            )
            if plan.schema is None:
                offered[plan.name] = replace(tool, tool_def=definition)
            else:  # the arguments are checked against the server's own schema once translated back
                offered[plan.name] = replace(
                    tool, tool_def=definition, args_validator=TOOL_SCHEMA_VALIDATOR, args_validator_func=None
                )
        return offered

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        plan = self.plans.get(name)
        original = self._originals.get(name)
        if plan is None or original is None:
            return await super().call_tool(name, tool_args, ctx, tool)
        if plan.schema is not None:
            tool_args = to_original(plan.original_schema, tool_args)
            try:
                tool_args = original.args_validator.validate_python(tool_args)
            except ValidationError as error:
                first = error.errors()[0]
                raise ModelRetry(f"{name}: {first['msg']} at {'.'.join(map(str, first['loc'])) or '(root)'}") from None
            if original.args_validator_func is not None:
                checked = original.args_validator_func(ctx, **tool_args)
                if inspect.isawaitable(checked):
                    await checked
        return await super().call_tool(plan.original, tool_args, ctx, original)


def offered(names: Iterable[str], plans: dict[str, ToolPlan]) -> list[str]:
    """``names`` (the tools' own) as offered."""
    by_original = {plan.original: plan.name for plan in plans.values()}
    return [by_original.get(name, name) for name in names]


__all__ = ["CatalogToolset", "ToolPlan", "offered", "plan_catalog", "provider_name", "python_name", "to_original"]
