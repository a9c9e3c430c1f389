"""A fake OpenAI-compatible HTTP server for tests, whose answers come from the scripted model's policy.

It speaks enough of the OpenAI API for the real ``openai`` client and pydantic-ai's OpenAI models to run
both arms end to end over HTTP on 127.0.0.1: ``POST /v1/chat/completions`` (``openai-chat:`` models)
and ``POST /v1/responses`` (``openai:`` models), each streamed as server-sent events or answered as one
JSON body. A request is turned back into pydantic-ai messages and an ``AgentInfo`` and handed to
:func:`workbench.scripted.model.decide`; its usage is the real o200k count of the request as it arrived
(instructions, tool definitions, every message) and of the answer, with cached input tokens the way
OpenAI reports them (a prefix seen before, at least 1024 tokens, in 128-token blocks).

Why stdlib ``http.server`` in a thread: no extra dependency, and the server runs outside the test's
event loop, so a fault that blocks (a hang) blocks only the server thread that serves it.

Faults are chosen per model name, so one arm can be faulty while the other is not::

    --tool-model openai-chat:gpt-4o-mini-429x2 --code-model openai-chat:gpt-4o-mini

A suffix ``-<fault>`` applies the fault to every request for that model, ``-<fault>xN`` to its first N
requests only. The model name reported back drops the suffix (so ``gpt-4o-mini-500x1`` answers as
``gpt-4o-mini``). Faults:

- ``400``: HTTP 400, the request rejected (retrying cannot help).
- ``429``: HTTP 429 rate limited (with ``Retry-After``).
- ``500``: HTTP 500 server error.
- ``hang``: accept the request and never answer (until the server stops).
- ``stall``: stream the first chunk, then never send another.
- ``malformed``: HTTP 200 with a body that is not valid JSON (a broken SSE chunk when streaming).
- ``drop``: close the connection without any response.
- ``loop``: never finish: always call a tool again (for request-limit tests).
- ``nousage``: answer without ``usage`` (streamed or not), as many local servers do.
- ``cut``: stream the first chunks, then close the connection: no finish reason, no usage, no ``[DONE]``.
- ``ping``: send SSE keep-alive comments (``: ping``) and nothing else until the server stops (a plain request
  hangs the same way).
- ``badargs``: tool-call arguments with raw newlines inside their JSON strings (not valid JSON), as small models
  write them.
- ``500same``: HTTP 500 whose message is the same validation error every time (retrying cannot help).
- ``nostreamtools``: a streamed request that offers tools gets HTTP 200 with an empty stream (a server that
  cannot stream tool calls); a plain request is answered.
- ``surrogate``: answer as usual, but each text part ends with a lone UTF-16 surrogate (JSON ``"\\ud800"``),
  which real servers do send.
- ``length``: a text answer cut to its first half with ``finish_reason: length``, as a server does at the
  request's max_tokens (chat completions; responses that call tools are answered as usual).
- ``spin``: a code arm's snippet that never ends (``while True: pass``), so the sandbox worker is busy until
  the snippet's time limit (for signal and worker-cleanup tests); a tool arm answers as without a fault.

``FakeOpenAI(policy=...)`` answers with another function instead (any a ``FunctionModel`` takes), to play
tools the scripted model does not know, such as a test's own MCP server.

Use :func:`fake_openai` as a context manager; ``server.url`` is the base URL (``.../v1``) and
``server.requests`` records what was asked and answered. Because the server shares the test's process,
the client's first streamed response (it builds its pydantic schemas then, holding the GIL) can delay an
answer by a second: with sub-second timeouts, warm the client first (``warm_clients`` in
``tests/test_faults.py``).
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.tools import ToolDefinition

from workbench.scripted.model import argument_pieces, decide, text_pieces
from workbench.tokens import count_request, count_response

FAULTS = (
    "400", "429", "500same", "500", "hang", "stall", "malformed", "drop", "loop", "nousage", "cut", "ping", "badargs",
    "nostreamtools", "surrogate", "spin", "length",
)  # fmt: skip
VALIDATION_500 = "1 validation error for ChatCompletionRequest\nmessages.2.content: Input should be a valid string"
PING_INTERVAL_S = 0.05
_FAULT_SUFFIX = re.compile(r"^(?P<base>.+?)-(?P<fault>" + "|".join(FAULTS) + r")(?:x(?P<times>\d+))?$")
CACHE_MIN_TOKENS = 1024
CACHE_BLOCK = 128
SPIN_SNIPPET = "while True:\n    pass"


@dataclass(frozen=True)
class ModelName:
    """A requested model name split into the model it answers as and its fault, if any."""

    requested: str
    base: str
    fault: str | None = None
    times: int | None = None
    """How many of the first requests get the fault; ``None``: all of them."""

    @classmethod
    def parse(cls, name: str) -> ModelName:
        found = _FAULT_SUFFIX.match(name)
        if not found:
            return cls(name, name)
        times = found.group("times")
        return cls(name, found.group("base"), found.group("fault"), int(times) if times else None)


@dataclass
class Recorded:
    """One request the server received and how it answered."""

    path: str
    model: str
    stream: bool
    fault: str | None = None
    status: int = 200
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    body: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Conversation:
    """A request as the scripted policy sees it."""

    messages: list[ModelMessage]
    info: AgentInfo
    tools: list[ToolDefinition]
    instructions: str | None


class FakeOpenAI:
    """The server. Start it with ``with FakeOpenAI() as server:`` (or :func:`fake_openai`)."""

    def __init__(
        self,
        *,
        retry_after: str | None = "0",
        hang_s: float = 30.0,
        latency_s: float = 0.0,
        policy: Callable[[list[ModelMessage], AgentInfo], ModelResponse] = decide,
    ) -> None:
        self.policy = policy
        """What the model answers: the scripted model's policy (the demo apps' tasks), or any function a
        ``FunctionModel`` would take (to play tools the scripted model does not know)."""
        self.latency_s = latency_s
        """Seconds every request waits before it is answered (a slow provider)."""
        self.retry_after = retry_after
        """The ``Retry-After`` header sent with a 429 (``None``: no header)."""
        self.hang_s = hang_s
        """Longest a ``hang`` / ``stall`` holds its connection (the server's stop ends it sooner)."""
        self.requests: list[Recorded] = []
        self.hits: list[tuple[str, str, str | None]] = []
        """Every request that reached the server, answered or not: (method, path, Authorization header)."""
        self.in_flight = 0
        self.max_in_flight = 0
        """Most requests being answered at the same time (for concurrency-limit tests)."""
        self._lock = threading.Lock()
        self._seen: Counter[str] = Counter()
        self._prefixes: dict[str, set[str]] = {}
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._httpd.fake = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def count(self, model: str) -> int:
        """Requests received for one requested model name."""
        return sum(1 for request in self.requests if request.model == model)

    # -- used by the handler ------------------------------------------------------------------------

    def _next_fault(self, name: ModelName) -> str | None:
        with self._lock:
            self._seen[name.requested] += 1
            number = self._seen[name.requested]
        if name.fault is None or (name.times is not None and number > name.times):
            return None
        return name.fault

    def _record(self, recorded: Recorded) -> None:
        with self._lock:
            self.requests.append(recorded)

    def _cached_tokens(self, model: str, conversation: Conversation) -> int:
        """Tokens of the longest prefix of this prompt seen in an earlier request, as OpenAI caches them."""
        digest = hashlib.sha256()
        digest.update(json.dumps([conversation.instructions, [_tool_json(t) for t in conversation.tools]]).encode())
        fingerprints = [digest.hexdigest()]
        for message in conversation.messages:
            digest.update(_message_fingerprint(message).encode())
            fingerprints.append(digest.hexdigest())
        with self._lock:
            seen = self._prefixes.setdefault(model, set())
            longest = max((k for k, fp in enumerate(fingerprints) if fp in seen), default=-1)
            seen.update(fingerprints)
        if longest < 1:
            return 0
        tokens = count_request(conversation.instructions, conversation.tools, conversation.messages[:longest])
        return tokens // CACHE_BLOCK * CACHE_BLOCK if tokens >= CACHE_MIN_TOKENS else 0


@contextmanager
def fake_openai(**options: Any) -> Iterator[FakeOpenAI]:
    """A running :class:`FakeOpenAI` for the duration of the block."""
    with FakeOpenAI(**options) as server:
        yield server


# -- HTTP ------------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def fake(self) -> FakeOpenAI:
        return self.server.fake  # type: ignore[attr-defined]

    def _hit(self) -> None:
        with self.fake._lock:
            self.fake.hits.append((self.command, self.path, self.headers.get("Authorization")))

    def do_GET(self) -> None:
        self._hit()
        if self.path.rstrip("/") == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": "fake", "object": "model", "owned_by": "tests"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

    def do_POST(self) -> None:
        self._hit()
        fake = self.fake
        with fake._lock:
            fake.in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
        try:
            if fake.latency_s:
                fake._stopping.wait(fake.latency_s)
            self._answer()
        finally:
            with fake._lock:
                fake.in_flight -= 1

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._json(400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}})
            return
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/chat/completions"):
            api = "chat"
        elif path.endswith("/responses"):
            api = "responses"
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
            return
        name = ModelName.parse(str(body.get("model", "")))
        stream = bool(body.get("stream"))
        recorded = Recorded(path=path, model=name.requested, stream=stream, body=body)
        fault = self.fake._next_fault(name)
        recorded.fault = fault
        if fault in ("400", "429", "500", "500same", "hang", "drop", "ping") or (fault == "malformed" and not stream):
            self.fake._record(recorded)
            self._fault(fault if stream or fault != "ping" else "hang", recorded)
            return
        if fault == "nostreamtools" and stream and body.get("tools"):
            self.fake._record(recorded)
            self._sse([], fault=None, done=api == "chat")
            return
        conversation = chat_conversation(body) if api == "chat" else responses_conversation(body)
        if fault == "loop":
            response = _loop_response(conversation.info)
        elif fault == "spin" and any(tool.name == "run_code" for tool in conversation.info.function_tools):
            response = ModelResponse(parts=[ToolCallPart("run_code", {"code": SPIN_SNIPPET}, "call_spin")])
        else:
            response = self.fake.policy(conversation.messages, conversation.info)
        if fault == "badargs":
            response = _with_raw_newlines(response)
        recorded.input_tokens = count_request(conversation.instructions, conversation.tools, conversation.messages)
        recorded.output_tokens = count_response(response)
        recorded.cached_tokens = self.fake._cached_tokens(name.requested, conversation)
        self.fake._record(recorded)
        usage = (recorded.input_tokens, recorded.output_tokens, recorded.cached_tokens)
        if fault == "surrogate":
            response = _with_lone_surrogate(response)
        finish = None
        if fault == "length" and not _texts_and_calls(response)[1]:
            response, finish = _cut_in_half(response), "length"
        if api == "chat":
            if stream:
                chunks = chat_chunks(name.base, response, usage, finish=finish)
                self._sse(chunks[:-1] if fault == "nousage" else chunks, fault=fault, done=True)
            else:
                answer = chat_completion(name.base, response, usage, finish=finish)
                self._json(200, {k: v for k, v in answer.items() if k != "usage"} if fault == "nousage" else answer)
        elif stream:
            events = responses_events(name.base, response, usage)
            if fault == "nousage":
                events[-1][1]["response"]["usage"] = None
            self._sse(events, fault=fault, done=False)
        else:
            answer = responses_object(name.base, response, usage)
            self._json(200, {**answer, "usage": None} if fault == "nousage" else answer)

    # -- answers -------------------------------------------------------------------------------------

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    def _fault(self, fault: str | None, recorded: Recorded) -> None:
        if fault == "429":
            recorded.status = 429
            headers = {"Retry-After": self.fake.retry_after} if self.fake.retry_after is not None else {}
            error = {"message": "Rate limit reached (simulated by the fake server)", "type": "requests"}
            self._json(429, {"error": {**error, "code": "rate_limit_exceeded"}}, headers)
        elif fault == "500":
            recorded.status = 500
            error = {"message": "The server had an error processing your request (simulated)", "type": "server_error"}
            self._json(500, {"error": error})
        elif fault == "400":
            recorded.status = 400
            error = {"message": "Invalid value for 'tool_choice' (simulated)", "type": "invalid_request_error"}
            self._json(400, {"error": error})
        elif fault == "500same":
            recorded.status = 500
            self._json(500, {"error": {"message": VALIDATION_500, "type": "BadRequestError", "code": 500}})
        elif fault == "ping":
            recorded.status = 200
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            deadline = time.monotonic() + self.fake.hang_s
            with suppress(OSError):
                while time.monotonic() < deadline and not self.fake._stopping.wait(PING_INTERVAL_S):
                    self.wfile.write(b": ping\n\n")
                    self.wfile.flush()
        elif fault == "hang":
            recorded.status = 0
            self.fake._stopping.wait(self.fake.hang_s)
            self.close_connection = True
        elif fault == "drop":
            recorded.status = 0
            self.close_connection = True
            with suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
        elif fault == "malformed":
            payload = b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"index": 0, "mess'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    def _sse(self, events: Sequence[tuple[str | None, dict[str, Any]]], *, fault: str | None, done: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for index, (event, data) in enumerate(events):
                if fault == "malformed" and index == 0:
                    self.wfile.write(b'data: {"id": "broken", "choices": [{"delta": {"content": "Hel\n\n')
                    self.wfile.flush()
                    return
                head = f"event: {event}\n" if event else ""
                self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                if fault == "stall":
                    self.fake._stopping.wait(self.fake.hang_s)
                    return
                if fault == "cut" and index >= 1:
                    return
            if done:
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


