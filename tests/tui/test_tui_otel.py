"""A session continued from the TUI (ctrl+f) is one OpenTelemetry trace, its follow-up traced as a turn like
``run --turn``'s (its prompt, figures, requests and calls under it), received by a real OTLP/HTTP receiver; and
the stored session exported later is the same trace."""

from __future__ import annotations

import asyncio
from collections import defaultdict

import pytest
from textual.widgets import TextArea

from tests.support.otlp_receiver import OtlpReceiver, ReceivedSpan
from tests.support.tui_helpers import run_to_end, wait_for
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.widgets.run_form import RunForm

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

SAVE = "Move every electronics item in my cart to my saved-for-later list."
RESTORE = "Move every saved-for-later item under $40 back into my cart, one of each."


def _shape(spans: list[ReceivedSpan]) -> list[tuple[object, ...]]:
    by_id = {span.span_id: span for span in spans}
    return sorted(
        (span.name, by_id[span.parent_id].name if span.parent_id else "", span.start_ns, span.end_ns,
         sorted(span.attributes.items(), key=str), span.status_code)
        for span in spans
    )  # fmt: skip


async def test_a_follow_up_from_the_tui_is_a_turn_of_the_sessions_trace(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.share.otel import export_comparison

    with OtlpReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
        app = make_app(store=store)
        async with app.run_test(size=(140, 45)) as pilot:
            screen = app.screen
            assert isinstance(screen, CompareScreen)
            screen.query_one(RunForm).fill(app="cart", items=30, prompt=SAVE)
            await pilot.press("ctrl+r")
            await run_to_end(pilot, screen)
            first = screen.last_comparison
            assert first is not None
            requests = sum(arm.summary.requests for arm in first.arms.values())
            # The first turn's model requests are sent when it ends; the session's own spans wait for its end.
            sent = await asyncio.to_thread(receiver.wait_for, requests)
            assert not [span for span in sent if span.name.startswith(("comparison", "invoke_agent"))]
            await wait_for(pilot, lambda: screen.can_follow_up, what="the session to take a follow-up")

            screen.query_one("#prompt", TextArea).text = RESTORE
            await pilot.press("ctrl+f")
            await run_to_end(pilot, screen)
            second = screen.last_comparison
            assert second is not None and second.session_id == first.session_id
            await pilot.press("ctrl+n")  # the session's apps close, and its trace ends
            await wait_for(pilot, lambda: not screen.can_follow_up, what="the session to close")

        arms = second.arms
        expected = 1 + sum(
            1 + 2 + arm.summary.requests + arm.summary.tool_calls + arm.summary.inner_calls for arm in arms.values()
        )  # the root; per arm its span, a span per turn, per request, per call and per inner call
        live = receiver.wait_for(expected)
        assert len(live) == expected
        assert len({span.trace_id for span in live}) == 1
        children: dict[str, list[ReceivedSpan]] = defaultdict(list)
        for span in sorted(live, key=lambda span: span.start_ns):
            children[span.parent_id].append(span)
        (root,) = children[""]
        for agent in children[root.span_id]:
            summary = arms[agent.attributes["workbench.arm"]].summary
            assert agent.attributes["workbench.requests"] == summary.requests
            turns = [span for span in children[agent.span_id] if span.name.startswith("turn ")]
            assert [span.name for span in turns] == ["turn 1", "turn 2"]
            assert [span.attributes["workbench.turn.prompt"] for span in turns] == [SAVE, RESTORE]
            follow_up = summary.turns[1]
            assert turns[1].attributes["workbench.requests"] == follow_up.requests > 0
            assert turns[1].attributes["gen_ai.usage.input_tokens"] == follow_up.input_tokens
            assert turns[1].attributes["workbench.status"] == "completed"
            chats = [span for span in children[turns[1].span_id] if span.name.startswith("chat ")]
            assert len(chats) == follow_up.requests
            assert all(span.start_ns >= turns[1].start_ns for span in children[turns[1].span_id])

        receiver.clear()
        assert export_comparison(store.load(second.session_id), receiver.url + "/v1/traces") == expected
        assert _shape(receiver.wait_for(expected)) == _shape(live)
