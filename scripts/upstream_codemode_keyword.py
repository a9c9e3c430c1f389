"""Upstream bug, reproduced without the workbench: CodeMode (pydantic-ai-harness 0.62.0) and a tool whose input
schema has a property named `from`. Run: `python scripts/upstream_codemode_keyword.py`.

A: `from` as a top-level parameter: the stub says `from_`, and `from_` reaches the tool unmapped.
B: `from` inside an object parameter (server-memory's create_relations): the TypedDict says `from: str`
   (not valid Python) and the type check refuses both {"from": ...} and {"from_": ...}.

The workbench works around both (workbench/sources/catalog.py): every arm is offered `from_`, told so in
the tool's description, and the call is translated back to `from` before it reaches the tool.
"""

from __future__ import annotations

import asyncio
import json

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import Tool
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai_harness import CodeMode

PAIR = {
    "type": "object",
    "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
    "required": ["from", "to"],
}
NESTED = {"type": "object", "properties": {"relations": {"type": "array", "items": PAIR}}, "required": ["relations"]}
seen: list[dict] = []


def link(**kwargs: object) -> str:
    seen.append(kwargs)
    return "linked"


def snippet(code: str) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if returns:
            return ModelResponse(parts=[TextPart(str(returns[-1].content).splitlines()[0])])
        description = info.function_tools[0].description or ""
        start = description.find("async def link") if "class " not in description else description.find("class ")
        print("  catalog: " + " | ".join(description[start : description.find("```", start)].strip().splitlines()))
        return ModelResponse(parts=[ToolCallPart("run_code", {"code": code})])

    return FunctionModel(respond)


async def main() -> None:
    cases = {
        "A": (PAIR, ['await link(from_="a", to="b")']),
        "B": (
            NESTED,
            ['await link(relations=[{"from": "a", "to": "b"}])', 'await link(relations=[{"from_": "a", "to": "b"}])'],
        ),
    }
    for case, (schema, codes) in cases.items():
        toolset = FunctionToolset([Tool.from_schema(link, name="link", description="Link.", json_schema=schema)])
        for code in codes:
            seen.clear()
            print(f"{case}: {code}")
            agent = Agent(snippet(code), toolsets=[toolset], capabilities=[CodeMode(tools=["link"])])
            result = await agent.run("link a to b")
            print(f"  result: {result.output}\n  arguments the tool got: {json.dumps(seen)}")


asyncio.run(main())