# -- requests -> the scripted policy's view ---------------------------------------------------------


def chat_conversation(body: dict[str, Any]) -> Conversation:
    """A Chat Completions request as pydantic-ai messages (one message per API message, as sent)."""
    instructions: list[str] = []
    messages: list[ModelMessage] = []
    tool_names: dict[str, str] = {}
    for message in body.get("messages", []):
        role = message.get("role")
        content = _text(message.get("content"))
        if role in ("system", "developer"):
            instructions.append(content)
        elif role == "user":
            messages.append(ModelRequest(parts=[UserPromptPart(content)]))
        elif role == "assistant":
            parts: list[Any] = [TextPart(content)] if content else []
            for call in message.get("tool_calls") or []:
                function = call.get("function", {})
                tool_names[call["id"]] = function.get("name", "")
                parts.append(ToolCallPart(function.get("name", ""), function.get("arguments") or "{}", call["id"]))
            messages.append(ModelResponse(parts=parts))
        elif role == "tool":
            call_id = message.get("tool_call_id", "")
            messages.append(ModelRequest(parts=[_tool_return(tool_names.get(call_id, ""), content, call_id)]))
    tools = [
        ToolDefinition(
            name=tool["function"]["name"],
            description=tool["function"].get("description"),
            parameters_json_schema=tool["function"].get("parameters") or {"type": "object", "properties": {}},
        )
        for tool in body.get("tools") or []
        if tool.get("type") == "function"
    ]
    return _conversation(messages, tools, "\n\n".join(instructions) or None)


