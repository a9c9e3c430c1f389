"""How the scripted model plays a task's :class:`~workbench.apps.tasks.Play` in each arm.

Tool-calling arm: the player is stateless. On every request it replays the play from the top against
the conversation so far, reading each earlier tool result as the model saw it (the JSON text), and
returns the next response: one ``list_*`` page per response while pages remain, then all of a step's
actions as parallel calls in one response, then the answer. This is how plain tool-calling agents
were observed to work.

Code-mode arm: the player writes one snippet that pages, filters in Python and acts concurrently with
``asyncio.gather``, returns the report as its last expression, and then answers from what the snippet
returned.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart

from workbench.apps.tasks import Call, ForEach, Let, Play, Scan
from workbench.errors import InternalError

SAFE_BUILTINS = {
    name: __builtins__[name] if isinstance(__builtins__, dict) else getattr(__builtins__, name)
    for name in (
        "len", "sum", "sorted", "min", "max", "any", "all", "abs", "round", "int", "float", "str", "bool",
        "list", "dict", "set", "tuple", "range", "enumerate", "zip", "reversed", "isinstance",
    )
}  # fmt: skip


def evaluate(expression: str, variables: Mapping[str, Any]) -> Any:
    """Evaluate a play expression on the host, the way the snippet evaluates it in the sandbox.

    Variables are passed as globals so comprehensions can see them.
    """
    return eval(expression, {"__builtins__": SAFE_BUILTINS, **variables})


@dataclass
class Turn:
    """One earlier response of ours and the results its calls got back."""

    calls: list[ToolCallPart]
    results: dict[str, ToolReturnPart] = field(default_factory=dict)

    def result(self, call: ToolCallPart) -> tuple[bool, Any]:
        """(ok, value) of one call as the model saw it: parsed JSON when ok, the error text when not."""
        part = self.results.get(call.tool_call_id)
        if part is None:
            return False, "no result"
        text = part.model_response_str()
        if part.outcome != "success":
            return False, text
        try:
            return True, json.loads(text)
        except ValueError:
            return True, text


def turns(messages: Sequence[ModelMessage]) -> list[Turn]:
    """Our earlier tool-calling responses, each with the results that followed it."""
    found: list[Turn] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            calls = [part for part in message.parts if isinstance(part, ToolCallPart)]
            if calls:
                found.append(Turn(calls))
        elif isinstance(message, ModelRequest) and found:
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    found[-1].results[part.tool_call_id] = part
    return found


@dataclass(frozen=True)
class Next:
    """The player's decision: tool calls to make now, or the final answer."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    answer: str | None = None


class PlayFailed(InternalError):
    """A step could not go on (a listing failed): the model explains instead of guessing."""


def next_tool_step(play: Play, params: Mapping[str, Any], messages: Sequence[ModelMessage]) -> Next:
    """The tool-calling arm's next response, given the conversation so far."""
    variables: dict[str, Any] = dict(params)
    history: Iterator[Turn] = iter(turns(messages))
    try:
        for step in play.steps:
            if isinstance(step, Let):
                variables[step.name] = evaluate(step.expr, variables)
            elif isinstance(step, Scan):
                rows: list[Any] = []
                page = 1
                while True:
                    turn = next(history, None)
                    if turn is None:
                        return Next(calls=[(step.tool, {"page": page})])
                    ok, value = turn.result(turn.calls[0])
                    if not ok:
                        raise PlayFailed(f"listing page {page} with {step.tool} failed: {value}")
                    rows.extend(value["items"])
                    if not value["has_more"]:
                        break
                    page += 1
                variables[step.into] = rows
            elif isinstance(step, Call):
                turn = next(history, None)
                if turn is None:
                    return Next(calls=[(step.tool, _arguments(step.args, variables))])
                ok, value = turn.result(turn.calls[0])
                if not ok:
                    raise PlayFailed(f"{step.tool} failed: {value}")
                variables[step.into] = value
            elif isinstance(step, ForEach):
                targets = list(evaluate(step.over, variables))
                if not targets:
                    variables[step.into] = []
                    continue
                turn = next(history, None)
                if turn is None:
                    return Next(calls=[(step.tool, _arguments(step.args, {**variables, "it": it})) for it in targets])
                outcomes = [turn.result(call) for call in turn.calls]
                variables[step.into] = [value for ok, value in outcomes if ok]
                variables[f"{step.into}_failed"] = [value for ok, value in outcomes if not ok]
        return Next(answer=answer(play, params, report(play, variables)))
    except PlayFailed as failure:
        return Next(answer=f"I could not finish the task: {failure}")


def report(play: Play, variables: Mapping[str, Any]) -> dict[str, Any]:
    return {name: evaluate(expression, variables) for name, expression in play.report.items()}


def answer(play: Play, params: Mapping[str, Any], reported: Mapping[str, Any]) -> str:
    return play.answer.format(**{**params, **reported})


def _arguments(args: Mapping[str, str], variables: Mapping[str, Any]) -> dict[str, Any]:
    return {name: evaluate(expression, variables) for name, expression in args.items()}


def snippet(play: Play, params: Mapping[str, Any]) -> str:
    """The one snippet the code-mode arm writes for a play: page, filter in Python, act concurrently."""
    lines = ["import asyncio", ""]
    lines += [f"{name} = {value!r}" for name, value in params.items()]
    for step in play.steps:
        lines.append("")
        if isinstance(step, Let):
            lines.append(f"{step.name} = {step.expr}")
        elif isinstance(step, Scan):
            lines += [
                f"{step.into} = []",
                "page = 1",
                "while True:",
                f"    result = await {step.tool}(page=page)",
                f"    {step.into}.extend(result['items'])",
                "    if not result['has_more']:",
                "        break",
                "    page += 1",
            ]
        elif isinstance(step, Call):
            lines.append(f"{step.into} = await {step.tool}({_keyword_args(step.args)})")
        elif isinstance(step, ForEach):
            lines.append(
                f"{step.into} = await asyncio.gather(*({step.tool}({_keyword_args(step.args)}) for it in {step.over}))"
            )
    lines += ["", "{" + ", ".join(f"{name!r}: {expression}" for name, expression in play.report.items()) + "}"]
    return "\n".join(lines) + "\n"


def _keyword_args(args: Mapping[str, str]) -> str:
    return ", ".join(f"{name}={expression}" for name, expression in args.items())
