"""The comparison engine on the scripted model and on hand-written FunctionModels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.models.test import TestModel

import workbench
from workbench.events import (
    EndState,
    Graded,
    InnerCall,
    InnerResult,
    RunFinished,
    RunStarted,
    SnippetDelta,
    ToolCall,
    ToolResult,
    Usage,
)
from workbench.scripted.model import HELP_REPLIES, ScriptedModel

TASK = "cart/remove-expensive"


@pytest.fixture(scope="module")
def worked_example() -> workbench.Comparison:
    """The published worked example at its default size (122 cart lines), stored in a module-wide db."""
    return workbench.compare_sync(task=TASK, db=False)


def payloads(comparison: workbench.Comparison, arm: str, kind: type) -> list:
    return [event.payload for event in comparison.arms[arm].events if isinstance(event.payload, kind)]


def test_both_arms_pass_the_worked_example_with_the_same_diff(worked_example: workbench.Comparison) -> None:
    tool, code = worked_example.arms["tool"].summary, worked_example.arms["code"].summary
    assert (tool.status, code.status) == ("completed", "completed")
    assert tool.passed and code.passed
    assert tool.diff == code.diff == {"created": 0, "updated": 0, "deleted": 35}
    tool_diff, code_diff = payloads(worked_example, "tool", EndState)[0], payloads(worked_example, "code", EndState)[0]
    assert sorted(d["id"] for d in tool_diff.deleted) == sorted(d["id"] for d in code_diff.deleted)
    assert all(d["record"]["unit_price"] > 50 for d in code_diff.deleted)


def test_code_mode_uses_fewer_input_tokens_on_the_worked_example(worked_example: workbench.Comparison) -> None:
    tool, code = worked_example.arms["tool"].summary, worked_example.arms["code"].summary
    assert code.input_tokens < tool.input_tokens / 3
    assert code.cost_usd is not None and tool.cost_usd is not None and code.cost_usd < tool.cost_usd
    # The tool arm pages through 122 lines (3 pages), then removes 35 lines in one response, then answers.
    assert tool.requests == 5 and tool.tool_calls == 3 + 35
    # The code arm writes one snippet that makes the same 38 calls inside the sandbox, then answers.
    assert code.requests == 2 and code.tool_calls == 1 and code.snippets == 1 and code.inner_calls == 38
    # The tool arm's context grows with every page it re-sends.
    assert tool.input_tokens_per_request == sorted(tool.input_tokens_per_request)


def test_tool_arm_batches_its_actions_in_one_response(worked_example: workbench.Comparison) -> None:
    events = worked_example.arms["tool"].events
    calls_per_request: dict[int, list[str]] = {}
    request = 0
    for event in events:
        if event.kind == "request_started":
            request = event.payload.request
        elif isinstance(event.payload, ToolCall):
            calls_per_request.setdefault(request, []).append(event.payload.name)
    assert calls_per_request == {1: ["list_cart_items"], 2: ["list_cart_items"], 3: ["list_cart_items"],
                                 4: ["delete_cart_item"] * 35}  # fmt: skip


def test_inner_calls_carry_their_parent_run_code_id(worked_example: workbench.Comparison) -> None:
    (run_code,) = payloads(worked_example, "code", ToolCall)
    inner_calls = payloads(worked_example, "code", InnerCall)
    inner_results = payloads(worked_example, "code", InnerResult)
    assert run_code.name == "run_code"
    assert {call.parent_id for call in inner_calls} == {run_code.call_id}
    assert {result.parent_id for result in inner_results} == {run_code.call_id}
    assert [c.name for c in inner_calls].count("list_cart_items") == 3
    assert all(result.outcome == "ok" and result.bytes > 0 for result in inner_results)
    assert {c.call_id for c in inner_calls} == {r.call_id for r in inner_results}


def test_snippet_streams_and_ends_as_the_code_that_ran(worked_example: workbench.Comparison) -> None:
    deltas = payloads(worked_example, "code", SnippetDelta)
    (final,) = [e.payload for e in worked_example.arms["code"].events if e.kind == "snippet"]
    assert len(deltas) > 3
    assert all(final.code.startswith(delta.code) for delta in deltas)
    assert "asyncio.gather" in final.code and "list_cart_items(page=page)" in final.code


def test_usage_events_keep_running_totals(worked_example: workbench.Comparison) -> None:
    for arm in ("tool", "code"):
        usage = payloads(worked_example, arm, Usage)
        assert sum(u.input_tokens for u in usage) == usage[-1].total_input_tokens
        assert usage[-1].total_cost_usd == pytest.approx(sum(u.cost_usd for u in usage))


def test_events_are_numbered_and_timed_per_arm(worked_example: workbench.Comparison) -> None:
    for arm in worked_example.arms.values():
        assert [e.seq for e in arm.events] == list(range(len(arm.events)))
        times = [e.t for e in arm.events]
        assert times == sorted(times)
        assert isinstance(arm.events[0].payload, RunStarted)
        assert [type(e.payload) for e in arm.events[-3:]] == [EndState, Graded, RunFinished]


def test_run_json_contract_shape(worked_example: workbench.Comparison) -> None:
    data = json.loads(json.dumps(worked_example.to_dict()))
    assert list(data) == [
        "session_id",
        "app",
        "items",
        "seed",
        "prompt",
        "task",
        "demonstration",
        "arms",
        "stored",
        "store_error",
    ]
    assert (data["app"], data["items"], data["seed"], data["task"]) == ("cart", 122, 0, TASK)
    assert [arm["name"] for arm in data["arms"]] == ["tool", "code"]
    for arm in data["arms"]:
        assert list(arm) == [
            "name", "mode", "model", "status", "passed", "verdict", "verdict_reason", "requests", "input_tokens",
            "output_tokens", "tool_calls", "inner_calls", "snippets", "cost_usd", "wall_s", "waited_s", "error", "diff",
            "mismatches", "options",
            "eager_statements", "speculation", "provider_retries", "cached_input_tokens", "tokens_estimated",
            "malformed_calls", "finish_reason", "cut_at_max_tokens",
        ]  # fmt: skip
        assert list(arm["diff"]) == ["created", "updated", "deleted"]
        assert (arm["provider_retries"], arm["tokens_estimated"]) == (0, False)  # the scripted model counts its own


def test_prompt_variations_are_understood_and_graded() -> None:
    result = workbench.compare_sync(
        "Please remove every item in the cart that costs more than $120 apiece", app="cart", items=40, db=False
    )
    assert result.task == TASK
    for arm in result.arms.values():
        assert arm.summary.passed, arm.summary.mismatches
        removed = payloads(result, arm.name, EndState)[0].deleted
        assert removed and all(r["record"]["unit_price"] > 120 for r in removed)
    assert "$120" in result.arms["tool"].summary.output


def test_unknown_prompt_gets_a_clear_reply_and_no_grade() -> None:
    result = workbench.compare_sync("Write me a poem about carts", app="cart", items=5, db=False)
    for arm in result.arms.values():
        summary = arm.summary
        assert summary.status == "completed" and summary.passed is None
        assert "choose a real model" in summary.output and "--model" in summary.output
        assert summary.diff == {"created": 0, "updated": 0, "deleted": 0}
    assert HELP_REPLIES["cli"].startswith("I'm the offline scripted model")


async def test_streaming_variant_yields_arm_event_pairs_as_they_happen(tmp_path: Path) -> None:
    run = workbench.compare_stream(task="kanban/archive-done", items=60, db=tmp_path / "s.db")
    seen: dict[str, list[str]] = {"tool": [], "code": []}
    async for arm, event in run:
        assert event.arm == arm
        seen[arm].append(event.kind)
    comparison = await run.result()
    assert seen["tool"][0] == "run_started" and seen["tool"][-1] == "run_finished"
    assert seen["code"] == [e.kind for e in comparison.arms["code"].events]


def test_streaming_and_non_streaming_paths_count_the_same_tokens() -> None:
    from pydantic_ai import Agent

    import workbench.apps as apps
    from workbench.arms import instructions_for

    app_type = apps.get_app("cart")
    prompt = apps.get_task(TASK).prompt_for()

    def agent() -> Agent:
        app = app_type(30)
        return Agent(ScriptedModel(), toolsets=[app.toolset()], instructions=instructions_for(app))

    plain = agent().run_sync(prompt)

    async def streamed() -> list:
        async with agent().run_stream_events(prompt) as events:
            async for event in events:
                last = event
        return last.result

    import asyncio

    streamed_result = asyncio.run(streamed())
    assert plain.usage.input_tokens == streamed_result.usage.input_tokens > 0
    assert plain.usage.output_tokens == streamed_result.usage.output_tokens > 0
    assert plain.usage.requests == streamed_result.usage.requests


def test_token_counts_include_instructions_and_tool_definitions() -> None:
    from pydantic_ai.tools import ToolDefinition

    from workbench.tokens import count_request

    tool = ToolDefinition(name="list_cart_items", description="List the items.", parameters_json_schema={
        "type": "object", "properties": {"page": {"type": "integer"}}})  # fmt: skip
    bare = count_request(None, [], [])
    assert count_request("You operate a shopping cart.", [], []) > bare
    assert count_request(None, [tool], []) > bare + 10


# -- whatever a model does ends in a status, never an exception ---------------------------------------


def _model(*responses: ModelResponse) -> FunctionModel:
    """A FunctionModel that plays the given responses in order (streaming too), then says done."""

    def pick(messages: list[ModelMessage]) -> ModelResponse:
        made = sum(isinstance(m, ModelResponse) for m in messages)
        return responses[made] if made < len(responses) else ModelResponse(parts=[TextPart("done")])

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return pick(messages)

    async def stream(messages: list[ModelMessage], info: AgentInfo):
        response = pick(messages)
        texts = [p.content for p in response.parts if isinstance(p, TextPart)]
        if texts:
            yield " ".join(texts)
            return
        yield {
            index: DeltaToolCall(name=part.tool_name, json_args=part.args_as_json_str(), tool_call_id=part.tool_call_id)
            for index, part in enumerate(response.parts)
        }

    return FunctionModel(respond, stream_function=stream)


def _call(name: str, args: dict, call_id: str) -> ToolCallPart:
    return ToolCallPart(name, args, tool_call_id=call_id)


def test_bad_ids_and_unknown_tools_are_retries_in_the_tool_arm() -> None:
    model = _model(
        ModelResponse(parts=[_call("delete_cart_item", {"item_id": "line-9999"}, "a"), _call("fly", {}, "b")]),
    )
    result = workbench.compare_sync("anything", app="cart", items=5, model=model, arms=["tool"], db=False)
    summary = result.arms["tool"].summary
    assert summary.status == "completed"
    results = {r.call_id: r for r in payloads(result, "tool", ToolResult)}
    assert results["a"].outcome == "retried" and "no cart item with id 'line-9999'" in results["a"].error
    assert results["b"].outcome == "retried" and "fly" in results["b"].error


def test_bad_ids_and_syntax_errors_are_retries_in_the_code_arm() -> None:
    bad_id = "await delete_cart_item(item_id='line-9999')"
    model = _model(
        ModelResponse(parts=[_call("run_code", {"code": "def broken(:\n  pass"}, "s1")]),
        ModelResponse(parts=[_call("run_code", {"code": bad_id}, "s2")]),
    )
    result = workbench.compare_sync("anything", app="cart", items=5, model=model, arms=["code"], db=False)
    assert result.arms["code"].summary.status == "completed"
    results = {r.call_id: r for r in payloads(result, "code", ToolResult)}
    assert results["s1"].outcome == "retried" and "error" in results["s1"].error.lower()
    assert results["s2"].outcome == "retried" and "line-9999" in results["s2"].error
    (inner,) = payloads(result, "code", InnerResult)
    assert (inner.parent_id, inner.outcome) == ("s2", "retried")
    assert "no cart item with id 'line-9999'" in inner.error


def test_two_hundred_parallel_calls_in_one_response() -> None:
    calls = [_call("get_cart_item", {"item_id": f"line-{n:04d}"}, f"c{n}") for n in range(1, 201)]
    model = _model(ModelResponse(parts=calls))
    result = workbench.compare_sync("anything", app="cart", items=200, model=model, arms=["tool"], db=False)
    summary = result.arms["tool"].summary
    assert summary.status == "completed" and summary.tool_calls == 200
    assert {r.outcome for r in payloads(result, "tool", ToolResult)} == {"ok"}


def test_retries_running_out_fail_only_that_arm() -> None:
    always_bad = _model(*[ModelResponse(parts=[_call("run_code", {"code": "1/0"}, f"s{n}")]) for n in range(10)])
    result = workbench.compare_sync(task=TASK, items=30, code_model=always_bad, db=False)
    code, tool = result.arms["code"].summary, result.arms["tool"].summary
    assert code.status == "failed" and code.error and "retries" in code.error.lower()
    assert tool.status == "completed" and tool.passed


def test_request_limit_stops_a_looping_model() -> None:
    looping = _model(*[ModelResponse(parts=[_call("list_cart_items", {"page": 1}, f"l{n}")]) for n in range(100)])
    result = workbench.compare_sync(
        "anything", app="cart", items=5, model=looping, arms=["tool"], db=False,
        config=workbench.ArmConfig(request_limit=4),
    )  # fmt: skip
    summary = result.arms["tool"].summary
    assert summary.status == "failed" and "request limit" in summary.error and summary.requests <= 5


def test_any_pydantic_ai_model_instance_can_be_plugged_in() -> None:
    result = workbench.compare_sync("hello", app="inventory", items=5, model=TestModel(call_tools=[]), db=False)
    for arm in result.arms.values():
        assert arm.summary.status == "completed"
        assert arm.summary.model == "test"


def test_model_tool_results_are_what_the_model_saw() -> None:
    captured: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[_call("get_cart_item", {"item_id": "line-0001"}, "g")])
        captured.append(returns[0].model_response_str())
        return ModelResponse(parts=[TextPart("ok")])

    model = FunctionModel(respond)  # no stream function: the arm streams it anyway
    result = workbench.compare_sync("x", app="cart", items=3, model=model, arms=["tool"], db=False)
    (tool_result,) = payloads(result, "tool", ToolResult)
    assert result.arms["tool"].summary.status == "completed"
    assert result.arms["tool"].summary.output == "ok"
    assert captured and tool_result.preview == captured[0][: len(tool_result.preview)]
    assert tool_result.bytes == len(captured[0].encode())


async def test_cancel_before_the_arms_start_still_saves_a_cancelled_session(tmp_path: Path) -> None:
    run = workbench.compare_stream(task=TASK, items=30, db=tmp_path / "c.db")
    run.cancel()
    comparison = await run.result()
    assert [arm.summary.status for arm in comparison.arms.values()] == ["cancelled", "cancelled"]
    assert comparison.status == "cancelled"
    assert workbench.Store(tmp_path / "c.db").session(comparison.session_id).status == "cancelled"


async def test_cancel_mid_run_stops_both_arms_quickly(tmp_path: Path) -> None:
    import asyncio

    run = workbench.compare_stream(task=TASK, model="scripted:paced", db=tmp_path / "c.db")
    async for _arm, event in run:
        if event.kind == "tool_result":
            break
    run.cancel()
    comparison = await asyncio.wait_for(run.result(), timeout=60)  # a bound for a busy machine, not a target
    assert {arm.summary.status for arm in comparison.arms.values()} == {"cancelled"}  # neither ran to its end
    assert all(arm.events[-1].kind == "run_finished" for arm in comparison.arms.values())


def test_a_run_request_is_data_that_round_trips_and_names_what_is_not() -> None:
    """The request the CLI, the bench and the queue build travels as JSON; an object of the caller's own (a
    model object, an ArmSpec, a source) is refused by name rather than written as its repr."""
    import json

    from workbench.arm_spec import PRESETS
    from workbench.request import RunRequest

    asked = RunRequest(task=TASK, items=60, seed=7, model="scripted", arms=("tool", "code-eager"),
                       arm_models={"tool": "scripted:paced"}, turns=("one", "two"))  # fmt: skip
    data = asked.to_dict()
    assert "prompt" not in data and data["arms"] == ["tool", "code-eager"]
    assert RunRequest.from_dict(json.loads(json.dumps(data))) == asked
    assert RunRequest.from_dict({}) == RunRequest() and RunRequest().to_dict() == {}
    for given, field_name in ((RunRequest(model=object()), "model"), (RunRequest(arms=(PRESETS["tool"],)), "arms")):
        with pytest.raises(ValueError, match=field_name):
            given.to_dict()
    with pytest.raises(ValueError, match="source"):
        RunRequest.from_dict({"source": "sh -c x"})