def responses_conversation(body: dict[str, Any]) -> Conversation:
    """A Responses API request as pydantic-ai messages."""
    instructions = [body["instructions"]] if body.get("instructions") else []
    messages: list[ModelMessage] = []
    tool_names: dict[str, str] = {}
    items = body.get("input") or []
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            role, content = item.get("role"), _text(item.get("content"))
            if role in ("system", "developer"):
                instructions.append(content)
            elif role == "user":
                messages.append(ModelRequest(parts=[UserPromptPart(content)]))
            elif role == "assistant" and content:
                messages.append(ModelResponse(parts=[TextPart(content)]))
        elif kind == "function_call":
            tool_names[item["call_id"]] = item["name"]
            part = ToolCallPart(item["name"], item.get("arguments") or "{}", item["call_id"])
            if messages and isinstance(messages[-1], ModelResponse):
                messages[-1].parts = [*messages[-1].parts, part]
            else:
                messages.append(ModelResponse(parts=[part]))
        elif kind == "function_call_output":
            call_id = item["call_id"]
            output = _text(item.get("output"))
            messages.append(ModelRequest(parts=[_tool_return(tool_names.get(call_id, ""), output, call_id)]))
    tools = [
        ToolDefinition(
            name=tool["name"],
            description=tool.get("description"),
            parameters_json_schema=tool.get("parameters") or {"type": "object", "properties": {}},
        )
        for tool in body.get("tools") or []
        if tool.get("type") == "function"
    ]
    return _conversation(messages, tools, "\n\n".join(instructions) or None)


