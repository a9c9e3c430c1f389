"""Model specs -> pydantic-ai models, checked before any arm starts."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic_ai.exceptions import UserError
from pydantic_ai.models import Model, infer_model

from workbench.pricing import Pricer, pricer_for_spec
from workbench.scripted.model import Pace, ScriptedModel

SCRIPTED_SPECS = {"scripted": None, "scripted:paced": Pace()}


class ModelSpecError(ValueError):
    """A model string that cannot be used: unknown, missing key, missing extra. The message says why."""


@dataclass(frozen=True)
class ResolvedModel:
    model: Model
    label: str
    """What the UI and the stored session call the model (the spec as given, or the instance's name)."""
    pricer: Pricer


def resolve_model(spec: str | Model) -> ResolvedModel:
    """Build the model for a spec, raising :class:`ModelSpecError` with pydantic-ai's own message."""
    if isinstance(spec, ScriptedModel):
        return ResolvedModel(spec, spec.label, spec.pricer)
    if isinstance(spec, Model):
        return ResolvedModel(spec, spec.model_name, Pricer(model_ref=None, label="priced as the responding model"))
    spec = spec.strip()
    if spec in SCRIPTED_SPECS:
        model = ScriptedModel(pace=SCRIPTED_SPECS[spec])
        return ResolvedModel(model, spec, model.pricer)
    if ":" not in spec:
        raise ModelSpecError(
            f"unknown model {spec!r}: use 'scripted' (offline), 'scripted:paced', or provider:model such as "
            "'openai:gpt-5-mini', 'anthropic:claude-sonnet-4-5', 'ollama:qwen3'"
        )
    try:
        model = infer_model(spec)
    except (UserError, ValueError, ImportError) as error:
        message = " ".join(str(error).split())
        raise ModelSpecError(f"cannot use model {spec!r}: {message}") from None
    return ResolvedModel(model, spec, pricer_for_spec(spec))
