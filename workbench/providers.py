"""Provider plumbing for real models: bounded retries with backoff, per-attempt timeouts, and a cap on
concurrent requests per provider.

pydantic-ai already maps every provider's failures onto typed exceptions (``ModelRateLimitError``,
``ModelServerError``, ``ModelConnectionError``, ``ModelTimeoutError``, a ``ModelAPIError`` for a body it
could not decode, ...), so one model wrapper can decide what is transient for every provider alike.
:class:`RetryingModel` retries those with tenacity (the library ``pydantic_ai.retries`` is built on),
honouring a provider's ``Retry-After``, up to a bound on attempts and on total time. It sits above the
HTTP layer on purpose: a malformed streamed response is only seen when the SDK decodes it, which an
HTTP transport cannot retry. The provider SDK's own retries are switched off (``max_retries=0``) so that
the bound here is the only one.

A streamed response is retried while it is being opened (pydantic-ai reads its first chunk then), never
after its first event was handed on: what the arm already showed stays true.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic_ai.concurrency import AbstractConcurrencyLimiter, ConcurrencyLimiter
from pydantic_ai.exceptions import (
    ContentFilterError,
    ModelAPIError,
    ModelConnectionError,
    ModelHTTPError,
    ModelQuotaExceededError,
    ModelRequestRejectedError,
    ModelRequestTimeout,
    ModelTimeoutError,
    UnexpectedModelBehavior,
    UserError,
)
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.concurrency import ConcurrencyLimitedModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.providers import Provider, infer_provider, infer_provider_class
from pydantic_ai.settings import ModelSettings, merge_model_settings
from pydantic_ai.tools import RunContext
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential,
    wait_random,
)

T = TypeVar("T")

RETRY_STATUSES = frozenset({408, 409, 425, 429})
"""HTTP statuses worth another attempt besides 5xx: timeout, conflict, too early, rate limited."""


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try one model request before its arm fails."""

    retries: int = 3
    """Attempts after the first (0: a single attempt)."""
    timeout_s: float = 120.0
    """Per attempt: to connect, and for each wait for data (the first chunk of a streamed response included)."""
    backoff_s: float = 1.0
    """First wait between attempts; it doubles each time, with jitter of the same size."""
    max_backoff_s: float = 20.0
    """Longest single wait, also the cap on what a provider's Retry-After can ask for."""
    budget_s: float = 180.0
    """No new attempt starts once this long has passed since the first one."""

    @property
    def attempts(self) -> int:
        return self.retries + 1


class ProviderError(ModelAPIError):
    """A request that failed after every attempt it was allowed; the message says how and how often."""

    def __init__(self, model_name: str, message: str, *, attempts: int, elapsed_s: float) -> None:
        super().__init__(model_name, message)
        self.attempts = attempts
        self.elapsed_s = elapsed_s


def is_transient(error: BaseException) -> bool:
    """Whether sending the same request again may succeed: rate limits, server errors, timeouts,
    dropped connections and malformed responses are; a rejected request, used-up quota or filtered
    content are not."""
    if isinstance(error, ModelQuotaExceededError | ModelRequestRejectedError | ModelRequestTimeout):
        return False
    if isinstance(error, ModelHTTPError):
        hint = error.provider_retry_hint  # the provider's own x-should-retry, as its SDK would follow it
        if hint is not None:
            return hint
        return error.status_code in RETRY_STATUSES or error.status_code >= 500
    if isinstance(error, ModelAPIError):
        return True
    return isinstance(error, UnexpectedModelBehavior) and not isinstance(error, ContentFilterError)


def describe_failure(error: BaseException, timeout_s: float | None = None) -> str:
    """One line that says what went wrong with a provider request."""
    if isinstance(error, ModelHTTPError):
        return f"HTTP {error.status_code}: {_body_message(error.body)}"
    if isinstance(error, ModelTimeoutError):
        limit = f" within {timeout_s:g} s" if timeout_s is not None else ""
        return f"no response{limit} (timed out)"
    if isinstance(error, ModelConnectionError):
        return f"connection failed: {_root_message(error)}"
    if isinstance(error, ModelAPIError):
        return error.message
    return f"{type(error).__name__}: {error}"


