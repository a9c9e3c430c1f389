"""MCP servers as an app source: each arm starts its own stdio servers (or opens its own HTTP sessions).

Built on pydantic-ai's own MCP client (:class:`pydantic_ai.mcp.MCPToolset`, which needs the
``pydantic-ai-slim[mcp]`` extra). Tools keep their names; where two servers offer a tool of the same
name, both are prefixed with their server's name. A server that offers the resource
:data:`STATE_URI` (``workbench serve-app`` does) reports its state, which is diffed like a demo app's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import shlex
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pydantic_ai.exceptions import ModelRetry, ToolFailed
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset, ToolsetTool, WrapperToolset

from workbench.apps import Snapshot
from workbench.errors import BadInput
from workbench.sources.agreement import Rules
from workbench.sources.base import STDERR_TAIL, AppInstance, AppSource, SourceError, instructions_for_tools, tail
from workbench.sources.catalog import CatalogToolset, offered, plan_catalog
from workbench.sources.expect import Expectation, expectation_grader
from workbench.sources.folder import ArmFolder
from workbench.sources.keeper import kept
from workbench.sources.workdir import snapshot_folder
from workbench.untrusted import shown

LAUNCHERS = ("python", "node", "uv", "uvx", "npx", "bunx", "bun", "deno", "pipx")
"""Commands that run a server named by their next argument."""
STATE_URI = "workbench://state"
"""A resource a server may offer: its whole state as JSON (entity -> record id -> fields)."""


@dataclass(frozen=True)
class ServerSpec:
    """One ``--mcp`` value: a command line (stdio) or an ``http(s)://`` URL (Streamable HTTP)."""

    target: str

    @classmethod
    def parse(cls, text: str) -> ServerSpec:
        """Raises ``ValueError`` with a one-line message."""
        if not isinstance(text, str):
            raise BadInput(f"--mcp: expected a command or an http(s):// URL, got {shown(text)}")
        text = text.strip()
        if not text:
            raise BadInput("--mcp needs a command or an http(s):// URL")
        spec = cls(text)
        if spec.is_http:
            if not urlparse(text).hostname:
                raise BadInput(f"--mcp {text}: not a URL with a host")
        else:
            try:
                words = shlex.split(text)
            except ValueError as error:
                raise BadInput(f"--mcp {text}: {error}") from None
            if not words:
                raise BadInput("--mcp needs a command or an http(s):// URL")
        return spec

    @property
    def is_http(self) -> bool:
        return self.target.startswith(("http://", "https://"))

    @property
    def short_name(self) -> str:
        """A name before the server says its own: the URL's host or the command's script."""
        if self.is_http:
            return urlparse(self.target).hostname or "server"
        words = shlex.split(self.target)
        if "-m" in words[:-1]:  # python -m package.module
            return words[words.index("-m") + 1].rpartition(".")[2] or "server"
        if Path(words[0]).name.startswith(LAUNCHERS):  # node server.js, uvx some-server, npx -y @scope/server
            words = [word for word in words[1:] if not word.startswith("-")] or words
        return _script_name(Path(words[0])) or "server"


GENERIC_SCRIPTS = ("index", "main", "cli", "__main__")
"""Script names that say nothing of the server (``dist/index.js``): it is named after its package instead."""
BUILD_FOLDERS = ("dist", "build", "lib", "src", "bin", "out", "esm", "cjs")


def _script_name(path: Path) -> str:
    """``server-filesystem`` for ``.../@modelcontextprotocol/server-filesystem/dist/index.js``; the script's own
    name (``notes_server``) for any other."""
    if path.stem not in GENERIC_SCRIPTS:
        return path.stem
    for parent in path.parents:
        if parent.name and parent.name not in BUILD_FOLDERS:
            return parent.name
    return path.stem


@dataclass(frozen=True)
class Timeouts:
    startup_s: float = 30.0
    """Most seconds a server (or the setup command) may take to start."""
    call_s: float = 60.0
    """Most seconds one tool call may take before the model is told the server did not answer."""


HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}")
"""An HTTP header name: an RFC 9110 token."""
MAX_HEADER_CHARS = 8192
MAX_HEADERS = 64


def parse_header(text: str) -> tuple[str, str]:
    """``"Name: value"`` -> ``("Name", "value")``; raises ``BadInput`` with a one-line message."""
    if not isinstance(text, str):
        raise BadInput(f'--mcp-header: expected "Name: value", got {shown(text)}')
    name, colon, value = text.partition(":")
    if not colon or not name.strip() or any(c.isspace() for c in name.strip()):
        raise BadInput(f'--mcp-header {shown(text)}: expected "Name: value"')
    return name.strip(), value.strip()


