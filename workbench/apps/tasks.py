"""Built-in tasks: a prompt, a reference function for the expected end state, and a scripted play.

A task's *reference* mutates a freshly seeded app into the state a correct agent leaves behind; it is
plain Python over the records and is the only thing grading trusts. A task's *play* is how the offline
``scripted`` model performs the task through the tools, in either arm. The two are written
independently, so the scripted model passing a task is a real check of both.

Plays are tiny programs over named variables, written as Python expressions so that the same text can
be evaluated on the host (tool-calling arm: the model reads each tool result and decides the next
calls) and pasted into the snippet the code-mode arm writes. Expressions only use builtins that both
CPython and the Monty sandbox support (comprehensions, ``len``, ``sum``, ``sorted``, ``min``, ``max``,
``any``, ``all``, ``str`` methods, dict access).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.apps.base import DemoApp
from workbench.apps.names import Tier

MATCH_CHARS = 1_000
"""Longest prompt tried against a task's patterns: a variation of a built-in prompt is short, and patterns
with several ``.*?`` take seconds to hours on a long text that keeps almost matching them."""


@dataclass(frozen=True)
class Scan:
    """Read every page of a ``list_*`` tool into the list variable ``into``."""

    tool: str
    into: str


@dataclass(frozen=True)
class Call:
    """One call whose arguments are expressions; its result is stored in ``into``."""

    tool: str
    args: Mapping[str, str]
    into: str = "_"


@dataclass(frozen=True)
class ForEach:
    """Call ``tool`` once per element ``it`` of the expression ``over`` (concurrently); results go to ``into``."""

    tool: str
    over: str
    args: Mapping[str, str]
    into: str = "_"


@dataclass(frozen=True)
class Let:
    """Compute a variable from earlier ones, without calling anything."""

    name: str
    expr: str


Step = Scan | Call | ForEach | Let


@dataclass(frozen=True)
class Play:
    """How the scripted model performs a task: steps, then a report and an answer built from it."""

    steps: tuple[Step, ...]
    report: Mapping[str, str]
    """Name -> expression: what the code arm's snippet returns and what the answer is formatted from."""
    answer: str
    """``str.format`` template over the task's parameters and the report's names."""


@dataclass(frozen=True)
class Task:
    """A built-in task. Its id is ``app/slug``; its prompt may carry parameters (``{threshold}``)."""

    app: str
    slug: str
    tier: Tier
    prompt: str
    items: int
    expected: Callable[[DemoApp, Mapping[str, Any]], None]
    play: Play
    defaults: Mapping[str, Any] = field(default_factory=dict)
    patterns: tuple[str, ...] = ()
    """Regular expressions (case-insensitive, searched) whose named groups are the parameters."""
    seed: int = 0
    sizes: tuple[int, ...] = ()
    """Scaling rules only: the item counts the rule is run at (``items`` is the one used by default)."""

    @property
    def id(self) -> str:
        return f"{self.app}/{self.slug}"

    def prompt_for(self, params: Mapping[str, Any] | None = None) -> str:
        return self.prompt.format(**{**self.defaults, **(params or {})})

    def match(self, prompt: str) -> dict[str, Any] | None:
        """The parameters this prompt asks for, or ``None`` when it is not a variation of this task."""
        text = " ".join(prompt.split())
        if text.lower() == self.prompt_for().lower():
            return dict(self.defaults)
        if len(text) > MATCH_CHARS:
            return None
        for pattern in self.patterns:
            found = re.search(pattern, text, flags=re.IGNORECASE)
            if found is None:
                continue
            params = dict(self.defaults)
            for name, raw in found.groupdict().items():
                if raw is None:
                    continue
                default = self.defaults.get(name)
                params[name] = _convert(raw, default)
            return params
        return None

    def expected_state(self, app: DemoApp, params: Mapping[str, Any] | None = None) -> None:
        """Mutate ``app`` (a fresh seeded instance) into the expected end state."""
        self.expected(app, {**self.defaults, **(params or {})})


def _convert(raw: str, default: Any) -> Any:
    raw = raw.strip()
    if isinstance(default, bool):
        return raw.lower() in {"yes", "true", "on"}
    if isinstance(default, int):
        return int(float(raw.replace(",", "")))
    if isinstance(default, float):
        return float(raw.replace(",", ""))
    return raw
