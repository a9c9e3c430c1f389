"""What went wrong with a provider request, and whether another attempt may help.

pydantic-ai maps every provider's failures onto typed exceptions, so one classification
(:func:`is_transient`) and one description (:func:`describe_failure`) serve every provider alike; the retry
policy (:mod:`workbench.providers.retry`) acts on them.
"""

from __future__ import annotations

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
)
from pydantic_ai.messages import TextPart
from pydantic_ai.models import StreamedResponse
from pydantic_ai.models.function import FunctionStreamedResponse
from pydantic_ai.models.test import TestStreamedResponse

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
"""HTTP statuses worth another attempt: timeout, conflict, too early, rate limited, server errors and
overload. A rejected request (400, 401, 403, 404, 422) fails at once."""
CUT_SHORT = "the stream ended before the model finished"
NO_STREAMED_TOOLS_HINT = (
    " (a server that cannot stream tool calls answers this way: run with --no-stream, or stream = false in the config)"
)


class ProviderError(ModelAPIError):
    """A request that failed after every attempt it was allowed; the message says how and how often."""

    def __init__(self, model_name: str, message: str, *, attempts: int, elapsed_s: float) -> None:
        super().__init__(model_name, message)
        self.attempts = attempts
        self.elapsed_s = elapsed_s


def is_transient(error: BaseException, statuses: frozenset[int] = RETRY_STATUSES) -> bool:
    """Whether sending the same request again may succeed: rate limits, server errors, timeouts,
    dropped connections, streams cut short and malformed responses are; a rejected request, used-up
    quota or filtered content are not."""
    if isinstance(error, ModelQuotaExceededError | ModelRequestRejectedError):
        return False
    if isinstance(error, ModelHTTPError):
        hint = error.provider_retry_hint  # the provider's own x-should-retry, as its SDK would follow it
        if hint is not None:
            return hint
        return error.status_code in statuses
    if isinstance(error, ModelAPIError):
        return True
    return isinstance(error, UnexpectedModelBehavior) and not isinstance(error, ContentFilterError)


def repeats_deterministically(error: BaseException, previous: BaseException | None) -> bool:
    """A server error whose validation message is word for word the one the previous attempt got: the
    request itself is at fault, so sending it again cannot help."""
    if not isinstance(error, ModelHTTPError) or not isinstance(previous, ModelHTTPError):
        return False
    message = _body_message(error.body)
    return (
        error.status_code >= 500
        and error.status_code == previous.status_code
        and "validation" in message.lower()
        and message == _body_message(previous.body)
    )


def describe_failure(error: BaseException, timeout_s: float | None = None) -> str:
    """One line that says what went wrong with a provider request."""
    if isinstance(error, ModelHTTPError):
        return f"HTTP {error.status_code}: {_body_message(error.body)}"
    if isinstance(error, ModelTimeoutError):
        limit = f" within {timeout_s:g} s" if timeout_s is not None else ""
        return f"no complete response{limit} (timed out)"
    if isinstance(error, ModelRequestTimeout):
        return f"no complete response within {error.timeout:g} s (timed out)"
    if isinstance(error, StreamCutShort):
        return error.message
    if isinstance(error, ModelConnectionError):
        return f"connection failed: {_root_message(error)}"
    if isinstance(error, ModelAPIError):
        return error.message
    if isinstance(error, UnexpectedModelBehavior) and "ended without content or tool calls" in error.message:
        return f"{type(error).__name__}: {error.message}{NO_STREAMED_TOOLS_HINT}"
    return f"{type(error).__name__}: {error}"


class StreamCutShort(ModelAPIError):
    """A streamed response that ended before the model finished (no finish reason): the server cut it off."""

    def __init__(self, model_name: str, partial_text: str) -> None:
        kept = " ".join(partial_text.split())
        shown = f" after {len(partial_text):,} characters of text ({_quoted(kept)})" if partial_text else ""
        super().__init__(model_name, f"{CUT_SHORT}{shown}")
        self.partial_text = partial_text


def _quoted(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def cut_short(stream: StreamedResponse, error: BaseException | None = None) -> StreamCutShort | None:
    """Whether ``stream`` (read to its end, or failed with ``error``) ended before the model finished."""
    if isinstance(stream, FunctionStreamedResponse | TestStreamedResponse) or stream.cancelled:
        return None  # in-process models cannot be cut off
    if error is not None:
        if not (isinstance(error, ModelAPIError) and "ended without a `finish_reason`" in error.message):
            return None
    elif stream.finish_reason is not None and stream.state != "incomplete":
        return None
    response = stream.get()
    text = "".join(part.content for part in response.parts if isinstance(part, TextPart))
    return StreamCutShort(stream.model_name, text)


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
    return " ".join(str(body).split()) if body is not None else "(no body)"
