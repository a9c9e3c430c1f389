"""CLI fuzzing: every option of every command, discovered from the click objects, fed bad and odd values.

Two sources of cases: a table that gives every option each of its certainly-bad values (so no option is
ever skipped, including options added later), and hypothesis (derandomized) combining several options,
odd text and stray arguments. Every case runs through click's ``CliRunner`` against the real ``cli``
with isolated user directories and an empty database, and must end the way the CLI contract says: exit 0
or 2 (never 1, never an uncaught exception), exactly one line on stderr for exit 2, no traceback
anywhere; a case holding a certainly-bad value must exit 2.

Commands that would start real work when every value happens to be valid (``run``, ``bench``) always
carry one certainly-bad value, so a fuzz case never launches a sweep; the prompt tests cover valid runs.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import chdir, contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

KNOWN_SESSION = "f0cacc1a00"
"""A session stored in the fuzz home's default database, so ``show``, ``export`` and ``replay`` get past the id."""
KNOWN_IDS = (KNOWN_SESSION, KNOWN_SESSION[:4])
HEAVY = frozenset({"run", "bench", "worker"})
"""Commands that do real work when their input is valid: every fuzz case gives them one bad value."""
LIGHT_FLAGS = {"bench": "--list"}
"""A flag that turns a heavy command into a cheap one (``bench --list`` lists sweeps and ignores the rest)."""
KEY_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GROQ_API_KEY",
    "OPENAI_BASE_URL",
    "OLLAMA_BASE_URL",
    "VLLM_BASE_URL",
)
ODD_TEXT = (
    "",
    " ",
    "-",
    "--",
    "--json",
    "-h=1",
    "%",
    "_",
    "%_%",
    "'",
    '"',
    "\\",
    "../../etc/passwd",
    "a" * 5000,
    "\x00",
    "nul\x00inside",
    "\x1b[31mred\x1b[0m",
    "\r\n",
    "\t",
    "\u202eevil\u202c",
    "שלום עולם",
    "مرحبا",
    "🦀🔥" * 10,
    "\ud83d",
    "０１２",
    "٣",
    "NaN",
    "inf",
    "-0",
    "None",
    "null",
    "true",
    "{}",
    "[]",
    "a,b,,c",
    "cart/",
    "/cart",
    "cart//x",
    "scripted:",
    ":",
    "openai:",
    "x" * 300 + ":" + "y" * 300,
    "sqlite://",
    "file:x?mode=ro",
)


@dataclass(frozen=True)
class Param:
    """One option or argument of one command, and what makes a value certainly bad for it."""

    command: tuple[str, ...]
    """Path of the command: () for the group itself, ("run",) for ``workbench run``."""
    name: str
    """The option as typed (``--items``) or the argument's name."""
    kind: str
    """flag, int, choice, text, path, argument."""
    bad: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    multiple: bool = False


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    must_fail: bool
    """The case holds a certainly-bad value, so it must exit 2."""
    origin: str = ""


@dataclass
class Outcome:
    case: Case
    exit_code: int
    stderr: str
    problems: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.problems


# -- discovering the options -----------------------------------------------------------------------


def discover(group: click.Group | None = None) -> list[Param]:
    """Every option and argument of the group and of each of its commands (nested groups included)."""
    if group is None:
        from workbench.cli import cli

        group = cli
    found: list[Param] = []

    def walk(command: click.Command, path: tuple[str, ...]) -> None:
        for param in command.params:
            found.append(_describe(param, path))
        if isinstance(command, click.Group):
            for name, sub in sorted(command.commands.items()):
                walk(sub, (*path, name))

    walk(group, ())
    return [param for param in found if param.name not in ("--help", "-h")]


def _describe(param: click.Parameter, path: tuple[str, ...]) -> Param:
    if isinstance(param, click.Argument):
        return Param(path, param.name or "arg", "argument")
    assert isinstance(param, click.Option)
    name = max(param.opts, key=len)
    kind_type = param.type
    multiple = bool(param.multiple)
    if param.is_flag:
        return Param(path, name, "flag", bad=(f"{name}=yes",), multiple=multiple)
    if isinstance(kind_type, click.Choice):
        choices = tuple(str(choice) for choice in kind_type.choices)
        return Param(
            path, name, "choice", bad=("nope", "", choices[0].upper() + "x"), choices=choices, multiple=multiple
        )
    if isinstance(kind_type, click.types.IntParamType | click.types.FloatParamType):
        bad = ["abc", "", "1.5x", "0x10", "1e3", "--", "١٢x"]
        if isinstance(kind_type, click.IntRange | click.FloatRange):
            if kind_type.min is not None:
                bad.append(str(kind_type.min - 1))
            if kind_type.max is not None:
                bad.append(str(kind_type.max + 1))
        return Param(path, name, "int", bad=tuple(bad), multiple=multiple)
    if isinstance(kind_type, click.Path | click.File) or name in ("--db", "--out"):
        return Param(path, name, "path", multiple=multiple)
    return Param(path, name, "text", multiple=multiple)


