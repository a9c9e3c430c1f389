"""Model specs, pre-flight errors, pricing, and the retry / concurrency plumbing of real models."""

from __future__ import annotations

import asyncio
import importlib.util
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic_ai import Agent
from pydantic_ai.exceptions import (
    ContentFilterError,
    ModelAPIError,
    ModelHTTPError,
    ModelQuotaExceededError,
    ModelTimeoutError,
    UnexpectedModelBehavior,
)
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from workbench.cli import cli
from workbench.models import ModelOptions, ModelSpecError, resolve_model
from workbench.pricing import Pricer, pricer_for_spec
from workbench.providers.failures import ProviderError, describe_failure, is_transient
from workbench.providers.hooks import RequestHooks, request_hooks
from workbench.providers.limits import ProviderLimiter
from workbench.providers.retry import RetryingModel, RetryPolicy
from workbench.runner import BadInput, prepare
from workbench.scripted.model import ScriptedModel
from workbench.store import Store

FAST = RetryPolicy(retries=3, timeout_s=60.0, backoff_s=0.001, max_backoff_s=0.01, budget_s=120.0)
"""Quick retries; the timeout and budget are bounds no busy machine reaches, so no attempt times out."""


# -- pre-flight --------------------------------------------------------------------------------------


def test_a_missing_key_names_its_environment_variable() -> None:
    with pytest.raises(ModelSpecError) as raised:
        resolve_model("openai:gpt-5-mini")
    message = str(raised.value)
    assert message.startswith("cannot use model 'openai:gpt-5-mini': Set the `OPENAI_API_KEY` environment variable")
    assert "--model scripted" in message and "Agent('test')" not in message and "\n" not in message


def test_an_openai_compatible_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    resolved = resolve_model("openai-chat:qwen3", ModelOptions(base_url="http://127.0.0.1:9/v1"))
    assert resolved.label == "openai-chat:qwen3" and resolved.model.model_name == "qwen3"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert resolve_model("openai-chat:qwen3").model.base_url == "http://127.0.0.1:9/v1/"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("gpt-5", "unknown model 'gpt-5': use 'scripted' (offline)"),
        ("nosuch:model", "cannot use model 'nosuch:model': Unknown model: nosuch:model"),
        ("ollama:qwen3", "Set the `OLLAMA_BASE_URL` environment variable"),
        ("deepseek:deepseek-chat", "`DEEPSEEK_API_KEY`"),
    ],
)
def test_unusable_specs_say_why(spec: str, expected: str) -> None:
    with pytest.raises(ModelSpecError, match=None) as raised:
        resolve_model(spec)
    assert expected in str(raised.value)


def test_a_base_url_redirects_only_openai_compatible_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    local = "http://127.0.0.1:9/v1"
    for spec in ("openai:m", "openai-chat:m", "ollama:m", "vllm:m"):
        assert resolve_model(spec, ModelOptions(base_url=local)).model.base_url == local + "/"
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")
    hosted = resolve_model("deepseek:deepseek-chat", ModelOptions(base_url=local))
    assert str(hosted.model.base_url).startswith("https://api.deepseek.com")
    assert hosted.pricer.provider_api_url is None and hosted.pricer.provider_id == "deepseek"


@pytest.mark.skipif(importlib.util.find_spec("anthropic") is not None, reason="the anthropic extra is installed")
def test_a_missing_extra_names_the_install_command() -> None:
    with pytest.raises(ModelSpecError) as raised:
        resolve_model("anthropic:claude-sonnet-4-5")
    message = str(raised.value)
    assert "Please install the `anthropic` package" in message
    assert "pip install 'code-mode-workbench[anthropic]'" in message


def test_prepare_checks_every_arm_before_anything_starts() -> None:
    with pytest.raises(BadInput, match="OPENAI_API_KEY"):
        prepare(task="cart/remove-expensive", tool_model="scripted", code_model="openai:gpt-5-mini")
    # A shared default model that is unusable does not matter when both arms name their own.
    setup = prepare(task="cart/remove-expensive", model="openai:gpt-5-mini", tool_model="scripted",
                    code_model="scripted:paced")  # fmt: skip
    assert setup.model_label == "tool=scripted | code=scripted:paced"


def test_the_cli_preflight_is_one_line_exit_2_and_stores_nothing(db_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["run", "--task", "cart/remove-expensive", "--code-model", "openai:gpt-5-mini", "--db", str(db_path)]
    )
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert lines[0].startswith("workbench: error: cannot use model 'openai:gpt-5-mini': Set the `OPENAI_API_KEY`")
    assert not db_path.exists() or Store(db_path).sessions() == []


