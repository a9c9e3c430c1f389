"""Hostile task files, config files, variables and flags: one line on stderr and exit 2 each, fast and small.

The attacks live in :mod:`reliability.hostile` (``python -m reliability --only hostile`` prints their
figures: time and peak RSS per attack). Here every attack runs in this process, and the ones whose cost
is the point (alias trees, a 100 MB file, nesting and dotted keys past any real use) in a process of their
own, whose peak RSS must stay under 200 MB.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reliability import hostile
from workbench.untrusted import load_yaml, number_in, shown

ATTACKS = {attack.name: attack for attack in hostile.file_attacks()}
OWN_PROCESS = [
    "YAML bomb in id",
    "YAML 60,000 values",
    "TOML arrays nested 400,000 deep",
    "TOML key of 300,000 dotted parts",
    "100 MB task file",
    "config key of 300,000 parts",
    "WORKBENCH_SANDBOX nested 30,000 deep",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hostile.seeded_store(tmp_path_factory.mktemp("store"))


@pytest.mark.parametrize("name", list(ATTACKS))
def test_every_hostile_input_is_one_line_and_exit_2(name: str, tmp_path: Path, store: Path) -> None:
    canary = tmp_path / "CANARY"
    before = hostile.fingerprint(store)
    outcome = hostile.run_in_process(ATTACKS[name], tmp_path / "attack", canary, store)
    assert outcome.problems == [], outcome.stderr
    assert not canary.exists(), "a command of the file ran"
    assert hostile.fingerprint(store) == before


@pytest.mark.parametrize("name", OWN_PROCESS)
def test_costly_attacks_stay_small_in_a_process_of_their_own(name: str, tmp_path: Path) -> None:
    outcome = hostile.run_attack(ATTACKS[name], tmp_path / "attack", tmp_path / "CANARY", tmp_path / "s.db")
    assert outcome.problems == [], outcome.stderr  # exit 2, one line, the reason, peak RSS under 200 MB
    assert outcome.peak_rss_mb is not None and outcome.peak_rss_mb < hostile.GOAL_RSS_MB


def test_the_issues_bomb_is_refused_at_its_first_anchor() -> None:
    with pytest.raises(ValueError, match=r"YAML anchors \(&l0\) are not accepted \(line 6, column 9\)"):
        load_yaml(hostile.yaml_bomb("id", Path("/nowhere")))


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 1e308 * 10, -1, 0, True, "30", None, [30]])
def test_a_timeout_out_of_range_names_the_field_the_value_and_the_range(value: object) -> None:
    with pytest.raises(ValueError) as refused:
        number_in("startup_timeout", value, 0.1, 86_400, "of seconds")
    message = str(refused.value)
    assert message.startswith("startup_timeout: must be a number of seconds between 0.1 and 86,400, got ")
    assert "\n" not in message


def test_a_value_shown_in_a_message_is_clipped_and_never_expanded() -> None:
    nested: list[object] = []
    for _ in range(100_000):
        nested = [nested]
    assert shown(nested) == "a list of 1 item(s)"
    assert shown(10**5000) == "an integer of thousands of digits"
    assert len(shown("x" * 10_000)) == 60 and "\n" not in shown("a\nb\r\nc")


def test_the_hostile_row_counts_what_ran_and_what_changed(tmp_path: Path) -> None:
    """The row's verdict: every outcome held, no command ran, no result changed (any of them fails it)."""
    from rich.console import Console

    from reliability import report

    attack = ATTACKS["100 MB task file"]
    outcome = hostile.run_attack(attack, tmp_path / "attack", tmp_path / "CANARY", tmp_path / "s.db")
    outcome.own_s = 0.01
    row = hostile.HostileReport([outcome], baseline_s=outcome.seconds, commands_run=0, results_changed=0)
    assert row.held and row.over_goal == []
    console = Console(record=True, width=200)
    console.print(report.summary_table({"hostile": row}), report.hostile_table(row))
    text = console.export_text()
    assert "commands run 0 (goal 0), results changed 0 (goal 0)" in text and "100 MB task file" in text
    assert "big.toml: 100.0 MiB is over the 1.0 MiB" in " ".join(text.split())
    for changed in ({"commands_run": 1}, {"results_changed": 1}):
        assert not hostile.HostileReport([outcome], outcome.seconds, **{"commands_run": 0, "results_changed": 0,
                                                                        **changed}).held  # fmt: skip
    outcome.own_s = hostile.GOAL_S + 1
    assert report._over_goal({"hostile": row}) == [
        f"100 MB task file: refused in {hostile.GOAL_S + 1:.2f} s (goal 2 s)"
    ]