# -- values ----------------------------------------------------------------------------------------


def path_values(directory: Path) -> tuple[str, ...]:
    """Database and output paths that are wrong in every way a user gets them wrong.

    Every existing file offered is inside ``directory``: an output option (``--out``) writes where it is told,
    so nothing outside the scratch directory is ever offered except paths that cannot be created at all.
    """
    junk = directory / "not-a-database.db"
    junk.write_bytes(b"this is not sqlite\n" * 10)
    foreign = directory / "foreign.db"
    if not foreign.exists():
        with sqlite3.connect(foreign) as connection:
            connection.execute("CREATE TABLE notes (body TEXT)")
    return (
        str(directory),
        str(junk),
        str(foreign),
        str(directory / "missing" / "nested" / "x.db"),
        str(junk / "inside.db"),
        "/etc/passwd/inside.db",
        "/proc/self/no-such-dir/x.db",
        "/dev/null",
        "/dev/full",
        "",
        "foo://bar",
        "sqlite://",
        "://",
        "postgresql://nobody@127.0.0.1:1/none",
        str(directory / "new.db"),
        "~nobody-here/x.db",
    )


def table_cases(params: list[Param], directory: Path) -> Iterator[Case]:
    """Each option with each of its certainly-bad values, alone; each option and argument with odd values."""
    paths = path_values(directory)
    odd_values = {
        "path": paths,
        "text": ODD_TEXT[::3],
        "argument": (*ODD_TEXT[::4], *KNOWN_IDS),
        "choice": (),
        "int": ("-1", "0", "9" * 40),
        "flag": (),
    }
    for param in params:
        # The group's own options go before a harmless subcommand, so the TUI never opens.
        after = () if param.command else ("locate", "--json")
        for value in param.bad:
            yield Case((*param.command, *_option(param, value), *after), True, f"{param.name} bad")
        heavy = bool(param.command) and param.command[0] in HEAVY
        guard = heavy_guard(param.command, {param.name}, directory) if heavy else ()
        for value in odd_values[param.kind]:
            yield Case((*param.command, *_option(param, value), *guard, *after), bool(heavy), f"{param.name} odd")


def heavy_guard(command: tuple[str, ...], fuzzed: set[str], directory: Path) -> tuple[str, ...]:
    """A certainly-bad value that the command checks after the fuzzed options, so they are still checked.

    ``run`` validates everything, then opens the database: a foreign database stops it (``worker`` too,
    before it starts DBOS; with every option fuzzed, stray arguments, which click refuses after checking the
    options). ``bench`` checks the model last, when it builds the sweep. A guard option that is itself being
    fuzzed is not used.
    """
    foreign = directory / "guard" / "foreign.db"  # never offered as a fuzz value, so never overwritten
    if not foreign.exists():
        foreign.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(foreign) as connection:
            connection.execute("CREATE TABLE notes (body TEXT)")
    choices = {
        "run": [("--db", str(foreign)), ("--model", "no-such-model"), ("--items", "0")],
        "bench": [("--model", "no-such-model"), ("--items", "0"), ("--repeat", "0"), ("--concurrency", "0")],
        "worker": [("--db", str(foreign)), ("--concurrency", "0"), ("stray", "arguments")],
    }.get(command[0], [])
    for option, value in choices:
        if option not in fuzzed:
            return (option, value)
    raise LookupError(f"no guard left for {' '.join(command)} with {sorted(fuzzed)} fuzzed")


def _option(param: Param, value: str) -> tuple[str, ...]:
    if param.kind == "argument":
        return (value,)
    if param.kind == "flag":
        return (value,) if value.startswith("--") else (param.name,)
    return (param.name, value)


def case_strategy(params: list[Param], directory: Path) -> Any:
    """A hypothesis strategy of CLI cases: a command, up to four of its options with odd or bad values, and
    sometimes a stray argument. A heavy command always gets a guard (see :func:`heavy_guard`)."""
    from hypothesis import strategies as st

    paths = path_values(directory)
    commands = sorted({param.command for param in params if param.command})
    by_command = {command: [p for p in params if p.command == command] for command in commands}

    def value_for(param: Param) -> Any:
        bad = st.sampled_from(param.bad).map(lambda v: (v, True)) if param.bad else st.nothing()
        if param.kind == "path":
            return st.sampled_from(paths).map(lambda v: (v, False))
        if param.kind == "choice":
            return st.one_of(bad, st.sampled_from(param.choices).map(lambda v: (v, False)))
        if param.kind == "int":
            return st.one_of(bad, st.integers(-(10**30), 10**30).map(lambda v: (str(v), False)))
        if param.kind == "flag":
            return st.sampled_from([(param.name, False)] * 3 + [(param.bad[0], True)])
        if param.kind == "argument":
            text = st.one_of(st.sampled_from(ODD_TEXT), st.text(max_size=40), st.sampled_from(KNOWN_IDS))
            return text.map(lambda v: (v, False))
        return st.one_of(st.sampled_from(ODD_TEXT), st.text(max_size=40)).map(lambda v: (v, False))

    @st.composite
    def case(draw: Any) -> Case:
        command = draw(st.sampled_from(commands))
        options = draw(st.lists(st.sampled_from(by_command[command]), max_size=4, unique_by=lambda p: p.name))
        args: list[str] = list(command)
        must_fail = False
        for param in options:
            value, bad = draw(value_for(param))
            args += _option(param, value)
            must_fail |= bad
        if draw(st.integers(0, 7)) == 0:
            args.append(draw(st.sampled_from(["--no-such-option", "stray", "-x", "--json=1"])))
        if command[0] in HEAVY and not must_fail and LIGHT_FLAGS.get(command[0]) not in args:
            args += heavy_guard(command, {param.name for param in options}, directory)
            must_fail = True
        return Case(tuple(args), must_fail, "hypothesis")

    return case()