def _conversation(messages: list[ModelMessage], tools: list[ToolDefinition], instructions: str | None) -> Conversation:
    info = AgentInfo(
        function_tools=tools,
        allow_text_output=True,
        output_tools=[],
        model_settings=None,
        model_request_parameters=ModelRequestParameters(function_tools=tools, allow_text_output=True),
        instructions=instructions,
    )
    return Conversation(messages, info, tools, instructions)


def _tool_return(name: str, content: str, call_id: str) -> ToolReturnPart:
    """A tool result; one pydantic-ai sent as ``{"error": ...}`` (a retry or failure) keeps that outcome."""
    try:
        parsed = json.loads(content)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and set(parsed) == {"error"}:
        error = parsed["error"]
        return ToolReturnPart(name, error if isinstance(error, str) else json.dumps(error), call_id, outcome="retried")
    return ToolReturnPart(name, content, call_id)


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content)
    return str(content)


def _tool_json(tool: ToolDefinition) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters_json_schema}


def _message_fingerprint(message: ModelMessage) -> str:
    if isinstance(message, ModelResponse):
        return json.dumps(
            [[type(p).__name__, getattr(p, "content", None), getattr(p, "args", None)] for p in message.parts],
            default=str,
        )
    return json.dumps([[type(p).__name__, str(getattr(p, "content", ""))] for p in message.parts])


