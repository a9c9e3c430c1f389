"""Runs one prompt against each of its arms concurrently, each on its own freshly seeded app instance.

Whatever a model does (unknown tools, bad ids, syntax errors, hundreds of parallel calls, a provider
error) ends in a stored session and a per-arm status; nothing a model does raises out of here, and a
failure in one arm never stops the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pydantic_ai import AgentRetries
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelMessage
from pydantic_ai.run import AgentRunResultEvent
from pydantic_ai.usage import UsageLimits

import workbench.apps as apps
from workbench.apps import DemoApp, Task
from workbench.arm_spec import PRESETS, ArmConfig, ArmSpec, arm_catalog, choose_arms
from workbench.arms import build_agent
from workbench.config import Settings, load_settings
from workbench.errors import BadInput, is_text, one_line
from workbench.events import (
    DEFAULT_ARMS,
    ArmEvent,
    EndState,
    Graded,
    LimiterWait,
    Payload,
    ProviderRetry,
    RunFinished,
    RunStarted,
    Status,
    TurnEnded,
    TurnStarted,
)
from workbench.models import ResolvedModel, resolve_model
from workbench.providers.hooks import RequestHooks, request_hooks
from workbench.recorder import Recorder
from workbench.request import RunRequest
from workbench.session import Comparison, SessionHeader, new_session_id
from workbench.share.tracing import resolve_tracing
from workbench.sources import AppInstance, AppSource, DemoSource, SourceError
from workbench.sources.agreement import ArmEnd, agreement
from workbench.store import SessionWriter, Store
from workbench.store.writer import STOPPING_WAIT_S
from workbench.translate import Translator
from workbench.turns import checked_turns, turn_calls
from workbench.verdict import UNFINISHED, as_finished

if TYPE_CHECKING:
    from pydantic_ai import Agent

    from workbench.share.otel import LiveTrace

STOPPED_STATE_WAIT_S = 2.0
"""Most an arm being stopped (SIGTERM, Ctrl+C, Escape) waits for its app's end state: a hung MCP server
must not hold the process past the stop for its --call-timeout (then the arm's diff is left unknown)."""
MONTY_SETTLE_S = 0.05
"""Pause after a code arm ends. Monty's worker pool finishes tearing down on a Rust thread just after
the run; if the interpreter exits in that window, Python 3.11 aborts the process (PyO3 #4874)."""


class AppUnavailable(BadInput):
    """The app of the user's own (MCP server, toolset) could not be opened for any arm; nothing was stored."""


@dataclass(frozen=True)
class Setup:
    """Everything a comparison needs, validated."""

    prompt: str
    app: type[DemoApp] | None
    """The demo app (``None`` for a source of the user's own without a built-in task)."""
    items: int
    seed: int
    models: Mapping[str, ResolvedModel]
    """Each arm's model, by arm name."""
    task: Task | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    arms: tuple[ArmSpec, ...] = tuple(PRESETS[name] for name in DEFAULT_ARMS)
    """The arms in display order; the first is the baseline."""
    config: ArmConfig = field(default_factory=ArmConfig)
    page_size: int = apps.DEFAULT_PAGE_SIZE
    otel_endpoint: str | None = None
    """OTLP/HTTP traces URL the comparison is exported to as it runs (``None``: not traced)."""
    source: AppSource | None = None
    """Where the arms' tools come from when it is not the demo app itself (MCP servers, a toolset)."""
    turns: tuple[str, ...] = ()
    """The conversation's user turns (``prompt`` is the first); empty: the one turn ``prompt``."""
    turn_tasks: tuple[tuple[Task, Mapping[str, Any]], ...] = ()
    """For a conversation on a demo app whose every turn is a built-in task: each turn's task and parameters
    (the expected end state applies them in order); empty otherwise."""

    @property
    def prompts(self) -> tuple[str, ...]:
        """The user turns, in order (one for a run of one prompt)."""
        return self.turns or (self.prompt,)

    @property
    def conversation(self) -> bool:
        """Whether the run has several turns (each then gets its turn events)."""
        return len(self.prompts) > 1

    @property
    def task_label(self) -> str | None:
        """The graded task's id; for a conversation, its turns' task ids in order."""
        if self.task is not None:
            return self.task.id
        if self.turn_tasks:
            return " + ".join(task.id for task, _ in self.turn_tasks)
        return self.source.task_id if self.source is not None else None

    @property
    def app_source(self) -> AppSource:
        if self.source is not None:
            return self.source
        assert self.demo is not None
        return self.demo

    @cached_property
    def demo(self) -> DemoSource | None:
        """The demo app's instances (each arm's, and the expected end state's, when graded); ``None`` without one."""
        return None if self.app is None else DemoSource(self.app, self.items, self.seed, self.page_size)

    @property
    def app_label(self) -> str:
        return self.app_source.label

    @property
    def arm_names(self) -> tuple[str, ...]:
        return tuple(arm.name for arm in self.arms)

    @property
    def model_label(self) -> str:
        labels = {self.models[arm].label for arm in self.arm_names}
        if len(labels) > 1:
            return " | ".join(f"{arm}={self.models[arm].label}" for arm in self.arm_names)
        return labels.pop()


def prepare(request: RunRequest | str | None = None, *, settings: Settings | None = None, **fields: Any) -> Setup:
    """Validate a :class:`RunRequest` (or a prompt and the request's other fields as keywords); raises
    :class:`BadInput` with a one-line message.

    What is not given (model, config, page size) comes from ``settings`` (default: the user's config
    file and ``WORKBENCH_*`` variables, see :mod:`workbench.config`). ``source`` runs the arms on MCP
    servers or a toolset instead of a demo app (see :mod:`workbench.sources`); with ``task`` the task's
    expected end state still grades them.
    """
    if not isinstance(request, RunRequest):
        request = RunRequest(request, **fields)
    elif fields:
        raise TypeError("give a RunRequest or its fields, not both")
    settings = settings or load_settings()
    prompt, app, items, seed, task = request.prompt, request.app, request.items, request.seed, request.task
    source = request.source
    turns: tuple[str, ...] = ()
    if request.turns:
        if prompt is not None and prompt.strip():
            raise BadInput("give a prompt or turns, not both (the first turn is the prompt)")
        turns = checked_turns(list(request.turns))
        if not all(is_text(turn) for turn in turns):
            raise BadInput("a turn is not valid text (it holds bytes that are not UTF-8); save it as UTF-8")
        prompt = turns[0]
        turns = turns if len(turns) > 1 else ()
    model = settings.model if request.model is None else request.model
    page_size = settings.page_size if request.page_size is None else request.page_size
    config = request.config or settings.arm_config()
    chosen_task = apps.get_task(task) if task else None
    if chosen_task and app and app != chosen_task.app:
        raise BadInput(f"task {chosen_task.id!r} runs on the {chosen_task.app} app, not {app!r}")
    if source is not None and app:
        raise BadInput(f"--app {app} and an app of your own (--mcp / --toolset) exclude each other")
    app_name = chosen_task.app if chosen_task else app
    if not app_name and source is None:
        raise BadInput("choose an app (--app) or a task (--task)")
    app_type = apps.get_app(app_name) if app_name else None
    if prompt is not None and not prompt.strip():
        prompt = None
    if prompt is not None and not is_text(prompt):
        raise BadInput("the prompt is not valid text (it holds bytes that are not UTF-8); save it as UTF-8")
    if prompt is None and chosen_task is None:
        raise BadInput("give a prompt or a built-in task (--task); `workbench tasks` lists them")
    params: Mapping[str, Any] = {}
    turn_tasks: tuple[tuple[Task, Mapping[str, Any]], ...] = ()
    if turns and chosen_task is not None:
        raise BadInput("--task runs one built-in prompt; for a conversation give its turns (--turn) on --app")
    if turns and app_name:
        found_tasks = [apps.match_task(app_name, turn) for turn in turns]
        turn_tasks = tuple(found for found in found_tasks if found is not None)
        if len(turn_tasks) < len(turns):
            turn_tasks = ()  # a turn that is no built-in task: the conversation has no expected end state
    elif chosen_task is not None:
        params = (chosen_task.match(prompt) if prompt else None) or dict(chosen_task.defaults)
        prompt = prompt or chosen_task.prompt_for()
    elif app_name:
        found = apps.match_task(app_name, prompt or "")
        if found is not None:
            chosen_task, params = found
    if items is None:
        sized = chosen_task or (turn_tasks[0][0] if turn_tasks else None)
        items = sized.items if sized else app_type.default_items if app_type else 0
    if app_type is not None and not apps.MIN_ITEMS <= items <= apps.MAX_ITEMS:
        raise BadInput(f"items must be between {apps.MIN_ITEMS} and {apps.MAX_ITEMS}, got {items}")
    if page_size < 1:
        raise BadInput(f"page size must be at least 1, got {page_size}")
    if not -(2**63) <= seed < 2**63:
        raise BadInput(f"seed must fit in 64 bits (between {-(2**63)} and {2**63 - 1}), got {seed}")
    arms = _chosen_arms(request, settings)
    models = _arm_models(request, arms, model, settings)
    assert prompt is not None
    otel_endpoint = resolve_tracing(settings.otel_endpoint)
    return Setup(
        prompt=prompt,
        app=app_type,
        items=items,
        seed=seed,
        models=models,
        task=chosen_task,
        params=params,
        arms=arms,
        config=config or ArmConfig(),
        page_size=page_size,
        source=source,
        otel_endpoint=otel_endpoint,
        turns=turns,
        turn_tasks=turn_tasks,
    )


def _chosen_arms(request: RunRequest, settings: Settings) -> tuple[ArmSpec, ...]:
    catalog = arm_catalog(settings)
    given = [arm for arm in request.arms if isinstance(arm, ArmSpec)]
    catalog.update({arm.name: arm for arm in given})
    arms = choose_arms([arm.name if isinstance(arm, ArmSpec) else arm for arm in request.arms], catalog)
    unknown = sorted(set(request.arm_models) - {arm.name for arm in arms})
    if unknown:
        raise BadInput(
            f"--model {unknown[0]}=...: no arm {unknown[0]!r} in this comparison; arms are: "
            f"{', '.join(arm.name for arm in arms)}"
        )
    return arms


def _arm_models(
    request: RunRequest, arms: Sequence[ArmSpec], default: str | Any, settings: Settings
) -> dict[str, ResolvedModel]:

    shared = settings.model_options()
    policy = request.source.offline_player() if request.source is not None else None
    resolved: dict[Any, ResolvedModel] = {}
    models: dict[str, ResolvedModel] = {}
    for arm in arms:
        spec = request.arm_models.get(arm.name)
        if spec is None:
            spec = arm.model_for(tool_model=request.tool_model, code_model=request.code_model)
        if spec is None:
            spec = arm.model if arm.model is not None else default
        options = shared if arm.stream is None else replace(shared, stream=arm.stream)
        key = (spec if isinstance(spec, str) else id(spec), options.stream)
        if key not in resolved:
            resolved[key] = resolve_model(spec, options, policy=policy)
        models[arm.name] = resolved[key]
    return models


class ComparisonRun:
    """A comparison in progress: iterate it for (arm, event) pairs as they happen, cancel it, await its result.

    With ``keep_open`` the arms keep their app instances (and message histories) once the run has ended, so
    that :meth:`follow_up` can continue the same session with another user turn on the same state (the TUI's
    follow-up prompt); :meth:`close` then closes the apps. Without it (the default) the apps close when the
    run ends."""

    def __init__(
        self, setup: Setup, store: Store | None, *, keep_open: bool = False, close_store: bool = False
    ) -> None:
        self.setup = setup
        self.store = store
        self.keep_open = keep_open
        self.close_store = close_store
        """The run opened ``store`` itself (:func:`workbench.compare_stream` with a path): it closes it when it
        ends (kept open: at :meth:`close`)."""
        header = SessionHeader(
            session_id=new_session_id(),
            app=setup.app_label,
            items=setup.items,
            seed=setup.seed,
            prompt=setup.prompt,
            task=setup.task_label,
            model=setup.model_label,
        )
        self.comparison = Comparison.begin(header, setup.arm_names)
        self._listeners: list[Callable[[ArmEvent], None]] = []
        self._task: asyncio.Task[Comparison] | None = None
        self._arm_tasks: list[asyncio.Task[None]] = []
        self._runners: list[ArmRunner] = []
        self._cancel_requested = False
        self._stopping = False
        self._writer: SessionWriter | None = None
        self._expected: asyncio.Future[apps.Snapshot] | None = None
        self._gate = StartGate(len(setup.arms))
        self.plan: list[tuple[Task, Mapping[str, Any]]] = (
            [(setup.task, setup.params)] if setup.task is not None else list(setup.turn_tasks)
        )
        """The built-in task of each turn so far, in order, when every turn is one (the expected end state
        applies them in turn); empty: the conversation has no expected end state."""
        self._segment: asyncio.Task[Comparison] | None = None
        self._trace: LiveTrace | None = None
        """The session's OpenTelemetry trace, when tracing is on (one trace for every turn of the session)."""

    def subscribe(self, listener: Callable[[ArmEvent], None]) -> None:
        self._listeners.append(listener)

    def start(self) -> asyncio.Task[Comparison]:
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())
        return self._task

    async def result(self) -> Comparison:
        return await self.start()

    def cancel(self, *, stopping: bool = False) -> None:
        """Stop every arm; each records itself as cancelled and the session is saved.

        Safe at any time: an arm that has not started yet sees the request when it starts. ``stopping``: the
        process is being stopped (a sweep's SIGTERM or Ctrl+C), so the save gets the few seconds a stopped run
        gets (past them, what the database has not taken goes to the fallback file), not the busy timeout.
        """
        self._cancel_requested = True
        self._stopping = self._stopping or stopping
        for runner, task in zip(self._runners, self._arm_tasks, strict=True):
            if self.keep_open and runner.started and runner.idle.is_set():
                continue  # done with its turns, its app kept open for a follow-up: nothing to stop
            if runner.started or runner.opening:
                task.cancel()  # an arm still opening its app (an MCP server starting) records itself as cancelled

    @property
    def cancel_requested(self) -> bool:
        return self._cancel_requested

    def abandon(self) -> None:
        """The process ends now (a second stop signal): what the session's writer has not stored goes to
        the fallback file, without waiting for the database."""
        if self._writer is not None:
            self._writer.abandon(f"the run was stopped before {self._writer.store.name} stored all of it")

    async def __aiter__(self) -> AsyncIterator[tuple[str, ArmEvent]]:
        queue: asyncio.Queue[ArmEvent | None] = asyncio.Queue()
        self.subscribe(queue.put_nowait)
        task = self.start()
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event.arm, event
        finally:
            if not task.done():
                self.cancel()
                await asyncio.shield(task)

    async def _run(self) -> Comparison:
        try:
            return await self._compare()
        finally:
            if not self.keep_open:
                self._close_store()

    def _close_store(self) -> None:
        if self.close_store and self.store is not None:
            self.store.close()

    async def _compare(self) -> Comparison:
        comparison, setup = self.comparison, self.setup
        writer: SessionWriter | None = None
        if setup.otel_endpoint:
            from workbench.share.otel import open_trace

            self._trace = open_trace(comparison, setup.otel_endpoint)
            self.subscribe(self._trace.add)

        gate = self._gate
        self._expect()
        self._runners = [ArmRunner(setup, arm, self._emit, self.expected_state, lambda: self._cancel_requested, gate,
                                   keep_open=self.keep_open)
                         for arm in setup.arms]  # fmt: skip
        self._arm_tasks = [asyncio.ensure_future(runner.run()) for runner in self._runners]
        await gate.all_opened()
        if gate.failures and len(gate.failures) == len(setup.arms) and not self._cancel_requested:
            gate.go.set()
            await asyncio.gather(*self._arm_tasks, return_exceptions=True)
            await self._close_trace()
            raise AppUnavailable(next(iter(gate.failures.values())))
        comparison.header = replace(comparison.header, app=gate.label or comparison.app)
        if self.store is not None:
            try:
                writer = self._writer = self.store.begin(
                    comparison,
                    models={arm.name: setup.models[arm.name].label for arm in setup.arms},
                    modes={arm.name: arm.mode for arm in setup.arms},
                )
            except BaseException:
                self._cancel_requested = True
                gate.go.set()
                await asyncio.gather(*self._arm_tasks, return_exceptions=True)
                await self._close_trace()
                raise
        gate.go.set()
        await self._until_idle(writer)
        return comparison

    def _emit(self, event: ArmEvent) -> None:
        self.comparison.arms[event.arm].add(event)
        if self._writer is not None:
            self._writer.put(event)
        for listener in self._listeners:
            listener(event)

    async def _until_idle(self, writer: SessionWriter | None) -> None:
        """Wait until every arm has ended its turns (its task ended, or, kept open, it waits for a follow-up),
        then close the session's writer: the session is stored whole. Its trace ends with it, or, kept open,
        sends the spans its turns ended (the comparison's and arms' spans end when :meth:`close` closes it)."""
        stopping = False
        try:
            if self.keep_open:
                await asyncio.gather(*(runner.idle.wait() for runner in self._runners))
            else:
                await asyncio.gather(*self._arm_tasks, return_exceptions=True)
        except asyncio.CancelledError:
            stopping = True  # the process is being stopped (SIGTERM, Ctrl+C): the save gets a few seconds
            for task in self._arm_tasks:
                task.cancel()
            raise
        finally:
            stopping = stopping or self._stopping
            if writer is not None:
                await _closed(writer, self.comparison, stopping)
            if self._trace is not None:
                if self.keep_open and not stopping:
                    await asyncio.to_thread(self._trace.send)
                else:
                    await self._close_trace()

    @property
    def can_follow_up(self) -> bool:
        """Whether :meth:`follow_up` can continue the session: kept open, ended, and some arm's app is open."""
        ended = self._task is not None and self._task.done() and not self._task.cancelled()
        idle = self._segment is None or self._segment.done()
        return self.keep_open and ended and idle and any(not task.done() for task in self._arm_tasks)

    def follow_up(self, prompt: str) -> asyncio.Task[Comparison]:
        """Continue the ended session with one more user turn: every arm whose app is still open answers it on
        the same state with its history so far; the new turn's events are appended to the same session and
        stored. Raises :class:`BadInput` when the session cannot continue or the prompt is empty."""
        if not prompt.strip() or not is_text(prompt):
            raise BadInput("type a follow-up prompt (text) first")
        if not self.can_follow_up:
            raise BadInput("this session cannot continue: its run has not ended, or its apps are closed")
        self._segment = asyncio.ensure_future(self._continue(prompt))
        return self._segment

    async def _continue(self, prompt: str) -> Comparison:
        setup, comparison = self.setup, self.comparison
        self._cancel_requested = False
        found = apps.match_task(setup.app.name, prompt) if setup.app is not None and self.plan else None
        self.plan = [*self.plan, found] if found is not None else []
        self._expected = None
        self._expect()
        self._gate.next_round()
        writer: SessionWriter | None = None
        if self.store is not None:
            from workbench.store.writer import SessionWriter

            writer = self._writer = SessionWriter(
                self.store,
                comparison,
                models={arm.name: setup.models[arm.name].label for arm in setup.arms},
                modes={arm.name: arm.mode for arm in setup.arms},
                resume=True,
            )
        for runner, task in zip(self._runners, self._arm_tasks, strict=True):
            if not task.done():
                runner.idle.clear()
                runner.follow_ups.put_nowait(prompt)
        await self._until_idle(writer)
        return comparison

    async def close(self) -> None:
        """Close the arms' apps of a session kept open (each arm's task ends); nothing more is stored."""
        for runner in self._runners:
            runner.follow_ups.put_nowait(None)
        if self._arm_tasks:
            await asyncio.gather(*self._arm_tasks, return_exceptions=True)
        await self._close_trace()
        self._close_store()

    async def _close_trace(self) -> None:
        """End the session's trace and send what it still holds (off the event loop: a slow collector may
        take its whole flush deadline)."""
        if self._trace is not None:
            await asyncio.to_thread(self._trace.close)

    @property
    def task_label(self) -> str | None:
        """The graded tasks' ids in turn order (``None``: no expected end state)."""
        return " + ".join(task.id for task, _ in self.plan) if self.plan else None

    async def expected_state(self) -> tuple[str, apps.Snapshot] | None:
        """The graded task and its expected end state, computed once for all arms (``None`` when ungraded); for
        a conversation, each turn's task applied in turn order.

        It is built on a worker thread, started with the run (:meth:`_expect`): playing the task on a copy of the
        seeded app is pure CPU work the arms need only at their end, and off the event loop it fills the time the
        loop waits on the model and the sandbox instead of delaying the arms' events."""
        expecting = self._expect()
        if expecting is None:
            return None
        snapshot = await asyncio.shield(expecting)
        label = self.task_label
        assert label is not None
        return label, snapshot

    def _expect(self) -> asyncio.Future[apps.Snapshot] | None:
        """Start building the expected end state of the current plan (once); ``None`` when ungraded."""
        setup = self.setup
        if not self.plan or setup.app is None:
            return None
        if self._expected is None:
            assert setup.demo is not None
            seeded, plan = setup.demo.seeded, tuple(self.plan)  # seeded here, on the loop: the arms copy it too

            def build() -> apps.Snapshot:
                expected_app = seeded.copy()
                for task, params in plan:
                    task.expected_state(expected_app, params)
                return expected_app.snapshot()

            self._expected = asyncio.ensure_future(asyncio.to_thread(build))
            self._expected.add_done_callback(_retrieved)
        return self._expected


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Mark a background future's failure as seen: an arm that awaits it raises it; when none does (every arm
    ended before grading), asyncio must not log it as never retrieved."""
    if not future.cancelled():
        future.exception()


async def _closed(writer: SessionWriter, comparison: Comparison, stopping: bool) -> None:
    """Close a session's writer off the event loop, within its deadline (a few seconds when stopping). A stop
    signal that arrives meanwhile gives up on the database at once: what is not stored goes to the fallback
    file, and the close returns."""
    closing = asyncio.ensure_future(
        asyncio.to_thread(writer.close, comparison, wait_s=STOPPING_WAIT_S if stopping else None)
    )
    try:
        await asyncio.shield(closing)
    except asyncio.CancelledError:
        writer.abandon(f"{writer.store.name} had not stored session {writer.session_id} when the run was stopped")
        await closing
        raise


class ArmRunner:
    """Runs one arm to its end and reports everything it does as events."""

    def __init__(
        self,
        setup: Setup,
        arm: ArmSpec,
        emit: Callable[[ArmEvent], None],
        expected_state: Callable[[], Awaitable[tuple[str, apps.Snapshot] | None]],
        cancel_requested: Callable[[], bool] = lambda: False,
        gate: StartGate | None = None,
        *,
        keep_open: bool = False,
    ) -> None:
        self.setup = setup
        self._gate = gate or StartGate(1)
        self._app_label = setup.app_label
        self._expected_state = expected_state
        self._cancel_requested = cancel_requested
        self.started = False
        """Set once the arm runs (before that, cancelling its task would skip its events entirely)."""
        self.opening = False
        """Set while the arm opens its app: cancelling then ends the start-up, and the arm records itself as
        cancelled (a server's start-up may take up to its whole startup_timeout)."""
        self.spec = arm
        self.arm = arm.name
        self._emit = emit
        self._seq = 0
        self._started = time.perf_counter()
        self.turn = 0
        """The user turn the arm is in (1-based once it runs)."""
        self.history: list[ModelMessage] = []
        """The arm's messages so far (the last completed turn's ``all_messages()``): the next turn's history."""
        self._events: list[ArmEvent] = []
        self._agent: Agent[None, str] | None = None
        self._agent_tools: list[str] | None = None
        """The app's tools the agent was built with: a turn that changes them gets a new agent."""
        self._start_state: apps.Snapshot = {}
        self._recorder: Recorder
        self._translator: Translator
        self.keep_open = keep_open
        """Once its turns are answered, the arm keeps its app open and waits for :attr:`follow_ups`."""
        self.follow_ups: asyncio.Queue[str | None] = asyncio.Queue()
        """Follow-up prompts for an arm kept open; ``None`` closes its app."""
        self.idle = asyncio.Event()
        """Set while the arm is not answering a turn: its turns are done (or it never ran, or it ended)."""

    def emit(self, payload: Payload) -> None:
        event = ArmEvent(self.arm, self._seq, round(time.perf_counter() - self._started, 6), payload, max(1, self.turn))
        self._events.append(event)
        self._emit(event)
        self._seq += 1

    async def run(self) -> None:
        """Open the arm's own app instance, wait until every arm has opened one, then run on it."""
        gate = self._gate
        self.opening = not self._cancel_requested()
        try:
            if not self.opening:
                raise asyncio.CancelledError
            async with self.setup.app_source.open(self.arm) as app:
                self.opening = False
                self._app_label = app.label or self._app_label
                await gate.opened(self.arm, label=self._app_label)
                await self._run(app)
                while self.keep_open and self.started:
                    _uncancel()  # a turn the user cancelled leaves the arm able to take the next one
                    self.idle.set()
                    prompt = await self.follow_ups.get()
                    if prompt is None:
                        break
                    await self.follow_up(app, prompt)
        except asyncio.CancelledError:
            if gate.reported(self.arm) or not self._cancel_requested():
                raise
            await self._end_unopened("cancelled", "cancelled by the user while its app started")
        except Exception as error:
            if gate.reported(self.arm):
                return  # the arm has run and recorded its end; a failure while closing its app changes nothing
            if not isinstance(error, SourceError):
                error = SourceError(f"the app could not be opened: {type(error).__name__}: {one_line(error)}")
            await self._end_unopened("failed", str(error))
        finally:
            self.opening = False
            self.idle.set()

    async def _end_unopened(self, status: Status, error: str) -> None:
        """Record the end of an arm whose app never opened (it failed, or the comparison was cancelled meanwhile)."""
        self.opening = False
        await self._gate.opened(self.arm, error)
        self._started = time.perf_counter()
        self.started = True
        self._emit_started([], [])
        self.emit(RunFinished(status, error, ""))

    def _emit_started(self, tools: list[str], read_only: list[str]) -> None:
        setup = self.setup
        resolved = setup.models[self.arm]
        spec = self.spec
        self.emit(
            RunStarted(
                mode=spec.mode,
                model=resolved.label,
                app=self._app_label,
                items=setup.items,
                seed=setup.seed,
                prompt=setup.prompt,
                tools=spec.tools_seen(tools),
                sandboxed_tools=tools if spec.sandboxed else [],
                read_only_tools=read_only,
                price_label=resolved.pricer.label,
                limits={"request_limit": setup.config.request_limit, "max_result_bytes": setup.config.max_result_bytes}
                | (spec.sandbox_limits(setup.config.sandbox).model_dump() if spec.sandboxed else {}),
                options=dict(spec.options),
            )
        )

    async def _run(self, app: AppInstance) -> None:
        self.started = True
        setup = self.setup
        resolved = setup.models[self.arm]
        self._started = time.perf_counter()
        self._start_state = await app.snapshot()
        self._emit_started(app.tool_names, app.read_only_tools)
        spec = self.spec
        quiet = not spec.eager and spec.speculate(app.tool_names, app.read_only_tools) is None  # nothing else streams
        self._recorder = Recorder(
            sandboxed=frozenset(app.tool_names) if spec.sandboxed else frozenset(),
            max_result_bytes=setup.config.max_result_bytes,
            sink=self.emit if quiet else None,  # nested calls straight to the arm's events (see workbench.recorder)
        )
        self._translator = Translator(
            self._recorder.durations_ms,
            price=lambda usage, name, provider: resolved.pricer.cost(usage, model_name=name, provider=provider),
            eager=spec.eager,
            clipped_from=self._recorder.clipped_from,
            recorder=self._recorder,
        )
        await self._converse(app, setup.prompts, announce=setup.conversation)

    async def follow_up(self, app: AppInstance, prompt: str) -> None:
        """One more user turn on the same app instance and message history (the TUI's follow-up prompt). The
        arm's clock goes on from its last event: the time the person took to type is no arm's time."""
        last = self._events[-1].t if self._events else 0.0
        self._started = time.perf_counter() - last
        await self._converse(app, (prompt,), announce=True)

    async def _converse(self, app: AppInstance, prompts: Sequence[str], *, announce: bool) -> None:
        """Answer ``prompts`` turn after turn, then record the conversation's end (its end state from the arm's
        start, its grade, its status). A turn that does not complete ends the conversation there."""
        status: Status = "completed"
        error: str | None = None
        output = ""
        for prompt in prompts:
            self.turn += 1
            status, error, output = await self._turn(app, prompt, announce=announce)
            if status != "completed":
                break
        await self._finish(app, self._start_state, status, error, output)
        if self.spec.sandboxed:
            await asyncio.sleep(MONTY_SETTLE_S)

    def _emit_in_request(self, payload: Payload) -> None:
        """``payload``, recorded during a model request: after the request's start (see Translator.announce)."""
        for started in self._translator.announce():
            self.emit(started)
        self.emit(payload)

    @property
    def _request_hooks(self) -> RequestHooks:
        """This arm's hooks on its model's requests (set in the arm's task for each turn: the model may be
        shared with other arms)."""
        return RequestHooks(
            on_retry=lambda attempt, most, why, wait: self._emit_in_request(
                ProviderRetry(attempt, most, why, round(wait, 3))
            ),
            on_limiter_wait=lambda waited: self._emit_in_request(LimiterWait(round(waited, 3))),
            acts_while_streaming=self.spec.eager,
        )

    async def _turn(self, app: AppInstance, prompt: str, *, announce: bool) -> tuple[Status, str | None, str]:
        """One user turn: the model's run on ``prompt`` with the history so far. ``announce``: a conversation,
        whose turns are marked by turn events."""
        setup, spec = self.setup, self.spec
        resolved = setup.models[self.arm]
        translator = self._translator
        turn = self.turn
        self._events = []  # this turn's events: its calls go to the app's end-of-turn hook
        if app.begin_turn is not None:
            try:
                await app.begin_turn(turn)
            except Exception as failure:
                problem = f"the app could not begin turn {turn}: {type(failure).__name__}: {one_line(failure)}"
                return "failed", problem, ""
        tools = list(app.tool_names)
        if announce:
            changed = self._agent_tools is not None and tools != self._agent_tools
            self.emit(TurnStarted(turn, prompt, tools if changed else None))
        translator.output = None
        status: Status = "completed"
        error: str | None = None
        budget: asyncio.Timeout | None = None
        hooks = request_hooks.set(self._request_hooks)
        try:
            if self._cancel_requested():
                raise asyncio.CancelledError
            if self._agent is None or tools != self._agent_tools:
                self._agent = build_agent(spec, resolved.model, app, self._recorder, setup.config)
                self._agent_tools = tools
            limits = UsageLimits(request_limit=setup.config.request_limit)
            tool_retries = setup.config.tool_retries if spec.tool_retries is None else spec.tool_retries
            retries: AgentRetries | None = None if tool_retries is None else {"tools": tool_retries}
            async with asyncio.timeout(setup.config.budget_s) as budget:
                async with self._agent.run_stream_events(
                    prompt, message_history=self.history or None, usage_limits=limits, retries=retries
                ) as stream:
                    async for event in stream:
                        if isinstance(event, AgentRunResultEvent):
                            self.history = event.result.all_messages()
                        for payload in translator(event):
                            self.emit(payload)
        except TimeoutError as timed_out:
            if budget is None or not budget.expired():
                status, error = "failed", f"{type(timed_out).__name__}: {one_line(timed_out)}"
            else:
                status, error = (
                    "failed",
                    (f"stopped by the arm's wall-clock budget of {setup.config.budget_s:g} s (arm_budget_s)"),
                )
        except asyncio.CancelledError:
            status, error = "cancelled", "cancelled by the user"
        except UsageLimitExceeded as exceeded:
            status, error = "failed", f"stopped by the request limit: {one_line(exceeded)}"
        except Exception as failure:
            status, error = "failed", f"{type(failure).__name__}: {one_line(failure)}"
        finally:
            request_hooks.reset(hooks)
            self._recorder.run_ended()
        for payload in translator.announce():  # a request sent whose response never began
            self.emit(payload)
        unfinished = translator.unfinished()  # a request sent whose response never came whole: estimated, not 0
        if unfinished is not None:
            self.emit(unfinished)
        problems = app.problems()
        if problems and status == "completed":
            status, error = "failed", problems[0]
        output = translator.output or ""
        if app.end_turn is not None:
            calls = turn_calls(self._events)[-1]
            try:
                await app.end_turn(turn, calls)
            except Exception as failure:
                if status == "completed":
                    status, error = "failed", f"the app could not end turn {turn}: {type(failure).__name__}: {failure}"
        if announce:
            self.emit(TurnEnded(turn, status, error, output))
        return status, error, output

    async def _finish(
        self, app: AppInstance, start: apps.Snapshot, status: Status, error: str | None, output: str
    ) -> None:
        setup = self.setup
        known = True
        stopped = status in UNFINISHED
        try:
            async with asyncio.timeout(STOPPED_STATE_WAIT_S if stopped else None):
                end = await app.snapshot()
        except Exception as failure:
            # Unknown, not unchanged: no diff and no grade are made up (the other arms still get this end).
            end, known = start, False
            if not stopped:  # a stopped arm stays cancelled: its app's state is only what it did so far
                why = str(failure) if isinstance(failure, SourceError) else f"{type(failure).__name__}: {failure}"
                status, error = "failed", error or f"cannot read the end state: {why}"
        if known:
            changes = apps.diff(start, end)
            self.emit(EndState(changes.created, changes.updated, changes.deleted))
        expected = await self._expected_state()
        graded = status not in UNFINISHED  # an arm stopped from outside left its work half done
        if expected is not None:
            if graded and known:
                label, state = expected
                verdict = apps.grade(start, state, end)
                self.emit(as_finished(Graded(verdict.passed, label, verdict.mismatches, verdict.collateral), status))
        elif app.grade is not None:
            if graded and known:
                try:
                    self.emit(as_finished(await app.grade(start, end), status))
                except Exception as failure:
                    problem = f"the check failed: {type(failure).__name__}: {failure}"
                    self.emit(Graded(False, "expectation", [problem], []))
        elif setup.source is not None and setup.source.observable:
            ends = await self._gate.ended(self.arm, ArmEnd(start, end, status))
            if graded and len(setup.arms) > 1:
                self.emit(agreement(self.arm, ends, self._gate.failures, setup.source.rules))
        self.emit(RunFinished(status, error, output))


class StartGate:
    """Where the arms meet: once all have opened their app (or failed to), and once all have ended.

    The comparison starts no arm before every arm's app is up (server start-up is not the arms' time,
    and a source that fails for every arm is refused before anything is stored). At the end, arms on a
    source without an expected state wait for each other's end states to compare them.
    """

    def __init__(self, arms: int) -> None:
        self.arms = arms
        self.failures: dict[str, str] = {}
        self.label: str | None = None
        """The app's label as the first arm to open it reported it."""
        self._opened: set[str] = set()
        self._all_opened = asyncio.Event()
        self.go = asyncio.Event()
        self._ends: dict[str, ArmEnd] = {}
        self._all_ended = asyncio.Event()

    def reported(self, arm: str) -> bool:
        return arm in self._opened

    async def opened(self, arm: str, failure: str | None = None, *, label: str | None = None) -> None:
        """Report ``arm``'s app as open (or failed) and wait for the go."""
        self._opened.add(arm)
        self.label = self.label or label
        if failure is not None:
            self.failures[arm] = failure
        if len(self._opened) >= self.arms:
            self._all_opened.set()
        await self.go.wait()

    async def all_opened(self) -> None:
        await self._all_opened.wait()

    def next_round(self) -> None:
        """A follow-up turn begins: the arms meet again at its end (their new end states are compared)."""
        self._ends = {}
        self._all_ended = asyncio.Event()

    async def ended(self, arm: str, end: ArmEnd) -> dict[str, ArmEnd]:
        """Report ``arm``'s start, end state and status; those of every arm that ran (as far as they arrive)."""
        self._ends[arm] = end
        if len(self._ends) >= self.arms - len(self.failures):
            self._all_ended.set()
        with contextlib.suppress(asyncio.CancelledError):
            await self._all_ended.wait()
        return dict(self._ends)


def _uncancel() -> None:
    """Forget cancellations of the current task that were already handled (an arm recorded as cancelled)."""
    task = asyncio.current_task()
    while task is not None and task.cancelling():
        task.uncancel()
