"""Prompts with unusual text are accepted (and kept exactly) or refused with a one-line message.

Checked through the engine (``compare``) and through ``workbench run`` / ``workbench show``; the TUI's
rendering of the same prompts is covered by the TUI's own tests.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import workbench
from reliability.prompts import PROMPTS, REFUSED, check_prompt
from workbench.tokens import count_text


@pytest.mark.parametrize("name", list(PROMPTS))
def test_unusual_prompt_is_accepted_or_refused_with_a_message(name: str, tmp_path: Path) -> None:
    report = asyncio.run(check_prompt(name, PROMPTS[name], tmp_path))
    assert report.handled, report.problems
    assert report.engine == ("refused" if name in REFUSED else "accepted")


def test_an_empty_prompt_without_a_task_says_what_to_do() -> None:
    with pytest.raises(workbench.BadInput, match="give a prompt or a built-in task"):
        workbench.compare_sync("   ", app="cart", db=False)


def test_a_prompt_that_is_not_text_is_refused_before_anything_runs(db_path: Path) -> None:
    with pytest.raises(workbench.BadInput, match="not valid text"):
        workbench.compare_sync("caf\udce9", app="cart", db=db_path)
    assert not db_path.exists() or workbench.Store(db_path).sessions() == []


def test_a_long_prompt_that_almost_matches_a_task_is_answered_quickly() -> None:
    """The tasks' patterns have several ``.*?``: on 100 KB that keeps almost matching they ran for hours."""
    result = workbench.compare_sync(PROMPTS["100 KB near-miss of a task"], app="cart", db=False)
    assert result.task is None
    # The regression ran for hours; a minute is a bound no busy machine reaches, not a speed target.
    assert all(arm.summary.status == "completed" and arm.summary.wall_s < 60 for arm in result.arms.values())


def test_long_texts_without_spaces_are_counted_quickly_and_text_exactly() -> None:
    from workbench.tokens import _encoding

    assert count_text("x" * 100_000) == 12_500
    prose = PROMPTS["100 KB of prose"]
    assert count_text(prose) == len(_encoding().encode(prose))
