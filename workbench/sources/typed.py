"""An app of the person's own as typed in the TUI (one MCP server or a toolset), and the recent ones.

:class:`TypedApp` is what the App field's "MCP server…" / "Toolset…" dialog returns and what the
recent list keeps. It becomes an :class:`~workbench.sources.AppSource` through :func:`make_source`,
the same validation as ``--mcp`` / ``--toolset``.

Header values are secrets more often than not, so none is written to the recent list as typed: a
value that names environment variables (``Bearer $TOKEN``) is kept as written and read from the
environment when used; any other value is dropped, and the header's name is kept so that picking the
entry again asks for the value.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from workbench.locations import recent_apps_file
from workbench.recent import push_recent, read_recent

Kind = Literal["mcp", "toolset"]
KINDS: tuple[Kind, ...] = ("mcp", "toolset")
RECENT_APPS_KEPT = 8
VARIABLE = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))")
"""``$NAME`` or ``${NAME}`` in a header value: read from the environment when the app is used."""


@dataclass(frozen=True)
class TypedApp:
    """One MCP server (a command or an http(s) URL, with headers) or a toolset (``module:attr``)."""

    kind: Kind
    target: str
    headers: tuple[str, ...] = ()
    """``Name: value`` as typed (a remembered entry may hold ``Name:`` alone: its value is asked for)."""
    workdir: str = ""
    """A folder copied once per arm (empty: none)."""
    label: str = ""
    """What the app called itself when it last ran (``mcp:cart``); empty until it has run."""

    @property
    def name(self) -> str:
        """A short name for the App field: the server's script or host, the toolset's attribute."""
        if self.label:
            return self.label.partition(":")[2] or self.label
        if self.kind == "toolset":
            return self.target.rpartition(":")[2] or self.target
        from workbench.sources.mcp import ServerSpec

        try:
            return ServerSpec.parse(self.target).short_name
        except ValueError:
            return self.target

    @property
    def missing_values(self) -> list[str]:
        """Names of the headers whose value has to be typed again (it was not remembered)."""
        split = (header.partition(":") for header in self.headers)
        return [name.strip() for name, colon, value in split if colon and not value.strip()]

    def source(self, cwd: Path | None = None) -> Any:
        """The app source, validated as ``--mcp`` / ``--toolset`` are; ``ValueError`` with one line."""
        from workbench.sources import make_source

        if not self.target.strip():
            raise ValueError("type a command or an http(s):// URL" if self.kind == "mcp" else "type module:attribute")
        if self.missing_values:
            raise ValueError(
                f"header {self.missing_values[0]} needs a value (write $VARIABLE to read it from the environment)"
            )
        headers = [expand_variables(header) for header in self.headers]
        workdir = self.workdir.strip() or None
        if self.kind == "mcp":
            return make_source(mcp=[self.target], mcp_headers=headers, workdir=workdir, cwd=cwd)
        if headers:
            raise ValueError("headers apply to HTTP servers, not to a toolset")
        return make_source(toolset=self.target.strip(), workdir=workdir, cwd=cwd)

    def remembered(self) -> dict[str, Any]:
        """The entry for the recent list: header values that are not ``$VARIABLE`` references are dropped."""
        headers = []
        for header in self.headers:
            name, _, value = header.partition(":")
            kept = value.strip() if VARIABLE.search(value) else ""
            headers.append(f"{name.strip()}: {kept}" if kept else f"{name.strip()}:")
        entry: dict[str, Any] = {"kind": self.kind, "target": self.target.strip()}
        if headers:
            entry["headers"] = headers
        if self.workdir.strip():
            entry["workdir"] = str(Path(self.workdir.strip()).expanduser().resolve())
        if self.label:
            entry["label"] = self.label
        return entry

    def same_app(self, other: TypedApp) -> bool:
        """Whether both are the same app (what it was called aside)."""
        return _without_label(self.remembered()) == _without_label(other.remembered())

    @classmethod
    def from_entry(cls, entry: object) -> TypedApp | None:
        """An entry of the recent list (``None`` when it is not one)."""
        if not isinstance(entry, dict):
            return None
        kind, target = entry.get("kind"), entry.get("target")
        headers, workdir, label = entry.get("headers", []), entry.get("workdir", ""), entry.get("label", "")
        if kind not in KINDS or not isinstance(target, str) or not target.strip():
            return None
        if not isinstance(workdir, str) or not isinstance(label, str):
            return None
        if not isinstance(headers, list) or not all(isinstance(h, str) and ":" in h for h in headers):
            return None
        return cls(kind, target, tuple(headers), workdir, label)


def typed_from(source: Any) -> TypedApp | None:
    """An app given on the command line (``workbench --mcp ...``) as the dialog would have taken it, so that it
    is remembered too; ``None`` when the dialog could not take it (several servers, ``--setup``, an object)."""
    from workbench.sources.mcp import MCPSource
    from workbench.sources.toolset import ToolsetSource

    workdir = str(source.workdir) if getattr(source, "workdir", None) is not None else ""
    if getattr(source, "setup", None):
        return None
    if isinstance(source, MCPSource) and len(source.servers) == 1:
        headers = tuple(f"{name}: {value}" for name, value in source.headers.items())
        return TypedApp("mcp", source.servers[0].target, headers, workdir)
    if isinstance(source, ToolsetSource) and ":" in source.reference:
        return TypedApp("toolset", source.reference, (), workdir)
    return None


def split_headers(text: str) -> tuple[str, ...]:
    """The dialog's headers field, ``Name: value; Other: value``, as ``--mcp-header`` values."""
    return tuple(part.strip() for part in text.split(";") if part.strip())


def expand_variables(header: str) -> str:
    """``Authorization: Bearer $TOKEN`` with ``$TOKEN`` read from the environment; ``ValueError`` if unset."""

    def value_of(match: re.Match[str]) -> str:
        variable = match.group("braced") or match.group("plain")
        if variable not in os.environ:
            raise ValueError(
                f"header {header.partition(':')[0].strip()} uses ${variable}, which is not set in the environment"
            )
        return os.environ[variable]

    name, colon, value = header.partition(":")
    return f"{name}{colon}{VARIABLE.sub(value_of, value)}"


def recent_apps() -> list[TypedApp]:
    """The apps of the person's own used lately in the TUI, most recent first."""
    entries = (TypedApp.from_entry(entry) for entry in read_recent(recent_apps_file()))
    return [entry for entry in entries if entry is not None][:RECENT_APPS_KEPT]


def remember_app(app: TypedApp) -> list[TypedApp]:
    """Put ``app`` first in the recent list (without header secrets, once whatever its label); the new list."""
    stored = push_recent(recent_apps_file(), app.remembered(), RECENT_APPS_KEPT, key=_without_label)
    return [entry for entry in map(TypedApp.from_entry, stored) if entry is not None]


def _without_label(entry: Any) -> Any:
    return {key: value for key, value in entry.items() if key != "label"} if isinstance(entry, dict) else entry
