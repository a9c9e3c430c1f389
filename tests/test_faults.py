"""Real models over HTTP against the fake OpenAI-compatible server: both arms end to end, the provider's
token counts in the counters and cost, per-arm models, and faults that stay in their arm."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from genai_prices import calc_price
from pydantic_ai import Agent
from pydantic_ai.usage import RequestUsage

from tests.support.fake_openai import FakeOpenAI, ModelName, fake_openai
from workbench.cli import cli
from workbench.config import Settings, load_settings
from workbench.events import ProviderRetry, Usage
from workbench.models import ModelOptions, resolve_model
from workbench.pricing import Pricer
from workbench.providers.retry import RetryPolicy
from workbench.runner import ComparisonRun, Setup, prepare
from workbench.session import Comparison
from workbench.store import Store

TIMEOUT_S = 2.0
"""Each attempt's deadline where a test makes the server hang or stall: short enough that a hang costs the test
seconds. Only those tests pass it: a healthy response from a busy machine (CI's load reaches 12) can take longer."""
HEALTHY_TIMEOUT_S = 60.0
"""Every other test's deadline: a hang guard, never reached, so no healthy response is counted as a timeout and
retried (a stream cut short counted 2 retries instead of 1 once, with a queue test running beside it)."""
TASK = "cart/remove-expensive"
"""Five requests in the tool arm (three list pages, one batch of deletes, the answer), two in the code arm."""


@pytest.fixture(scope="module", autouse=True)
def warm_clients() -> None:
    """Build the OpenAI client's response types once, unhurried.

    The server runs in this process: the first streamed response makes the client generate its pydantic
    schemas for a second or so, holding the GIL the server thread needs, which a 0.5 s timeout would
    count as a hang.
    """
    with fake_openai() as running:
        options = ModelOptions(base_url=running.url, retry=RetryPolicy(retries=0, timeout_s=60))

        async def warm() -> None:
            for spec in ("openai-chat:warm", "openai:warm"):
                agent = Agent(resolve_model(spec, options).model)
                await agent.run("hello")
                async with agent.run_stream("hello") as streamed:
                    await streamed.get_output()

        asyncio.run(warm())


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai() as running:
        yield running


def settings_for(server: FakeOpenAI, **overrides: Any) -> Settings:
    """Small waits between attempts, so a fault costs a test well under a second per retry."""
    values: dict[str, Any] = {"timeout_s": HEALTHY_TIMEOUT_S, "retry_backoff_s": 0.01, "retry_max_wait_s": 0.05}
    values |= overrides
    return load_settings(base_url=server.url, **values)


async def compare(setup: Setup, store: Store | None = None) -> Comparison:
    return await ComparisonRun(setup, store).result()


def usage_events(comparison: Comparison, arm: str) -> list[Usage]:
    return [event.payload for event in comparison.arms[arm].events if isinstance(event.payload, Usage)]


def as_request_usage(usage: Usage) -> RequestUsage:
    return RequestUsage(
        input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, cache_read_tokens=usage.cache_read_tokens
    )


# -- both arms end to end ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "path"), [("openai-chat:gpt-4o-mini", "chat/completions"), ("openai:gpt-5-mini", "responses")]
)
async def test_both_arms_complete_over_http_with_the_servers_token_counts(
    server: FakeOpenAI, spec: str, path: str
) -> None:
    setup = prepare(task=TASK, model=spec, settings=settings_for(server))
    comparison = await compare(setup)
    tool, code = comparison.arms["tool"].summary, comparison.arms["code"].summary
    assert (tool.status, tool.passed, code.status, code.passed) == ("completed", True, "completed", True)
    assert (tool.requests, code.requests) == (5, 2) and code.inner_calls == 38
    assert all(request.path.endswith(path) and request.stream for request in server.requests)
    # Every counter is what the server reported: its input, output and cached-input tokens, response by response.
    reported = sorted((r.input_tokens, r.output_tokens, r.cached_tokens) for r in server.requests)
    counted = sorted(
        (u.input_tokens, u.output_tokens, u.cache_read_tokens)
        for arm in ("tool", "code")
        for u in usage_events(comparison, arm)
    )
    assert counted == reported and len(reported) == 7
    assert tool.input_tokens == sum(u.input_tokens for u in usage_events(comparison, "tool"))
    assert tool.cache_read_tokens > 0 and tool.input_tokens > 5 * code.input_tokens
    # A local server is no provider genai-prices knows: tokens, and "cost unknown", never a made-up price.
    assert tool.cost_usd is None and code.cost_usd is None
    assert "genai-prices" in tool.price_label and server.url in tool.price_label


