"""Dollar cost of a response from its token usage, with genai-prices (offline price data).

A model genai-prices does not know is reported as unpriced (``None``, shown as "cost unknown"), never
given a made-up price. Cached input tokens are charged at the provider's cached rate when the response
reports them (``cache_read_tokens``).
"""

from __future__ import annotations

from dataclasses import dataclass

from genai_prices import calc_price
from pydantic_ai.usage import RequestUsage

PROVIDER_IDS = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "google-gla": "google",
    "google-vertex": "google",
}
"""pydantic-ai provider prefixes whose genai-prices provider id is spelled differently."""


@dataclass(frozen=True)
class Pricer:
    """Prices responses as one named model (``model_ref`` at ``provider_id``), or as what answered."""

    model_ref: str | None
    provider_id: str | None = None
    label: str = ""
    """How the UI should describe the pricing, e.g. "priced as openai:gpt-5-mini"."""
    provider_api_url: str | None = None
    """A custom endpoint the model is served from: the provider is whoever genai-prices recognises at
    that URL (a local server is nobody, so its responses are unpriced)."""

    @classmethod
    def for_model(cls, spec: str, label: str = "") -> Pricer:
        """A pricer that charges every response as the model ``provider:model`` (or a bare model name)."""
        provider, _, name = spec.partition(":")
        if not name:
            return cls(model_ref=provider, label=label or f"priced as {spec}")
        return cls(model_ref=name, provider_id=PROVIDER_IDS.get(provider, provider), label=label or f"priced as {spec}")

    def cost(self, usage: RequestUsage, *, model_name: str | None = None, provider: str | None = None) -> float | None:
        """Cost of one response in US dollars, or ``None`` when it cannot be priced.

        ``model_name`` / ``provider`` are what the response itself reported; they are used when this
        pricer names no model of its own (real models are priced as what actually answered).
        """
        ref = self.model_ref or model_name
        if not ref:
            return None
        try:
            if self.provider_api_url is not None:
                price = calc_price(usage, ref, provider_api_url=self.provider_api_url)
            else:
                price = calc_price(usage, ref, provider_id=self.provider_id or provider)
        except LookupError:
            return None
        return float(price.total_price)

    def cost_of_nothing(self) -> float | None:
        """``0.0`` when this pricer can price its model at all, else ``None`` (checks a named model up front)."""
        return self.cost(RequestUsage())

    @property
    def priced(self) -> bool:
        return self.model_ref is not None


def pricer_for_spec(spec: str, *, endpoint: str | None = None) -> Pricer:
    """The pricer for a real model string like ``openai:gpt-5-mini``: price by what the provider reports.

    With a custom ``endpoint`` (``--base-url`` or the provider's base-URL variable) the provider is the
    one genai-prices recognises at that URL, so a local vLLM / LM Studio / Ollama server is "cost unknown"
    even when the model it serves shares a name with a hosted one.
    """
    provider, _, name = spec.partition(":")
    if endpoint:
        return Pricer(
            model_ref=None,
            provider_api_url=endpoint,
            label=f"endpoint {endpoint}: priced by genai-prices if it knows the provider there, else cost unknown",
        )
    provider_id = PROVIDER_IDS.get(provider, provider)
    return Pricer(model_ref=None, provider_id=provider_id or None, label=f"priced as {name or spec} (genai-prices)")
