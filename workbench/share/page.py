"""The shell of a self-contained HTML report: one file, styles inline, light and dark, printable, no network."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from functools import cache
from typing import Any

ARM_COLOURS = ("#d97706", "#0891b2", "#7c3aed", "#16a34a", "#db2777", "#4b5563")
"""Arm colours by position (the first arm is the baseline), never by name."""

_CSS = """
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1f2328; --muted: #656d76; --panel: #f6f8fa;
  --line: #d0d7de; --good: #1a7f37; --bad: #cf222e; --warn: #9a6700; --accent: #0969da; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #8d96a0; --panel: #161b22; --line: #30363d;
    --good: #3fb950; --bad: #f85149; --warn: #d29922; --accent: #4493f8; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1600px; padding: 1.5rem; background: var(--bg); color: var(--fg);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; } h2 { font-size: 1.2rem; margin: 1.75rem 0 .6rem; }
h3 { font-size: 1.05rem; margin: 1rem 0 .4rem; } h4 { font-size: .95rem; margin: .2rem 0; }
.meta, .dim { color: var(--muted); } .good { color: var(--good); } .bad { color: var(--bad); }
.warn { color: var(--warn); } .agree { color: var(--accent); }
blockquote { margin: .6rem 0; padding: .5rem .9rem; border-left: 4px solid var(--line); background: var(--panel);
  white-space: pre-wrap; }
table { border-collapse: collapse; margin: .4rem 0 1rem; }
th, td { padding: .25rem .7rem; border-bottom: 1px solid var(--line); text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; } th { font-weight: 600; }
td.label { color: var(--muted); } td.text, th.text { text-align: left; }
#failures th { text-align: left; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { margin: .3rem 0; padding: .5rem .7rem; background: var(--panel); border: 1px solid var(--line);
  border-radius: 6px; white-space: pre-wrap; word-break: break-word; overflow-wrap: anywhere; }
details { margin: .15rem 0; } summary { cursor: pointer; }
details.session { border: 1px solid var(--line); border-radius: 8px; padding: .3rem .8rem; margin: .4rem 0; }
.strip { display: flex; flex-wrap: wrap; gap: .4rem 1.2rem; padding: .6rem .9rem; background: var(--panel);
  border: 1px solid var(--line); border-radius: 8px; }
.strip .figure b { font-variant-numeric: tabular-nums; }
.arms { display: grid; grid-template-columns: repeat(var(--arms, 2), minmax(0, 1fr)); gap: 1rem; }
@media (max-width: 900px) { .arms { grid-template-columns: minmax(0, 1fr); } }
.arm { border: 1px solid var(--line); border-top: 4px solid var(--arm); border-radius: 8px; padding: .6rem .9rem;
  min-width: 0; }
.arm-name { color: var(--arm); font-weight: 700; }
.swatch { display: inline-block; width: .8em; height: .8em; border-radius: 2px; background: var(--arm);
  margin-right: .35em; vertical-align: -.05em; }
.request { border-top: 1px dashed var(--line); padding: .4rem 0; }
.request-head { display: flex; justify-content: space-between; gap: 1rem; flex-wrap: wrap; }
.text { white-space: pre-wrap; margin: .3rem 0; }
.call { border-left: 3px solid var(--line); padding-left: .6rem; margin: .35rem 0; }
.call.failed, .call.denied { border-left-color: var(--bad); } .call.retried { border-left-color: var(--warn); }
.inner { margin-left: .4rem; }
.outcome-ok { color: var(--good); } .outcome-failed, .outcome-denied { color: var(--bad); }
.outcome-retried { color: var(--warn); }
.answer { padding: .5rem .7rem; border: 1px solid var(--line); border-radius: 6px; white-space: pre-wrap; }
.error { color: var(--bad); white-space: pre-wrap; }
.bars { display: grid; grid-template-columns: max-content minmax(0, 1fr) max-content; gap: 2px .6rem;
  align-items: center; margin: .3rem 0 .9rem; }
.bar { height: .9rem; background: var(--arm); border-radius: 2px; min-width: 1px; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 1rem; }
svg.chart { width: 100%; height: auto; background: var(--panel); border: 1px solid var(--line); border-radius: 6px; }
svg.chart text { fill: var(--muted); font: 11px system-ui, sans-serif; }
svg.chart .grid { stroke: var(--line); stroke-width: 1; }
svg.chart .title { fill: var(--fg); font-weight: 600; font-size: 12px; }
.legend { display: flex; gap: 1rem; margin: .3rem 0; }
footer { margin-top: 2rem; color: var(--muted); font-size: 12px; }
@media print { body { max-width: none; padding: 0; } .arms { grid-template-columns: minmax(0, 1fr); }
  .arm, pre, tr, .request { break-inside: avoid-page; } }
"""

_PRINT_SCRIPT = (
    "addEventListener('beforeprint',()=>document.querySelectorAll('details').forEach(d=>{d.dataset.was=d.open;"
    "d.open=true}));addEventListener('afterprint',()=>document.querySelectorAll('details').forEach(d=>{"
    "d.open=d.dataset.was==='true'}));"
)
"""Printing unfolds every ``<details>`` (and folds them back afterwards)."""


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def esc_text(value: object) -> str:
    """Escaped for an element's text (not an attribute): quotes stay as they are, which in JSON is a sixth of
    the bytes ``&quot;`` would take."""
    return html.escape(str(value), quote=False)


def arm_style(index: int) -> str:
    """The inline style that gives an arm its colour (``var(--arm)`` in the sheet)."""
    return f"--arm: {ARM_COLOURS[index % len(ARM_COLOURS)]}"


def arm_colour(index: int) -> str:
    return ARM_COLOURS[index % len(ARM_COLOURS)]


@cache
def highlight_css() -> str:
    """Pygments' rules for ``.hl`` blocks: a light style, and a dark one under prefers-color-scheme."""
    from pygments.formatters import HtmlFormatter

    light = HtmlFormatter(style="default").get_style_defs(".hl")
    dark = HtmlFormatter(style="github-dark").get_style_defs(".hl")
    return f"{light}\n.hl {{ background: var(--panel); }}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"


def highlight_python(code: str) -> str:
    """``code`` as highlighted HTML (a ``<div class="hl"><pre>`` block)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    return highlight(code, PythonLexer(), HtmlFormatter(cssclass="hl"))


def pretty_json(value: Any) -> str:
    """A JSON value (or a string holding one) indented for reading; other text as it is."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, ensure_ascii=False, indent=2)


def page(title: str, body: str, *, highlight: bool = False, script: str = "") -> str:
    """A complete HTML document: no external resource of any kind (``script``: the page's own, inline)."""
    styles = _CSS + (highlight_css() if highlight else "")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light dark">\n'
        f"<title>{esc(title)}</title>\n<style>{styles}</style>\n</head>\n<body>\n{body}\n"
        f"<script>{_PRINT_SCRIPT}{script}</script>\n</body>\n</html>\n"
    )


def table(header: Sequence[str], rows: Sequence[Sequence[str]], *, attrs: str = "") -> str:
    """A table from already-escaped cells (``<td>`` elements or plain escaped text)."""
    head = "".join(f"<th>{cell}</th>" for cell in header)
    body = "".join(
        "<tr>" + "".join(cell if cell.startswith("<td") else f"<td>{cell}</td>" for cell in row) + "</tr>"
        for row in rows
    )
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
