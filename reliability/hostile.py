"""Hostile files and values, each given to a real ``workbench`` process: what it answers, how long it takes and
how much memory it uses.

The attacks are what a stranger's task file, a shared config file or a poisoned environment can hold:
YAML alias trees (billion laughs) in every field, TOML nested or dotted past any real use, a 100 MB file, a
FIFO, a value of the wrong type in every field, numbers out of range (``inf``, ``nan``, ``1e309``, negative
and zero timeouts), HTTP headers that would split a request. Each must end in one line on stderr and
exit 2. Around them, two things are counted, with a goal of 0: commands run (every task file's commands
would create a canary file) and results changed (a stored session's rows, fingerprinted before and after).

The peak RSS of each process is its own ``VmHWM`` at exit; its wall time includes the interpreter's
start-up, which a missing file (:data:`BASELINE`) measures on its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

GOAL_S = 2.0
"""The time a refusal should take beyond the interpreter's start-up."""
GOAL_RSS_MB = 200.0
"""The memory any refusal may take (a bare `workbench bench` start-up takes about 100 MB)."""
BOUND_S = 120.0
"""When a process still running is taken for hung and killed."""


@dataclass(frozen=True)
class Attack:
    name: str
    kind: str
    """What carries it: task file, config file, environment, flag."""
    build: Callable[[Path, Path], tuple[list[str], dict[str, str]]]
    """(scratch folder, canary) -> (workbench arguments, environment variables set)."""
    expect: str
    """Words the one-line refusal must contain."""


@dataclass
class Outcome:
    attack: Attack
    exit_code: int | None
    seconds: float
    peak_rss_mb: float | None
    stderr: str
    problems: list[str] = field(default_factory=list)
    own_s: float | None = None
    """The refusal's own time: the same attack in a process already started (no interpreter start-up)."""

    @property
    def held(self) -> bool:
        return not self.problems

    @property
    def message(self) -> str:
        return self.stderr.strip().splitlines()[0] if self.stderr.strip() else ""


# -- the files -------------------------------------------------------------------------------------

TASK_FIELDS = ("id", "prompt", "mcp", "mcp_headers", "toolset", "workdir", "setup", "startup_timeout", "call_timeout")
EXPECT_FIELDS = ("sql", "database", "workdir")


