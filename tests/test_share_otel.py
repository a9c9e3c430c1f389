"""OpenTelemetry export received by a real OTLP/HTTP receiver on 127.0.0.1 (protobuf decoded with the official
opentelemetry-proto messages): the span tree, attributes and token counts equal the stored session, and a live
export equals a later export of the same stored session."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_process import WORKBENCH, workbench, workbench_process
from tests.support.otlp_receiver import OtlpReceiver, ReceivedSpan, SlowCollector
from workbench.share.tracing import DEFAULT_ENDPOINT, apply_otel_flag, trace_endpoint

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")


def tree(spans: list[ReceivedSpan]) -> tuple[ReceivedSpan, dict[str, list[ReceivedSpan]]]:
    """The one root and every span's children in start order."""
    children: dict[str, list[ReceivedSpan]] = defaultdict(list)
    for span in sorted(spans, key=lambda span: (span.start_ns, span.name)):
        children[span.parent_id].append(span)
    roots = children[""]
    assert len(roots) == 1, [span.name for span in roots]
    assert len({span.trace_id for span in spans}) == 1, "one trace per comparison"
    return roots[0], children


def shape(spans: list[ReceivedSpan]) -> list[tuple[Any, ...]]:
    """Everything about the spans but their ids: names, parent names, times, attributes, statuses."""
    by_id = {span.span_id: span for span in spans}
    return sorted(
        (
            span.name,
            by_id[span.parent_id].name if span.parent_id else "",
            span.start_ns,
            span.end_ns,
            json.dumps(span.attributes, sort_keys=True),
            span.status_code,
        )
        for span in spans
    )


def check_against_session(spans: list[ReceivedSpan], run: dict[str, Any], stored: dict[str, Any]) -> None:
    root, children = tree(spans)
    assert root.name == f"comparison {run['app']}"
    assert root.service == "code-mode-workbench"
    assert root.attributes["workbench.session_id"] == run["session_id"]
    assert root.attributes["workbench.task"] == run["task"]
    assert root.attributes["workbench.arms"] == [arm["name"] for arm in run["arms"]]
    arm_spans = {span.attributes["workbench.arm"]: span for span in children[root.span_id]}
    assert sorted(arm_spans) == sorted(arm["name"] for arm in run["arms"])
    events = defaultdict(list)
    for event in stored["events"]:
        events[event["arm"]].append(event)
    for arm in run["arms"]:
        span = arm_spans[arm["name"]]
        assert span.name == f"invoke_agent {arm['name']}"
        attributes = span.attributes
        assert attributes["gen_ai.usage.input_tokens"] == arm["input_tokens"]
        assert attributes["gen_ai.usage.output_tokens"] == arm["output_tokens"]
        assert attributes["operation.cost"] == pytest.approx(arm["cost_usd"])
        assert attributes["workbench.requests"] == arm["requests"]
        assert attributes["workbench.status"] == arm["status"]
        assert attributes["workbench.passed"] == arm["passed"]
        assert attributes["workbench.deleted"] == arm["diff"]["deleted"]
        kids = children[span.span_id]
        chats = [kid for kid in kids if kid.attributes["gen_ai.operation.name"] == "chat"]
        usages = [event["data"] for event in events[arm["name"]] if event["kind"] == "usage"]
        assert [chat.attributes["workbench.request"] for chat in chats] == [usage["request"] for usage in usages]
        assert [chat.attributes["gen_ai.usage.input_tokens"] for chat in chats] == [u["input_tokens"] for u in usages]
        assert [chat.attributes["gen_ai.usage.output_tokens"] for chat in chats] == [
            usage["output_tokens"] for usage in usages
        ]
        assert sum(chat.attributes["gen_ai.usage.input_tokens"] for chat in chats) == arm["input_tokens"]
        for chat in chats:
            assert chat.attributes["gen_ai.request.model"] == "scripted"
            assert chat.start_ns <= chat.end_ns
        tools = [kid for kid in kids if kid.attributes["gen_ai.operation.name"] == "execute_tool"]
        calls = [event["data"] for event in events[arm["name"]] if event["kind"] == "tool_call"]
        assert [tool.attributes["gen_ai.tool.call.id"] for tool in tools] == [call["call_id"] for call in calls]
        assert len(tools) == arm["tool_calls"]
        inner = [kid for tool in tools for kid in children[tool.span_id]]
        assert len(inner) == arm["inner_calls"]
        assert all(kid.attributes["workbench.inner"] is True for kid in inner)
        snippets = [event["data"]["code"] for event in events[arm["name"]] if event["kind"] == "snippet"]
        run_code = [tool for tool in tools if tool.name == "execute_tool run_code"]
        assert [tool.attributes["workbench.snippet.code"] for tool in run_code] == snippets
        for tool in tools:
            assert tool.attributes["workbench.outcome"] == "ok"
            assert span.start_ns <= tool.start_ns <= tool.end_ns <= span.end_ns


