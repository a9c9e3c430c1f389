"""The offline model on BFCL: plays each turn's ground truth, in every arm, so the suite runs without a key.

What each arm does with a turn's ground-truth calls (the policy docs/bfcl.md describes):

- **tool** (no ``run_code``): one call per response, in the ground truth's order (a later call may depend on
  an earlier one's result, as ``cd`` before ``mv``), then a one-line answer.
- **code** and **code-eager**: one ``run_code`` snippet per turn that awaits the same calls in the same order
  and returns their results, then a one-line answer. Eager execution runs each statement as it streams; the
  calls and their order are the same.
- **hybrid**: a turn of one call is a direct call (``direct_<name>``), since a snippet buys nothing there; a
  turn of two or more calls is one snippet, as in the code arm.

A turn whose ground truth is empty (a ``miss_param`` turn that lacks a value, a ``miss_func`` turn before its
function comes back) is answered with text and no call, which is what BFCL expects there.

Like the scripted model it is deterministic and stateless: each response is decided from the conversation so
far (the turn is the number of user prompts in it). Its token counts are real BPE counts (it runs inside
:class:`~workbench.scripted.model.ScriptedModel`); its pass rate says nothing about models, only that the
suite, the arms and the grading agree with BFCL's own ground truth.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo

from workbench.arm_spec import DIRECT_PREFIX
from workbench.events import RUN_CODE
from workbench.suites import bfcl

Call = tuple[str, dict[str, Any]]


def keyword_calls(entry: bfcl.Entry, ground_truth: Sequence[Sequence[str]] | None = None) -> list[list[Call]]:
    """Each turn's ground-truth calls as (name, keyword arguments): positional arguments (``sort('a.pdf')``)
    are named from the method's signature, on the class that BFCL's executor would call."""
    owners: dict[str, Any] = {}
    for class_name in entry.involved_classes:
        cls = getattr(importlib.import_module(bfcl.CLASS_MODULES[class_name]), class_name)
        for name, function in inspect.getmembers(cls, predicate=inspect.isfunction):
            if not name.startswith("_"):
                owners[name] = function  # the last class wins, as in BFCL
    turns: list[list[Call]] = []
    for texts in entry.ground_truth if ground_truth is None else ground_truth:
        calls: list[Call] = []
        for text in texts:
            name, args, kwargs = bfcl.parse_call(text)
            if args and name in owners:
                bound = inspect.signature(owners[name]).bind_partial(None, *args, **kwargs)
                kwargs = {key: value for key, value in bound.arguments.items() if key != "self"}
            calls.append((name, kwargs))
        turns.append(calls)
    return turns


@dataclass
class GroundTruthPlayer:
    """A :data:`~workbench.sources.base.Policy` that plays ``entry``'s ground truth (or ``ground_truth``, a
    replacement per turn in BFCL's call-string form: how a test makes a deliberately broken player)."""

    entry: bfcl.Entry
    ground_truth: Sequence[Sequence[str]] | None = None

    def __post_init__(self) -> None:
        self.turns = keyword_calls(self.entry, self.ground_truth)

    def __call__(self, messages: Sequence[ModelMessage], info: AgentInfo) -> ModelResponse:
        names = {tool.name for tool in info.function_tools}
        turn = _turn(messages)
        calls = self.turns[turn] if turn < len(self.turns) else []
        made = _this_turn(messages)
        number = sum(isinstance(message, ModelResponse) for message in messages) + 1
        if RUN_CODE not in names:
            return _tool_step(calls, made, number)
        direct = any(name.startswith(f"{DIRECT_PREFIX}_") for name in names)
        if direct and len(calls) == 1:
            name, arguments = calls[0]
            return _tool_step([(f"{DIRECT_PREFIX}_{name}", arguments)], made, number)
        if not calls or made:
            failed = _snippet_failed(messages)
            return ModelResponse(parts=[TextPart(_answer(calls, failed))])
        sandboxed = _sandbox_names(info)
        code = snippet([(sandboxed.get(name, name), arguments) for name, arguments in calls])
        return ModelResponse(parts=[ToolCallPart(RUN_CODE, {"code": code}, tool_call_id=f"call_{number}_0")])


def _tool_step(calls: list[Call], made: list[ToolCallPart], number: int) -> ModelResponse:
    if len(made) < len(calls):
        name, arguments = calls[len(made)]
        return ModelResponse(parts=[ToolCallPart(name, arguments, tool_call_id=f"call_{number}_0")])
    return ModelResponse(parts=[TextPart(_answer(calls, failed=False))])


def snippet(calls: Sequence[Call]) -> str:
    """One turn's calls as a snippet: awaited one after another (each may depend on the one before), their
    results returned as the last expression."""
    lines = [
        f"r{index} = await {name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"
        for index, (name, arguments) in enumerate(calls)
    ]
    lines.append("[" + ", ".join(f"r{index}" for index in range(len(calls))) + "]")
    return "\n".join(lines) + "\n"


def _answer(calls: list[Call], failed: bool) -> str:
    if not calls:
        return "I can't do that with the functions and the details I have; please tell me what is missing."
    if failed:
        return "The snippet failed, so this step is not done."
    return f"Done: {', '.join(name for name, _ in calls)}."


def _snippet_failed(messages: Sequence[ModelMessage]) -> bool:
    """Whether the last ``run_code`` result was an error (a retry prompt or a failed return)."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, RetryPromptPart) and part.tool_name == RUN_CODE:
                    return True
                if isinstance(part, ToolReturnPart) and part.tool_name == RUN_CODE:
                    return part.outcome != "success"
    return False


def _turn(messages: Sequence[ModelMessage]) -> int:
    """Which user turn is being answered (0-based): the number of user prompts so far, less one."""
    prompts = sum(
        isinstance(part, UserPromptPart)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
    )
    return max(prompts - 1, 0)


def _this_turn(messages: Sequence[ModelMessage]) -> list[ToolCallPart]:
    """The calls already made since the last user prompt."""
    made: list[ToolCallPart] = []
    for message in messages:
        if isinstance(message, ModelRequest) and any(isinstance(part, UserPromptPart) for part in message.parts):
            made = []
        elif isinstance(message, ModelResponse):
            made += [part for part in message.parts if isinstance(part, ToolCallPart)]
    return made


def _sandbox_names(info: AgentInfo) -> dict[str, str]:
    """Each tool's name inside the sandbox, as ``run_code``'s catalog declares it (the same for BFCL's names,
    read from the catalog all the same rather than assumed)."""
    catalog = next((tool.description or "" for tool in info.function_tools if tool.name == RUN_CODE), "")
    declared = re.findall(r"^\s*(?:async )?def (\w+)\(", catalog, flags=re.MULTILINE)
    return {name: name for name in declared}
