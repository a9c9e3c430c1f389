"""Bounded retries of a real model's requests: backoff, per-attempt timeouts, streams carried on after a cut.

pydantic-ai already maps every provider's failures onto typed exceptions (``ModelRateLimitError``,
``ModelServerError``, ``ModelConnectionError``, ``ModelTimeoutError``, a ``ModelAPIError`` for a body it
could not decode, ...), so one model wrapper can decide what is transient for every provider alike.
:class:`RetryingModel` retries those with tenacity (the library ``pydantic_ai.retries`` is built on),
honouring a provider's ``Retry-After``, up to a bound on attempts and on total time. It sits above the
HTTP layer on purpose: a malformed streamed response is only seen when the SDK decodes it, which an
HTTP transport cannot retry. The provider SDK's own retries are switched off (``max_retries=0``) so that
the bound here is the only one.

Each attempt runs under a hard deadline (``timeout_s``) from the first byte sent to the last byte received,
so a server that keeps a stream open with SSE keep-alive comments cannot hold it past that. A streamed
response is retried while it is being opened (pydantic-ai reads its first chunk then), and again when it
ends before the model finished (no finish reason, a timeout, a dropped connection) after text arrived: nothing of
a partial reply ran, so sending it again is safe; what the arm already showed stays in its events as the
partial text of a failed attempt. Only an arm that runs a call's code while it streams (eager code mode) is
not retried once a tool call began, as its statements already ran.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import anyio
from pydantic_ai.exceptions import ModelAPIError
from pydantic_ai.messages import (
    FinalResultEvent,
    ModelMessage,
    ModelResponse,
    ModelResponseStreamEvent,
    ToolCallPart,
)
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models._request_timeout import RequestDeadline
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings, merge_model_settings
from pydantic_ai.tools import RunContext
from pydantic_ai.usage import RequestUsage
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    stop_before_delay,
)

from workbench.providers.failures import (
    RETRY_STATUSES,
    ProviderError,
    StreamCutShort,
    cut_short,
    describe_failure,
    is_transient,
    repeats_deterministically,
)
from workbench.providers.hooks import request_hooks

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try one model request before its arm fails."""

    retries: int = 3
    """Attempts after the first (0: a single attempt)."""
    timeout_s: float = 120.0
    """Per attempt, first byte sent to last byte received (a streamed response read to its end included)."""
    backoff_s: float = 1.0
    """First wait between attempts; it doubles each time, with jitter of the same size."""
    max_backoff_s: float = 20.0
    """Longest single wait, also the cap on what a provider's Retry-After can ask for."""
    budget_s: float = 180.0
    """No new attempt starts once this long has passed since the first one."""
    statuses: frozenset[int] = RETRY_STATUSES
    """HTTP statuses worth another attempt."""

    @property
    def attempts(self) -> int:
        return self.retries + 1


