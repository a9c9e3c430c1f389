"""Apps of one's own typed in the TUI: validated as --mcp / --toolset are, and remembered without secrets."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from workbench.locations import recent_apps_file
from workbench.sources.typed import (
    RECENT_APPS_KEPT,
    TypedApp,
    expand_variables,
    recent_apps,
    remember_app,
    split_headers,
)

pytest.importorskip("fastmcp", reason="the MCP extras are not installed here: pip install -e '.[test]'")

URL = "http://127.0.0.1:9/mcp"


def test_header_values_are_not_written_unless_they_name_variables() -> None:
    typed = TypedApp("mcp", URL, ("Authorization: Bearer s3cret", "X-Key: ${API_KEY}", "X-Tenant: $TENANT-a"))
    remember_app(typed)
    text = recent_apps_file().read_text(encoding="utf-8")
    assert "s3cret" not in text
    (stored,) = recent_apps()
    assert stored.headers == ("Authorization:", "X-Key: ${API_KEY}", "X-Tenant: $TENANT-a")
    assert stored.missing_values == ["Authorization"]
    with pytest.raises(ValueError, match="header Authorization needs a value"):
        stored.source()


def test_recent_apps_are_most_recent_first_unique_and_capped(tmp_path: Path) -> None:
    commands = [f"{sys.executable} server{index}.py" for index in range(RECENT_APPS_KEPT + 3)]
    for command in commands:
        remember_app(TypedApp("mcp", command))
    remember_app(TypedApp("mcp", commands[-2]))  # used again: moves to the front, once
    remember_app(TypedApp("toolset", "pkg.tools:TOOLS", workdir=str(tmp_path)))
    recent = recent_apps()
    assert len(recent) == RECENT_APPS_KEPT
    assert [typed.target for typed in recent[:3]] == ["pkg.tools:TOOLS", commands[-2], commands[-1]]
    assert recent[0].workdir == str(tmp_path.resolve())
    assert len({typed.target for typed in recent}) == RECENT_APPS_KEPT
    assert [typed.name for typed in recent[:2]] == ["TOOLS", f"server{len(commands) - 2}"]


def test_a_damaged_recent_list_reads_as_what_is_usable() -> None:
    path = recent_apps_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("not json")
    assert recent_apps() == []
    junk = [1, "x", {"kind": "ftp", "target": "a"}, {"kind": "mcp", "target": ""}, {"kind": "mcp", "target": "s",
            "headers": ["no colon"]}, {"kind": "mcp", "target": "serve"}]  # fmt: skip
    path.write_text(json.dumps(junk))
    assert recent_apps() == [TypedApp("mcp", "serve")]


def test_header_values_read_variables_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKEN", "abc")
    assert expand_variables("Authorization: Bearer $TOKEN") == "Authorization: Bearer abc"
    assert expand_variables("X: ${TOKEN}-1") == "X: abc-1"
    monkeypatch.delenv("TOKEN")
    with pytest.raises(ValueError, match=r"header Authorization uses \$TOKEN, which is not set"):
        expand_variables("Authorization: Bearer $TOKEN")
    assert split_headers(" A: 1 ;; B: 2; ") == ("A: 1", "B: 2")


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        (TypedApp("mcp", ""), "type a command or an http"),
        (TypedApp("mcp", '"unterminated'), "No closing quotation"),
        (TypedApp("mcp", "http://"), "not a URL with a host"),
        (TypedApp("mcp", "serve", ("Authorization: x",)), "applies to HTTP servers"),
        (TypedApp("mcp", URL, ("no colon here",)), 'expected "Name: value"'),
        (TypedApp("mcp", "serve {workdir}"), "{workdir} needs --workdir"),
        (TypedApp("mcp", "serve", workdir="/no/such/folder/here"), "/no/such/folder/here"),
        (TypedApp("toolset", "no_such_module_here:x"), "cannot import"),
        (TypedApp("toolset", "json"), "expected package.module:attribute"),
        (TypedApp("toolset", "json:dumps", ("A: b",)), "headers apply to HTTP servers"),
    ],
)
def test_typed_apps_are_checked_as_the_command_line_checks_them(typed: TypedApp, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        typed.source()


def test_a_typed_server_becomes_the_same_source_as_the_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKEN", "abc")
    source = TypedApp("mcp", URL, ("Authorization: Bearer $TOKEN",), workdir=str(tmp_path)).source()
    assert source.label == "mcp:127.0.0.1"
    assert dict(source.headers) == {"Authorization": "Bearer abc"}
    assert source.workdir == tmp_path


def test_an_app_from_the_command_line_is_typed_as_the_dialog_would(tmp_path: Path) -> None:
    from workbench.sources import make_source
    from workbench.sources.typed import typed_from

    one = make_source(mcp=[URL], mcp_headers=["Authorization: Bearer abc"], workdir=str(tmp_path))
    assert typed_from(one) == TypedApp("mcp", URL, ("Authorization: Bearer abc",), str(tmp_path))
    assert typed_from(make_source(toolset="json:dumps")) == TypedApp("toolset", "json:dumps")
    assert typed_from(make_source(mcp=["serve a", "serve b"])) is None  # the dialog takes one server
    assert typed_from(make_source(mcp=["serve"], setup="true")) is None  # and no setup command
    remember_app(typed_from(one))  # type: ignore[arg-type]
    assert recent_apps()[0].headers == ("Authorization:",)
