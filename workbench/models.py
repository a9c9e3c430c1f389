"""Model specs -> pydantic-ai models, checked before any arm starts.

A spec is ``scripted`` / ``scripted:paced`` (offline) or any pydantic-ai model string
(``openai:gpt-5-mini``, ``openai-chat:qwen3``, ``anthropic:claude-sonnet-4-5``, ``ollama:qwen3``, ...).
Everything that can be known without sending a request is checked here: an unknown provider, a missing
API key (the message names its environment variable), a missing extra (it names the install command).
Real models come back wrapped with bounded retries and a per-provider concurrency cap
(:mod:`workbench.providers`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.exceptions import UserError as PydanticAIUserError
from pydantic_ai.models import Model, infer_model

from workbench.errors import BadInput, one_line
from workbench.pricing import Pricer, pricer_for_spec
from workbench.providers.factory import LOCAL_SERVER_PROVIDERS, harden, provider_factory
from workbench.providers.retry import RetryPolicy
from workbench.scripted import SCRIPTED_MODELS
from workbench.scripted.model import PRICE_AS, Pace, ScriptedModel

SCRIPTED_SPECS = dict(zip(SCRIPTED_MODELS, (None, Pace()), strict=True))

INSTALL_EXTRAS = ("anthropic", "google", "groq", "mistral", "cohere", "bedrock", "huggingface")
"""Provider extras the workbench itself offers (``pip install 'code-mode-workbench[anthropic]'``)."""

BASE_URL_ENV = {
    "openai": "OPENAI_BASE_URL",
    "openai-chat": "OPENAI_BASE_URL",
    "openai-responses": "OPENAI_BASE_URL",
    "ollama": "OLLAMA_BASE_URL",
    "vllm": "VLLM_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
    "groq": "GROQ_BASE_URL",
}
"""The environment variable each provider reads its endpoint from, where it has one."""


class ModelSpecError(BadInput):
    """A model string that cannot be used: unknown, missing key, missing extra. The message says why."""


@dataclass(frozen=True)
class ModelOptions:
    """How real models are reached and the scripted model is priced (see :mod:`workbench.config`)."""

    base_url: str | None = None
    """Endpoint for the model's provider, e.g. a local OpenAI-compatible server's ``http://localhost:8000/v1``."""
    price_as: str = PRICE_AS
    """The real model whose prices the scripted model's token counts are charged at."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    concurrency: int | None = 8
    """Most requests in flight at once per provider endpoint; ``None`` for no limit."""
    max_tokens: int | None = None
    """Most tokens per response, sent with every request; ``None``: the provider's default."""
    stream: bool = True
    """Stream responses; ``False`` sends every request through the provider's non-streaming API."""


@dataclass(frozen=True)
class ResolvedModel:
    model: Model
    label: str
    """What the UI and the stored session call the model (the spec as given, or the instance's name)."""
    pricer: Pricer


def resolve_model(spec: str | Model, options: ModelOptions | None = None, *, policy: Any = None) -> ResolvedModel:
    """Build the model for a spec, raising :class:`ModelSpecError` with pydantic-ai's own message.

    ``policy`` is the scripted model's behaviour on a source that brings its own offline player (BFCL's
    ground truth); it changes nothing for a real model."""
    options = options or ModelOptions()
    if isinstance(spec, ScriptedModel):
        return ResolvedModel(spec, spec.label, spec.pricer)
    if isinstance(spec, Model):
        return ResolvedModel(spec, spec.model_name, Pricer(model_ref=None, label="priced as the responding model"))
    spec = spec.strip()
    if spec in SCRIPTED_SPECS:
        _check_price_as(options.price_as)
        model = ScriptedModel(pace=SCRIPTED_SPECS[spec], price_as=options.price_as, policy=policy)
        return ResolvedModel(model, spec, model.pricer)
    if ":" not in spec:
        raise ModelSpecError(
            f"unknown model {spec!r}: use 'scripted' (offline), 'scripted:paced', or provider:model such as "
            "'openai:gpt-5-mini', 'anthropic:claude-sonnet-4-5', 'ollama:qwen3'"
        )
    provider = spec.partition(":")[0]
    try:
        model = infer_model(spec, provider_factory=provider_factory(options.base_url))
    except ImportError as error:
        raise ModelSpecError(f"cannot use model {spec!r}: {one_line(error)}{_install_hint(error)}") from None
    except (PydanticAIUserError, ValueError) as error:
        raise ModelSpecError(f"cannot use model {spec!r}: {_without_library_advice(one_line(error))}") from None
    _require_finish_reason(model)
    given = options.base_url if provider in LOCAL_SERVER_PROVIDERS else None
    endpoint = given or os.environ.get(BASE_URL_ENV.get(provider, ""), "") or None
    hardened = harden(
        model,
        options.retry,
        concurrency=options.concurrency,
        label=spec,
        stream=options.stream,
        max_tokens=options.max_tokens,
    )
    return ResolvedModel(hardened, spec, pricer_for_spec(spec, endpoint=endpoint))


def _require_finish_reason(model: Model) -> None:
    """Make an OpenAI-compatible chat model's stream that ends without a finish reason an error (pydantic-ai
    would read it as "stop"): a server that cut the stream off has not finished, so the request is retried."""
    try:
        from pydantic_ai.models.openai import OpenAIChatModel
    except ImportError:  # pragma: no cover - the openai extra is installed with the workbench
        return
    profile = model._profile
    if isinstance(model, OpenAIChatModel) and (profile is None or isinstance(profile, dict)):
        model._profile = {**(profile or {}), "openai_chat_streaming_requires_finish_reason": True}
        model.__dict__.pop("profile", None)


def _check_price_as(price_as: str) -> None:
    if Pricer.for_model(price_as).cost_of_nothing() is None:
        raise ModelSpecError(
            f"cannot price the scripted model as {price_as!r}: genai-prices does not know that model; "
            "use provider:model, e.g. 'openai:gpt-5-mini' or 'anthropic:claude-sonnet-4-5'"
        )


def _install_hint(error: ImportError) -> str:
    found = re.search(r"pydantic-ai-slim\[([\w-]+)\]", str(error))
    if found and found.group(1) in INSTALL_EXTRAS:
        return f" (with the workbench: pip install 'code-mode-workbench[{found.group(1)}]')"
    return ""


def _without_library_advice(message: str) -> str:
    """pydantic-ai's missing-key message ends with advice for its own users (``Agent('test')``); the
    workbench's equivalent is the scripted model."""
    from workbench.scripted import SURFACE

    tui = SURFACE.get() == "tui"
    asks_base_url = "(base_url=...)" in message
    if tui:  # the library's own API (``OpenAIProvider(api_key=...)``) means nothing in the workbench's form
        message = re.sub(r" or pass it via `\w+\((?:api_key|base_url)=\.\.\.\)`", "", message)
    trimmed = re.sub(r"\s*To try Pydantic AI without an API key.*$", "", message)
    if trimmed != message:
        if tui:
            return f"{trimmed} Set it before starting the workbench, or type scripted in the Model field (offline)."
        return f"{trimmed} Without a key, --model scripted runs offline."
    if asks_base_url:
        return f"{message} {'Start the workbench with' if tui else 'With the workbench:'} --base-url URL."
    return message