def _with_raw_newlines(response: ModelResponse) -> ModelResponse:
    """``response`` with each tool call's arguments written as JSON whose strings hold raw newlines."""
    parts: list[Any] = []
    for part in response.parts:
        if isinstance(part, ToolCallPart):
            part = ToolCallPart(part.tool_name, part.args_as_json_str().replace("\\n", "\n"), part.tool_call_id)
        parts.append(part)
    return ModelResponse(parts=parts)


def _loop_response(info: AgentInfo) -> ModelResponse:
    """A model that never finishes: it always lists the first page again (or runs a trivial snippet)."""
    names = [tool.name for tool in info.function_tools]
    call_id = f"call_loop_{time.monotonic_ns()}"
    if "run_code" in names:
        return ModelResponse(parts=[ToolCallPart("run_code", {"code": "1 + 1"}, call_id)])
    listing = next((name for name in names if name.startswith("list")), None)
    if listing is None:
        return ModelResponse(parts=[TextPart("Nothing to loop on.")])
    return ModelResponse(parts=[ToolCallPart(listing, {"page": 1}, call_id)])


# -- the scripted policy's answer -> OpenAI wire formats ---------------------------------------------

Usage = tuple[int, int, int]


def _cut_in_half(response: ModelResponse) -> ModelResponse:
    text = _texts_and_calls(response)[0]
    return replace(response, parts=[TextPart(text[: max(1, len(text) // 2)])])


def _with_lone_surrogate(response: ModelResponse) -> ModelResponse:
    parts = [replace(p, content=f"{p.content} \ud800") if isinstance(p, TextPart) else p for p in response.parts]
    return replace(response, parts=parts)


def _texts_and_calls(response: ModelResponse) -> tuple[str, list[ToolCallPart]]:
    text = "".join(part.content for part in response.parts if isinstance(part, TextPart))
    calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
    return text, calls


def _chat_usage(usage: Usage) -> dict[str, Any]:
    prompt, completion, cached = usage
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }


def chat_completion(model: str, response: ModelResponse, usage: Usage, *, finish: str | None = None) -> dict[str, Any]:
    text, calls = _texts_and_calls(response)
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {
                "id": call.tool_call_id,
                "type": "function",
                "function": {"name": call.tool_name, "arguments": call.args_as_json_str()},
            }
            for call in calls
        ]
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish or ("tool_calls" if calls else "stop")}],
        "usage": _chat_usage(usage),
    }


