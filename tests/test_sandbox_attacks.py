"""Every attack in the corpus, through the code arm beside a normal tool arm: contained, checked not assumed.

The corpus and the checks live in :mod:`reliability` (``python -m reliability`` prints the
same figures). Limits are small (2 s, 64 MiB) so loops, burns and bombs hit them quickly.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from pydantic_ai.messages import PartDeltaEvent, PartStartEvent, ToolCallPart, ToolCallPartDelta

from reliability.attacks import AttackReport, Bait, Baseline, bait, run_attack
from reliability.corpus import ATTACKS, Attack
from workbench.display import clip_middle
from workbench.events import SnippetDelta
from workbench.guards import MAX_ARGUMENT_CHARS, argument_size
from workbench.store import Store
from workbench.translate import ERROR_CHARS, Translator

CATEGORIES = {"files", "env", "network", "imports", "builtins", "resources", "output", "calls", "isolation", "ids"}


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Bait, Store, Baseline]]:
    directory = tmp_path_factory.mktemp("attacks")
    with bait(directory) as planted:
        yield planted, Store(directory / "attacks.db"), asyncio.run(Baseline.measure())


def test_the_corpus_covers_every_kind_of_attack_in_the_issue() -> None:
    assert len(ATTACKS) >= 30
    assert len({attack.name for attack in ATTACKS}) == len(ATTACKS)
    assert {attack.category for attack in ATTACKS} == CATEGORIES
    codes = " ".join(attack.code for attack in ATTACKS)
    for needle in (
        "os",
        "sys",
        "subprocess",
        "socket",
        "ctypes",
        "importlib",
        "eval(",
        "exec(",
        "__import__",
        "__subclasses__",
        "while True",
        "** (10 ** 9)",
        "def f(n)",
        "print(",
        "{env}",
        "{canary}",
        "{port}",
    ):
        assert needle in codes, needle


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda attack: f"{attack.category}-{attack.name}")
def test_attack_is_contained(attack: Attack, arena: tuple[Bait, Store, Baseline]) -> None:
    planted, store, baseline = arena
    report: AttackReport = asyncio.run(run_attack(attack, planted, store, baseline))
    assert report.contained, report.problems
    if attack.expect == "refused":
        assert report.outcome in ("retried", "failed", "failed/retried") and report.shown


def test_a_refused_attack_shows_the_model_the_sandbox_error(arena: tuple[Bait, Store, Baseline]) -> None:
    planted, store, baseline = arena
    attack = next(a for a in ATTACKS if a.name == "pathlib-read-text")
    report = asyncio.run(run_attack(attack, planted, store, baseline, cli=False))
    assert report.shown.startswith("PermissionError: Permission denied")
    shown = json.dumps([e.to_dict() for e in store.events(report.session_id)])
    assert "PermissionError" in shown and planted.secret not in shown


def test_oversized_call_arguments_are_measured_without_walking_all_of_them() -> None:
    assert argument_size({"item_id": "line-0001"}, MAX_ARGUMENT_CHARS) == len("item_id") + len("line-0001")
    assert argument_size({"a": ["x" * 10, 1, 2.5, None]}, MAX_ARGUMENT_CHARS) == 1 + 10 + 3 * 8
    huge = {"ids": list(range(10_000_000))}
    assert MAX_ARGUMENT_CHARS < argument_size(huge, MAX_ARGUMENT_CHARS) < MAX_ARGUMENT_CHARS + 100


def test_a_long_snippet_streamed_in_tiny_chunks_costs_linear_storage() -> None:
    """Each snippet delta carries the code so far; without coalescing, 60 KB in 16-character chunks is 110 MB."""
    code = "x = 1\n" * 10_000
    arguments = json.dumps({"code": code})
    translator = Translator({}, price=lambda usage, name, provider: None)
    deltas: list[SnippetDelta] = []
    deltas += translator(PartStartEvent(index=0, part=ToolCallPart("run_code", arguments[:16], tool_call_id="c")))
    for start in range(16, len(arguments), 16):
        event = PartDeltaEvent(index=0, delta=ToolCallPartDelta(args_delta=arguments[start : start + 16]))
        deltas += translator(event)
    assert 20 < len(deltas) < 200
    assert sum(len(delta.code) for delta in deltas) < 12 * len(code)
    assert all(code.startswith(delta.code) for delta in deltas)


def test_a_huge_error_keeps_its_head_and_the_exception_at_its_end() -> None:
    text = '{"error":"Runtime error:\\n[stdout before error]\\n' + "x" * 1_000_000 + '\\nMemoryError: limit"}'
    kept = clip_middle(text, ERROR_CHARS)
    assert len(kept) < ERROR_CHARS + 100
    assert kept.startswith('{"error":"Runtime error') and kept.endswith('MemoryError: limit"}')
    assert "characters not kept" in kept
