"""Every option of every CLI command, fed bad and odd values: exit 0 or 2, one line on stderr, no traceback.

Options are discovered from the click objects, so a command or option added later is fuzzed without
touching this file. Heavy commands (``run``, ``bench``) always carry one certainly-bad value checked after
the fuzzed ones, so no case starts a real sweep; a few real runs with extreme but valid values follow.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliability.fuzz import (
    HEAVY,
    KNOWN_SESSION,
    Case,
    Param,
    case_strategy,
    discover,
    isolated,
    run_case,
    table_cases,
)
from workbench.cli import cli

PARAMS = discover()
STRATEGIES: dict[Path, st.SearchStrategy[Case]] = {}


@pytest.fixture(scope="module")
def fuzz_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str | None]]]:
    directory = tmp_path_factory.mktemp("fuzz")
    with isolated(directory / "home") as env:
        yield directory, env


def test_every_command_and_option_is_discovered() -> None:
    commands = {param.command for param in PARAMS}
    assert set(cli.commands) <= {command[0] for command in commands if command}
    found = {(" ".join(p.command), p.name) for p in PARAMS}
    for expected in [
        ("run", "--items"),
        ("run", "--seed"),
        ("run", "prompt"),
        ("sessions", "--limit"),
        ("sessions", "--search"),
        ("show", "session_id"),
        ("tasks", "--tier"),
        ("", "--db"),
    ]:
        assert expected in found
    assert all(p.bad for p in PARAMS if p.kind in ("int", "choice", "flag"))
    assert set(cli.commands) >= HEAVY


def test_every_option_with_each_bad_and_odd_value(fuzz_home: tuple[Path, dict[str, str | None]]) -> None:
    directory, env = fuzz_home
    cases = list(table_cases(PARAMS, directory))
    assert len(cases) > 300
    failures = [(case.args, outcome.problems) for case in cases if not (outcome := run_case(case, env)).clean]
    assert not failures, failures[:5]


@settings(
    max_examples=250,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_fuzzed_combinations_exit_cleanly(data: st.DataObject, fuzz_home: tuple[Path, dict[str, str | None]]) -> None:
    directory, env = fuzz_home
    if directory not in STRATEGIES:
        STRATEGIES[directory] = case_strategy(PARAMS, directory)
    case: Case = data.draw(STRATEGIES[directory])
    outcome = run_case(case, env)
    assert outcome.clean, (case.args, outcome.problems, outcome.stderr)


@pytest.mark.parametrize("arg", ["\udcff", "ok\udcfeok", "\ud83d"], ids=["lone-byte", "inside", "lone-surrogate"])
@pytest.mark.parametrize("command", [["sessions", "--search"], ["show"], ["run", "--app", "cart"], ["tasks", "--app"]])
def test_arguments_that_are_not_utf8_are_one_line_errors(command: list[str], arg: str) -> None:
    result = CliRunner().invoke(cli, [*command, arg], prog_name="workbench")
    assert result.exit_code == 2 and "not valid UTF-8" in result.stderr and result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "exit_code"),
    [
        (["--seed", str(2**63 - 1)], 0),
        (["--seed", str(-(2**63))], 0),
        (["--seed", str(2**63)], 2),
        (["--seed", "9" * 40], 2),
        (["--items", "1"], 0),
        (["--arms", " code , "], 0),
        (["--request-limit", "1"], 0),
        (["--items", "5001"], 2),
    ],
)
def test_real_runs_with_extreme_values(db_path: Path, args: list[str], exit_code: int) -> None:
    result = CliRunner().invoke(cli, ["run", "--task", "cart/cap-quantity", "--json", "--db", str(db_path), *args])
    assert result.exit_code == exit_code, result.stderr
    listed = json.loads(CliRunner().invoke(cli, ["sessions", "--json", "--db", str(db_path)]).stdout)
    if exit_code == 0:
        data = json.loads(result.stdout)
        assert [session["session_id"] for session in listed] == [data["session_id"]]
        assert all(arm["status"] in ("completed", "failed") for arm in data["arms"])
    else:
        assert listed == [] and result.stderr.count("\n") == 1


def test_a_new_option_would_be_fuzzed_too() -> None:
    import click

    @click.group()
    def group() -> None: ...

    @group.command()
    @click.option("--brand-new", type=click.IntRange(1, 3))
    @click.option("--flag", is_flag=True)
    def extra(brand_new: int | None, flag: bool) -> None: ...

    found = {param.name: param for param in discover(group)}
    assert isinstance(found["--brand-new"], Param) and {"0", "4", "abc"} <= set(found["--brand-new"].bad)
    assert found["--flag"].bad == ("--flag=yes",)


@pytest.mark.parametrize("out", ["/etc/passwd/inside.md", "/proc/self/no-such-dir/x.md", ""])
def test_an_output_path_that_cannot_be_written_is_a_one_line_error(
    out: str, fuzz_home: tuple[Path, dict[str, str | None]]
) -> None:
    _, env = fuzz_home
    outcome = run_case(Case(("export", KNOWN_SESSION, "--format", "md", "--out", out), must_fail=True), env)
    assert outcome.clean, outcome.problems
