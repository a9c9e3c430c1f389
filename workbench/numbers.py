"""How a figure is written, the same in every view (CLI, exports, reports, the TUI)."""

from __future__ import annotations


def money(value: float | None, *, unknown: str = "cost unknown") -> str:
    """``$0.0115`` under a dollar, ``$1,234.56`` from a dollar up; ``unknown`` when no price is known."""
    if value is None:
        return unknown
    return f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"