class RetryingModel(WrapperModel):
    """Retries transient failures of the wrapped model's requests, per :class:`RetryPolicy`."""

    def __init__(
        self, wrapped: Model, policy: RetryPolicy, *, label: str | None = None, max_tokens: int | None = None
    ) -> None:
        super().__init__(wrapped)
        self.policy = policy
        self.spec = label or wrapped.model_name
        innermost = wrapped
        while isinstance(innermost, WrapperModel):
            innermost = innermost.wrapped
        unsupported = innermost._unsupported_settings()
        defaults: dict[str, Any] = {"timeout": policy.timeout_s, "max_retries": 0}
        if max_tokens is not None:
            defaults["max_tokens"] = max_tokens
        self._defaults: ModelSettings = {k: v for k, v in defaults.items() if k not in unsupported}  # type: ignore[assignment]

    def _request_settings(self, model_settings: ModelSettings | None) -> ModelSettings:
        return merge_model_settings(self._defaults, model_settings) or {}

    def _deadline(self) -> RequestDeadline:
        """The hard deadline of one attempt, starting now."""
        timeout = self.policy.timeout_s
        return RequestDeadline(self.spec, timeout, anyio.current_time() + timeout)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        settings = self._request_settings(model_settings)

        async def attempt() -> ModelResponse:
            with self._deadline().enforce():
                return await self.wrapped.request(messages, settings, model_request_parameters)

        return await self._with_retries(attempt)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        settings = self._request_settings(model_settings)

        stacks: list[AsyncExitStack] = []

        async def open_stream() -> StreamedResponse:
            stack = AsyncExitStack()
            try:
                deadline = self._deadline()
                with deadline.enforce():
                    stream = await stack.enter_async_context(
                        self.wrapped.request_stream(messages, settings, model_request_parameters, run_context)
                    )
                stream._enforce_request_deadline(deadline)
            except BaseException:
                await stack.aclose()
                raise
            stacks.append(stack)
            return stream

        started = time.monotonic()
        attempts = _Attempts()
        first = await self._with_retries(open_stream, attempts, started)

        async def reopen(cut: ModelAPIError) -> StreamedResponse:
            await stacks.pop().aclose()
            return await self._with_retries(open_stream, attempts, started, failed=cut)

        stream = _RetriedStream(model_request_parameters, current=first, reopen=reopen)
        try:
            try:
                yield stream
            except ModelAPIError as error:
                if isinstance(error, ProviderError) or not is_transient(error):
                    raise
                elapsed = time.monotonic() - started
                arrived = (
                    "the arm had already run part of the streamed tool call"
                    if request_hooks.get().acts_while_streaming
                    else "part of the response had already arrived"
                )
                raise ProviderError(
                    self.spec,
                    f"{self.spec} failed mid-response after {elapsed:.1f} s: "
                    f"{describe_failure(error, self.policy.timeout_s)} (not retried: {arrived})",
                    attempts=attempts.made,
                    elapsed_s=elapsed,
                ) from error
        finally:
            while stacks:
                await stacks.pop().aclose()

    async def _with_retries(
        self,
        attempt_once: Callable[[], Awaitable[T]],
        attempts: _Attempts | None = None,
        started: float | None = None,
        *,
        failed: BaseException | None = None,
    ) -> T:
        """Run ``attempt_once`` until it succeeds or the policy gives up. ``attempts`` and ``started`` carry on
        the count and the clock of a request that already failed once mid-stream (``failed``)."""
        policy = self.policy
        started = time.monotonic() if started is None else started
        attempts = attempts or _Attempts()
        previous: list[BaseException | None] = [failed]
        repeated: list[bool] = [False]

        def worth_retrying(error: BaseException) -> bool:
            repeated[0] = repeats_deterministically(error, previous[0])
            previous[0] = error
            return is_transient(error, policy.statuses) and not repeated[0]

        error: BaseException | None = failed
        if failed is None or (attempts.made < policy.attempts and time.monotonic() - started < policy.budget_s):
            if failed is not None:
                wait = _wait_s(policy, attempts.made, failed)
                self._tell(attempts.made, failed, wait)
                await asyncio.sleep(wait)
            budget_left = max(policy.budget_s - (time.monotonic() - started), 0.0)
            retrying = AsyncRetrying(
                stop=stop_after_attempt(policy.attempts - attempts.made) | stop_before_delay(budget_left),
                wait=_wait(policy),
                retry=retry_if_exception(worth_retrying),
                before_sleep=lambda state: self._announce(state, attempts.made),
                reraise=True,
            )
            try:
                async for attempt in retrying:
                    with attempt:
                        attempts.made += 1
                        return await attempt_once()
            except Exception as raised:
                if not is_transient(raised, policy.statuses):
                    raise
                error = raised
        assert error is not None
        elapsed = time.monotonic() - started
        tries = "1 attempt" if attempts.made == 1 else f"{attempts.made} attempts"
        why = " (the same validation error each time: not retried further)" if repeated[0] else ""
        if isinstance(error, StreamCutShort):
            why = " (a server that never sends a finish reason reads this way too: --no-stream does not need one)"
        raise ProviderError(
            self.spec,
            f"{self.spec} failed after {tries} in {elapsed:.1f} s: {describe_failure(error, policy.timeout_s)}{why}",
            attempts=attempts.made,
            elapsed_s=elapsed,
        ) from error

    def _announce(self, state: RetryCallState, attempt: int) -> None:
        error = state.outcome.exception() if state.outcome else None
        if error is not None:
            self._tell(attempt, error, state.next_action.sleep if state.next_action else 0.0)

    def _tell(self, attempt: int, error: BaseException, wait: float) -> None:
        listener = request_hooks.get().on_retry
        if listener is not None:
            listener(attempt, self.policy.attempts, describe_failure(error, self.policy.timeout_s), wait)