def check_header(name: Any, value: Any) -> tuple[str, str]:
    """A header that can be sent as it is: a token for a name, a value of visible text (no CR, LF or other
    control characters, which would split the request), both bounded; ``BadInput`` naming the rule."""
    if not isinstance(name, str) or not HEADER_NAME.fullmatch(name):
        raise BadInput(f"--mcp-header {shown(name)}: a header name is letters, digits and !#$%&'*+-.^_`|~")
    if not isinstance(value, str):
        raise BadInput(f"--mcp-header {name}: the value must be text, got {shown(value)}")
    if len(value) > MAX_HEADER_CHARS:
        raise BadInput(f"--mcp-header {name}: the value is {len(value):,} characters; at most {MAX_HEADER_CHARS:,}")
    if any((ord(char) < 32 and char != "\t") or ord(char) == 127 for char in value):
        raise BadInput(
            f"--mcp-header {name}: the value has a control character (CR, LF, ...); it would split the request"
        )
    return name, value


@dataclass(frozen=True)
class MCPSource(AppSource):
    servers: tuple[ServerSpec, ...]
    headers: Mapping[str, str] = field(default_factory=dict)
    workdir: Path | None = None
    setup: str | None = None
    timeouts: Timeouts = field(default_factory=Timeouts)
    cwd: Path | None = None
    """Where the commands run (``None``: the current folder)."""
    expect: Expectation | None = None
    rules: Rules = field(default_factory=Rules)
    _noted: set[str] = field(default_factory=set, compare=False, repr=False)
    """Servers whose stdout garbage was already reported once (by their ``--mcp`` value)."""

    def __post_init__(self) -> None:
        if not self.servers:
            raise BadInput("--mcp needs a command or an http(s):// URL")
        if self.workdir is None:
            for spec in self.servers:
                if "{workdir}" in spec.target:
                    raise BadInput(f"--mcp {spec.target}: {{workdir}} needs --workdir")
            if self.setup and "{workdir}" in self.setup:
                raise BadInput("--setup uses {workdir}, which needs --workdir")
        if len(self.headers) > MAX_HEADERS:
            raise BadInput(f"--mcp-header given {len(self.headers)} times; at most {MAX_HEADERS}")
        if self.headers and not any(spec.is_http for spec in self.servers):
            raise BadInput("--mcp-header applies to HTTP servers; no --mcp is a URL")

    @property
    def label(self) -> str:  # type: ignore[override]
        return "mcp:" + "+".join(spec.short_name for spec in self.servers)

    @asynccontextmanager
    async def open(self, arm: str) -> AsyncIterator[AppInstance]:
        folder = ArmFolder.create(arm, self.workdir, self.cwd)
        try:
            if self.setup:
                await folder.run_setup(self.setup, self.timeouts.startup_s)
            async with AsyncExitStack() as stack:
                servers = [await self._start(spec, index, folder, stack) for index, spec in enumerate(self.servers)]
                yield await self._instance(servers, folder)
        finally:
            folder.cleanup()

    async def _start(self, spec: ServerSpec, index: int, folder: ArmFolder, stack: AsyncExitStack) -> _Server:
        from pydantic_ai.mcp import MCPToolset

        name = spec.short_name
        log = folder.log(f"{index}-{name}")
        timeouts = self.timeouts
        # The client's bound on any request (listing tools included); GuardedToolset bounds tool calls by call_s.
        request_s = max(timeouts.startup_s, timeouts.call_s)
        if spec.is_http:
            client: Any = folder.fill(spec.target, quote=False)
            toolset = MCPToolset(client, headers=dict(self.headers) or None, init_timeout=timeouts.startup_s,
                                 read_timeout=request_s)  # fmt: skip
        else:
            from fastmcp.client.transports import StdioTransport

            command, *args = [folder.fill(word, quote=False) for word in shlex.split(spec.target)]
            command, args = kept(command, args, folder.cwd)
            transport = StdioTransport(
                command, args, env=folder.environment(), cwd=str(folder.cwd) if folder.cwd else None,
                keep_alive=False, log_file=log,
            )  # fmt: skip
            toolset = MCPToolset(transport, init_timeout=timeouts.startup_s, read_timeout=request_s)
        server = _Server(spec, name, toolset, log)
        _STDOUT_OWNER.set((spec.short_name, spec.target, self._noted))
        # (the client's reader task starts below and inherits it: its complaints name this server)
        try:
            async with asyncio.timeout(timeouts.startup_s):
                await stack.enter_async_context(toolset)
                tools = await toolset.list_tools()
        except TimeoutError:
            raise SourceError(server.problem(f"did not start within {timeouts.startup_s:g} s")) from None
        except Exception as error:
            reason = _describe(error)
            if "Connection closed" in reason:
                reason = "it exited (or closed its output) before the handshake"
            raise SourceError(server.problem(f"could not start: {reason}")) from None
        if toolset.server_info is not None and toolset.server_info.name:
            server.name = toolset.server_info.name
        server.tools = tools
        _check_schemas(server)
        return server

    async def _instance(self, servers: list[_Server], folder: ArmFolder) -> AppInstance:
        names = [server.name for server in servers]
        for index, server in enumerate(servers):
            if names.count(server.name) > 1:
                server.name = f"{server.name}{index + 1}"
        counts = Counter(tool.name for server in servers for tool in server.tools)
        toolsets: list[AbstractToolset[Any]] = []
        tool_names: list[str] = []
        read_only: list[str] = []
        for server in servers:
            renames = {f"{server.name}_{tool.name}": tool.name for tool in server.tools if counts[tool.name] > 1}
            toolset: AbstractToolset[Any] = server.toolset.renamed(renames) if renames else server.toolset
            toolsets.append(GuardedToolset(toolset, server=server, call_timeout_s=self.timeouts.call_s))
            shown = {original: new for new, original in renames.items()}
            for tool in server.tools:
                tool_names.append(shown.get(tool.name, tool.name))
                if tool.annotations is not None and tool.annotations.read_only_hint:
                    read_only.append(tool_names[-1])
        titles = ", ".join(server.name for server in servers)
        about = "the tools of the MCP server" + ("s " if len(servers) > 1 else " ") + titles
        schemas = [tool.input_schema for server in servers for tool in server.tools]  # in tool_names' order
        plans = plan_catalog(zip(tool_names, schemas, strict=True), f"MCP server {titles}")
        combined: AbstractToolset[Any] = CombinedToolset(toolsets)
        if plans:
            combined = CatalogToolset(combined, plans=plans)
            tool_names, read_only = offered(tool_names, plans), offered(read_only, plans)

        async def snapshot() -> Snapshot:
            state: Snapshot = {}
            if folder.workdir is not None:
                state.update(await asyncio.to_thread(snapshot_folder, folder.workdir))
            for server in servers:
                state.update(await server.state(self.timeouts.call_s))
            return state

        def problems() -> list[str]:
            return [server.gone for server in servers if server.gone]

        return AppInstance(
            combined, tool_names, instructions_for_tools(titles, about), snapshot, read_only, problems,
            label="mcp:" + "+".join(names), grade=expectation_grader(self.expect, folder),
        )  # fmt: skip