def test_the_cli_unknown_model_message(db_path: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "--task", "cart/remove-expensive", "--model", "nosuch:x", "--db",
                                      str(db_path)])  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr == "workbench: error: cannot use model 'nosuch:x': Unknown model: nosuch:x\n"


# -- pricing -----------------------------------------------------------------------------------------


def test_real_models_are_priced_by_genai_prices_and_cached_input_costs_less() -> None:
    pricer = pricer_for_spec("openai-chat:gpt-4o-mini")
    fresh = pricer.cost(RequestUsage(input_tokens=10_000, output_tokens=500), model_name="gpt-4o-mini")
    cached = pricer.cost(
        RequestUsage(input_tokens=10_000, output_tokens=500, cache_read_tokens=8_000), model_name="gpt-4o-mini"
    )
    assert fresh == pytest.approx(10_000 * 0.15e-6 + 500 * 0.6e-6)
    assert cached is not None and fresh is not None and cached < fresh


def test_an_unknown_model_is_cost_unknown_never_a_guess() -> None:
    usage = RequestUsage(input_tokens=1_000, output_tokens=100)
    assert pricer_for_spec("openai-chat:my-finetune").cost(usage, model_name="my-finetune") is None
    # A local server is nobody genai-prices knows, even when what it serves shares a hosted model's name.
    local = pricer_for_spec("openai-chat:gpt-4o-mini", endpoint="http://127.0.0.1:8000/v1")
    assert local.cost(usage, model_name="gpt-4o-mini") is None
    hosted = pricer_for_spec("openai-chat:gpt-4o-mini", endpoint="https://api.openai.com/v1")
    assert hosted.cost(usage, model_name="gpt-4o-mini") == pytest.approx(1_000 * 0.15e-6 + 100 * 0.6e-6)


def test_the_scripted_model_is_priced_as_the_configured_model() -> None:
    default = resolve_model("scripted")
    other = resolve_model("scripted", ModelOptions(price_as="openai:gpt-4o"))
    assert isinstance(other.model, ScriptedModel)
    assert default.pricer.label == "scripted model, priced as openai:gpt-5-mini"
    assert other.pricer.label == "scripted model, priced as openai:gpt-4o"
    usage = RequestUsage(input_tokens=1_000_000, output_tokens=0)
    assert other.pricer.cost(usage) == pytest.approx(2.5)
    with pytest.raises(ModelSpecError, match="genai-prices does not know that model"):
        resolve_model("scripted", ModelOptions(price_as="openai:no-such-model"))
    assert Pricer.for_model("anthropic:claude-sonnet-4-5").cost_of_nothing() == 0


# -- what is retried ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (ModelHTTPError(429, "m"), True),
        (ModelHTTPError(500, "m"), True),
        (ModelHTTPError(503, "m"), True),
        (ModelHTTPError(408, "m"), True),
        (ModelHTTPError(400, "m"), False),
        (ModelHTTPError(401, "m"), False),
        (ModelHTTPError(404, "m"), False),
        (ModelHTTPError.for_category(ModelQuotaExceededError, status_code=429, model_name="m"), False),
        (ModelHTTPError(500, "m", headers={"x-should-retry": "false"}), False),
        (ModelHTTPError(400, "m", headers={"x-should-retry": "true"}), True),
        (ModelTimeoutError("m", "Request timed out."), True),
        (ModelAPIError("m", "Failed to decode response as JSON: ..."), True),
        (UnexpectedModelBehavior("Invalid response from openai chat completions endpoint"), True),
        (ContentFilterError("filtered"), False),
        (ValueError("a bug"), False),
    ],
)
def test_which_failures_are_transient(error: BaseException, transient: bool) -> None:
    assert is_transient(error) is transient


def test_failures_read_as_one_line() -> None:
    body = {"error": {"message": "Rate limit reached", "type": "requests"}}
    assert describe_failure(ModelHTTPError(429, "m", body)) == "HTTP 429: Rate limit reached"
    timed_out = ModelTimeoutError("m", "Request timed out.")
    assert describe_failure(timed_out, 2.0) == "no complete response within 2 s (timed out)"


class Flaky:
    """A FunctionModel policy that fails ``failures`` times with ``error``, then answers."""

    def __init__(self, failures: int, error: Exception) -> None:
        self.failures = failures
        self.error = error
        self.calls = 0

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return ModelResponse(parts=[TextPart("done")])

    async def stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        yield "done"


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_transient_failure_is_retried_until_it_succeeds(streamed: bool) -> None:
    flaky = Flaky(2, ModelHTTPError(429, "flaky"))
    model = RetryingModel(FunctionModel(flaky.respond, stream_function=flaky.stream), FAST)
    agent = Agent(model)
    if streamed:
        async with agent.run_stream("hi") as result:
            output = await result.get_output()
    else:
        output = (await agent.run("hi")).output
    assert output == "done" and flaky.calls == 3


