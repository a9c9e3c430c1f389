"""What one arm hears of its model's requests: retries, waits for a provider slot, and whether it acts on a
call while the call still streams.

One model serves every arm that names it (the runner resolves a spec once per comparison, and a ``Model``
instance handed to :func:`workbench.compare` is shared as it is), while each arm runs in its own asyncio task.
So the hooks belong to the arm's task, not to the model: the arm's runner sets them in its task's context
for the length of a turn, and the retrying model and the limiter read them there. This is the one context
variable of the request stack.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

RetryListener = Callable[[int, int, str, float], None]
"""Told ``(failed attempt, most attempts, what failed, seconds until the next)`` before each wait."""


@dataclass(frozen=True)
class RequestHooks:
    """One arm's hooks on its model's requests (none by default: a model used outside an arm)."""

    on_retry: RetryListener | None = None
    on_limiter_wait: Callable[[float], None] | None = None
    """Told the seconds a request waited for a slot of the workbench's own per-provider limit
    (:class:`~workbench.providers.limits.ProviderLimiter`), after each wait that was not zero."""
    acts_while_streaming: bool = False
    """The arm runs a tool call's code while its arguments still stream (eager code mode): a stream cut short
    after a tool call began cannot be tried again there, as the code already ran in part."""


NO_HOOKS = RequestHooks()

request_hooks: ContextVar[RequestHooks] = ContextVar("workbench_request_hooks", default=NO_HOOKS)
"""The hooks of the arm whose task is running (set by its runner around each turn)."""
