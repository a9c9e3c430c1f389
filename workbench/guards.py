"""Host-side limits on what model-written code can hand the host, beyond what the sandbox itself bounds.

Monty bounds a snippet's heap, time and call count, but every nested tool call copies its arguments out of
the sandbox, and CodeMode keeps each nested call (arguments included) in the run's message history until
the run ends. A snippet that builds one 200 MB string and passes it to 1,000 calls would make the host
hold 200 GB. The recorder (:mod:`workbench.recorder`) refuses a call whose arguments are larger than any
real use of the demo apps needs (:func:`oversized`), drops the oversized arguments so nothing retains them
(:func:`drop_arguments`), and reports the refusal like any other retried call (the snippet can catch it;
the pane shows it).
"""

from __future__ import annotations

from typing import Any

MAX_ARGUMENT_CHARS = 65_536
"""Largest tool-call arguments accepted, counted as characters of their text (plus a few per value)."""


def oversized(tool_name: str, args: Any, max_chars: int = MAX_ARGUMENT_CHARS) -> str | None:
    """The message refusing a call whose arguments exceed ``max_chars`` (``None`` when they fit)."""
    if argument_size(args, max_chars) <= max_chars:
        return None
    return f"the arguments of {tool_name} are over {max_chars:,} characters; pass ids and short values, not bulk data"


def drop_arguments(*holders: Any) -> None:
    """Empty the argument dicts CodeMode keeps in the run's history, so nothing retains an oversized value."""
    for holder in holders:
        if isinstance(holder, dict):
            holder.clear()


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