async def test_cost_is_genai_prices_of_the_servers_usage(server: FakeOpenAI) -> None:
    setup = prepare(task=TASK, model="openai-chat:gpt-4o-mini", settings=settings_for(server))
    as_openai = Pricer(model_ref=None, provider_id="openai", label="priced as openai (test: as if the server were it)")
    models = {arm: dataclasses.replace(resolved, pricer=as_openai) for arm, resolved in setup.models.items()}
    comparison = await compare(dataclasses.replace(setup, models=models))
    for arm in ("tool", "code"):
        expected = sum(
            float(calc_price(as_request_usage(u), "gpt-4o-mini", provider_id="openai").total_price)
            for u in usage_events(comparison, arm)
        )
        summary = comparison.arms[arm].summary
        assert summary.cost_usd == pytest.approx(expected) and expected > 0
    tool = comparison.arms["tool"].summary
    uncached = sum(u.input_tokens * 0.15e-6 + u.output_tokens * 0.6e-6 for u in usage_events(comparison, "tool"))
    assert tool.cost_usd is not None and tool.cost_usd < uncached  # cached input is charged at the cached rate


async def test_each_arm_can_use_its_own_model(server: FakeOpenAI) -> None:
    setup = prepare(
        task=TASK, tool_model="openai-chat:gpt-4o-mini", code_model="scripted", settings=settings_for(server)
    )
    comparison = await compare(setup)
    assert comparison.model == "tool=openai-chat:gpt-4o-mini | code=scripted"
    assert [arm.summary.model for arm in comparison.arms.values()] == ["openai-chat:gpt-4o-mini", "scripted"]
    assert all(arm.summary.status == "completed" for arm in comparison.arms.values())
    assert {request.model for request in server.requests} == {"gpt-4o-mini"} and len(server.requests) == 5
    code = comparison.arms["code"].summary
    assert code.cost_usd is not None and code.price_label == "scripted model, priced as openai:gpt-5-mini"


async def test_the_non_streaming_paths_answer_too(server: FakeOpenAI) -> None:
    retry = RetryPolicy(retries=1, timeout_s=HEALTHY_TIMEOUT_S, backoff_s=0.01)
    options = ModelOptions(base_url=server.url, retry=retry)
    for spec in ("openai-chat:gpt-4o-mini", "openai:gpt-4o-mini", "openai-chat:gpt-4o-mini-malformedx1"):
        result = await Agent(resolve_model(spec, options).model).run("hello")
        assert "scripted model" in result.output and result.usage.input_tokens > 0
    assert [r.stream for r in server.requests] == [False] * 4
    assert [r.fault for r in server.requests][-2:] == ["malformed", None]


# -- faults stay in their arm ------------------------------------------------------------------------


FAULTS = [
    # fault on the tool arm, how it ends, what its error says, requests the server saw for it
    ("429x2", "completed", None, 7),
    ("500x1", "completed", None, 6),
    ("hangx1", "completed", None, 6),
    ("malformedx1", "completed", None, 6),
    ("500", "failed", "failed after 4 attempts in {s} s: HTTP 500: The server had an error processing", 4),
    ("429", "failed", "failed after 4 attempts in {s} s: HTTP 429: Rate limit reached", 4),
    ("hang", "failed", "failed after 4 attempts in {s} s: no complete response within 2 s (timed out)", 4),
    ("malformed", "failed", "failed after 4 attempts in {s} s: Failed to decode response as JSON", 4),
    ("drop", "failed", "connection failed: Server disconnected without sending a response", 4),
    ("stallx1", "completed", None, 6),
    ("stall", "failed", "failed after 4 attempts in {s} s: no complete response within 2 s (timed out)", 4),
]


def hang_deadline(fault: str) -> dict[str, float]:
    """The short deadline for a fault that only a deadline ends (a hang or a stall), none for the others."""
    return {"timeout_s": TIMEOUT_S} if fault.startswith(("hang", "stall")) else {}


