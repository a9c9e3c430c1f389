"""One display vocabulary (``workbench.display``) under the CLI, the TUI and the HTML: the same money, changes,
marks, clipping, sanitizing and arm titles everywhere."""

from __future__ import annotations

import ast
from pathlib import Path

from workbench.display import (
    arm_title,
    clip_middle,
    clip_tail,
    clipped_error,
    duration,
    money,
    percent_change,
    sanitize,
    tokens,
)

ROOT = Path(__file__).resolve().parent.parent


def test_figures() -> None:
    assert money(0.0115) == "$0.0115" and money(1234.5) == "$1,234.50" and money(None) == "cost unknown"
    assert percent_change(50, 100) == -50 and percent_change(1, 0) is None and percent_change(None, 1) is None
    assert tokens(12345) == "12,345" and tokens(12345, estimated=True) == "~12,345"


def test_durations_keep_small_values_visible() -> None:
    assert [duration(ms) for ms in (0.04, 3.5, 42.4, 1234.0)] == ["<0.1 ms", "3.5 ms", "42 ms", "1.23 s"]
    assert duration(None) == ""


def test_one_sanitize_rule_strips_bidi_overrides_and_shows_escapes() -> None:
    text = "pay \u202eevil\u202c now \x1b[2J\x07\ttab\nline"
    assert sanitize(text) == "pay evil now ␛[2J\ufffd\ttab\nline"


def test_clipping() -> None:
    assert clip_tail("abcdef", 6) == "abcdef" and clip_tail("abcdefg", 4) == "abc…"
    assert clip_tail("abcdefg", 4, more=" not kept") == "abcd… [3 more characters not kept]"
    assert clip_middle("a" * 10 + "b" * 10, 10) == "aaaaa\n… [10 characters not kept] …\nbbbbb"
    assert clipped_error("x" * 700).endswith("[100 more characters: `workbench show ID --json` has it whole]")


def test_arm_titles_from_the_arm_spec() -> None:
    assert arm_title("tool") == arm_title("tool", "tool") == "Tool calling"
    assert arm_title("code", "code") == "Code mode" and arm_title("code-eager", "code") == "Code mode, eager"
    assert arm_title("small-code", "code") == "small-code · Code mode"
    assert arm_title("hybrid", "tool") == "hybrid · Tool calling"  # a custom arm reusing a mode's name
    assert arm_title("mine") == "mine"


def test_the_tui_and_the_exports_do_not_import_the_cli_printer() -> None:
    for folder in ("workbench/tui", "workbench/share", "workbench/bench"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom):
                    assert node.module != "workbench.printer", path
