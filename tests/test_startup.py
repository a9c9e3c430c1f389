"""What the command line loads to start, and what it prints that is not its own (behaviour, not timing:
``benchmarks/startup.py`` measures the time)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pydantic_ai", "pydantic_ai_harness", "pydantic_monty", "sqlmodel", "sqlalchemy", "textual", "psycopg", "dbos")


def loaded_after(code: str) -> list[str]:
    """The HEAVY packages a fresh interpreter has imported after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(result.stdout.splitlines()[-1])


def test_the_cli_module_loads_no_engine_store_or_tui() -> None:
    assert loaded_after("import workbench.cli") == []


def test_the_printer_and_the_arm_definitions_load_without_the_engine() -> None:
    """``tasks``, ``sessions`` and ``show`` print through the printer, which names the arms."""
    assert loaded_after("import workbench.printer, workbench.arm_spec; workbench.arm_spec.arm_catalog()") == []


def test_the_task_catalog_loads_without_pydantic_ai_or_the_store() -> None:
    code = "import workbench.apps as apps\nassert len(apps.tasks_for()) > 50 and apps.get_app('cart').name == 'cart'"
    assert loaded_after(code) == []


def test_the_tui_module_leaves_the_engine_to_its_background_warm_up() -> None:
    loaded = loaded_after("import workbench.tui.app")
    assert "textual" in loaded
    assert not {"pydantic_ai", "pydantic_ai_harness", "pydantic_monty", "sqlalchemy", "sqlmodel"} & set(loaded)


def test_the_first_screen_loads_nothing_it_does_not_draw() -> None:
    """The compare screen's panes start empty: Markdown (markdown-it) waits for the first text, pygments for
    the first code (or the warm-up), the demo apps' registry for the first graded end state (or the form), and
    the recent apps it offers at once are read without pydantic-ai (the sources package's names load on first
    use)."""
    code = (
        "import sys, workbench.tui.app\n"
        "from workbench.sources.typed import recent_apps\n"
        "recent_apps()\n"
        "late = ('markdown_it', 'pygments', 'workbench.apps.registry', 'workbench.sources.base')\n"
        "print('late:', [m for m in late if m in sys.modules])"
    )
    assert "late: []" in subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert not {"pydantic_ai", "sqlalchemy"} & set(loaded_after(code))


def test_the_cli_imports_a_command_s_module_only_when_it_runs() -> None:
    code = (
        "import contextlib, io, sys\n"
        "from workbench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['locate'])\n"
        "print('loaded:', sorted(m for m in sys.modules if m.startswith('workbench.commands.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "loaded: ['workbench.commands.config', 'workbench.commands.options', 'workbench.commands.sources']" in out


def test_help_lists_every_command_without_settings_or_the_demo_apps() -> None:
    """``--help`` imports every command's module (for its line); none of them loads pydantic at import."""
    code = (
        "import contextlib, io\n"
        "from workbench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['--help'])\n"
        "import sys\n"
        "print('loaded:', [m for m in ('pydantic', 'pydantic_settings', 'workbench.apps.base') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "loaded: []" in out


def test_app_names_are_the_apps_in_display_order() -> None:
    import workbench.apps as apps

    assert tuple(apps.APPS) == apps.APP_NAMES


def test_a_demo_app_still_raises_model_retry_for_a_bad_id() -> None:
    from pydantic_ai import ModelRetry

    import workbench.apps as apps

    cart = apps.get_app("cart")(items=5)
    with pytest.raises(ModelRetry, match="no line with id"):
        cart.get("lines", "line-9999")


def run_in_terminal(args: list[str], env: dict[str, str]) -> str:
    """Everything a command writes to a terminal (stdout and stderr are the pty)."""
    master, slave = pty.openpty()
    process = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    output = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        output += chunk
    process.wait(timeout=120)
    os.close(master)
    return output.decode(errors="replace")


def test_run_in_a_terminal_prints_no_third_party_banner(tmp_path: Path) -> None:
    """pydantic-ai shows its Logfire banner on a first agent run in a terminal unless told not to; pytest and CI
    are among what it treats as 'told', so they are taken out of the child's environment."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("CI", "PYTEST_VERSION", "PYDANTIC_AI_NO_BANNER") and not key.startswith("PYTEST_")
    }
    env.update(WORKBENCH_DB=str(tmp_path / "sessions.db"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    workbench = str(Path(sys.executable).parent / "workbench")
    output = run_in_terminal([workbench, "run", "--task", "cart/remove-expensive", "--items", "20"], env)
    assert "Code mode" in output and "completed" in output
    for banner_text in ("pydantic-ai v", "observability", "Logfire", "PYDANTIC_AI_NO_BANNER"):
        assert banner_text not in output


def test_commands_without_app_options_load_no_engine() -> None:
    """A command run without --mcp / --toolset never builds an app source (that package loads pydantic-ai)."""
    code = (
        "import contextlib, io\n"
        "from workbench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['locate'])"
    )
    assert loaded_after(code) == []


def _listing_code(db: Path) -> str:
    return (
        "import contextlib, io\n"
        "from workbench.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
        f"    main(['sessions', '--json', '--db', {str(db)!r}])\n"
        "assert out.getvalue().startswith('[{'), out.getvalue()"
    )


def test_sessions_on_a_current_schema_file_loads_no_sqlalchemy(tmp_path: Path) -> None:
    """``workbench sessions`` reads a current-schema SQLite file with sqlite3 alone; an older schema still
    goes through the store, which migrates it."""
    import shutil

    import workbench

    db = tmp_path / "sessions.db"
    workbench.compare_sync(task="cart/remove-expensive", items=5, db=db)
    assert loaded_after(_listing_code(db)) == []

    old = tmp_path / "schema1.db"
    shutil.copy(Path(__file__).parent / "fixtures" / "schema1.db", old)
    assert {"sqlalchemy", "sqlmodel"} <= set(loaded_after(_listing_code(old)))
    assert loaded_after(_listing_code(old)) == []  # migrated by the first listing


ENGINE = {"pydantic_ai", "pydantic_ai_harness", "pydantic_monty"}


@pytest.mark.parametrize(
    "command",
    [
        ["show", "{id}"],
        ["show", "{id}", "--json"],
        ["sessions", "--json"],
        ["sessions"],
        ["export", "{id}"],
        ["export", "{id}", "--format", "md"],
        ["export", "{id}", "--format", "csv"],
        ["export", "{id}", "--format", "html"],
    ],
)
def test_commands_that_read_sessions_load_no_engine(tmp_path: Path, command: list[str]) -> None:
    """A stored session is a :mod:`workbench.session` object: reading one (``show``, ``sessions``, ``export``)
    never imports pydantic-ai, the harness or Monty."""
    import workbench

    db = tmp_path / "sessions.db"
    ran = workbench.compare_sync(task="cart/remove-expensive", items=5, db=db)
    args = [part.format(id=ran.session_id) for part in command] + ["--db", str(db)]
    code = (
        "import contextlib, io\n"
        "from workbench.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
        f"    main({args!r})\n"
        f"assert {ran.session_id[:6]!r} in out.getvalue() or 'cart' in out.getvalue(), out.getvalue()"
    )
    assert not ENGINE & set(loaded_after(code))
