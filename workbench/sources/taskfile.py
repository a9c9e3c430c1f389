"""A person's own tasks: a TOML (or YAML) file of prompts on their own app, for ``workbench bench --tasks FILE``.

```toml
[defaults]                      # optional: shared by every task
mcp = ["python server.py --db {workdir}/notes.db"]
workdir = "fixture"

[[tasks]]
id = "archive-old"
prompt = "Archive every note older than June."   # or a conversation: turns = ["...", "..."]
[tasks.expect]                  # optional; without it the arms are graded against each other
sql = ["SELECT count(*) = 0 FROM notes WHERE archived = 0 AND created < '2026-06-01'"]
```

The same in YAML (a file named ``*.yaml`` / ``*.yml``): a mapping with ``defaults`` and a list ``tasks``
whose items have the same keys.

A task has a ``prompt``, or ``turns``: a conversation's user prompts in order, answered one after the other by
each arm on the same app state with its own message history (graded once, after the last turn). A task takes
the app options of ``run`` (``mcp``, ``mcp_headers``, ``toolset``, ``workdir``, ``setup``,
``startup_timeout``, ``call_timeout``, ``compare``); ``expect`` has ``sql`` (checks that must return true),
``database`` (which database they run on) and/or ``workdir`` (a folder to end up like). Paths are
relative to the file's folder, and the commands run there. Without ``expect`` the arms are compared by
what each changed; ``compare`` tunes how created records correspond (:mod:`workbench.sources.agreement`):
``ignore = ["created_at"]`` leaves columns out, ``match_on = ["title"]`` matches on those alone (a name
alone means that column in every table; ``notes.db:notes.title`` one table's).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.errors import BadInput
from workbench.sources import AppSource, make_source
from workbench.sources.agreement import Rules
from workbench.sources.expect import Expectation
from workbench.sources.workdir import check_template
from workbench.turns import checked_turns
from workbench.untrusted import load_toml, load_yaml, read_bounded, shown, text_in

APP_KEYS = ("mcp", "mcp_headers", "toolset", "workdir", "setup", "startup_timeout", "call_timeout", "compare")
TASK_KEYS = ("id", "prompt", "turns", "expect", *APP_KEYS)
EXPECT_KEYS = ("sql", "database", "workdir")
MAX_TASKS = 5_000
"""Most tasks in one file (each is a comparison: a sweep of 5,000 is days of model time)."""
MAX_SERVERS = 32
"""Most MCP servers one task may start per arm."""
MAX_ID_CHARS = 200
COMPARE_KEYS = ("ignore", "match_on")


@dataclass(frozen=True)
class CustomTask:
    id: str
    """``<file stem>/<id>``, unique in the file."""
    prompt: str
    """The first (or only) user turn."""
    source: AppSource
    turns: tuple[str, ...] = ()
    """A conversation's user turns in order (``prompt`` is the first); empty for a task of one prompt."""


YAML_SUFFIXES = (".yaml", ".yml")