@pytest.mark.parametrize(("fault", "status", "error", "requests"), FAULTS, ids=[f[0] for f in FAULTS])
async def test_a_provider_fault_ends_only_its_own_arm(
    server: FakeOpenAI, db_path: Path, fault: str, status: str, error: str | None, requests: int
) -> None:
    faulty = f"gpt-4o-mini-{fault}"
    setup = prepare(task=TASK, tool_model=f"openai-chat:{faulty}", code_model="openai-chat:gpt-4o-mini",
                    settings=settings_for(server, **hang_deadline(fault)))  # fmt: skip
    comparison = await compare(setup, Store(db_path))
    tool, code = comparison.arms["tool"].summary, comparison.arms["code"].summary
    assert (code.status, code.passed) == ("completed", True)
    assert tool.status == status and server.count(faulty) == requests
    # Every attempt after the first was announced in the tool arm's stream, and none in the code arm's.
    assert tool.retries == requests - tool.requests and code.retries == 0
    retries = [e.payload for e in comparison.arms["tool"].events if isinstance(e.payload, ProviderRetry)]
    assert [r.attempt for r in retries] == list(range(1, tool.retries + 1))
    assert all(r.attempts == 4 and r.error and r.wait_s >= 0 for r in retries)
    stored_events = Store(db_path).events(comparison.session_id)
    assert [e.payload for e in stored_events if e.arm == "tool" and isinstance(e.payload, ProviderRetry)] == retries
    if error is None:
        assert tool.error is None and tool.passed is True
    else:
        assert tool.error is not None and tool.error.startswith(f"ProviderError: openai-chat:{faulty} ")
        assert re.search(re.escape(error).replace(re.escape("{s}"), r"[0-9.]+"), tool.error), tool.error
        assert (
            "\n" not in tool.error and tool.passed is False and tool.diff == {"created": 0, "updated": 0, "deleted": 0}
        )
        stored = Store(db_path).load(comparison.session_id).arms["tool"].summary
        assert (stored.status, stored.error) == ("failed", tool.error)


async def test_a_fault_on_the_code_arm_leaves_the_tool_arm_alone(server: FakeOpenAI) -> None:
    setup = prepare(task=TASK, tool_model="openai:gpt-4o-mini", code_model="openai:gpt-4o-mini-500",
                    settings=settings_for(server))  # fmt: skip
    comparison = await compare(setup)
    tool, code = comparison.arms["tool"].summary, comparison.arms["code"].summary
    assert (tool.status, tool.passed) == ("completed", True)
    assert code.status == "failed" and "HTTP 500" in str(code.error) and code.snippets == 0
    assert comparison.status == "failed"


async def test_connection_refused_fails_its_arm_quickly(server: FakeOpenAI) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    settings = settings_for(server)
    unreachable = resolve_model("openai-chat:gpt-4o-mini", dataclasses.replace(settings.model_options(), base_url=dead))
    setup = prepare(task=TASK, tool_model=unreachable.model, code_model="openai-chat:gpt-4o-mini", settings=settings)
    comparison = await compare(setup)
    tool, code = comparison.arms["tool"].summary, comparison.arms["code"].summary
    assert code.status == "completed" and tool.status == "failed"
    assert "failed after 4 attempts" in str(tool.error) and "Connect call failed" in str(tool.error)
    waits = [e.payload.wait_s for e in comparison.arms["tool"].events if isinstance(e.payload, ProviderRetry)]
    assert len(waits) == 3 and sum(waits) <= 3 * 0.05  # the configured backoff, not a timeout, between attempts


async def test_a_model_that_loops_is_stopped_by_the_request_limit(server: FakeOpenAI) -> None:
    setup = prepare(task=TASK, tool_model="openai-chat:gpt-4o-mini-loop", code_model="openai-chat:gpt-4o-mini",
                    settings=settings_for(server, request_limit=4))  # fmt: skip
    comparison = await compare(setup)
    tool, code = comparison.arms["tool"].summary, comparison.arms["code"].summary
    assert tool.status == "failed" and tool.requests == 4 and server.count("gpt-4o-mini-loop") == 4
    assert str(tool.error).startswith(
        "stopped by the request limit: The next request would exceed the request_limit of 4"
    )
    assert code.status == "completed" and code.requests == 2


# -- concurrency per provider ------------------------------------------------------------------------


@pytest.mark.parametrize(("concurrency", "expected"), [(1, 1), (8, 2)])
async def test_requests_in_flight_are_capped_per_provider(concurrency: int, expected: int) -> None:
    with fake_openai(latency_s=0.05) as slow:
        setup = prepare(
            task=TASK, model="openai-chat:gpt-4o-mini", settings=settings_for(slow, concurrency=concurrency)
        )
        comparison = await compare(setup)
    assert comparison.status == "completed"
    assert slow.max_in_flight == expected


# -- the command line --------------------------------------------------------------------------------


