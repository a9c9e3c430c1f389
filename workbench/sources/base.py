"""What an arm operates on: an app source gives each arm its own instance of the app, for one run.

A source is the built-in demo apps, MCP servers, or a Python toolset. Every instance offers the same
four things, so the runner knows nothing of where the tools come from: the toolset, its tool names,
the instructions, and the app's state as a :data:`~apps.Snapshot` (entity -> record id -> fields),
taken before and after the run and diffed into the same end-state payload for every source.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.toolsets import AbstractToolset

from workbench.apps import Snapshot
from workbench.errors import UserError
from workbench.events import Graded
from workbench.sources.agreement import Rules
from workbench.turns import TurnCall

STDERR_TAIL = "its stderr ends with:"
"""Where a problem's own words end and the server's last lines of stderr begin (on the next line)."""


def stderr_first(problem: str) -> str:
    """A server's problem (as :data:`STDERR_TAIL` joins it) on one line, the last line of its stderr first:
    for a one-line status, where a full view shows all of it."""
    what, _, stderr = problem.partition(f"\n{STDERR_TAIL}\n")
    lines = stderr.strip().splitlines()
    what = " ".join(what.split())
    return f"{lines[-1].strip()} — {what}" if lines else what


Policy = Callable[[list[ModelMessage], AgentInfo], ModelResponse]
"""An offline model's whole behaviour: the next response for the conversation so far."""


class SourceError(UserError):
    """An app source that cannot be used for an arm: a server that does not start, a bad toolset.

    The message is one paragraph for the user (a server's stderr tail included where there is one).
    """


async def no_state() -> Snapshot:
    return {}


@dataclass
class AppInstance:
    """One arm's own app: its tools, the agents' instructions and a way to read its state."""

    toolset: AbstractToolset[Any]
    tool_names: list[str]
    instructions: str
    snapshot: Callable[[], Awaitable[Snapshot]] = no_state
    """The app's whole state now (``{}`` when the source cannot observe it)."""
    read_only_tools: list[str] = field(default_factory=list)
    """Tools that declare they change nothing (MCP ``readOnlyHint``, ``metadata={'read_only': True}``)."""
    problems: Callable[[], list[str]] = list
    """What went wrong with the app during the run (a server that exited): the arm fails with it."""
    label: str = ""
    """What the arm runs on, once known (an MCP server's own name); empty: the source's label."""
    grade: Callable[[Snapshot, Snapshot], Awaitable[Graded]] | None = None
    """Grades the end state (start, end) against a task's expectation, while the instance is alive; in a
    conversation, once, after its last turn."""
    begin_turn: Callable[[int], Awaitable[None]] | None = None
    """Called before each user turn (1-based) of a conversation: a source whose tools change from turn to
    turn sets :attr:`tool_names` (and :attr:`toolset`) here; the arm's agent is rebuilt when they changed
    (its message history carries over)."""
    end_turn: Callable[[int, list[TurnCall]], Awaitable[None]] | None = None
    """Called after each user turn with the app-tool calls the arm made in it (the code arm's calls from
    inside ``run_code`` included, in the order made): a per-turn grader reads the state here."""


class AppSource(ABC):
    """Where the arms' tools come from. ``open(arm)`` gives that arm an instance of its own."""

    label: str
    """What the comparison is run on, for the session list and the panes: ``cart``, ``mcp:notes``."""
    observable: bool = True
    """Whether the source reports state, so that arms can be compared on what they changed."""
    rules: Rules = Rules()
    """How created records are matched when the arms are compared with each other (a task file's ``compare``)."""
    task_id: str | None = None
    """The suite task this source runs (``bfcl/multi_turn_base_0``), recorded as the session's task."""

    def offline_player(self) -> Policy | None:
        """The offline model's policy on this source (``None``: the scripted model's own, for the demo apps).

        A suite with its own ground truth (BFCL) plays it, so ``--model scripted`` runs it without a key."""
        return None

    @abstractmethod
    def open(self, arm: str) -> AbstractAsyncContextManager[AppInstance]:
        """An instance for ``arm``, alive for the ``async with`` block; raises :class:`SourceError`."""


def instructions_for_tools(title: str, about: str) -> str:
    """The agents' instructions for an app the workbench did not write."""
    return (
        f"You operate {title}: {about}. Use its tools to do what the user asks.\n"
        "Change only what the request asks for.\n"
        "When you are done, reply with a one- or two-sentence summary of what you did."
    )


def tail(text: str, lines: int = 6, chars: int = 600) -> str:
    """The last lines of a process's output, for an error message."""
    kept = "\n".join(line.rstrip() for line in text.strip().splitlines()[-lines:])
    return kept[-chars:]
