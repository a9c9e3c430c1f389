"""Events to and from the events table's columns: one encoding, used by the store, the writer and the fallback
files alike."""

from __future__ import annotations

import json
from typing import Any

import pydantic_core

from workbench.errors import is_text
from workbench.events import ArmEvent, payload_from
from workbench.store.fallback import EventTuple


def encode_event(event: ArmEvent) -> EventTuple:
    """An event as the events table holds it. Never fails: text that is not valid Unicode (a lone
    surrogate from a provider) is stored with U+FFFD in its place, and the rest of the event as it was."""
    try:
        data = pydantic_core.to_json(event.payload, fallback=str).decode()
    except (pydantic_core.PydanticSerializationError, UnicodeError, ValueError):
        plain = pydantic_core.to_jsonable_python(event.payload, fallback=str)
        data = json.dumps(_cleaned(plain), ensure_ascii=False)
    return (event.arm, event.seq, event.t, event.kind, data)


def decode_event(arm: str, seq: int, t: float, kind: str, data: str) -> ArmEvent:
    """An events-table row back as the event it was (the inverse of :func:`encode_event`)."""
    return ArmEvent(arm=arm, seq=seq, t=t, payload=payload_from(kind, json.loads(data)))


def clean_text(text: str) -> str:
    """``text`` with each lone UTF-16 surrogate replaced by U+FFFD (a pair is joined into its character)."""
    if is_text(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _cleaned(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [_cleaned(item) for item in value]
    if isinstance(value, dict):
        return {clean_text(str(key)): _cleaned(item) for key, item in value.items()}
    return value
