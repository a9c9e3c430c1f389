"""Line charts as inline SVG: no script, no external resource, readable in light and dark and in print."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from workbench.share.page import esc

WIDTH, HEIGHT = 420, 260
LEFT, RIGHT, TOP, BOTTOM = 64, 14, 30, 40


@dataclass(frozen=True)
class Line:
    name: str
    colour: str
    values: Sequence[float | None]
    """One value per x; ``None`` leaves a gap."""


def line_chart(
    title: str,
    xs: Sequence[int],
    lines: Sequence[Line],
    *,
    y_format: Callable[[float], str] = lambda value: f"{value:,.0f}",
    y_max: float | None = None,
    x_label: str = "items",
) -> str:
    """``lines`` against ``xs`` on a log x axis (evenly spaced when there is one x only) from a y of 0."""
    values = [value for line in lines for value in line.values if value is not None]
    top = y_max if y_max is not None else _nice(max(values, default=0.0) * 1.05 or 1.0)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    low, high = math.log10(min(xs, default=1) or 1), math.log10(max(xs, default=1) or 1)

    def x_at(x: int) -> float:
        if high == low:
            return LEFT + plot_w / 2
        return LEFT + (math.log10(x) - low) / (high - low) * plot_w

    def y_at(y: float) -> float:
        return TOP + plot_h - y / top * plot_h

    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{esc(title)}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{esc(title)}</title>',
        f'<text class="title" x="{LEFT}" y="18">{esc(title)}</text>',
    ]
    for step in range(5):
        y_value = top * step / 4
        y = y_at(y_value)
        parts.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{esc(y_format(y_value))}</text>')
    for x in xs:
        parts.append(f'<text x="{x_at(x):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle">{x:,}</text>')
    parts.append(
        f'<text x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 6}" text-anchor="middle">{esc(x_label)} (log scale)</text>'
    )
    for line in lines:
        points = [(x_at(x), y_at(y), x, y) for x, y in zip(xs, line.values, strict=True) if y is not None]
        if len(points) > 1:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py, _, _ in points)
            parts.append(
                f'<polyline fill="none" stroke="{line.colour}" stroke-width="2" points="{path}" '
                f'data-series="{esc(line.name)}"/>'
            )
        for px, py, x, y in points:
            parts.append(
                f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.5" fill="{line.colour}">'
                f"<title>{esc(line.name)} at {x:,} {esc(x_label)}: {esc(y_format(y))}</title></circle>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _nice(value: float) -> float:
    """The next round number at or above ``value`` (1, 2, 2.5, 5 times a power of ten)."""
    magnitude = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * magnitude:
            return step * magnitude
    return 10 * magnitude
