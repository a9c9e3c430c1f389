"""Terminal charts of scaling series (plotext), as text: ANSI-coloured for terminals, plain for Markdown.

plotext keeps one global figure, so drawing is serialised with a lock (and the theme is set once per
figure, before any subplot: per-subplot themes break its legends). The TUI can render the same
strings (``Text.from_ansi``) or plot a :class:`~workbench.bench.report.ScalingSeries` itself.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import plotext as plt

from workbench.bench.report import METRIC_BY_KEY, ScalingSeries
from workbench.display import arm_title

ARM_STYLES = (("orange", "x"), ("cyan", "o"), ("magenta", "+"), ("green", "*"), ("blue", "#"), ("red", "@"))
"""(colour when coloured, marker when plain) of the arms in order: the baseline first."""
CHART_TITLES = {
    "cost_usd": "cost per run (USD)",
    "wall_s": "wall time per run (s)",
    "input_tokens": "input tokens per run",
    "success": "success rate (%)",
}

_lock = threading.Lock()


def series_points(series: ScalingSeries, arm: str, metric: str) -> tuple[list[int], list[float]]:
    """The (items, value) points of one arm and metric that have a value (success in %)."""
    scale = 100.0 if metric == "success" else 1.0
    pairs = [
        (size, value * scale)
        for size, value in zip(series.sizes, series.values[arm][metric], strict=True)
        if value is not None
    ]
    return [size for size, _ in pairs], [value for _, value in pairs]


def scaling_chart(
    series: ScalingSeries, metric: str = "cost_usd", *, width: int = 72, height: int = 14, color: bool = True
) -> str:
    """One chart: ``metric`` against item count (log scale) for both arms."""
    if metric not in CHART_TITLES:
        raise ValueError(f"unknown chart metric {metric!r}; choose one of: {', '.join(CHART_TITLES)}")
    with _lock:
        _fresh_figure(width, height, color)
        _draw(series, metric, color)
        plt.title(f"{series.task}: {CHART_TITLES[metric]}")
        text = plt.build()
        plt.main()
        plt.clear_figure()
    return text if color else plt.uncolorize(text)


def scaling_grid(
    series: ScalingSeries,
    metrics: Sequence[str] = ("cost_usd", "wall_s", "input_tokens", "success"),
    *,
    width: int = 110,
    height: int = 26,
    color: bool = True,
) -> str:
    """Several metrics of one scaling rule side by side, two per row."""
    columns = 2 if len(metrics) > 1 else 1
    rows = -(-len(metrics) // columns)
    with _lock:
        _fresh_figure(width, height, color)
        plt.subplots(rows, columns)
        for index, metric in enumerate(metrics):
            plt.subplot(index // columns + 1, index % columns + 1)
            _draw(series, metric, color)
            plt.title(CHART_TITLES[metric])
        text = plt.build()
        plt.main()
        plt.clear_figure()
    return text if color else plt.uncolorize(text)


def _fresh_figure(width: int, height: int, color: bool) -> None:
    """Make the master figure active and empty, sized as asked (not clipped to the terminal)."""
    plt.main()
    plt.clear_figure()
    plt.limit_size(False, False)
    plt.theme("pro" if color else "clear")
    plt.plotsize(width, height)


Y_TICKS = 5


def axis_label(value: float, metric: str) -> str:
    """A y-axis tick as people write it: ``75k``, ``$0.012``, ``1.2 s``, ``50%`` (never ``74747.0``)."""
    if metric == "success":
        return f"{value:.0f}%"
    if metric == "cost_usd":
        return f"${value:.2f}" if value >= 1 else f"${value:.3g}"
    if metric == "wall_s":
        return f"{value:.2g} s" if value < 10 else f"{value:.0f} s"
    if abs(value) >= 1_000_000:
        return f"{value / 1_000_000:.3g}M"
    if abs(value) >= 1_000:
        return f"{value / 1_000:.3g}k"
    return f"{value:.3g}"


def y_ticks(values: Sequence[float], metric: str) -> tuple[list[float], list[str]]:
    """Evenly spaced ticks over the values' range, labelled by :func:`axis_label`."""
    if metric == "success":
        ticks = [0.0, 25.0, 50.0, 75.0, 100.0]
    else:
        low, high = min(values), max(values)
        if high == low:
            high = low + (abs(low) or 1.0)
        step = (high - low) / (Y_TICKS - 1)
        ticks = [low + step * index for index in range(Y_TICKS)]
    return ticks, [axis_label(tick, metric) for tick in ticks]


def _draw(series: ScalingSeries, metric: str, color: bool) -> None:
    if metric not in METRIC_BY_KEY:
        raise ValueError(f"unknown metric {metric!r}")
    plt.xscale("log")
    drawn: list[float] = []
    for index, arm in enumerate(series.arms):
        xs, ys = series_points(series, arm, metric)
        if not xs:
            continue
        drawn.extend(ys)
        colour, marker = ARM_STYLES[index % len(ARM_STYLES)]
        label = arm_title(arm).lower()
        if color:
            plt.plot(xs, ys, label=label, color=colour, marker="braille")
        else:
            plt.plot(xs, ys, label=label, marker=marker)
    if series.sizes:
        plt.xticks(series.sizes, [str(size) for size in series.sizes])
    if drawn:
        plt.yticks(*y_ticks(drawn, metric))
    if metric == "success":
        plt.ylim(0, 105)
    plt.xlabel("items")
