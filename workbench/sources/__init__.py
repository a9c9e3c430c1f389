"""App sources: where each arm's tools and state come from (demo apps, MCP servers, Python toolsets).

The package's names load on first use: :mod:`workbench.sources.base` imports pydantic-ai, and the TUI reads
its recent apps (:mod:`workbench.sources.typed`) while its first screen is drawn, before the engine loads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import BadInput
from workbench.lazy import lazy_attributes
from workbench.untrusted import number_in, shown

if TYPE_CHECKING:
    from workbench.sources.agreement import Rules
    from workbench.sources.base import AppInstance, AppSource, SourceError
    from workbench.sources.demo import DemoSource
    from workbench.sources.expect import Expectation

TIMEOUT_RANGE = (0.1, 86_400.0)
"""Seconds a server may take to start, or a tool call to answer: a finite deadline, a day at most."""

__all__ = ["AppInstance", "AppSource", "DemoSource", "SourceError", "make_source"]

_LAZY = {
    "AppInstance": "workbench.sources.base",
    "AppSource": "workbench.sources.base",
    "SourceError": "workbench.sources.base",
    "DemoSource": "workbench.sources.demo",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


def make_source(
    *,
    mcp: Sequence[str] = (),
    mcp_headers: Sequence[str] | Mapping[str, str] = (),
    toolset: str | Any | None = None,
    workdir: str | Path | None = None,
    setup: str | None = None,
    startup_timeout_s: float | None = None,
    call_timeout_s: float | None = None,
    cwd: Path | None = None,
    expect: Expectation | None = None,
    rules: Rules | None = None,
) -> AppSource | None:
    """The source for the command line's / API's app options (``None``: a demo app); ``BadInput`` (a
    ``ValueError``) when unusable."""
    from workbench.sources.agreement import Rules
    from workbench.sources.mcp import MCPSource, Timeouts, check_header, parse_header, server_specs
    from workbench.sources.toolset import ToolsetSource
    from workbench.sources.workdir import check_template

    if isinstance(mcp, str):
        mcp = [mcp]
    if isinstance(mcp_headers, str) or not isinstance(mcp_headers, Sequence | Mapping):
        raise BadInput(f"mcp_headers: must be a list of texts, got {shown(mcp_headers)}")
    if not isinstance(mcp, Sequence):
        raise BadInput(f"mcp: must be a list of texts, got {shown(mcp)}")
    for name, value in (("workdir", workdir), ("setup", setup)):
        if value is not None and not isinstance(value, str | Path):
            raise BadInput(f"{name}: must be text, got {shown(value)}")
    template = check_template((cwd or Path()) / Path(workdir).expanduser()) if workdir is not None else None
    if mcp and toolset is not None:
        raise BadInput("--mcp and --toolset exclude each other: give one app of your own")
    if not mcp and toolset is None:
        if template is not None or setup or mcp_headers:
            raise BadInput("--workdir, --setup and --mcp-header need --mcp or --toolset")
        return None
    timeouts = Timeouts()
    if startup_timeout_s is not None:
        timeouts = replace(
            timeouts, startup_s=number_in("startup_timeout", startup_timeout_s, *TIMEOUT_RANGE, "of seconds")
        )
    if call_timeout_s is not None:
        timeouts = replace(timeouts, call_s=number_in("call_timeout", call_timeout_s, *TIMEOUT_RANGE, "of seconds"))
    if toolset is not None:
        if mcp_headers:
            raise BadInput("--mcp-header applies to HTTP servers (--mcp URL), not to --toolset")
        return ToolsetSource.load(
            toolset, workdir=template, setup=setup, setup_timeout_s=timeouts.startup_s, cwd=cwd, expect=expect,
            rules=rules,
        )  # fmt: skip
    pairs = mcp_headers.items() if isinstance(mcp_headers, Mapping) else map(parse_header, mcp_headers)
    headers = dict(check_header(name, value) for name, value in pairs)
    return MCPSource(server_specs(mcp), headers, template, setup, timeouts, cwd, expect, rules or Rules())
