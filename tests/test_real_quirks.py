"""Real servers as they are, over HTTP against the fake OpenAI-compatible server: responses without usage,
streams cut short, endless keep-alives, malformed tool-call arguments, errors that retrying cannot fix, and
servers that cannot stream tool calls. Both arms, the real ``openai`` client, streaming and not."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from rich.console import Console
from test_faults import compare, settings_for, usage_events, warm_clients  # noqa: F401 (warm_clients: autouse)

import workbench.apps as apps
from tests.support.fake_openai import VALIDATION_500, FakeOpenAI, fake_openai
from workbench.bench.export import session_markdown
from workbench.cli import cli
from workbench.config import load_settings
from workbench.display import arm_cost, clipped_error
from workbench.events import ProviderRetry, Snippet, ToolResult, payload_from
from workbench.pricing import Pricer
from workbench.printer import comparison_view
from workbench.runner import prepare
from workbench.scripted import player
from workbench.timeline import SnippetEntry
from workbench.timeline_records import SnippetRecord
from workbench.tui.widgets.snippet import SnippetBlock

TASK = "cart/remove-expensive"
CHAT = "openai-chat:gpt-4o-mini"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai() as running:
        yield running


# -- usage the server did not report -----------------------------------------------------------------


@pytest.mark.parametrize("spec", [CHAT, "openai:gpt-5-mini"])
@pytest.mark.parametrize("stream", [True, False])
async def test_a_response_without_usage_is_counted_and_marked_estimated(
    server: FakeOpenAI, spec: str, stream: bool
) -> None:
    setup = prepare(task=TASK, model=f"{spec}-nousage", settings=settings_for(server, **_streaming(stream)))
    comparison = await compare(setup)
    for arm in ("tool", "code"):
        summary = comparison.arms[arm].summary
        usages = usage_events(comparison, arm)
        assert summary.status == "completed" and summary.passed
        assert summary.tokens_estimated and all(usage.estimated for usage in usages)
        assert all(usage.input_tokens > 0 and usage.output_tokens > 0 for usage in usages)
        # The estimate is the same o200k count the server makes of the request it received.
        served = [r for r in server.requests if r.model.endswith("nousage") and _arm_of(r.body) == arm]
        assert len(served) == len(usages) == summary.requests
        for request, usage in zip(served, usages, strict=True):
            assert abs(usage.input_tokens - request.input_tokens) <= 0.02 * request.input_tokens + 8
            assert usage.output_tokens == request.output_tokens
        assert summary.to_dict()["tokens_estimated"] is True
        assert summary.cost_usd is None  # a local server: cost unknown, estimated or not
    assert all(request.stream == stream for request in server.requests)


async def test_cost_priced_from_estimated_tokens_is_labelled_estimated(server: FakeOpenAI) -> None:
    setup = prepare(task=TASK, model=f"{CHAT}-nousage", settings=settings_for(server))
    as_openai = Pricer(model_ref="gpt-4o-mini", provider_id="openai", label="priced as openai:gpt-4o-mini")
    models = {arm: dataclasses.replace(resolved, pricer=as_openai) for arm, resolved in setup.models.items()}
    comparison = await compare(dataclasses.replace(setup, models=models))
    tool = comparison.arms["tool"].summary
    assert tool.tokens_estimated and tool.cost_usd is not None and tool.cost_usd > 0
    assert arm_cost(tool).startswith("~$")
    console = Console(width=160, record=True)
    console.print(comparison_view(comparison))
    text = console.export_text()
    assert f"~{tool.input_tokens:,}" in text and "estimated" in text


def test_an_endpoint_that_never_answered_has_cost_unknown_not_zero(server: FakeOpenAI, db_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["run", "--task", TASK, "--model", f"{CHAT}-500", "--base-url", server.url, "--json", "--db", str(db_path)],
        env={"WORKBENCH_RETRIES": "0"},
    )
    assert result.exit_code == 0, result.output
    arms = json.loads(result.stdout)["arms"]
    assert [arm["cost_usd"] for arm in arms] == [None, None]
    assert [arm["status"] for arm in arms] == ["failed", "failed"]
    table = CliRunner().invoke(cli, ["show", json.loads(result.stdout)["session_id"], "--db", str(db_path)])
    assert "cost unknown" in table.stdout and "$0.0000" not in table.stdout


def test_run_json_has_retries_cached_tokens_and_estimated_per_arm(server: FakeOpenAI, db_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["run", "--task", TASK, "--tool-model", f"{CHAT}-429x1", "--code-model", f"{CHAT}-nousage",
         "--base-url", server.url, "--json", "--db", str(db_path)],
        env={"WORKBENCH_RETRY_BACKOFF_S": "0.01", "WORKBENCH_RETRY_MAX_WAIT_S": "0.05"},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    tool, code = json.loads(result.stdout)["arms"]
    assert (tool["provider_retries"], code["provider_retries"]) == (1, 0)
    assert tool["cached_input_tokens"] > 0 and code["cached_input_tokens"] == 0
    assert (tool["tokens_estimated"], code["tokens_estimated"]) == (False, True)
    assert code["input_tokens"] > 0 and code["output_tokens"] > 0


def _streaming(stream: bool) -> dict[str, Any]:
    return {} if stream else {"stream": False}


def _arm_of(body: dict[str, Any]) -> str:
    tools = [tool.get("function", tool).get("name") for tool in body.get("tools") or []]
    return "code" if "run_code" in tools else "tool"


# -- streams cut short -------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [CHAT, "openai:gpt-5-mini"])
async def test_a_stream_cut_short_is_retried_and_its_partial_text_is_not_the_answer(
    server: FakeOpenAI, spec: str
) -> None:
    setup = prepare(task=TASK, tool_model=f"{spec}-cutx1", code_model=spec, settings=settings_for(server))
    comparison = await compare(setup)
    tool = comparison.arms["tool"]
    assert tool.summary.status == "completed" and tool.summary.passed and tool.summary.retries == 1
    retry = next(event.payload for event in tool.events if isinstance(event.payload, ProviderRetry))
    assert retry.error.startswith("the stream ended before the model finished")
    assert comparison.arms["code"].summary.retries == 0
    assert server.count(f"{spec.partition(':')[2]}-cutx1") == tool.summary.requests + 1


async def test_a_stream_cut_short_every_time_fails_its_arm_and_keeps_no_answer(server: FakeOpenAI) -> None:
    setup = prepare(task=TASK, model=f"{CHAT}-cut", settings=settings_for(server, retries=1))
    comparison = await compare(setup)
    for arm in ("tool", "code"):
        summary = comparison.arms[arm].summary
        assert summary.status == "failed" and summary.output == "" and summary.passed is False
        assert "failed after 2 attempts" in (summary.error or "")
        assert "the stream ended before the model finished" in (summary.error or "")
        assert "--no-stream does not need one" in (summary.error or "")


# -- hard deadlines and max_tokens -------------------------------------------------------------------


async def test_a_stream_that_stalls_after_its_first_chunk_is_sent_again(server: FakeOpenAI) -> None:
    """Nothing of a partial reply ran in a tool or plain code arm, so a timeout mid-stream is retried there."""
    setup = prepare(task=TASK, model=f"{CHAT}-stallx1", settings=settings_for(server, timeout_s=2.0))
    comparison = await compare(setup)
    for arm in ("tool", "code"):
        summary = comparison.arms[arm].summary
        assert summary.status == "completed" and summary.passed, summary.error
    assert comparison.arms["tool"].summary.retries + comparison.arms["code"].summary.retries == 1


@pytest.mark.parametrize("stream", [True, False])
async def test_keep_alive_pings_do_not_hold_a_request_past_its_timeout(server: FakeOpenAI, stream: bool) -> None:
    server.hang_s = 60.0  # the server would ping (or, not streaming, hang) for a minute; its stop ends that
    settings = settings_for(server, timeout_s=0.4, retries=1, **_streaming(stream))
    setup = prepare(task=TASK, model=f"{CHAT}-ping", settings=settings)
    comparison = await asyncio.wait_for(compare(setup), timeout=45)  # a hang guard, not a timing assertion
    for arm in ("tool", "code"):
        summary = comparison.arms[arm].summary
        assert summary.status == "failed" and summary.retries == 1
        assert "failed after 2 attempts" in (summary.error or "")
        assert "no complete response within 0.4 s (timed out)" in (summary.error or "")


async def test_an_arm_past_its_wall_clock_budget_is_stopped(server: FakeOpenAI) -> None:
    server.hang_s = 60.0
    settings = settings_for(server, timeout_s=30.0, arm_budget_s=0.3)
    setup = prepare(task=TASK, model=f"{CHAT}-hang", settings=settings)
    comparison = await asyncio.wait_for(compare(setup), timeout=45)  # a hang guard, not a timing assertion
    for arm in ("tool", "code"):
        summary = comparison.arms[arm].summary
        assert summary.status == "failed" and summary.output == ""
        assert summary.error == "stopped by the arm's wall-clock budget of 0.3 s (arm_budget_s)"


@pytest.mark.parametrize("stream", [True, False])
async def test_max_tokens_is_sent_with_every_request(server: FakeOpenAI, stream: bool) -> None:
    setup = prepare(task=TASK, model=CHAT, settings=settings_for(server, max_tokens=777, **_streaming(stream)))
    comparison = await compare(setup)
    assert comparison.status == "completed"
    assert server.requests and all(
        (request.body.get("max_tokens") or request.body.get("max_completion_tokens")) == 777
        for request in server.requests
    )


# -- errors retrying cannot fix -----------------------------------------------------------------------


async def test_a_500_with_the_same_validation_error_each_time_stops_after_the_second(server: FakeOpenAI) -> None:
    setup = prepare(task=TASK, model=f"{CHAT}-500same", settings=settings_for(server, retries=5))
    comparison = await compare(setup)
    for arm in ("tool", "code"):
        summary = comparison.arms[arm].summary
        assert summary.status == "failed" and summary.retries == 1
        error = summary.error or ""
        assert "failed after 2 attempts" in error and "not retried further" in error
        assert VALIDATION_500.split("\n")[1] in error  # the whole message, not cut
    assert server.count("gpt-4o-mini-500same") == 4


async def test_a_rejected_request_is_not_retried_and_its_error_is_kept_whole(server: FakeOpenAI) -> None:
    setup = prepare(task=TASK, model=f"{CHAT}-400", settings=settings_for(server))
    comparison = await compare(setup)
    for arm in ("tool", "code"):
        summary = comparison.arms[arm].summary
        assert summary.status == "failed" and summary.retries == 0
        assert "400" in (summary.error or "") and "Invalid value for 'tool_choice'" in (summary.error or "")
    assert server.count("gpt-4o-mini-400") == 2


# -- servers that cannot stream tool calls -----------------------------------------------------------


async def test_a_server_that_cannot_stream_tools_fails_streaming_with_advice(server: FakeOpenAI) -> None:
    setup = prepare(task=TASK, model=f"{CHAT}-nostreamtools", settings=settings_for(server, retries=0))
    comparison = await compare(setup)
    for arm in ("tool", "code"):
        error = comparison.arms[arm].summary.error or ""
        assert "ended without content or tool calls" in error and "--no-stream" in error


@pytest.mark.parametrize("spec", [CHAT, "openai:gpt-5-mini"])
def test_no_stream_runs_both_arms_through_the_plain_api(server: FakeOpenAI, db_path: Path, spec: str) -> None:
    result = CliRunner().invoke(
        cli,
        ["run", "--task", TASK, "--model", f"{spec}-nostreamtools", "--base-url", server.url, "--no-stream",
         "--json", "--db", str(db_path)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    arms = json.loads(result.stdout)["arms"]
    assert [(arm["status"], arm["passed"]) for arm in arms] == [("completed", True), ("completed", True)]
    assert [arm["requests"] for arm in arms] == [5, 2]
    assert server.requests and not any(request.stream for request in server.requests)


# -- malformed tool-call arguments --------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
async def test_run_code_arguments_that_are_not_json_keep_their_text_and_code(server: FakeOpenAI, stream: bool) -> None:
    settings = settings_for(server, **_streaming(stream))
    setup = prepare(task=TASK, tool_model=CHAT, code_model=f"{CHAT}-badargsx1", settings=settings)
    comparison = await compare(setup)
    code = comparison.arms["code"]
    snippets = [event.payload for event in code.events if isinstance(event.payload, Snippet)]
    first = snippets[0]
    assert first.raw_arguments is not None and "\n" in first.raw_arguments  # as the model wrote it
    assert first.code and first.code.count("\n") >= 3 and first.code in first.raw_arguments
    task = apps.get_task(TASK)
    assert first.code == player.snippet(task.play, dict(task.defaults))  # recovered whole
    results = [event.payload for event in code.events if isinstance(event.payload, ToolResult)]
    result = next(result for result in results if result.call_id == first.call_id)
    # What the model was told (pydantic-ai's retry: the code field missing from its wrapper of the raw text).
    assert result.outcome == "retried" and "INVALID_JSON" in (result.error or "") and "code" in (result.error or "")
    assert code.summary.malformed_calls == 1 and code.summary.to_dict()["malformed_calls"] == 1
    assert code.summary.status == "completed" and not code.summary.inner_calls  # it never reached the sandbox
    markdown = session_markdown(comparison)
    assert "run_code arguments were not valid JSON" in markdown and first.code.splitlines()[1] in markdown
    stored_snippet = payload_from("snippet", json.loads(json.dumps(first.to_dict())))
    assert stored_snippet == first


def test_a_snippet_whose_arguments_were_not_json_is_labelled_so_not_as_a_sandbox_error() -> None:
    record = SnippetRecord("call_1", code="x = 1\ny = 2", complete=True, raw_arguments='{"code": "x = 1\ny = 2"}')
    record.result = ToolResult("call_1", "run_code", "retried", "", 10, 0.0, error="Invalid JSON: control character")
    text = "\n".join(line.plain for line in SnippetBlock(SnippetEntry(record=record)).lines(100, None)[0])
    assert "arguments were not valid JSON" in text and "sandbox error" not in text and "2 lines" in text


def test_a_long_error_is_stored_whole_and_clipped_in_views_with_a_pointer() -> None:
    error = "ProviderError: " + "x" * 5_000 + " THE END"
    assert clipped_error("short") == "short"
    shown = clipped_error(error)
    assert len(shown) < 700 and "THE END" not in shown and "`workbench show ID --json` has it whole" in shown


async def test_an_arm_of_its_own_can_skip_streaming_while_the_others_stream(server: FakeOpenAI) -> None:
    settings = settings_for(server, retries=0, arms={"plain": {"mode": "tool", "stream": False, "tool_retries": 3}})
    setup = prepare(task=TASK, model=f"{CHAT}-nostreamtools", arms=["plain", "code"], settings=settings)
    comparison = await compare(setup)
    plain, code = comparison.arms["plain"].summary, comparison.arms["code"].summary
    assert (plain.status, plain.passed) == ("completed", True)
    assert code.status == "failed" and "--no-stream" in (code.error or "")
    assert sorted({request.stream for request in server.requests}) == [False, True]


@pytest.mark.parametrize(("tool_retries", "bad_calls"), [(None, 2), (4, 5)])
async def test_the_tool_retry_limit_is_a_setting(tool_retries: int | None, bad_calls: int) -> None:
    """A model that keeps asking for an item that does not exist: pydantic-ai's default allows one retry."""

    def stubborn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("get_cart_item", {"item_id": "no-such-item"})])

    settings = load_settings(tool_retries=tool_retries)
    setup = prepare(task=TASK, model=FunctionModel(stubborn), arms=["tool"], settings=settings)
    comparison = await compare(setup)
    summary = comparison.arms["tool"].summary
    assert summary.status == "failed" and summary.tool_calls == bad_calls
    assert f"exceeded max retries count of {tool_retries or 1}" in (summary.error or "")