def chat_chunks(
    model: str, response: ModelResponse, usage: Usage, *, finish: str | None = None
) -> list[tuple[str | None, dict[str, Any]]]:
    text, calls = _texts_and_calls(response)
    base = {"id": f"chatcmpl-{time.monotonic_ns()}", "object": "chat.completion.chunk", "created": int(time.time())}
    base["model"] = model

    def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[None, dict[str, Any]]:
        return None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": piece}) for piece in (text_pieces(text) if text else [])]
    for index, call in enumerate(calls):
        for position, piece in enumerate(argument_pieces(call.args_as_json_str())):
            entry: dict[str, Any] = {"index": index, "function": {"arguments": piece}}
            if position == 0:
                entry = {"index": index, "id": call.tool_call_id, "type": "function"}
                entry["function"] = {"name": call.tool_name, "arguments": piece}
            chunks.append(chunk({"tool_calls": [entry]}))
    chunks.append(chunk({}, finish or ("tool_calls" if calls else "stop")))
    chunks.append((None, {**base, "choices": [], "usage": _chat_usage(usage)}))
    return chunks


def _responses_usage(usage: Usage) -> dict[str, Any]:
    prompt, completion, cached = usage
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }


def _responses_items(response: ModelResponse) -> list[dict[str, Any]]:
    text, calls = _texts_and_calls(response)
    items: list[dict[str, Any]] = []
    if text:
        content = [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
        items.append({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": content})
    for index, call in enumerate(calls):
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{index}",
                "call_id": call.tool_call_id,
                "name": call.tool_name,
                "arguments": call.args_as_json_str(),
                "status": "completed",
            }
        )
    return items


def responses_object(model: str, response: ModelResponse, usage: Usage | None, *, done: bool = True) -> dict[str, Any]:
    return {
        "id": "resp_fake",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed" if done else "in_progress",
        "model": model,
        "output": _responses_items(response) if done else [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "temperature": None,
        "top_p": None,
        "usage": _responses_usage(usage) if usage and done else None,
    }


def responses_events(model: str, response: ModelResponse, usage: Usage) -> list[tuple[str | None, dict[str, Any]]]:
    events: list[tuple[str | None, dict[str, Any]]] = []

    def add(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": len(events), **data}))

    add("response.created", response=responses_object(model, response, None, done=False))
    for index, item in enumerate(_responses_items(response)):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            add("response.output_item.added", output_index=index, item={**item, "status": "in_progress", "content": []})
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            add("response.content_part.added", item_id=item["id"], output_index=index, content_index=0, part=part)
            for piece in text_pieces(text):
                add(
                    "response.output_text.delta",
                    item_id=item["id"], output_index=index, content_index=0, delta=piece, logprobs=[],
                )  # fmt: skip
            add(
                "response.output_text.done",
                item_id=item["id"], output_index=index, content_index=0, text=text, logprobs=[],
            )  # fmt: skip
            add(
                "response.content_part.done",
                item_id=item["id"], output_index=index, content_index=0, part={**part, "text": text},
            )  # fmt: skip
        else:
            add(
                "response.output_item.added",
                output_index=index,
                item={**item, "arguments": "", "status": "in_progress"},
            )
            for piece in argument_pieces(item["arguments"]):
                add("response.function_call_arguments.delta", item_id=item["id"], output_index=index, delta=piece)
            add(
                "response.function_call_arguments.done",
                item_id=item["id"], output_index=index, arguments=item["arguments"], name=item["name"],
            )  # fmt: skip
        add("response.output_item.done", output_index=index, item=item)
    add("response.completed", response=responses_object(model, response, usage))
    return events
