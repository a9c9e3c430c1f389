"""Which DBOS queue a comparison goes on, and the limits each queue enforces across all workers.

One queue per provider that has a ``[queue.providers.NAME]`` table (its rate limit and concurrency), and one
default queue for the rest (``[queue] concurrency``). DBOS keeps a queue's limits in its system database and
every worker's dequeue checks them there, so they hold across machines. A limit counts comparisons
started per period, not model requests: one comparison makes one or more requests per arm.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from workbench.config import QueueSettings

DEFAULT_QUEUE = "workbench"
PROVIDER_QUEUE_PREFIX = "workbench-"


@dataclass(frozen=True)
class QueueLimits:
    """One queue's limits, as DBOS's ``register_queue`` takes them."""

    name: str
    concurrency: int | None = None
    limit: int | None = None
    period_s: float | None = None
    poll_s: float = 1.0

    @property
    def limiter(self) -> dict[str, float] | None:
        if self.limit is None or self.period_s is None:
            return None
        return {"limit": self.limit, "period": self.period_s}


def provider_of(model_label: str) -> str:
    """The provider of a model spec, as config tables name it: ``openai:gpt-5`` -> ``openai``."""
    provider, _, _ = model_label.partition(":")
    return provider.strip().lower()


def queue_for(model_labels: Iterable[str], settings: QueueSettings) -> str:
    """The queue of a comparison whose arms use these models: its first limited provider's, else the default.

    A comparison runs on one queue: when its arms use several limited providers, the first arm's provider
    (in arm order) counts it."""
    for label in model_labels:
        provider = provider_of(label)
        if provider in settings.providers:
            return PROVIDER_QUEUE_PREFIX + provider
    return DEFAULT_QUEUE


def queue_limits(settings: QueueSettings) -> list[QueueLimits]:
    """Every queue the settings define: the default one and one per configured provider."""
    queues = [QueueLimits(DEFAULT_QUEUE, concurrency=settings.concurrency, poll_s=settings.poll_s)]
    for provider, limits in sorted(settings.providers.items()):
        queues.append(
            QueueLimits(
                PROVIDER_QUEUE_PREFIX + provider,
                concurrency=limits.concurrency,
                limit=limits.limit,
                period_s=limits.period_s if limits.limit is not None else None,
                poll_s=settings.poll_s,
            )
        )
    return queues