def test_a_bench_on_a_server_without_usage_says_its_tokens_are_estimated(server: FakeOpenAI, db_path: Path) -> None:
    args = ["bench", "--task", TASK, "--base-url", server.url, "--db", str(db_path), "--json", "--chart", "none",
            "--no-stream", "--model", f"{CHAT}-nousage"]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    (run,) = report["runs"]
    assert all(arm["tokens_estimated"] and arm["input_tokens"] > 0 for arm in run["arms"].values())
    assert any(note.startswith("Token counts of 2 of 2 arm runs are estimated") for note in report["notes"])
    assert not any(request.stream for request in server.requests)


@pytest.mark.parametrize(("arm", "status", "retries"), [("code", "completed", 1), ("code-eager", "failed", 0)])
async def test_an_eager_arm_whose_streamed_snippet_was_cut_is_not_retried(
    server: FakeOpenAI, arm: str, status: str, retries: int
) -> None:
    """Eager code mode runs statements while the snippet streams: sending the request again would run them twice."""
    setup = prepare(task=TASK, model=f"{CHAT}-cutx1", arms=[arm], settings=settings_for(server))
    comparison = await compare(setup)
    summary = comparison.arms[arm].summary
    assert (summary.status, summary.retries) == (status, retries)
    if status == "failed":
        assert "the stream ended before the model finished" in (summary.error or "")
        assert "not retried: the arm had already run part of the streamed tool call" in (summary.error or "")