def hypothesis_cases(params: list[Param], directory: Path, examples: int) -> list[Case]:
    """``examples`` derandomized cases from :func:`case_strategy`."""
    from hypothesis import HealthCheck, given, settings

    found: list[Case] = []

    @settings(
        max_examples=examples, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
    )
    @given(case_strategy(params, directory))
    def collect(drawn: Case) -> None:
        found.append(drawn)

    collect()
    return found


# -- running ---------------------------------------------------------------------------------------


@contextmanager
def isolated(directory: Path) -> Iterator[dict[str, str | None]]:
    """Environment for the fuzzed CLI: user dirs and the default database inside ``directory``, no keys."""
    directory.mkdir(parents=True, exist_ok=True)
    env: dict[str, str | None] = {
        "WORKBENCH_DB": str(directory / "default.db"),
        "XDG_DATA_HOME": str(directory / "data"),
        "XDG_CONFIG_HOME": str(directory / "config"),
        "WORKBENCH_DEBUG": None,
        "NO_COLOR": "1",
    }
    env |= dict.fromkeys(KEY_VARIABLES)
    env |= {name: None for name in os.environ if name.startswith("WORKBENCH_") and name not in env}
    seed_session(Path(str(env["WORKBENCH_DB"])))
    yield env


def seed_session(db: Path) -> None:
    """Store one small finished session under :data:`KNOWN_SESSION` (once)."""
    import workbench
    from workbench.store import Store

    store = Store(db)
    if store.sessions(search=KNOWN_SESSION):
        return
    result = workbench.compare_sync(task="cart/cap-quantity", items=8, db=False)
    result.header = replace(result.header, session_id=KNOWN_SESSION)  # the header is read-only on the result
    store.save(result)
    store.engine.dispose()


def run_case(case: Case, env: dict[str, str | None]) -> Outcome:
    """Run one case inside the fuzz home (a relative ``--out sqlite://`` lands there, not in the caller's
    directory). Where the CLI would open the TUI (``workbench``, ``replay``) or serve it (``serve``), the app or
    the server is built but not run."""
    from unittest import mock

    import workbench.share.serve as web_serve
    import workbench.tui.app as tui_app
    from workbench.cli import cli

    home = Path(str(env["WORKBENCH_DB"])).parent
    with (
        chdir(home),
        mock.patch.object(tui_app, "make_app", return_value=mock.Mock(stopped_by=None)),
        mock.patch.object(web_serve, "make_server", return_value=mock.Mock()),
    ):
        result = CliRunner(env=env).invoke(cli, list(case.args), prog_name="workbench", catch_exceptions=True)
    stderr = result.stderr
    outcome = Outcome(case, result.exit_code, stderr)
    everything = result.output + stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        outcome.problems.append(f"uncaught {type(result.exception).__name__}: {result.exception}")
    if result.exit_code not in (0, 2):
        outcome.problems.append(f"exit {result.exit_code}: {stderr.strip()[:300]}")
    if case.must_fail and result.exit_code != 2:
        outcome.problems.append(f"a bad value was accepted (exit {result.exit_code})")
    if result.exit_code == 2 and (stderr.count("\n") != 1 or not stderr.endswith("\n") or not stderr.strip()):
        outcome.problems.append(f"stderr is not one line: {stderr[:300]!r}")
    if "Traceback" in everything:
        outcome.problems.append("a traceback was printed")
    return outcome


def fuzz(directory: Path, *, examples: int = 300, on_outcome: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """All table cases plus ``examples`` hypothesis cases; returns every outcome."""
    with isolated(directory / "home") as env:
        params = discover()
        cases = list(table_cases(params, directory))
        with suppress(ImportError):  # hypothesis comes with the test extra; the table alone covers every option
            cases += hypothesis_cases(params, directory, examples)
        outcomes = []
        for case in cases:
            outcome = run_case(case, env)
            outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)
    return outcomes
