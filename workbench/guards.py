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

from dataclasses import dataclass
from typing import Any

import pydantic_core

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


# -- bounded results ---------------------------------------------------------------------------------

DEFAULT_MAX_RESULT_BYTES = 1024 * 1024
"""Largest result one tool call or one snippet hands the model by default (1 MB of UTF-8 text)."""


@dataclass(frozen=True)
class ClippedText:
    """A result's text cut to the limit, with a note saying so; ``original_bytes`` is what it was."""

    text: str
    original_bytes: int


def clip_result(value: Any, max_bytes: int) -> ClippedText | None:
    """What the model gets for ``value`` when its text is over ``max_bytes`` (``None`` when it fits).

    The text is the model's view of a result, as pydantic-ai renders it: a string as is, anything else as
    JSON. A string is measured without copying it, so a 100 MB result costs one pass, not three copies.
    """
    if value is None:
        return None
    if isinstance(value, str):
        return clip_text(value, max_bytes)
    try:
        text = pydantic_core.to_json(value, by_alias=True, fallback=repr).decode("utf-8", "replace")
    except (pydantic_core.PydanticSerializationError, ValueError, RecursionError):
        text = repr(value)
    return clip_text(text, max_bytes)


def clip_text(text: str, max_bytes: int, *, escaped: bool = False) -> ClippedText | None:
    """``text`` cut to at most ``max_bytes`` of UTF-8, the cut said at its end (``None`` when it fits).

    ``escaped`` measures the text as the model gets an error: inside a JSON object (``{"error": ...}``),
    where a newline or a quote takes two bytes.
    """
    measure = _json_size if escaped else utf8_size
    if len(text) * (6 if escaped else 4) + _SLACK <= max_bytes:
        return None
    size = measure(text)
    if size + _SLACK <= max_bytes:
        return None
    note = (
        f"\n… [clipped by the workbench: this result is {size:,} bytes; only its first part, up to "
        f"{max_bytes:,} bytes, is shown. Return or print less, e.g. a count or a summary.]"
    )
    budget = max(0, max_bytes - measure(note) - _SLACK)
    head = _utf8_head(text, budget)
    while head and (used := measure(head)) > budget:  # escapes made it longer: shrink in proportion
        head = _utf8_head(head, len(head) * budget // used - 1)
    return ClippedText(head + note, size)


_SLACK = 16
"""Bytes kept free for what wraps a result on its way to the model (``{"error": ...}``)."""


def _utf8_head(text: str, max_bytes: int) -> str:
    """The longest start of ``text`` whose UTF-8 fits in ``max_bytes`` (never splitting a character)."""
    head = text[: max(0, max_bytes)]
    if head.isascii():
        return head
    return head.encode("utf-8", "surrogatepass")[:max_bytes].decode("utf-8", "ignore")


def _json_size(text: str) -> int:
    try:
        return len(pydantic_core.to_json(text)) - 2
    except (pydantic_core.PydanticSerializationError, ValueError):
        return len(text) * 6


def utf8_size(text: str) -> int:
    """Bytes of ``text`` as UTF-8 (lone surrogates counted as 3), copying it only when it is not ASCII."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