def load_task_file(path: str | Path) -> list[CustomTask]:
    """The file's tasks; raises ``BadInput`` with a one-line message naming the task and key at fault.

    The file is untrusted (:mod:`workbench.untrusted`): bounded before it is parsed, YAML without aliases,
    every value type-checked before it is used or shown.
    """
    path = Path(path).expanduser()
    yaml = path.suffix.lower() in YAML_SUFFIXES
    try:
        text = read_bounded(path)
        data = load_yaml(text) if yaml else load_toml(text)
    except OSError as error:
        raise BadInput(f"--tasks {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise BadInput(f"--tasks {path}: not UTF-8 text") from None
    except ValueError as error:  # tomllib.TOMLDecodeError is one
        kind = "" if yaml or not type(error).__name__.startswith("TOML") else "not valid TOML: "
        raise BadInput(f"--tasks {path}: {kind}{error}") from None
    tables = "defaults: and tasks:" if yaml else "[defaults] and [[tasks]]"
    if not isinstance(data, dict):
        raise BadInput(f"--tasks {path}: expected a mapping with {tables}")
    unknown = set(data) - {"defaults", "tasks"}
    if unknown:
        raise BadInput(f"--tasks {path}: unknown table(s) {_names(unknown)}; use {tables}")
    defaults = data.get("defaults") or {}
    entries = data.get("tasks") or []
    if not isinstance(defaults, dict):
        raise BadInput(f"--tasks {path}: " + ("defaults: must be a mapping" if yaml else "[defaults] must be a table"))
    if not isinstance(entries, list) or not entries:
        raise BadInput(f"--tasks {path}: no tasks (" + ("a list under tasks:" if yaml else "[[tasks]]") + ")")
    if len(entries) > MAX_TASKS:
        raise BadInput(f"--tasks {path}: {len(entries):,} tasks; a file may have at most {MAX_TASKS:,}")
    _check_keys(defaults, APP_KEYS, f"--tasks {path}: [defaults]")
    folder = path.resolve().parent
    tasks: list[CustomTask] = []
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            raise BadInput(f"--tasks {path}: task {number} is not a table")
        task_id = entry.get("id")
        named = isinstance(task_id, str) and task_id.strip() and len(task_id) <= MAX_ID_CHARS
        where = f"--tasks {path}: task {shown(task_id) if named else number}"
        tasks.append(_task(path.stem, {**defaults, **entry}, folder, where))
    duplicated = sorted(task_id for task_id, count in Counter(task.id for task in tasks).items() if count > 1)
    if duplicated:
        raise BadInput(f"--tasks {path}: task ids must be unique: {_names(duplicated)}")
    return tasks


def _task(stem: str, entry: dict[str, Any], folder: Path, where: str) -> CustomTask:
    _check_keys(entry, TASK_KEYS, where)
    task_id, prompt = entry.get("id"), entry.get("prompt")
    if not isinstance(task_id, str) or not task_id.strip():
        raise BadInput(f"{where}: needs an id (text)")
    turns: tuple[str, ...] = ()
    if "turns" in entry:
        if prompt is not None:
            raise BadInput(f"{where}: give a prompt or turns, not both")
        try:
            turns = checked_turns(entry["turns"])
            turns = tuple(text_in(f"turns[{index}]", turn) for index, turn in enumerate(turns))
        except ValueError as error:
            raise BadInput(f"{where}: {error}") from None
        prompt = turns[0]
    if not isinstance(prompt, str) or not prompt.strip():
        raise BadInput(f"{where}: needs a prompt (text) or turns (a list of prompts)")
    try:
        text_in("id", task_id, limit=MAX_ID_CHARS, one_line=True)
        mcp = _texts("mcp", entry.get("mcp", []), MAX_SERVERS)
        headers = _headers(entry.get("mcp_headers", ()))
        toolset = _optional_text("toolset", entry.get("toolset"), one_line=True)
        workdir = _optional_text("workdir", entry.get("workdir"), one_line=True)
        setup = _optional_text("setup", entry.get("setup"))
        expectation = _expectation(f"{stem}/{task_id}", entry.get("expect"), folder)
        source = make_source(
            mcp=mcp,
            mcp_headers=headers,
            toolset=toolset,
            workdir=workdir,
            setup=setup,
            startup_timeout_s=entry.get("startup_timeout"),
            call_timeout_s=entry.get("call_timeout"),
            cwd=folder,
            expect=expectation,
            rules=_rules(entry.get("compare"), where),
        )
    except (ValueError, TypeError) as error:
        raise BadInput(f"{where}: {error}") from None
    if source is None:
        raise BadInput(f'{where}: needs an app: mcp = [...] or toolset = "module:attribute"')
    return CustomTask(f"{stem}/{task_id}", prompt, source, turns)


def _texts(name: str, value: Any, most: int) -> list[str]:
    """A text or a list of texts (at most ``most``), each checked."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise BadInput(f"{name}: must be text or a list of texts, got {shown(items)}")
    if len(items) > most:
        raise BadInput(f"{name}: at most {most} items, got {len(items):,}")
    return [text_in(f"{name}[{index}]", item) for index, item in enumerate(items)]


def _headers(value: Any) -> list[str] | dict[str, str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str) or not isinstance(item, str):
                raise BadInput(f"mcp_headers: names and values must be text, got {shown(key)}: {shown(item)}")
        return value
    if isinstance(value, tuple):
        value = list(value)
    return _texts("mcp_headers", value, 64) if value else []


def _optional_text(name: str, value: Any, *, one_line: bool = False) -> str | None:
    return None if value is None else text_in(name, value, one_line=one_line)


def _expectation(name: str, expect: Any, folder: Path) -> Expectation | None:
    if expect is None:
        return None
    if not isinstance(expect, dict):
        raise BadInput("expect must be a table")
    _check_keys(expect, EXPECT_KEYS, "expect")
    sql = expect.get("sql", [])
    sql = [sql] if isinstance(sql, str) else sql
    if not isinstance(sql, list) or not all(isinstance(item, str) and item.strip() for item in sql):
        raise BadInput("expect.sql must be SQL text or a list of it")
    if len(sql) > 1_000:
        raise BadInput(f"expect.sql: at most 1,000 checks, got {len(sql):,}")
    expected_folder = None
    if "workdir" in expect:
        workdir = text_in("expect.workdir", expect["workdir"], one_line=True)
        expected_folder = check_template(folder / Path(workdir).expanduser())
    database = _optional_text("expect.database", expect.get("database"), one_line=True)
    if not sql and expected_folder is None:
        raise BadInput('expect needs sql = [...] or workdir = "..."')
    return Expectation(name, tuple(sql), database, expected_folder)


def _rules(compare: Any, where: str) -> Rules | None:
    """``compare = {ignore = [...], match_on = [...]}``: columns left out of matching created records, or the
    only ones matched on (``column`` in every table, ``database:table.column`` in one)."""
    if compare is None:
        return None
    if not isinstance(compare, dict):
        raise BadInput(f"{where}: compare must be a table")
    _check_keys(compare, COMPARE_KEYS, f"{where}: compare")
    lists = {}
    for key in COMPARE_KEYS:
        value = compare.get(key, [])
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
            raise BadInput(f"{where}: compare.{key} must be a column name or a list of them")
        lists[key] = tuple(item.strip() for item in value)
    return Rules(lists["ignore"], lists["match_on"])


def _check_keys(table: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    unknown = set(table) - set(allowed)
    if unknown:
        prefix = f"{where}: " if where else ""
        raise BadInput(f"{prefix}unknown key(s) {_names(unknown)}; known: {', '.join(allowed)}")


def _names(keys: Any) -> str:
    """Keys for a message: each shown clipped, at most ten of them."""
    names = sorted(shown(key, 40) for key in keys)
    return ", ".join(names[:10]) + (f" and {len(names) - 10:,} more" if len(names) > 10 else "")
