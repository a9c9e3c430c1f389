"""A request that was sent but never answered whole (the stream cut after some of it, the connection dropped,
the deadline passed) is counted as the server counted it: the workbench's own estimate, marked ``~``, never 0.
Real HTTP against the fake OpenAI-compatible server."""

from __future__ import annotations

import pytest

from tests.support.fake_openai import FakeOpenAI
from tests.test_faults import TASK, compare, hang_deadline, server, settings_for, usage_events, warm_clients  # noqa: F401
from workbench.display import tokens
from workbench.runner import prepare


@pytest.mark.parametrize("fault", ["cut", "drop", "hang"])
async def test_a_request_sent_but_not_answered_shows_an_estimate(server: FakeOpenAI, fault: str) -> None:  # noqa: F811
    faulty = f"gpt-4o-mini-{fault}"  # every request of the tool arm fails, the first one included
    setup = prepare(task=TASK, tool_model=f"openai-chat:{faulty}", code_model="openai-chat:gpt-4o-mini",
                    settings=settings_for(server, retries=0, **hang_deadline(fault)))  # fmt: skip
    comparison = await compare(setup)
    tool = comparison.arms["tool"].summary
    assert tool.status == "failed" and server.count(faulty) == 1
    (usage,) = usage_events(comparison, "tool")
    assert usage.estimated and usage.request == 1 and usage.input_tokens > 0
    assert (tool.requests, tool.input_tokens, tool.tokens_estimated) == (1, usage.input_tokens, True)
    assert tokens(tool.input_tokens, tool.tokens_estimated) == f"~{usage.input_tokens:,}"
    code = comparison.arms["code"].summary
    assert (code.status, code.tokens_estimated) == ("completed", False)
    # The estimate is of the request as sent: the code arm's first request, answered with the server's count,
    # carries the same prompt with other tools, so the two are of one size (within the tool definitions).
    first = usage_events(comparison, "code")[0]
    assert 0.3 < usage.input_tokens / first.input_tokens < 3


def test_estimates_are_calibrated_by_the_first_request_the_server_counted() -> None:
    """A server whose chat template adds tokens the workbench's count cannot see (llama.cpp's SmolLM2 counted
    16-39% more): once one response reports usage, later estimates are scaled by its ratio."""
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.usage import RequestUsage

    from workbench.recorder import ModelRequesting, ModelResponded
    from workbench.tokens import estimate_request
    from workbench.translate import Translator

    translator = Translator({}, price=lambda usage, name, provider: None)
    parameters = ModelRequestParameters()
    first = [ModelRequest(parts=[UserPromptPart("Remove everything in the cart over $50.")])]
    own = estimate_request(first, parameters)
    counted = ModelResponse([TextPart("ok")], usage=RequestUsage(input_tokens=round(own * 1.3), output_tokens=1))
    list(translator(ModelRequesting(messages=first, parameters=parameters)))
    (usage,) = [p for p in translator(ModelResponded(response=counted)) if hasattr(p, "estimated")]
    assert (usage.input_tokens, usage.estimated) == (round(own * 1.3), False)

    second = [*first, counted, ModelRequest(parts=[UserPromptPart("And now the ones under $5.")])]
    list(translator(ModelRequesting(messages=second, parameters=parameters)))
    (usage,) = [
        p for p in translator(ModelResponded(response=ModelResponse([TextPart("ok")]))) if hasattr(p, "estimated")
    ]
    assert usage.estimated and usage.input_tokens == round(
        estimate_request(second, parameters) * round(own * 1.3) / own
    )
    # sent, then never answered: the same calibrated estimate
    list(translator(ModelRequesting(messages=second, parameters=parameters)))
    unfinished = translator.unfinished()
    assert unfinished is not None and unfinished.estimated and unfinished.input_tokens == usage.input_tokens
    assert translator.unfinished() is None  # counted once