RetryListener = Callable[[int, int, str, float], None]
"""Told ``(failed attempt, most attempts, what failed, seconds until the next)`` before each wait."""

retry_listener: ContextVar[RetryListener | None] = ContextVar("workbench_retry_listener", default=None)
"""Set by an arm's runner in its own task, so a model shared by both arms reports to the right one."""


class RetryingModel(WrapperModel):
    """Retries transient failures of the wrapped model's requests, per :class:`RetryPolicy`."""

    def __init__(self, wrapped: Model, policy: RetryPolicy, *, label: str | None = None) -> None:
        super().__init__(wrapped)
        self.policy = policy
        self.spec = label or wrapped.model_name
        innermost = wrapped
        while isinstance(innermost, WrapperModel):
            innermost = innermost.wrapped
        unsupported = innermost._unsupported_settings()
        defaults: dict[str, Any] = {"timeout": policy.timeout_s, "max_retries": 0}
        self._retry_defaults: ModelSettings = {k: v for k, v in defaults.items() if k not in unsupported}  # type: ignore[assignment]

    def _request_settings(self, model_settings: ModelSettings | None) -> ModelSettings:
        return merge_model_settings(self._retry_defaults, model_settings) or {}

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        settings = self._request_settings(model_settings)
        return await self._with_retries(lambda: self.wrapped.request(messages, settings, model_request_parameters))

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        settings = self._request_settings(model_settings)

        async def open_stream() -> tuple[AsyncExitStack, StreamedResponse]:
            stack = AsyncExitStack()
            try:
                stream = await stack.enter_async_context(
                    self.wrapped.request_stream(messages, settings, model_request_parameters, run_context)
                )
            except BaseException:
                await stack.aclose()
                raise
            return stack, stream

        started = time.monotonic()
        stack, stream = await self._with_retries(open_stream)
        async with stack:
            try:
                yield stream
            except ModelAPIError as error:
                if isinstance(error, ProviderError) or not is_transient(error):
                    raise
                elapsed = time.monotonic() - started
                raise ProviderError(
                    self.spec,
                    f"{self.spec} failed mid-response after {elapsed:.1f} s: "
                    f"{describe_failure(error, self.policy.timeout_s)} (not retried: part of the response had "
                    "already arrived)",
                    attempts=1,
                    elapsed_s=elapsed,
                ) from error

    async def _with_retries(self, attempt_once: Callable[[], Awaitable[T]]) -> T:
        policy = self.policy
        started = time.monotonic()
        attempts = 0
        retrying = AsyncRetrying(
            stop=stop_after_attempt(policy.attempts) | stop_before_delay(policy.budget_s),
            wait=_wait(policy),
            retry=retry_if_exception(is_transient),
            before_sleep=self._announce,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    attempts += 1
                    return await attempt_once()
        except Exception as error:
            if not is_transient(error):
                raise
            elapsed = time.monotonic() - started
            tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
            raise ProviderError(
                self.spec,
                f"{self.spec} failed after {tries} in {elapsed:.1f} s: {describe_failure(error, policy.timeout_s)}",
                attempts=attempts,
                elapsed_s=elapsed,
            ) from error
        raise AssertionError("unreachable: tenacity either returns or raises")  # pragma: no cover

    def _announce(self, state: RetryCallState) -> None:
        listener = retry_listener.get()
        error = state.outcome.exception() if state.outcome else None
        if listener is not None and error is not None:
            wait = state.next_action.sleep if state.next_action else 0.0
            listener(state.attempt_number, self.policy.attempts, describe_failure(error, self.policy.timeout_s), wait)


def _wait(policy: RetryPolicy) -> Callable[[RetryCallState], float]:
    exponential = wait_exponential(multiplier=policy.backoff_s, max=policy.max_backoff_s) + wait_random(
        0, policy.backoff_s
    )

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        asked = getattr(error, "retry_after", None)
        if isinstance(asked, int | float):
            return min(max(float(asked), 0.0), policy.max_backoff_s)
        return min(exponential(state), policy.max_backoff_s)

    return wait


def _root_message(error: BaseException) -> str:
    """The message of the innermost cause (the SDK's "Connection error." hides e.g. "Connection refused")."""
    message = str(error)
    seen: set[int] = set()
    cause = error.__cause__ or error.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if str(cause).strip():
            message = str(cause)
        cause = cause.__cause__ or cause.__context__
    return " ".join(message.split())


def _body_message(body: object) -> str:
    """The provider's own error message out of an error body, else the body as one short line."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(body.get("message"), str):
            return body["message"]
    text = " ".join(str(body).split()) if body is not None else "(no body)"
    return text[:300]


# -- providers with a base URL ----------------------------------------------------------------------


LOCAL_SERVER_PROVIDERS = frozenset({"openai", "openai-chat", "openai-responses", "ollama", "vllm"})
"""Providers a base URL points at a self-hosted OpenAI-compatible server (vLLM, LM Studio, llama.cpp,
Ollama). Hosted providers keep their own endpoint, so a base URL in the config never redirects them."""


def provider_factory(base_url: str | None) -> Callable[[str], Provider[Any]]:
    """``infer_model``'s provider factory, pointing OpenAI-compatible providers at ``base_url`` if given."""
    if base_url is None:
        return infer_provider

    def factory(provider_name: str) -> Provider[Any]:
        if provider_name not in LOCAL_SERVER_PROVIDERS:
            try:
                infer_provider_class(provider_name)
            except ValueError:
                raise UserError(f"Unknown provider: {provider_name}") from None
            return infer_provider(provider_name)
        provider_class = infer_provider_class(provider_name)
        return provider_class(base_url=base_url)

    return factory


# -- concurrency per provider ---------------------------------------------------------------------


class ProviderLimiter(AbstractConcurrencyLimiter):
    """At most ``max_running`` requests in flight to one provider endpoint, across arms and sweep runs.

    One semaphore per event loop, so a limiter made before ``asyncio.run`` (or shared by several runs
    in turn) never waits on a loop that is gone.
    """

    def __init__(self, name: str, max_running: int) -> None:
        self.name = name
        self.max_running = max_running
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ConcurrencyLimiter] = (
            weakref.WeakKeyDictionary()
        )

    def _current(self) -> ConcurrencyLimiter:
        loop = asyncio.get_running_loop()
        limiter = self._by_loop.get(loop)
        if limiter is None:
            limiter = self._by_loop[loop] = ConcurrencyLimiter(self.max_running, name=self.name)
        return limiter

    async def acquire(self, source: str) -> None:
        await self._current().acquire(source)

    def release(self) -> None:
        self._current().release()

    @property
    def running_count(self) -> int:
        """Requests in flight on the current event loop."""
        return self._current().running_count


_limiters: dict[tuple[str, int], ProviderLimiter] = {}


def limiter_for(endpoint: str, max_running: int) -> ProviderLimiter:
    """The process-wide limiter for one provider endpoint (e.g. ``openai@https://api.openai.com/v1/``)."""
    key = (endpoint, max_running)
    if key not in _limiters:
        _limiters[key] = ProviderLimiter(endpoint, max_running)
    return _limiters[key]


def harden(model: Model, policy: RetryPolicy, *, concurrency: int | None, label: str) -> Model:
    """A real model with retries around a per-provider concurrency limit (a wait between attempts
    holds no slot)."""
    if concurrency is not None:
        endpoint = f"{model.system}@{model.base_url or 'default'}"
        model = ConcurrencyLimitedModel(model, limiter_for(endpoint, concurrency))
    return RetryingModel(model, policy, label=label)
