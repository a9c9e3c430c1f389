"""Reading what comes from outside (task files, the config file, ``WORKBENCH_*`` variables, headers) without
trusting it.

A file of a few hundred bytes can make a naive reader spend gigabytes or minutes: a YAML alias tree
(billion laughs) expands exponentially, a TOML key of 300,000 dotted parts costs ``tomllib`` quadratic
time and memory, arrays nested 100,000 deep recurse the interpreter, and a value that is not what it
should be turns into a traceback (or a huge ``str()``) where it is first used. So everything read here is:

- bounded in bytes before it is parsed (:func:`read_bounded`: 1 MiB, a regular file only);
- parsed with the constructs that blow up refused up front: YAML aliases and anchors (no task file
  needs them), TOML keys of more than :data:`MAX_KEY_PARTS` parts;
- walked once, without recursion, to bound nesting, the length of any text and the number of values
  (:func:`check_shape`);
- shown in messages only clipped (:func:`shown`), and numbers checked against a range (:func:`number_in`).

Every refusal is a :class:`~workbench.errors.BadInput` (a ``ValueError``) whose message is one line; callers
prefix it with what was read.
"""

from __future__ import annotations

import math
import re
import stat
from pathlib import Path
from typing import Any

from workbench.errors import BadInput

MAX_FILE_BYTES = 1024 * 1024
"""Largest task or config file read; the largest real task file is a few kilobytes."""
MAX_DEPTH = 32
"""Deepest nesting of tables and lists accepted (task files need 4, the config file 3)."""
MAX_TEXT_CHARS = 256 * 1024
"""Longest single text value (a prompt, a command, a SQL check)."""
MAX_VALUES = 50_000
"""Most values (texts, numbers, tables, lists) in one document: 5,000 tasks of ten values. Building values is
what costs (about 20 µs each in PyYAML's constructor and tomllib), so this also bounds the parse to about a
second."""
MAX_KEY_PARTS = 16
"""Most dotted parts in one TOML key (``a.b.c`` has 3; the deepest real key has 4)."""
SHOWN_CHARS = 60
"""Longest rendering of an outside value in a message."""

_BARE = r"[A-Za-z0-9_-]++"
_DOTTED_KEY = re.compile(
    rf"""(?<![A-Za-z0-9_"'.-])(?:(?:{_BARE}|"[^"\n]*+"|'[^'\n]*+')[ \t]*+\.[ \t]*+){{{MAX_KEY_PARTS},}}"""
)
"""A run of more dotted key parts than any real key has (possessive, and anchored at a part's start, so
that scanning a megabyte stays linear)."""


def read_bounded(path: Path, limit: int = MAX_FILE_BYTES) -> str:
    """The text of ``path``, refused before it is read when it is not a regular file or is over ``limit`` bytes.

    Raises ``OSError`` (the file cannot be read), ``UnicodeDecodeError`` or ``ValueError``.
    """
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        raise BadInput("not a regular file")
    if info.st_size > limit:
        raise BadInput(f"{_size(info.st_size)} is over the {_size(limit)} a file may have")
    with path.open("rb") as stream:
        data = stream.read(limit + 1)  # the file may have grown since stat
    if len(data) > limit:
        raise BadInput(f"over the {_size(limit)} a file may have")
    return data.decode("utf-8")


def load_toml(text: str) -> dict[str, Any]:
    """A TOML document, bounded as the module says; ``ValueError`` (``TOMLDecodeError`` is one) with one line."""
    import tomllib

    if text.count(",") + text.count("=") > 2 * MAX_VALUES:
        raise BadInput(f"more than {MAX_VALUES:,} values")
    found = _DOTTED_KEY.search(text)
    if found is not None:
        line = text.count("\n", 0, found.start()) + 1
        raise BadInput(f"a key of more than {MAX_KEY_PARTS} dotted parts (line {line})")
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise BadInput(f"nested more than {MAX_DEPTH} levels deep") from None
    check_shape(data)
    return data