@dataclass
class _Server:
    spec: ServerSpec
    name: str
    toolset: Any
    log: Path
    tools: list[Any] = field(default_factory=list)
    gone: str | None = None
    """Why the server stopped answering mid-run (it exited, or its connection closed)."""
    reports_state: bool | None = None
    """Whether the server offers its state (:data:`STATE_URI`); ``None`` until its first snapshot asked."""

    def stderr_tail(self) -> str:
        """The server's last lines of stderr, without its complaints about the client's own probes."""
        try:
            return tail(without_probe_noise(self.log.read_text("utf-8", "replace")))
        except OSError:
            return ""

    def problem(self, what: str) -> str:
        text = f"MCP server `{self.spec.target}` {what}"
        stderr = self.stderr_tail()
        return f"{text}\n{STDERR_TAIL}\n{stderr}" if stderr else text

    async def state(self, within_s: float) -> Snapshot:
        """The server's own report of its state (resource :data:`STATE_URI`), or nothing for a server that
        reports none.

        A server that reports one but cannot now (it exited, hangs past ``within_s``, or answers with
        something that is not a state) raises :class:`SourceError`: its state is unknown, and an empty one
        in its place would read as every record deleted."""
        if self.reports_state is False or (self.reports_state is None and not self.toolset.capabilities.resources):
            return {}
        if self.gone:
            raise SourceError(f"{self.gone.splitlines()[0]}: its state is unknown")
        try:
            async with asyncio.timeout(within_s):
                if self.reports_state is None:
                    resources = await self.toolset.list_resources()
                    self.reports_state = any(str(resource.uri) == STATE_URI for resource in resources)
                    if not self.reports_state:
                        return {}
                content = await self.toolset.read_resource(STATE_URI)
        except TimeoutError:
            raise SourceError(f"MCP server {self.name} did not report its state within {within_s:g} s") from None
        except Exception as error:
            raise SourceError(f"MCP server {self.name} could not report its state: {_describe(error)}") from None
        text = content if isinstance(content, str) else "".join(part for part in content if isinstance(part, str))
        try:
            state = json.loads(text)
        except ValueError:
            state = None
        if not isinstance(state, dict):
            raise SourceError(f"MCP server {self.name} reported a state that is not a JSON object ({STATE_URI})")
        return state


