"""Dollar cost of a response from its token usage, with genai-prices (offline price data).

A model genai-prices does not know is reported as unpriced (``None``), never given a made-up price.
"""

from __future__ import annotations

from dataclasses import dataclass

from genai_prices import calc_price
from pydantic_ai.usage import RequestUsage


@dataclass(frozen=True)
class Pricer:
    """Prices responses as one named model (``model_ref`` at ``provider_id``)."""

    model_ref: str | None
    provider_id: str | None = None
    label: str = ""
    """How the UI should describe the pricing, e.g. "priced as openai:gpt-5-mini"."""

    def cost(self, usage: RequestUsage, *, model_name: str | None = None, provider: str | None = None) -> float | None:
        """Cost of one response in US dollars, or ``None`` when it cannot be priced.

        ``model_name`` / ``provider`` are what the response itself reported; they are used when this
        pricer names no model of its own (real models are priced as what actually answered).
        """
        ref = self.model_ref or model_name
        if not ref:
            return None
        try:
            price = calc_price(usage, ref, provider_id=self.provider_id or provider)
        except LookupError:
            return None
        return float(price.total_price)

    @property
    def priced(self) -> bool:
        return self.model_ref is not None


def pricer_for_spec(spec: str) -> Pricer:
    """The pricer for a real model string like ``openai:gpt-5-mini``: price by what the provider reports."""
    provider, _, name = spec.partition(":")
    provider = {"openai-chat": "openai", "openai-responses": "openai", "google-gla": "google"}.get(provider, provider)
    return Pricer(model_ref=None, provider_id=provider or None, label=f"priced as {name or spec} (genai-prices)")