def test_the_cli_runs_a_local_server_per_arm_with_a_fault(server: FakeOpenAI, db_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("WORKBENCH_TIMEOUT_S", str(HEALTHY_TIMEOUT_S))
    monkeypatch.setenv("WORKBENCH_RETRY_BACKOFF_S", "0.01")
    args = ["run", "--task", TASK, "--base-url", server.url, "--db", str(db_path),
            "--tool-model", "openai-chat:gpt-4o-mini-500", "--code-model", "openai-chat:gpt-4o-mini"]  # fmt: skip
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert [(a["model"], a["status"], a["passed"]) for a in data["arms"]] == [
        ("openai-chat:gpt-4o-mini-500", "failed", False),
        ("openai-chat:gpt-4o-mini", "completed", True),
    ]
    assert data["arms"][0]["error"].endswith("HTTP 500: The server had an error processing your request (simulated)")
    assert data["arms"][1]["cost_usd"] is None and data["arms"][1]["input_tokens"] > 0
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0
    for text in ("Tool calling error: ProviderError", "cost unknown", "of which cached", "genai-prices"):
        assert text in result.stdout
    assert re.search(r"provider retries\W+3\W+0", result.stdout), result.stdout


# -- the terminal workbench ----------------------------------------------------------------------------


async def test_the_tui_shows_each_retry_in_its_arms_pane_and_both_arms_complete(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    """Over HTTP from the TUI: the first two requests get HTTP 429; each retry is a line in the pane of the
    arm whose request it was, and both arms still complete with the server's token counts."""
    from textual.widgets import Input, TextArea

    from workbench.tui.app import make_app
    from workbench.tui.screens.compare import CompareScreen
    from workbench.tui.widgets.calls import ResponseBlock

    app = make_app(store=Store(tmp_path / "tui.db"), settings=settings_for(server))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        screen.query_one("#model", Input).value = "openai-chat:gpt-4o-mini-429x2"
        screen.query_one("#prompt", TextArea).text = "Remove everything in the cart that costs more than $50 apiece."
        screen.query_one("#items", Input).value = "122"
        await pilot.press("ctrl+r")
        deadline = time.monotonic() + 30
        while screen.last_comparison is None or not screen.feed.idle:
            assert time.monotonic() < deadline, "the comparison did not finish"
            await pilot.pause(0.05)
        await pilot.pause()
        panes = screen.panes.values()
        assert [pane.summary.status for pane in panes] == ["completed", "completed"]
        assert sum(pane.summary.retries for pane in panes) == 2
        retried = next(pane for pane in panes if pane.summary.retries)
        assert re.search(rf"Retries +{retried.summary.retries}\b", str(retried.counters.render()))
        for pane in panes:
            # Under the line of the request that was retried, before its calls.
            notices = [
                line
                for block in pane.transcript.blocks
                if isinstance(block, ResponseBlock) and block.request is not None
                for line in block.plain.splitlines()[1 : 1 + len(block.retries)]
            ]
            assert len(notices) == pane.summary.retries
            assert all("of 4 failed: HTTP 429: Rate limit reached" in text and "trying again in" in text
                       for text in notices)  # fmt: skip
        assert sum(pane.summary.input_tokens for pane in panes) == sum(r.input_tokens for r in server.requests)


def test_bench_runs_per_arm_models_on_a_local_server(server: FakeOpenAI, db_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("WORKBENCH_TIMEOUT_S", str(HEALTHY_TIMEOUT_S))
    monkeypatch.setenv("WORKBENCH_RETRY_BACKOFF_S", "0.01")
    args = ["bench", "--task", TASK, "--base-url", server.url, "--db", str(db_path), "--json", "--chart", "none",
            "--tool-model", "openai-chat:gpt-4o-mini-500x1", "--code-model", "openai-chat:gpt-4o-mini"]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["model"] == "tool=openai-chat:gpt-4o-mini-500x1 | code=openai-chat:gpt-4o-mini"
    assert any("different models" in note for note in report["notes"])
    (run,) = report["runs"]
    assert [(arm["status"], arm["passed"]) for arm in run["arms"].values()] == [("completed", True)] * 2
    assert run["arms"]["tool"]["input_tokens"] == sum(
        r.input_tokens for r in server.requests if r.model == "gpt-4o-mini-500x1" and r.fault is None
    )


def test_model_names_with_faults_answer_as_the_base_model() -> None:
    assert ModelName.parse("gpt-4o-mini-429x2") == ModelName("gpt-4o-mini-429x2", "gpt-4o-mini", "429", 2)
    assert ModelName.parse("qwen3-hang") == ModelName("qwen3-hang", "qwen3", "hang", None)
    assert ModelName.parse("gpt-4o-mini") == ModelName("gpt-4o-mini", "gpt-4o-mini")
