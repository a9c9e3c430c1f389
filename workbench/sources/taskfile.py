"""A person's own tasks: a TOML (or YAML) file of prompts on their own app, for ``workbench bench --tasks FILE``.

```toml
[defaults]                      # optional: shared by every task
mcp = ["python server.py --db {workdir}/notes.db"]
workdir = "fixture"

[[tasks]]
id = "archive-old"
prompt = "Archive every note older than June."
[tasks.expect]                  # optional; without it the arms are graded against each other
sql = ["SELECT count(*) = 0 FROM notes WHERE archived = 0 AND created < '2026-06-01'"]
```

The same in YAML (a file named ``*.yaml`` / ``*.yml``): a mapping with ``defaults`` and a list ``tasks``
whose items have the same keys.

A task takes the app options of ``run`` (``mcp``, ``mcp_headers``, ``toolset``, ``workdir``, ``setup``,
``startup_timeout``, ``call_timeout``); ``expect`` has ``sql`` (checks that must return true),
``database`` (which database they run on) and/or ``workdir`` (a folder to end up like). Paths are
relative to the file's folder, and the commands run there.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.sources import AppSource, make_source
from workbench.sources.expect import Expectation
from workbench.sources.workdir import check_template

APP_KEYS = ("mcp", "mcp_headers", "toolset", "workdir", "setup", "startup_timeout", "call_timeout")
TASK_KEYS = ("id", "prompt", "expect", *APP_KEYS)
EXPECT_KEYS = ("sql", "database", "workdir")


@dataclass(frozen=True)
class CustomTask:
    id: str
    """``<file stem>/<id>``, unique in the file."""
    prompt: str
    source: AppSource


YAML_SUFFIXES = (".yaml", ".yml")


def load_task_file(path: str | Path) -> list[CustomTask]:
    """The file's tasks; raises ``ValueError`` with a one-line message naming the task and key at fault."""
    path = Path(path).expanduser()
    yaml = path.suffix.lower() in YAML_SUFFIXES
    try:
        text = path.read_text("utf-8")
        data = _yaml(text) if yaml else tomllib.loads(text)
    except OSError as error:
        raise ValueError(f"--tasks {path}: {error.strerror or error}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"--tasks {path}: not valid TOML: {error}") from None
    except ValueError as error:
        raise ValueError(f"--tasks {path}: {error}") from None
    tables = "defaults: and tasks:" if yaml else "[defaults] and [[tasks]]"
    if not isinstance(data, dict):
        raise ValueError(f"--tasks {path}: expected a mapping with {tables}")
    unknown = set(data) - {"defaults", "tasks"}
    if unknown:
        raise ValueError(f"--tasks {path}: unknown table(s) {', '.join(map(str, sorted(unknown, key=str)))}; "
                         f"use {tables}")  # fmt: skip
    defaults = data.get("defaults") or {}
    entries = data.get("tasks") or []
    if not isinstance(defaults, dict) or not isinstance(entries, list) or not entries:
        raise ValueError(f"--tasks {path}: no tasks (" + ("a list under tasks:" if yaml else "[[tasks]]") + ")")
    _check_keys(defaults, APP_KEYS, f"--tasks {path}: [defaults]")
    folder = path.resolve().parent
    tasks: list[CustomTask] = []
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            raise ValueError(f"--tasks {path}: task {number} is not a table")
        where = f"--tasks {path}: task {entry.get('id', number)!s}"
        tasks.append(_task(path.stem, {**defaults, **entry}, folder, where))
    ids = [task.id for task in tasks]
    duplicated = sorted({task_id for task_id in ids if ids.count(task_id) > 1})
    if duplicated:
        raise ValueError(f"--tasks {path}: task ids must be unique: {', '.join(duplicated)}")
    return tasks


def _yaml(text: str) -> Any:
    """A YAML document (safe types only); ``ValueError`` with the parser's one-line reason."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ValueError(f"not valid YAML: {problem}{where}") from None


def _task(stem: str, entry: dict[str, Any], folder: Path, where: str) -> CustomTask:
    _check_keys(entry, TASK_KEYS, where)
    task_id, prompt = entry.get("id"), entry.get("prompt")
    if not isinstance(task_id, str) or not task_id.strip():
        raise ValueError(f"{where}: needs an id (text)")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError(f"{where}: needs a prompt (text)")
    expectation = _expectation(f"{stem}/{task_id}", entry.get("expect"), folder, where)
    mcp = entry.get("mcp", [])
    try:
        source = make_source(
            mcp=[mcp] if isinstance(mcp, str) else mcp,
            mcp_headers=entry.get("mcp_headers", ()),
            toolset=entry.get("toolset"),
            workdir=entry.get("workdir"),
            setup=entry.get("setup"),
            startup_timeout_s=entry.get("startup_timeout"),
            call_timeout_s=entry.get("call_timeout"),
            cwd=folder,
            expect=expectation,
        )
    except (ValueError, TypeError) as error:
        raise ValueError(f"{where}: {error}") from None
    if source is None:
        raise ValueError(f'{where}: needs an app: mcp = [...] or toolset = "module:attribute"')
    return CustomTask(f"{stem}/{task_id}", prompt, source)


def _expectation(name: str, expect: Any, folder: Path, where: str) -> Expectation | None:
    if expect is None:
        return None
    if not isinstance(expect, dict):
        raise ValueError(f"{where}: expect must be a table")
    _check_keys(expect, EXPECT_KEYS, f"{where}: expect")
    sql = expect.get("sql", [])
    sql = [sql] if isinstance(sql, str) else sql
    if not isinstance(sql, list) or not all(isinstance(item, str) and item.strip() for item in sql):
        raise ValueError(f"{where}: expect.sql must be SQL text or a list of it")
    expected_folder = None
    if "workdir" in expect:
        expected_folder = check_template(folder / Path(str(expect["workdir"])).expanduser())
    if not sql and expected_folder is None:
        raise ValueError(f'{where}: expect needs sql = [...] or workdir = "..."')
    database = expect.get("database")
    return Expectation(name, tuple(sql), str(database) if database is not None else None, expected_folder)


def _check_keys(table: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    unknown = sorted(str(key) for key in set(table) - set(allowed))
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(allowed)}")