def test_live_run_and_stored_export_are_the_same_trace(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with OtlpReceiver() as receiver:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url}
        run = json.loads(workbench("run", "--task", "cart/remove-expensive", "--otel", "--json", db=db, env=env))
        stored = json.loads(workbench("export", run["session_id"], "--format", "json", db=db))
        expected = 1 + len(run["arms"]) + sum(a["requests"] + a["tool_calls"] + a["inner_calls"] for a in run["arms"])
        live = receiver.wait_for(expected)
        assert len(live) == expected
        check_against_session(live, run, stored)

        receiver.clear()
        done = workbench_process("export", run["session_id"][:6], "--otel", db=db, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stdout == ""
        assert f"{expected} spans sent to {receiver.url}/v1/traces" in done.stderr
        exported = receiver.wait_for(expected)
        check_against_session(exported, run, stored)
        assert shape(exported) == shape(live)
        assert {span.trace_id for span in exported} != {span.trace_id for span in live}


def test_config_endpoint_traces_without_the_flag(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    config = tmp_path / "config.toml"
    with OtlpReceiver() as receiver:
        config.write_text(f'otel_endpoint = "{receiver.url}"\n', encoding="utf-8")
        env = {"WORKBENCH_CONFIG": str(config)}
        run = json.loads(workbench("run", "--task", "calendar/cancel-tentative", "--json", db=db, env=env))
        stored = json.loads(workbench("export", run["session_id"], "--format", "json", db=db))
        expected = 1 + len(run["arms"]) + sum(a["requests"] + a["tool_calls"] + a["inner_calls"] for a in run["arms"])
        check_against_session(receiver.wait_for(expected), run, stored)


def test_an_unreachable_collector_never_fails_a_run(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with OtlpReceiver() as receiver:
        url = receiver.url  # a port that was just free, and is closed again below
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": url}
    run = json.loads(workbench("run", "--task", "cart/cap-quantity", "--otel", "--json", db=db, env=env))
    assert [arm["status"] for arm in run["arms"]] == ["completed", "completed"]
    assert run["session_id"] in workbench("sessions", "--json", db=db)
    done = workbench_process("export", run["session_id"], "--otel", db=db, env=env)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("workbench: error: the collector at")
    assert "Traceback" not in done.stderr
    assert workbench_process("export", "sweep-00000000", "--otel", db=db).returncode == 2


def test_a_collector_answering_a_byte_a_second_costs_a_run_seconds_and_one_warning(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with SlowCollector() as collector:
        env = {**os.environ, "WORKBENCH_DB": str(db), "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url}
        run = subprocess.Popen(
            [WORKBENCH, "run", "--task", "cart/remove-expensive", "--items", "60", "--otel", "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        out, err = run.communicate(timeout=300)
        exited = datetime.now(UTC)
        posts = collector.posts
    assert run.returncode == 0, err
    session_id = json.loads(out)["session_id"]
    with contextlib.closing(sqlite3.connect(db)) as connection:
        (finished,) = connection.execute("SELECT finished FROM sessions WHERE id = ?", (session_id,)).fetchone()
    ended = datetime.fromisoformat(finished).replace(tzinfo=UTC)
    assert (exited - ended).total_seconds() < 10, f"exited {exited - ended} after the run's end"
    assert posts >= 1  # the spans were sent to it (and never answered in full)
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "trace collector" in warnings[0] and "Traceback" not in err, err


def test_where_traces_go() -> None:
    assert trace_endpoint(None) is None
    assert trace_endpoint(None, flag=True) == DEFAULT_ENDPOINT + "/v1/traces"
    assert trace_endpoint("http://collector:4318/") == "http://collector:4318/v1/traces"
    assert trace_endpoint("http://collector:4318/v1/traces") == "http://collector:4318/v1/traces"


def test_standard_variables_turn_tracing_on(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.config import load_settings

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")
    assert trace_endpoint(None) == "http://collector:4318/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:9999/custom")
    assert trace_endpoint(None) == "http://traces:9999/custom"
    settings = load_settings()
    apply_otel_flag(settings, True)
    assert settings.otel_endpoint == "http://traces:9999/custom"
    monkeypatch.setenv("WORKBENCH_OTEL_ENDPOINT", "http://mine:4318")
    settings = load_settings()
    apply_otel_flag(settings, True)
    assert trace_endpoint(settings.otel_endpoint) == "http://mine:4318/v1/traces"


def test_without_the_extra_only_an_explicit_request_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.share import tracing

    monkeypatch.setattr(tracing, "otel_installed", lambda: False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")
    assert tracing.resolve_tracing(None) is None, "the standard variable is often set for other programs"
    with pytest.raises(tracing.TracingUnavailable, match=r"needs the otel extra: pip install"):
        tracing.resolve_tracing("http://mine:4318")
