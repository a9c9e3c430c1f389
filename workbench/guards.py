"""Host-side limits on what model-written code can hand the host, beyond what the sandbox itself bounds.

Monty bounds a snippet's heap, time and call count, but every nested tool call copies its arguments out of
the sandbox, and CodeMode keeps each nested call (arguments included) in the run's message history until
the run ends. A snippet that builds one 200 MB string and passes it to 1,000 calls would make the host
hold 200 GB. :class:`ArgumentLimit` refuses a call whose arguments are larger than any real use of the
demo apps needs, drops the oversized arguments so nothing retains them, and reports the refusal like any
other retried call (the snippet can catch it; the pane shows it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import ModelRetry
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import RunContext, ToolDefinition

from workbench.events import InnerCall, InnerResult
from workbench.recorder import RUN_CODE, Recorded, _running_snippet

MAX_ARGUMENT_CHARS = 65_536
"""Largest tool-call arguments accepted, counted as characters of their text (plus a few per value)."""


@dataclass
class ArgumentLimit(AbstractCapability[Any]):
    """Refuses tool calls (``run_code`` aside) whose arguments exceed ``max_chars``."""

    max_chars: int = MAX_ARGUMENT_CHARS

    async def before_tool_validate(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any
    ) -> Any:
        if tool_def.name == RUN_CODE:
            return args
        size = argument_size(args, self.max_chars)
        if size <= self.max_chars:
            return args
        message = (
            f"the arguments of {tool_def.name} are over {self.max_chars:,} characters; "
            "pass ids and short values, not bulk data"
        )
        parent = _running_snippet.get()
        if parent is not None:
            summary = {"dropped": f"over {self.max_chars:,} characters of arguments"}
            await ctx.emit(Recorded(payload=InnerCall(call.tool_call_id, parent, call.tool_name, summary)))
            await ctx.emit(
                Recorded(payload=InnerResult(call.tool_call_id, parent, call.tool_name, "retried", "", 0, 0.0, message))
            )
        if isinstance(args, dict):
            args.clear()  # the same dict CodeMode keeps in the run's history: keep none of it
        if isinstance(call.args, dict):
            call.args.clear()
        raise ModelRetry(message)


def argument_size(value: Any, stop_after: int) -> int:
    """Characters of text in ``value`` (strings, keys, 8 per other scalar); stops counting past ``stop_after``."""
    total = 0
    stack = [iter((value,))]
    while stack and total <= stop_after:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
        elif isinstance(item, str | bytes):
            total += len(item)
        elif isinstance(item, dict):
            stack.append(iter(item.items()))
        elif isinstance(item, list | tuple | set | frozenset):
            stack.append(iter(item))
        else:
            total += 8
    return total


_END = object()