def laughs(indent: str, levels: int = 9) -> str:
    """A billion-laughs alias tree as a YAML block value: 9 levels of 9 aliases expand to 9**9 (387 million)."""
    lines = [f'{indent}- &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"{indent}- &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, levels)]
    return "\n".join(lines)


def yaml_bomb(target: str, canary: Path) -> str:
    """A task file whose ``target`` field (``expect.sql``: a field of expect) is an alias tree; every other
    field is valid, and its commands would create ``canary``."""
    fields = {"id": "a", "prompt": "x", "mcp": f"touch {canary}", "setup": f"touch {canary}"}
    entries = [f"{key}: {json.dumps(value)}" for key, value in fields.items() if key != target]
    if target.startswith("expect."):
        entries.append(f"expect:\n      {target.removeprefix('expect.')}:\n{laughs('        ')}")
    else:
        entries.append(f"{target}:\n{laughs('      ')}")
    return "tasks:\n  - " + "\n    ".join(entries) + "\n"


WRONG_VALUES = {
    "a nested list": "[[1, [2]]]",
    "a table": "{ a = 1 }",
    "a boolean": "true",
    "infinity": "inf",
    "a date": "1979-05-27T07:32:00Z",
}
"""TOML values of the wrong type, tried in every field."""


def toml_task(canary: Path, **fields: str) -> str:
    """One task in TOML; ``fields`` are raw TOML values overriding the valid ones."""
    task = {
        "id": '"a"',
        "prompt": '"x"',
        "mcp": json.dumps([f"touch {canary}"]),
        "setup": json.dumps(f"touch {canary}"),
    }
    expect = {key.removeprefix("expect."): value for key, value in fields.items() if key.startswith("expect.")}
    task |= {key: value for key, value in fields.items() if not key.startswith("expect.")}
    text = "[[tasks]]\n" + "".join(f"{key} = {value}\n" for key, value in task.items())
    if expect:
        text += "[tasks.expect]\n" + "".join(f"{key} = {value}\n" for key, value in expect.items())
    return text


def _file(name: str, text: str | bytes) -> Callable[[Path, Path], tuple[list[str], dict[str, str]]]:
    def build(folder: Path, canary: Path) -> tuple[list[str], dict[str, str]]:
        path = folder / name
        content = text if isinstance(text, bytes) else text.replace("{canary}", str(canary))
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return ["bench", "--tasks", str(path)], {}

    return build


def _generated(
    name: str, make: Callable[[Path, Path], None]
) -> Callable[[Path, Path], tuple[list[str], dict[str, str]]]:
    def build(folder: Path, canary: Path) -> tuple[list[str], dict[str, str]]:
        make(folder / name, canary)
        return ["bench", "--tasks", str(folder / name)], {}

    return build


def _bomb(target: str) -> Callable[[Path, Path], tuple[list[str], dict[str, str]]]:
    return _generated("bomb.yaml", lambda path, canary: path.write_text(yaml_bomb(target, canary)))


def _sparse(path: Path, canary: Path) -> None:
    path.write_text(toml_task(canary))
    os.truncate(path, 100 * 1024 * 1024)  # 100 MB, most of it a hole: the refusal must not read it


def _fifo(path: Path, canary: Path) -> None:
    os.mkfifo(path)  # opening it for reading would block for ever: no writer ever comes


def _config(text: str) -> Callable[[Path, Path], tuple[list[str], dict[str, str]]]:
    def build(folder: Path, canary: Path) -> tuple[list[str], dict[str, str]]:
        path = folder / "config.toml"
        path.write_text(text)
        return ["config"], {"WORKBENCH_CONFIG": str(path)}

    return build


def _environment(name: str, value: str) -> Callable[[Path, Path], tuple[list[str], dict[str, str]]]:
    return lambda folder, canary: (["config"], {name: value})


def _flags(*args: str) -> Callable[[Path, Path], tuple[list[str], dict[str, str]]]:
    return lambda folder, canary: (["run", "x", *[arg.replace("{canary}", str(canary)) for arg in args]], {})


def file_attacks() -> list[Attack]:
    """Every hostile file, variable and flag, each with the words its refusal must contain."""
    attacks = [
        Attack(f"YAML bomb in {target}", "task file", _bomb(target), "YAML anchors (&l0) are not accepted")
        for target in (*TASK_FIELDS, *(f"expect.{key}" for key in EXPECT_FIELDS))
    ]
    attacks += [
        Attack("YAML alias, harmless", "task file", _file("alias.yaml", "x: &a 1\ntasks: [*a]\n"), "YAML anchors"),
        Attack("YAML nested 100,000 deep", "task file", _file("deep.yaml", "tasks: " + "[" * 100_000), "nest"),
        Attack("YAML 60,000 values", "task file", _file("wide.yaml", "tasks: [" + "1, " * 60_000 + "]"), "values"),
        Attack(
            "TOML arrays nested 400,000 deep",
            "task file",
            _file("deep.toml", "a = " + "[" * 400_000 + "]" * 400_000),
            "nested more than 32 levels",
        ),
        Attack(
            "TOML tables nested 100,000 deep",
            "task file",
            _file("tables.toml", "a = " + "{b = " * 100_000 + "1" + "}" * 100_000),
            "values",
        ),
        Attack(
            "TOML key of 300,000 dotted parts",
            "task file",
            _file("dotted.toml", "a" + ".a" * 300_000 + " = 1"),
            "a key of more than 16 dotted parts",
        ),
        Attack("TOML 500,000 values", "task file", _file("ints.toml", "a = [" + "1," * 500_000 + "]"), "values"),
        Attack("100 MB task file", "task file", _generated("big.toml", _sparse), "over the 1.0 MiB"),
        Attack("a FIFO as the task file", "task file", _generated("fifo.toml", _fifo), "not a regular file"),
        Attack("bytes that are not UTF-8", "task file", _file("latin.toml", b"[[tasks]]\nid = '\xe9'\n"), "not UTF-8"),
        Attack(
            "1e309 startup_timeout",
            "task file",
            _file("inf.toml", toml_task(Path("{canary}"), startup_timeout="1e309")),
            "startup_timeout: must be a number of seconds between 0.1 and 86,400, got inf",
        ),
        Attack(
            "nan call_timeout",
            "task file",
            _file("nan.toml", toml_task(Path("{canary}"), call_timeout="nan")),
            "call_timeout: must be a number of seconds between 0.1 and 86,400, got nan",
        ),
        Attack(
            "negative startup_timeout",
            "task file",
            _file("neg.toml", toml_task(Path("{canary}"), startup_timeout="-1")),
            "got -1",
        ),
        Attack(
            "zero call_timeout", "task file", _file("zero.toml", toml_task(Path("{canary}"), call_timeout="0")), "got 0"
        ),
        Attack(
            "header with CR LF",
            "task file",
            _file(
                "crlf.toml",
                toml_task(Path("{canary}"), mcp='["http://127.0.0.1:9/mcp"]', mcp_headers='["X-A: b\\r\\nX-Evil: 1"]'),
            ),
            "control character",
        ),
        Attack("config nested 400,000 deep", "config file", _config("a = " + "[" * 400_000 + "]" * 400_000), "nested"),
        Attack("config key of 300,000 parts", "config file", _config("a" + ".a" * 300_000 + " = 1"), "dotted parts"),
        Attack("config timeout_s = 1e309", "config file", _config("timeout_s = 1e309\n"), "timeout_s"),
        Attack("config timeout_s = 1e300", "config file", _config("timeout_s = 1e300\n"), "at most 86,400, got 1e+300"),
        Attack("config retry_backoff_s = -1", "config file", _config("retry_backoff_s = -1\n"), "retry_backoff_s"),
        Attack(
            "WORKBENCH_SANDBOX nested 30,000 deep",
            "environment",
            _environment("WORKBENCH_SANDBOX", "[" * 30_000 + "]" * 30_000),
            "nested more than 32",
        ),
        Attack(
            "WORKBENCH_SANDBOX of 100,000 characters",
            "environment",
            _environment("WORKBENCH_SANDBOX", '{"x": "' + "a" * 100_000 + '"}'),
            "characters long",
        ),
        Attack(
            "WORKBENCH_SANDBOX with inf",
            "environment",
            _environment("WORKBENCH_SANDBOX", '{"max_duration_secs": Infinity}'),
            "got inf",
        ),
        Attack(
            "--mcp-header with CR LF",
            "flag",
            _flags("--mcp", "http://127.0.0.1:9/mcp", "--mcp-header", "X-A: b\r\nX: 1"),
            "control character",
        ),
        Attack(
            "--mcp-header name with a space",
            "flag",
            _flags("--mcp", "http://127.0.0.1:9/mcp", "--mcp-header", "X A(: b"),
            'expected "Name: value"',
        ),
    ]
    for field_name in (*TASK_FIELDS, *(f"expect.{key}" for key in EXPECT_FIELDS)):
        for label, value in WRONG_VALUES.items():
            text = toml_task(Path("{canary}"), **{field_name: value})
            attacks.append(
                Attack(f"{label} as {field_name}", "task file", _file("wrong.toml", text), field_name.split(".")[-1])
            )
    return attacks


IN_PROCESS = {f"{label} as {name}" for name in (*TASK_FIELDS, *(f"expect.{key}" for key in EXPECT_FIELDS))
              for label in WRONG_VALUES}  # fmt: skip
"""The wrong-type cases, run in this process (60 of them: a process each would take minutes of start-ups)."""

BASELINE = Attack(
    "a task file that does not exist",
    "task file",
    lambda f, c: (["bench", "--tasks", str(f / "none.toml")], {}),
    "No such",
)


# -- running them ----------------------------------------------------------------------------------


PEAK_FILE_ENV = "RELIABILITY_PEAK_FILE"
_LAUNCH = f"""
import atexit, os, runpy, sys
def peak():
    with open("/proc/self/status") as status, open(os.environ["{PEAK_FILE_ENV}"], "w") as out:
        out.write(next((line.split()[1] for line in status if line.startswith("VmHWM:")), ""))
atexit.register(peak)
sys.argv[0] = "workbench"
runpy.run_module("workbench", run_name="__main__", alter_sys=True)
"""
"""``python -m workbench`` that writes its peak RSS (kB) at exit. ``os.wait4``'s figure would not do: Linux
carries a process's peak across exec, so a child forked from a big test process reports the parent's size;
``VmHWM`` belongs to the memory map exec made."""


def workbench_command() -> list[str]:
    return [sys.executable, "-c", _LAUNCH]


def run_attack(attack: Attack, folder: Path, canary: Path, db: Path) -> Outcome:
    """Run one attack in its own workbench process; its exit, time, peak RSS and stderr, and what did not hold."""
    folder.mkdir(parents=True, exist_ok=True)
    args, environment = attack.build(folder, canary)
    if args[:1] != ["config"]:
        args += ["--db", str(db)]
    env = {**os.environ, "WORKBENCH_CONFIG": str(folder / "no-config.toml"), **environment}
    env.pop("WORKBENCH_DEBUG", None)
    peak_file = folder / "peak-rss-kb"
    env[PEAK_FILE_ENV] = str(peak_file)
    started = time.perf_counter()
    process = subprocess.Popen(
        [*workbench_command(), *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env=env, cwd=folder,
    )  # fmt: skip
    stderr, exit_code = _reap(process)
    seconds = time.perf_counter() - started
    try:
        rss: float | None = int(peak_file.read_text()) / 1024
    except (OSError, ValueError):
        rss = None
    outcome = Outcome(attack, exit_code, seconds, rss, stderr)
    outcome.problems = _problems(outcome)
    return outcome


def run_in_process(attack: Attack, folder: Path, canary: Path, db: Path) -> Outcome:
    """The same in this process (``workbench.cli.main``): for the many small cases, where a process each would
    mostly measure the interpreter's start-up. No RSS figure."""
    import contextlib
    import io

    from workbench.cli import main

    folder.mkdir(parents=True, exist_ok=True)
    args, environment = attack.build(folder, canary)
    if args[:1] != ["config"]:
        args += ["--db", str(db)]
    saved = {name: os.environ.get(name) for name in [*environment, "WORKBENCH_CONFIG"]}
    os.environ.update({"WORKBENCH_CONFIG": str(folder / "no-config.toml"), **environment})
    stderr = io.StringIO()
    started = time.perf_counter()
    exit_code: int | None = 0
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            main(args)
    except SystemExit as stop:
        exit_code = stop.code if isinstance(stop.code, int) else 1
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    outcome = Outcome(attack, exit_code, time.perf_counter() - started, None, stderr.getvalue())
    outcome.problems = _problems(outcome)
    return outcome


def _reap(process: subprocess.Popen[bytes]) -> tuple[str, int | None]:
    """stderr and exit code of ``process``, killed after :data:`BOUND_S` (then the exit code says so)."""
    try:
        _, stderr = process.communicate(timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
    return stderr.decode("utf-8", "replace"), process.returncode


def _problems(outcome: Outcome) -> list[str]:
    problems = []
    stderr = outcome.stderr
    if outcome.exit_code != 2:
        problems.append(f"exit {outcome.exit_code}, not 2")
    if stderr.count("\n") != 1 or not stderr.startswith("workbench: error: "):
        problems.append(f"not one line: {stderr[:200]!r}")
    if "Traceback" in stderr or "internal error" in stderr:
        problems.append("a traceback or an internal error")
    if outcome.attack.expect not in stderr:
        problems.append(f"the message does not say {outcome.attack.expect!r}")
    if outcome.peak_rss_mb is not None and outcome.peak_rss_mb > GOAL_RSS_MB:
        problems.append(f"peak RSS {outcome.peak_rss_mb:.0f} MB, over {GOAL_RSS_MB:.0f} MB")
    return problems


def fingerprint(db: Path) -> str:
    """A hash of every row of every table of a SQLite store (the stored sessions, arms and events)."""
    digest = hashlib.sha256()
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [
            row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        ]
        for table in tables:
            for row in connection.execute(f'SELECT * FROM "{table}" ORDER BY 1'):  # names from the schema
                digest.update(repr(row).encode())
    finally:
        connection.close()
    return digest.hexdigest()


@dataclass
class HostileReport:
    """The ``hostile`` row: everything tried, and the two counts whose goal is 0."""

    outcomes: list[Outcome]
    baseline_s: float
    """A ``workbench bench`` that refuses a missing file: the start-up every process's time includes."""
    commands_run: int
    results_changed: int
    extra: list[Outcome] = field(default_factory=list)
    """Attacks of other kinds (stop signals, tool names, serve requests), with the same fields."""

    @property
    def everything(self) -> list[Outcome]:
        return [*self.outcomes, *self.extra]

    @property
    def held(self) -> bool:
        return all(o.held for o in self.everything) and not self.commands_run and not self.results_changed

    @property
    def over_goal(self) -> list[str]:
        """Refusals whose own time (:attr:`Outcome.own_s`) is over :data:`GOAL_S`."""
        return [
            f"{o.attack.name}: refused in {o.own_s:.2f} s (goal {GOAL_S:g} s)"
            for o in self.outcomes
            if o.own_s is not None and o.own_s > GOAL_S
        ]


def seeded_store(folder: Path) -> Path:
    """A SQLite store holding one finished comparison (scripted, both arms), whose rows no attack may change."""
    import asyncio

    import workbench

    db = folder / "sessions.db"
    asyncio.run(workbench.compare(task="cart/remove-expensive", items=20, db=str(db)))
    return db


def run_file_attacks(folder: Path, on_outcome: Callable[[Outcome], None] = lambda _: None) -> HostileReport:
    """Every file, variable and flag attack (and ``workbench import``'s fallback files) against a seeded store."""
    from reliability.hostile_imports import import_attacks

    folder.mkdir(parents=True, exist_ok=True)
    canary = folder / "CANARY"
    db = seeded_store(folder)
    before = fingerprint(db)
    baseline = run_attack(BASELINE, folder / "baseline", canary, db)
    outcomes = []
    for number, attack in enumerate([*file_attacks(), *import_attacks(db)]):
        inside = run_in_process(attack, folder / f"attack-{number}-in", canary, db)
        outcome = inside if attack.name in IN_PROCESS else run_attack(attack, folder / f"attack-{number}", canary, db)
        outcome.own_s = inside.seconds
        outcome.problems += [problem for problem in inside.problems if problem not in outcome.problems]
        outcomes.append(outcome)
        on_outcome(outcome)
    return HostileReport(outcomes, baseline.seconds, int(canary.exists()), int(fingerprint(db) != before))


def run_all(folder: Path, on_outcome: Callable[[Outcome], None] = lambda _: None) -> HostileReport:
    """The whole row: the file attacks, stop signals while MCP servers start, a tool name providers refuse
    from a real server, and ``workbench serve``'s requests (commands run: any of them creating the canary)."""
    import signal

    from reliability.serve_attacks import serve_attacks

    report = run_file_attacks(folder / "files", on_outcome)
    canary = folder / "files" / "CANARY"
    extra = [
        stop_during_startup(folder / f"stop-{number}", signum, command)
        for number, (command, signum) in enumerate(
            [("bench", signal.SIGTERM), ("bench", signal.SIGINT), ("run", signal.SIGTERM)]
        )
    ]
    extra.append(odd_tool_names(folder / "names"))
    extra += serve_attacks(folder / "serve", canary)
    for outcome in extra:
        on_outcome(outcome)
    report.extra = extra
    report.commands_run = int(canary.exists())
    return report


def odd_tool_names(folder: Path) -> Outcome:
    """A real MCP server offering ``get weather.v2`` and ``create_relations(from=...)``: both arms must call both
    (offered as ``get_weather_v2`` and ``from_``) and the server receive its own names."""
    import asyncio

    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    import workbench
    from workbench.events import EndState

    calls = [
        ("get_weather_v2", {"city": "Oslo"}),
        ("create_relations", {"from_": "a", "relations": [{"from_": "a", "to": "b"}]}),
    ]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done = sum(isinstance(part, ToolReturnPart) for message in messages for part in message.parts)
        if any(tool.name == "run_code" for tool in info.function_tools):
            code = "\n".join(
                f"await {name}({', '.join(f'{k}={v!r}' for k, v in args.items())})" for name, args in calls
            )
            return ModelResponse(parts=[TextPart("done")] if done else [ToolCallPart("run_code", {"code": code})])
        return ModelResponse(parts=[ToolCallPart(*calls[done])] if done < len(calls) else [TextPart("done")])

    folder.mkdir(parents=True, exist_ok=True)
    server = f"{sys.executable} {NOTES_SERVER} --odd-names --db {{workdir}}/notes.db"
    (folder / "template").mkdir(exist_ok=True)
    attack = Attack("tools named get weather.v2 and a from argument", "tool names", lambda f, c: ([], {}), "mapped")
    started = time.perf_counter()
    problems: list[str] = []
    try:
        result = asyncio.run(workbench.compare("x", mcp=[server], workdir=folder / "template",
                                               model=FunctionModel(respond), db=False))  # fmt: skip
    except Exception as error:
        return Outcome(attack, None, time.perf_counter() - started, None, str(error), [f"refused: {error}"])
    expected = {"weather in Oslo", "relations a a>b"}
    for arm, run in result.arms.items():
        end = next((event.payload for event in run.events if isinstance(event.payload, EndState)), None)
        titles = {row["record"]["title"] for row in (end.created if end else [])}
        if titles != expected:
            problems.append(f"the {arm} arm's calls reached the server as {sorted(titles)}")
    shown_text = "offered as get_weather_v2 and from_; the server received get weather.v2 and from"
    return Outcome(attack, 0, time.perf_counter() - started, None, shown_text, problems)


# -- a stop signal while MCP servers start -----------------------------------------------------------

NOTES_SERVER = Path(__file__).resolve().parent.parent / "tests" / "mcp_servers" / "notes_server.py"
SLOW_START_S = 600
"""How long the test server sleeps before it answers: the signal must not wait for it."""
STARTUP_TIMEOUT_S = 300
"""The start-up deadline the run is given: far past the wait the signal may take."""


def stop_during_startup(folder: Path, signum: int, command: str = "bench") -> Outcome:
    """Send ``signum`` to ``workbench bench`` (or ``run``) while both arms' MCP servers are still starting.

    Held when the process exits with 128 + the signal's number, and no server process is left. Its
    ``seconds`` are the time from the signal to the exit.
    """
    import signal as signals

    folder.mkdir(parents=True, exist_ok=True)
    pids = folder / "pids"
    pids.mkdir(exist_ok=True)
    server = f"{sys.executable} {NOTES_SERVER} --db {folder / 'notes.db'} --slow-start {SLOW_START_S}"
    if command == "bench":
        tasks = folder / "slow.toml"
        task = f'id = "slow"\nprompt = "x"\nmcp = [{json.dumps(server)}]\nstartup_timeout = {STARTUP_TIMEOUT_S}\n'
        tasks.write_text(f"[[tasks]]\n{task}")
        args = ["bench", "--tasks", str(tasks)]
    else:
        args = ["run", "x", "--mcp", server, "--startup-timeout", str(STARTUP_TIMEOUT_S)]
    name = f"{signals.Signals(signum).name} while MCP servers start ({command})"
    attack = Attack(name, "signal", lambda f, c: (args, {}), f"exit {128 + signum}")
    env = {**os.environ, "WORKBENCH_CONFIG": str(folder / "no-config.toml"), "NOTES_PIDS": str(pids)}
    process = subprocess.Popen(
        [*workbench_command(), *args, "--db", str(folder / "s.db")], stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**env, PEAK_FILE_ENV: str(folder / "peak")},
        start_new_session=True,
    )  # fmt: skip
    problems = []
    if not _wait(lambda: len(list(pids.iterdir())) >= 2 or process.poll() is not None, 120):
        problems.append("the servers never started")
    process.send_signal(signum)
    sent = time.perf_counter()
    stderr, exit_code = _reap(process)
    seconds = time.perf_counter() - sent
    left = [int(path.name) for path in pids.iterdir() if _alive(int(path.name))]
    if left and not _wait(lambda: not any(_alive(pid) for pid in left), 10):
        problems.append(f"server process(es) {left} outlived the workbench")
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signals.SIGKILL)
    if exit_code != 128 + signum:
        problems.append(f"exit {exit_code}, not {128 + signum}: {stderr.strip()[-300:]}")
    return Outcome(attack, exit_code, seconds, None, stderr, problems)


def _wait(condition: Callable[[], bool], bound_s: float) -> bool:
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):  # a zombie (exited, not yet reaped by its parent) is gone
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1] != "Z"
    return True
