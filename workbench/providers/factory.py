"""Building a real model's request stack from the settings: the provider pointed at a base URL, the
per-provider limit, the retries, and the non-streaming API for a server that cannot stream."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import Any

from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import CompletedStreamedResponse, Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.concurrency import ConcurrencyLimitedModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.providers import Provider, infer_provider, infer_provider_class
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext

from workbench.providers.limits import limiter_for
from workbench.providers.retry import RetryingModel, RetryPolicy

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


class NonStreamingModel(WrapperModel):
    """Sends every request through the provider's non-streaming API and hands each whole response on as one
    streamed response, so an agent run that streams its events works with a server that cannot stream
    (some local servers answer a streamed request that offers tools with an empty stream)."""

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        response = await self.request(messages, model_settings, model_request_parameters)
        yield CompletedStreamedResponse(response, model_request_parameters=model_request_parameters, replay_events=True)


def harden(
    model: Model,
    policy: RetryPolicy,
    *,
    concurrency: int | None,
    label: str,
    stream: bool = True,
    max_tokens: int | None = None,
) -> Model:
    """A real model with retries around a per-provider concurrency limit (a wait between attempts
    holds no slot); with ``stream=False`` its requests use the non-streaming API."""
    if concurrency is not None:
        endpoint = f"{model.system}@{model.base_url or 'default'}"
        model = ConcurrencyLimitedModel(model, limiter_for(endpoint, concurrency))
    retrying = RetryingModel(model, policy, label=label, max_tokens=max_tokens)
    return retrying if stream else NonStreamingModel(retrying)