@dataclass
class _Attempts:
    """Attempts made at one request so far (a stream reopened after a cut carries on the count)."""

    made: int = 0


@dataclass
class _RetriedStream(StreamedResponse):
    """A streamed response that, when its stream ends before the model finished (cut short, timed out, its
    connection dropped), carries on with a new attempt; only an arm that acts while a call streams (eager code
    mode) cannot, once a tool call began.

    Every event of every attempt is handed on as it arrives, so the partial text of a cut attempt stays in the
    arm's events (followed by the retry); :meth:`get` and the usage are those of the attempt that finished.
    """

    current: StreamedResponse = field(kw_only=True)
    reopen: Callable[[ModelAPIError], Awaitable[StreamedResponse]] = field(kw_only=True)

    def __aiter__(self) -> AsyncIterator[ModelResponseStreamEvent]:
        if self._event_iterator is None:
            self._event_iterator = self._events()
        return self._event_iterator

    async def _events(self) -> AsyncIterator[ModelResponseStreamEvent]:
        while True:
            try:
                async for event in self.current:
                    if isinstance(event, FinalResultEvent):
                        self.final_result_event = event
                    yield event
                cut = cut_short(self.current)
            except ModelAPIError as error:
                cut = cut_short(self.current, error)
                final = isinstance(error, ProviderError) or self.current.cancelled or not is_transient(error)
                if cut is None and final:
                    raise
                # A timeout or a dropped connection after some of the reply arrived: nothing of it ran (the
                # agent acts on a response once it is whole), so the request is sent again.
                failed: ModelAPIError = error if cut is None else cut
            else:
                if cut is None:
                    self._finished = not self._cancelled
                    return
                failed = cut
            began_call = any(isinstance(part, ToolCallPart) for part in self.current.get().parts)
            if began_call and request_hooks.get().acts_while_streaming:
                raise failed  # the arm already ran part of the streamed call: another attempt would run it again
            self.final_result_event = None
            self.current = await self.reopen(failed)

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:  # pragma: no cover
        async for event in self.current:
            yield event

    def get(self) -> ModelResponse:
        return self.current.get()

    @property
    def usage(self) -> RequestUsage:
        return self.current.usage

    @property
    def model_name(self) -> str:
        return self.current.model_name

    @property
    def provider_name(self) -> str | None:
        return self.current.provider_name

    @property
    def provider_url(self) -> str | None:
        return self.current.provider_url

    @property
    def timestamp(self) -> datetime:
        return self.current.timestamp

    async def cancel(self) -> None:
        self._cancelled = True
        await self.current.cancel()

    async def close_stream(self) -> None:
        await self.current.close_stream()

    def get_stream_cancel_errors(self) -> tuple[type[BaseException], ...]:
        return self.current.get_stream_cancel_errors()


def _wait(policy: RetryPolicy) -> Callable[[RetryCallState], float]:
    def wait(state: RetryCallState) -> float:
        return _wait_s(policy, state.attempt_number, state.outcome.exception() if state.outcome else None)

    return wait


def _wait_s(policy: RetryPolicy, attempt: int, error: BaseException | None) -> float:
    """Seconds before the attempt after ``attempt``: the provider's Retry-After if it asked, else exponential
    backoff with jitter, capped either way."""
    asked = getattr(error, "retry_after", None)
    if isinstance(asked, int | float):
        return min(max(float(asked), 0.0), policy.max_backoff_s)
    backoff = policy.backoff_s * 2 ** (attempt - 1) + random.uniform(0, policy.backoff_s)
    return min(backoff, policy.max_backoff_s)