PROBE_COMPLAINT = re.compile(r"Failed to validate (request|notification)")
"""How a server on the mcp 1.x SDK starts its complaint about a request it does not know (the client's
``server/discover`` probe): a line, then the validation errors, indented or naming a model's field."""
_VALIDATION_LINE = re.compile(r"^\s|^[A-Za-z_][\w.\[\]-]*$")


def without_probe_noise(text: str) -> str:
    """``text`` without the blocks in which a server complains about the client's ``server/discover`` probe."""
    kept: list[str] = []
    block: list[str] = []
    for line in [*text.splitlines(), ""]:
        if block and line and _VALIDATION_LINE.match(line):
            block.append(line)
            continue
        if block and not any("server/discover" in part for part in block):
            kept += block  # a complaint about something else: the server's own words
        block = []
        if PROBE_COMPLAINT.search(line):
            block = [line]
        else:
            kept.append(line)
    return "\n".join(kept[:-1] if kept and not kept[-1] else kept)


_STDOUT_OWNER: ContextVar[tuple[str, str, set[str]] | None] = ContextVar("workbench_mcp_stdout", default=None)
"""The server whose stdout the client is reading in this context: its name, ``--mcp`` value, and the set of
values already reported."""
STDOUT_GARBAGE = "Failed to parse JSONRPC message from server"
"""What the MCP client logs (with a traceback) for every line of a server's stdout that is not JSON-RPC."""


class _StdoutGarbage(logging.Filter):
    """One line per server for what it writes to stdout that is not the protocol (a banner, a print), in
    place of the client's traceback for each such line in each arm."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(STDOUT_GARBAGE):
            return True
        owner = _STDOUT_OWNER.get()
        line = _bad_line(record)
        record.exc_info, record.exc_text, record.stack_info, record.args = None, None, None, ()
        if owner is None:
            record.msg = f"an MCP server wrote a line that is not MCP to its stdout: {line!r} (ignored)"
            return True
        name, target, noted = owner
        if target in noted:
            return False
        noted.add(target)
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.msg = (
            f"MCP server {name} writes lines that are not MCP to its stdout, such as {line!r}: they are ignored "
            "(a server should log to stderr)"
        )
        return True


def _bad_line(record: logging.LogRecord) -> str:
    error = record.exc_info[1] if record.exc_info else None
    errors = getattr(error, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            value = errors()[0].get("input")
            if isinstance(value, str | bytes):
                text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
                return text if len(text) <= 80 else text[:77] + "..."
    return "?"


logging.getLogger("mcp.client.stdio").addFilter(_StdoutGarbage())


def _check_schemas(server: _Server) -> None:
    """Refuse tools whose input or output schema is not valid JSON Schema (the model could not use them)."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    for tool in server.tools:
        for which, schema in (("input", tool.input_schema), ("output", tool.output_schema)):
            if schema is None:
                continue
            try:
                validator_for(schema).check_schema(schema)
            except SchemaError as error:
                where = "/".join(str(part) for part in error.path) or "(root)"
                raise SourceError(
                    server.problem(f"offers tool {tool.name!r} whose {which} schema is not valid JSON Schema "
                                   f"(at {where}: {error.message})")
                ) from None  # fmt: skip


@dataclass
class GuardedToolset(WrapperToolset[Any]):
    """One server's tools, with every failure of the server turned into something the arm can read.

    A result that does not validate or a call that times out reaches the model as a retry saying so;
    a server that exited mid-run is remembered (the runner fails the arm with its stderr tail) and
    every further call is refused with that message.
    """

    server: _Server = field(kw_only=True)
    call_timeout_s: float = field(kw_only=True)

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        server = self.server
        if server.gone:
            raise ModelRetry(server.gone)
        try:
            async with asyncio.timeout(self.call_timeout_s):
                return await self.wrapped.call_tool(name, tool_args, ctx, tool)
        except TimeoutError:
            raise ModelRetry(
                f"MCP server {server.name} did not answer {name} within {self.call_timeout_s:g} s"
            ) from None
        except ModelRetry as retry:
            message = str(retry)
            if "Connection closed" in message:
                server.gone = server.problem("exited mid-run (its connection closed)")
                raise ModelRetry(server.gone) from None
            if "timed out" in message:
                raise ModelRetry(
                    f"MCP server {server.name} did not answer {name} within {self.call_timeout_s:g} s"
                ) from None
            raise
        except ToolFailed:
            raise
        except Exception as error:
            raise ModelRetry(f"MCP server {server.name}: {name} failed: {_describe(error)}") from None


def _describe(error: BaseException) -> str:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def server_specs(values: Sequence[str]) -> tuple[ServerSpec, ...]:
    return tuple(ServerSpec.parse(value) for value in values)


__all__ = [
    "STATE_URI",
    "GuardedToolset",
    "MCPSource",
    "ServerSpec",
    "Timeouts",
    "check_header",
    "parse_header",
    "server_specs",
]