def load_yaml(text: str) -> Any:
    """A YAML document of plain values (safe types only), without aliases or anchors, bounded as the module says.

    The events are checked before anything is built, so an alias tree is refused at its first ``*``
    whatever it would expand to. ``ValueError`` with the parser's one-line reason and where.
    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _check_events(yaml.parse(text, Loader=loader))
        data = yaml.load(text, Loader=loader)  # a safe loader: plain values only
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise BadInput(f"not valid YAML: {problem}{_at(mark)}") from None
    except RecursionError:
        raise BadInput(f"nested more than {MAX_DEPTH} levels deep") from None
    check_shape(data)
    return data


def _check_events(events: Any) -> None:
    import yaml

    depth = values = 0
    for event in events:
        if isinstance(event, yaml.AliasEvent):
            raise BadInput(f"YAML aliases (*{shown(event.anchor)}) are not accepted{_at(event.start_mark)}")
        if getattr(event, "anchor", None) is not None:
            raise BadInput(f"YAML anchors (&{shown(event.anchor)}) are not accepted{_at(event.start_mark)}")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise BadInput(f"nested more than {MAX_DEPTH} levels deep{_at(event.start_mark)}")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        if isinstance(event, yaml.ScalarEvent | yaml.CollectionStartEvent):
            values += 1
            if values > MAX_VALUES:
                raise BadInput(f"more than {MAX_VALUES:,} values{_at(event.start_mark)}")
            if isinstance(event, yaml.ScalarEvent) and len(event.value) > MAX_TEXT_CHARS:
                raise BadInput(f"a text of more than {MAX_TEXT_CHARS:,} characters{_at(event.start_mark)}")


def _at(mark: Any) -> str:
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""


def check_shape(data: Any) -> None:
    """Refuse a parsed document nested past :data:`MAX_DEPTH`, with a text past :data:`MAX_TEXT_CHARS` or more
    than :data:`MAX_VALUES` values. Iterative: a document nested a million deep is refused, not recursed into."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    values = 0
    while stack:
        value, depth = stack.pop()
        values += 1
        if values > MAX_VALUES:
            raise BadInput(f"more than {MAX_VALUES:,} values")
        if isinstance(value, str) and len(value) > MAX_TEXT_CHARS:
            raise BadInput(f"a text of more than {MAX_TEXT_CHARS:,} characters")
        if isinstance(value, dict | list | tuple):
            if depth >= MAX_DEPTH:
                raise BadInput(f"nested more than {MAX_DEPTH} levels deep")
            items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``value`` for a message: text as it is (one line), anything else as its ``repr``, clipped to ``limit``.

    Never expands a container: a list or table is named by its size, so a hostile value costs nothing to show.
    """
    if isinstance(value, str):
        text = value
    elif isinstance(value, dict | list | tuple | set):
        return f"a {'table' if isinstance(value, dict) else 'list'} of {len(value):,} item(s)"
    elif isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"an integer of {len(str(abs(value))) if value.bit_length() < 10_000 else 'thousands of'} digits"
    else:
        try:
            text = repr(value)
        except Exception:
            text = type(value).__name__
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def number_in(name: str, value: Any, low: float, high: float, unit: str = "") -> float:
    """``value`` if it is a finite number (not a boolean) within ``[low, high]``; else a ``ValueError`` naming
    ``name``, the value and the range, as config limits are refused."""
    units = f" {unit}" if unit else ""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (isinstance(value, float) and not math.isfinite(value))
        or not low <= value <= high
    ):
        raise BadInput(
            f"{name}: must be a number{units} between {_figure(low)} and {_figure(high)}, got {shown(value)}"
        )
    return float(value)


def text_in(name: str, value: Any, *, limit: int = MAX_TEXT_CHARS, one_line: bool = False) -> str:
    """``value`` if it is non-blank text of at most ``limit`` characters (and one line, if asked); else a
    ``ValueError`` naming ``name`` and what it got."""
    if not isinstance(value, str) or not value.strip():
        raise BadInput(f"{name}: must be text, got {shown(value)}")
    if len(value) > limit:
        raise BadInput(f"{name}: must be at most {limit:,} characters, got {len(value):,}")
    if one_line and any(char in value for char in "\r\n\x00"):
        raise BadInput(f"{name}: must be one line, got {shown(value)}")
    return value


def _figure(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() and value >= 1000 else f"{value:g}"


def _size(count: int) -> str:
    return f"{count / 1024**2:.1f} MiB" if count >= 1024**2 else f"{count / 1024:.0f} KiB"


__all__ = [
    "MAX_DEPTH", "MAX_FILE_BYTES", "MAX_TEXT_CHARS", "MAX_VALUES", "check_shape", "load_toml", "load_yaml",
    "number_in", "read_bounded", "shown", "text_in",
]  # fmt: skip
