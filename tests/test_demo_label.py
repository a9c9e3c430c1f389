"""Demonstration figures say so: a session or sweep of the scripted model carries the one label (display.DEMO_LABEL,
decided by display.is_demo from the model name) in `run`, `show`, every export format and the bench report; a
real model's does not."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from tests.support.cli_process import workbench
from workbench.bench.export import session_csv, session_dict, session_markdown
from workbench.display import DEMO_LABEL, is_demo
from workbench.printer import comparison_view
from workbench.share.session_html import session_html
from workbench.store import Store


def render_text(renderable: object) -> str:
    console = Console(width=160, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


@pytest.mark.parametrize(
    ("model", "demo"),
    [
        ("scripted", True),
        ("scripted:paced", True),
        ("tool=scripted | code=scripted:paced", True),
        ("scripted / scripted:paced", True),
        ("tool=scripted | code=openai:gpt-4o", False),
        ("openai:gpt-4o", False),
        ("ollama:scripted-llama", False),
        ("", False),
    ],
)
def test_is_demo_reads_the_model_name(model: str, demo: bool) -> None:
    assert is_demo(model) is demo


def test_a_scripted_session_is_labelled_in_run_show_and_every_export(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    table = workbench("run", "--task", "cart/remove-expensive", db=db)
    assert DEMO_LABEL in table.lower()
    run = json.loads(workbench("run", "--task", "cart/remove-expensive", "--json", db=db))
    assert run["demonstration"] is True
    session = run["session_id"]
    assert DEMO_LABEL in workbench("show", session, db=db).lower()
    assert json.loads(workbench("export", session, "--format", "json", db=db))["demonstration"] is True
    rows = list(csv.DictReader(io.StringIO(workbench("export", session, "--format", "csv", db=db))))
    assert rows and {row["demonstration"] for row in rows} == {"True"}
    assert f"**{DEMO_LABEL}**" in workbench("export", session, "--format", "md", db=db)
    assert f"<b>{DEMO_LABEL}</b>" in workbench("export", session, "--format", "html", db=db)


def test_a_real_models_session_carries_no_label(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    session = json.loads(workbench("run", "--task", "cart/remove-expensive", "--json", db=db))["session_id"]
    comparison = Store(db).load(session)
    comparison.header = replace(comparison.header, model="openai:gpt-4o")
    for arm in comparison.arms.values():
        arm.summary.model = "openai:gpt-4o"
    assert session_dict(comparison)["demonstration"] is False
    assert {row["demonstration"] for row in csv.DictReader(io.StringIO(session_csv(comparison)))} == {"False"}
    for text in (session_markdown(comparison), session_html(comparison), render_text(comparison_view(comparison))):
        assert DEMO_LABEL not in text.lower()


def test_a_scripted_sweep_is_labelled_in_the_report_and_every_export(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    args = ("bench", "--task", "cart/remove-expensive", "--chart", "none")
    assert DEMO_LABEL in workbench(*args, db=db)
    report = json.loads(workbench(*args, "--json", db=db))
    assert report["demonstration"] is True
    sweep = report["sweep_id"]
    rows = list(csv.DictReader(io.StringIO(workbench("export", sweep, "--format", "csv", db=db))))
    assert {row["demonstration"] for row in rows} == {"True"}
    assert DEMO_LABEL in workbench("export", sweep, "--format", "md", db=db)
    html = workbench("export", sweep, "--format", "html", db=db)
    assert DEMO_LABEL in html.split('id="headline"')[1].split("</p>")[0]
    assert f"<b>{DEMO_LABEL}</b>" in html, "each embedded session says so too"
