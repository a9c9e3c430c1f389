"""An answer cut at max_tokens (``finish_reason: length``) is stored as such and every view says so, over HTTP
against the fake OpenAI-compatible server, streamed and not."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_faults import compare, settings_for, usage_events, warm_clients  # noqa: F401 (warm_clients: autouse)

from tests.support.fake_openai import FakeOpenAI, fake_openai
from workbench.bench.export import session_markdown
from workbench.cli import cli
from workbench.display import CUT_AT_MAX_TOKENS
from workbench.runner import prepare
from workbench.share.session_html import session_html
from workbench.store import Store
from workbench.timeline import ResponseEntry, Timeline

TASK = "cart/remove-expensive"
CHAT = "openai-chat:gpt-4o-mini"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai() as running:
        yield running


@pytest.mark.parametrize("stream", [True, False])
async def test_a_truncated_answer_is_stored_with_its_finish_reason(server: FakeOpenAI, stream: bool) -> None:
    settings = settings_for(server, **({} if stream else {"stream": False}))
    setup = prepare(task=TASK, tool_model=f"{CHAT}-length", code_model=CHAT, settings=settings)
    comparison = await compare(setup)
    tool, code = comparison.arms["tool"].summary, comparison.arms["code"].summary
    assert usage_events(comparison, "tool")[-1].finish_reason == "length"
    assert all(usage.finish_reason in ("tool_call", "stop") for usage in usage_events(comparison, "code"))
    assert tool.status == "completed" and tool.cut_at_max_tokens and tool.cut_responses == 1
    assert not code.cut_at_max_tokens and code.finish_reason == "stop"
    assert tool.to_dict()["finish_reason"] == "length" and tool.to_dict()["cut_at_max_tokens"] is True


def test_run_show_and_the_exports_say_cut_at_max_tokens(server: FakeOpenAI, db_path: Path) -> None:
    args = ["--tool-model", f"{CHAT}-length", "--code-model", CHAT, "--base-url", server.url, "--max-tokens", "64"]
    ran = CliRunner().invoke(cli, ["run", "--task", TASK, *args, "--db", str(db_path)])
    assert ran.exit_code == 0, ran.output
    status = next(line for line in ran.stdout.splitlines() if line.startswith("status"))
    assert CUT_AT_MAX_TOKENS in status and "completed" in status  # the tool arm cut, the code arm completed
    assert f"Tool calling answered ({CUT_AT_MAX_TOKENS}):" in ran.stdout
    assert f"Code mode answered ({CUT_AT_MAX_TOKENS})" not in ran.stdout
    session_id = ran.stdout.split()[1]
    shown = CliRunner().invoke(cli, ["show", session_id, "--db", str(db_path)])
    assert shown.stdout == ran.stdout
    as_json = json.loads(CliRunner().invoke(cli, ["show", session_id, "--json", "--db", str(db_path)]).stdout)
    assert [arm["finish_reason"] for arm in as_json["arms"]] == ["length", "stop"]

    comparison = Store(db_path).load(session_id)
    markdown = session_markdown(comparison)
    assert f"| status | {CUT_AT_MAX_TOKENS} | completed |" in markdown
    assert f"{CUT_AT_MAX_TOKENS}</span>" in session_html(comparison)
    timeline = Timeline("tool")
    timeline.apply(comparison.arms["tool"].events)
    last = [entry for entry in timeline.entries if isinstance(entry, ResponseEntry)]
    assert last[-1].usage is not None and last[-1].usage.finish_reason == "length"