async def test_retries_are_bounded_and_the_error_says_how_often() -> None:
    flaky = Flaky(99, ModelHTTPError(500, "down", {"error": {"message": "boom"}}))
    agent = Agent(RetryingModel(FunctionModel(flaky.respond), FAST, label="openai:down"))
    with pytest.raises(ProviderError) as raised:
        await agent.run("hi")
    assert flaky.calls == FAST.attempts == 4
    assert str(raised.value).startswith("openai:down failed after 4 attempts in ")
    assert str(raised.value).endswith(": HTTP 500: boom")
    assert isinstance(raised.value.__cause__, ModelHTTPError)


async def test_a_rejected_request_is_not_retried() -> None:
    flaky = Flaky(99, ModelHTTPError(400, "bad", {"error": {"message": "bad request"}}))
    with pytest.raises(ModelHTTPError):
        await Agent(RetryingModel(FunctionModel(flaky.respond), FAST)).run("hi")
    assert flaky.calls == 1


def _announced_waits() -> list[float]:
    """The waits the retrying model announces before each new attempt (what the pane shows)."""
    waits: list[float] = []
    request_hooks.set(RequestHooks(on_retry=lambda attempt, attempts, why, wait: waits.append(wait)))
    return waits


async def test_retry_after_is_honoured_up_to_the_cap() -> None:
    asked = ModelHTTPError(429, "slow", headers={"retry-after-ms": "200"})
    waits = _announced_waits()
    flaky = Flaky(1, asked)
    await Agent(RetryingModel(FunctionModel(flaky.respond), FAST)).run("hi")
    assert flaky.calls == 2 and waits == [FAST.max_backoff_s]  # capped at max_backoff_s = 0.01
    slow = RetryPolicy(retries=1, timeout_s=60.0, backoff_s=0.001, max_backoff_s=1.0)
    flaky = Flaky(1, asked)
    started = time.monotonic()
    await Agent(RetryingModel(FunctionModel(flaky.respond), slow)).run("hi")
    assert flaky.calls == 2 and waits == [FAST.max_backoff_s, 0.2]
    assert time.monotonic() - started >= 0.2 * 0.99  # the wait really happened (load only makes it longer)


async def test_no_attempt_starts_after_the_time_budget() -> None:
    """A 0.2 s budget with 0.05 s between attempts ends the request long before its 50 retries: at most
    1 + 0.2 / 0.05 attempts fit (fewer on a busy machine, never more)."""
    budget = RetryPolicy(retries=50, timeout_s=60.0, backoff_s=0.05, max_backoff_s=0.05, budget_s=0.2)
    waits = _announced_waits()
    flaky = Flaky(99, ModelHTTPError(503, "busy"))
    with pytest.raises(ProviderError) as raised:
        await Agent(RetryingModel(FunctionModel(flaky.respond), budget)).run("hi")
    assert 1 <= flaky.calls <= 5 and raised.value.attempts == flaky.calls
    assert len(waits) == flaky.calls - 1 and all(wait == 0.05 for wait in waits)


def test_requests_carry_the_timeout_and_no_sdk_retries() -> None:
    resolved = resolve_model("openai-chat:qwen3", ModelOptions(base_url="http://127.0.0.1:9/v1", retry=FAST))
    assert isinstance(resolved.model, RetryingModel)
    assert resolved.model._request_settings(None) == {"timeout": 60.0, "max_retries": 0}
    assert resolved.model._request_settings({"timeout": 5}) == {"timeout": 5, "max_retries": 0}


# -- concurrency per provider ------------------------------------------------------------------------


def test_a_provider_limiter_caps_requests_in_flight_on_any_event_loop() -> None:
    limiter = ProviderLimiter("openai@test", 2)

    async def burst() -> int:
        running = peak = 0

        async def request() -> None:
            nonlocal running, peak
            await limiter.acquire("test")
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.01)
            running -= 1
            limiter.release()

        await asyncio.gather(*(request() for _ in range(6)))
        return peak

    assert asyncio.run(burst()) == 2
    assert asyncio.run(burst()) == 2  # a second loop gets its own semaphore, not the closed loop's


def test_models_of_one_provider_endpoint_share_a_limiter() -> None:
    options = ModelOptions(base_url="http://127.0.0.1:9/v1", concurrency=3)
    first = resolve_model("openai-chat:a", options).model
    second = resolve_model("openai-chat:b", options).model
    assert first.wrapped._limiter is second.wrapped._limiter  # type: ignore[attr-defined]
    other = resolve_model("openai-chat:a", ModelOptions(base_url="http://127.0.0.1:10/v1", concurrency=3)).model
    assert other.wrapped._limiter is not first.wrapped._limiter  # type: ignore[attr-defined]
