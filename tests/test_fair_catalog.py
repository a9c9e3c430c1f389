"""A catalog every arm can call: tool names providers refuse and argument names Python refuses are mapped
the same for every arm, told to the model, and translated back before they reach the server.

The server is real (tests/mcp_servers/notes_server.py --odd-names offers ``get weather.v2`` and
``create_relations`` with ``from`` at the top and inside its list of relations, as the npm server-memory
does); each tool adds a note holding the arguments it received, so the end state shows what the server got.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import Tool
from pydantic_ai.toolsets import FunctionToolset

import workbench
from tests.test_sources_mcp import NOTES, one, pids, player  # noqa: F401  # pids: the fixture checking no server outlives a test
from workbench.events import EndState, Graded, RunFinished, RunStarted
from workbench.sources.base import SourceError
from workbench.sources.catalog import plan_catalog, provider_name, python_name, to_original

pytest.importorskip("fastmcp.server", reason="the MCP extras are not installed here: pip install -e '.[test]'")

RELATIONS = {"from": "alice", "relations": [{"from": "alice", "to": "bob"}]}
AS_PYTHON = {"from_": "alice", "relations": [{"from_": "alice", "to": "bob"}]}


def noted(result: Any, arm: str) -> list[tuple[str, Any]]:
    """The notes an arm's calls added: (title, the arguments the server received)."""
    created = one(result, arm, EndState).created
    return [(row["record"]["title"], json.loads(row["record"]["body"])) for row in created]


def seeing(calls: list[tuple[str, dict[str, Any]]], seen: list[str]) -> FunctionModel:
    """:func:`player`, noting every tool description the model is given."""
    play = player(calls).function
    assert play is not None

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(f"{tool.name}: {tool.description}" for tool in info.function_tools)
        return play(messages, info)  # type: ignore[return-value]

    return FunctionModel(respond)


@pytest.mark.usefixtures("pids")
async def test_a_tool_name_providers_refuse_is_offered_mapped_and_reaches_the_server_by_its_own(tmp_path: Path) -> None:
    seen: list[str] = []
    calls = [("get_weather_v2", {"city": "Oslo"})]
    server = f"{NOTES} --odd-names --db {{workdir}}/notes.db"
    (tmp_path / "w").mkdir()
    result = await workbench.compare("weather", mcp=[server], workdir=tmp_path / "w", model=seeing(calls, seen),
                                     db=False)  # fmt: skip
    for arm in ("tool", "code"):
        started = one(result, arm, RunStarted)
        listed = started.tools if arm == "tool" else started.sandboxed_tools
        assert "get_weather_v2" in listed and "get weather.v2" not in listed
        assert noted(result, arm) == [("weather in Oslo", {"city": "Oslo"})]
        assert one(result, arm, RunFinished).status == "completed"
        assert one(result, arm, Graded).verdict == "agree"
    told = [text for text in seen if "the server names this tool `get weather.v2`" in text]
    assert any(text.startswith("get_weather_v2:") for text in told)  # the tool arm's own tool
    assert any(text.startswith("run_code:") for text in told)  # the code arm's catalog


@pytest.mark.usefixtures("pids")
async def test_a_keyword_named_property_is_called_from_the_code_arm(tmp_path: Path) -> None:
    """server-memory's ``create_relations(from=..., relations=[{from, to}])``: the code arm writes ``from_``
    (a keyword cannot be an argument or a TypedDict key), the server receives ``from``."""
    seen: list[str] = []
    server = f"{NOTES} --odd-names --db {{workdir}}/notes.db"
    (tmp_path / "w").mkdir()
    model = seeing([("create_relations", AS_PYTHON)], seen)
    result = await workbench.compare("relate", mcp=[server], workdir=tmp_path / "w", model=model, db=False,
                                     arms=["tool", "code", "hybrid"])  # fmt: skip
    for arm in ("tool", "code", "hybrid"):
        assert noted(result, arm) == [("relations alice alice>bob", RELATIONS)], arm
        assert one(result, arm, RunFinished).status == "completed"
    assert {one(result, arm, Graded).verdict for arm in ("tool", "code", "hybrid")} == {"agree"}
    catalog = next(text for text in seen if text.startswith("run_code:"))
    assert "from_: str" in catalog and "from: str" not in catalog
    assert "`from_` is the server's `from`" in catalog


async def test_a_python_toolset_tool_with_a_keyword_property_works_in_every_arm() -> None:
    received: list[dict[str, Any]] = []

    def link(**arguments: Any) -> str:
        received.append(arguments)
        return "linked"

    schema = {"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
              "required": ["from", "to"]}  # fmt: skip
    toolset = FunctionToolset([Tool.from_schema(link, name="link", description="Link two.", json_schema=schema)])
    result = await workbench.compare("link", toolset=toolset, model=player([("link", {"from_": "a", "to": "b"})]),
                                     db=False)  # fmt: skip
    assert received == [{"from": "a", "to": "b"}] * 2
    assert {one(result, arm, RunFinished).status for arm in ("tool", "code")} == {"completed"}


def test_names_are_mapped_by_the_documented_rules() -> None:
    assert provider_name("get weather.v2") == "get_weather_v2"
    assert provider_name("list-notes_2") == "list-notes_2"
    long = provider_name("x" * 100)
    assert len(long) == 64 and long.startswith("x" * 55 + "_")
    assert [python_name(n) for n in ("from", "relation-type", "2fa", "class", "type", "ok")] == [
        "from_", "relation_type", "_2fa", "class_", "type", "ok",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ([("a.b", None), ("a_b", None)], "tools 'a.b' and 'a_b' would both be offered as 'a_b'"),
        ([("t", {"type": "array"})], "tool 't': its input schema must be a JSON Schema object"),
        ([("t", ["not", "a", "schema"])], "tool 't': its input schema must be a JSON Schema object"),
        ([("t", {"type": "object", "properties": {"from": {}, "from_": {}}})], "properties 'from' and 'from_'"),
    ],
)
def test_what_cannot_be_mapped_is_refused_in_one_line(tools: list[tuple[str, Any]], message: str) -> None:
    with pytest.raises(SourceError) as refused:
        plan_catalog(tools, "MCP server odd")
    assert message in str(refused.value) and str(refused.value).startswith("MCP server odd: ")
    assert "\n" not in str(refused.value)


def test_arguments_go_back_through_refs_lists_and_combinators() -> None:
    schema = {
        "type": "object",
        "$defs": {"Edge": {"type": "object", "properties": {"from": {"type": "string"}, "for": {"type": "string"}}}},
        "properties": {
            "edges": {"type": "array", "items": {"$ref": "#/$defs/Edge"}},
            "either": {"anyOf": [{"type": "object", "properties": {"in": {"type": "integer"}}}, {"type": "null"}]},
            "free": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    }
    (plan,) = plan_catalog([("graph", schema)], "x").values()
    assert plan.schema is not None and plan.schema["$defs"]["Edge"]["properties"].keys() == {"from_", "for_"}
    written = {"edges": [{"from_": "a", "for_": "b"}], "either": {"in_": 1}, "free": {"from_": "kept as written"}}
    assert to_original(schema, written) == {
        "edges": [{"from": "a", "for": "b"}], "either": {"in": 1}, "free": {"from_": "kept as written"},
    }  # fmt: skip
