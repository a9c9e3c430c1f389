"""Eager execution and speculation events: they round-trip, old sessions still decode, and arms count them."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.events import ArmEvent, EagerProgress, RunStarted, Speculation
from workbench.session import fold_comparison
from workbench.store import Store
from workbench.summary import ArmSummary


def _through_json(event: ArmEvent) -> ArmEvent:
    return ArmEvent.from_dict(json.loads(json.dumps(event.to_dict())))


def test_new_payloads_round_trip_through_json() -> None:
    events = [
        ArmEvent("code-eager", 0, 0.0, RunStarted(
            mode="hybrid", model="scripted", app="cart", items=5, seed=0, prompt="p", tools=["run_code", "list"],
            options={"eager": True, "speculate": "declared", "max_tool_calls": 1000},
        )),
        ArmEvent("code-eager", 1, 0.1, EagerProgress(call_id="c1", closed_statements=2, closed_lines=3)),
        ArmEvent("code-eager", 2, 0.2, Speculation(
            call_id="c1", launch_id="l1", phase="claimed", name="delete_item", args={"id": 4},
            line_start=3, line_end=3, elapsed_ms=12.5, hidden_ms=10.0,
        )),
        ArmEvent("code-eager", 3, 0.3, Speculation(call_id="c1", launch_id="l2", phase="evicted", name="x",
                                                   outcome="running")),
    ]  # fmt: skip
    assert [_through_json(event) for event in events] == events


def test_a_run_started_stored_before_options_existed_decodes_with_no_options() -> None:
    old = {
        "arm": "code", "seq": 0, "t": 0.0, "kind": "run_started",
        "data": {"mode": "code", "model": "scripted", "app": "cart", "items": 5, "seed": 0, "prompt": "p",
                 "tools": ["run_code"], "sandboxed_tools": ["list"], "price_label": "", "limits": {}},
    }  # fmt: skip
    event = ArmEvent.from_dict(old)
    assert isinstance(event.payload, RunStarted)
    assert event.payload.options == {}
    assert ArmSummary.fold("code", [event]).eager_statements == 0


def test_eager_and_speculation_events_are_stored_and_read_back(db_path: Path) -> None:
    store = Store(db_path)
    events = [
        ArmEvent("code-eager", 0, 0.1, EagerProgress(call_id="c1", closed_statements=1, closed_lines=1)),
        ArmEvent("code-eager", 1, 0.2, Speculation(call_id="c1", launch_id="l1", phase="launched", name="list")),
    ]
    store.save(fold_comparison(events, session_id="s1", app="cart", items=5))
    assert store.events("s1") == events


def test_arm_summary_counts_eager_statements_and_speculation() -> None:
    def event(seq: int, payload: EagerProgress | Speculation) -> ArmEvent:
        return ArmEvent("code-eager", seq, seq / 10, payload)

    events = [
        event(0, EagerProgress(call_id="c1", closed_statements=1, closed_lines=1)),
        event(1, EagerProgress(call_id="c1", closed_statements=3, closed_lines=4)),
        event(2, EagerProgress(call_id="c2", closed_statements=2, closed_lines=2)),
        event(3, Speculation(call_id="c1", launch_id="a", phase="launched", name="t")),
        event(4, Speculation(call_id="c1", launch_id="a", phase="settled", name="t", outcome="ready")),
        event(5, Speculation(call_id="c1", launch_id="a", phase="claimed", name="t", hidden_ms=40.0)),
        event(6, Speculation(call_id="c1", launch_id="b", phase="launched", name="t")),
        event(7, Speculation(call_id="c1", launch_id="b", phase="missed", name="t")),
        event(8, Speculation(call_id="c1", launch_id="c", phase="launched", name="t")),
        event(9, Speculation(call_id="c1", launch_id="c", phase="evicted", name="t", outcome="running")),
        event(10, Speculation(call_id="c1", launch_id="d", phase="claimed", name="t", hidden_ms=2.5)),
    ]
    summary = ArmSummary.fold("code-eager", events)
    assert summary.eager_statements == 5
    assert (summary.speculation_launched, summary.speculation_claimed) == (3, 2)
    assert (summary.speculation_missed, summary.speculation_evicted) == (1, 1)
    assert summary.speculation_hidden_ms == 42.5
