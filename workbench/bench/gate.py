"""The CI gate: does the candidate (B) regress against the baseline (A)? Exit 0, 1 or 2.

The rule, per arm both sides ran (or ``--arm``):

- **incomplete** (exit 2, whatever else holds): either side not completed (interrupted, running, cancelled
  runs), no arm or no case on both sides, or an amount asked to be gated that is unknown on a side.
- **success** regresses when more paired runs flip pass→fail than fail→pass, *and* either McNemar's exact
  test is significant at ``alpha`` (two-sided) or the drop in success over the paired runs exceeds
  ``max_success_drop`` points. A single flip among many pairs below the drop bound is listed, not counted.
- **cost / wall time** regress when the lower end of the paired bootstrap interval of B's relative change
  exceeds the allowed increase, in %: the interval must lie wholly above the bound (not checked unless the
  bound is given).

An arm run whose status is ``failed`` (an error, the request limit, the wall-clock budget) is a finished run
that did not pass: it counts as a failure, not as an incomplete side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.bench.compare import ArmComparison, CaseChange
from workbench.bench.diff import SideDiff, markdown_table, summary_lines
from workbench.bench.significance import ALPHA

EXIT_PASS = 0
EXIT_REGRESSION = 1
EXIT_INCOMPLETE = 2
DEFAULT_MAX_SUCCESS_DROP = 5.0


@dataclass(frozen=True)
class GateRules:
    max_success_drop: float = DEFAULT_MAX_SUCCESS_DROP
    """Points of success B may lose on the paired runs before the drop alone fails the gate."""
    max_cost_increase: float | None = None
    """% by which B's cost may grow; ``None``: cost is not gated."""
    max_time_increase: float | None = None
    alpha: float = ALPHA

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Finding:
    """One regression of one arm: what rule it broke, and the cases behind it."""

    arm: str
    metric: str
    """``success``, ``cost_usd`` or ``wall_s``."""
    reason: str
    cases: tuple[CaseChange, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"arm": self.arm, "metric": self.metric, "reason": self.reason,
                "cases": [change.to_dict() for change in self.cases]}  # fmt: skip


@dataclass
class GateResult:
    diff: SideDiff
    rules: GateRules
    incomplete: list[str] = field(default_factory=list)
    regressions: list[Finding] = field(default_factory=list)
    within_bounds: list[str] = field(default_factory=list)
    """Changes seen but not counted (a flip below the drop bound, not significant)."""

    @property
    def exit_code(self) -> int:
        if self.incomplete:
            return EXIT_INCOMPLETE
        return EXIT_REGRESSION if self.regressions else EXIT_PASS

    @property
    def headline(self) -> str:
        if self.incomplete:
            return f"Gate: incomplete, no decision: {self.incomplete[0]}"
        if self.regressions:
            cases = len({(f.arm, c.key) for f in self.regressions for c in f.cases})
            return f"Gate: regression: {len(self.regressions)} rule(s) broken on {cases} case(s)"
        return "Gate: pass: no regression beyond the bounds"

    def to_dict(self) -> dict[str, Any]:
        return {
            "exit_code": self.exit_code,
            "headline": self.headline,
            "rules": self.rules.to_dict(),
            "incomplete": list(self.incomplete),
            "regressions": [finding.to_dict() for finding in self.regressions],
            "within_bounds": list(self.within_bounds),
            "diff": self.diff.to_dict(),
        }


def judge(diff: SideDiff, rules: GateRules) -> GateResult:
    result = GateResult(diff, rules)
    for side in (diff.before, diff.after):
        reason = side.incomplete()
        if reason:
            result.incomplete.append(reason)
    if not diff.arms:
        result.incomplete.append("no arm ran on both sides: not comparable")
    elif not any(arm.shared for arm in diff.arms):
        result.incomplete.append("no case ran on both sides (task × items × seed): not comparable")
    for arm in diff.arms:
        _success(arm, rules, result)
        for metric, bound, label in (("cost_usd", rules.max_cost_increase, "cost"),
                                     ("wall_s", rules.max_time_increase, "wall time")):  # fmt: skip
            if bound is not None:
                _amount(arm, metric, label, bound, result)
    return result


def _success(arm: ArmComparison, rules: GateRules, result: GateResult) -> None:
    test = arm.success
    flipped = tuple(change for change in arm.changes if change.kind == "regression")
    if test.regressed <= test.improved:
        return
    drop = -test.delta_points
    why = []
    if test.significant:
        why.append(f"McNemar p = {test.p_value:.2g} < {rules.alpha:g}")
    if drop > rules.max_success_drop:
        why.append(f"drop of {drop:.1f} pts > {rules.max_success_drop:g} pts allowed")
    flips = f"{test.regressed} pass→fail, {test.improved} fail→pass over {test.pairs} paired runs"
    if why:
        result.regressions.append(Finding(arm.after, "success", f"success fell ({flips}): {'; '.join(why)}", flipped))
    else:
        result.within_bounds.append(
            f"arm {arm.after}: {flips} (drop {drop:.1f} pts ≤ {rules.max_success_drop:g}, p = {test.p_value:.2g}): "
            "not counted"
        )


def _amount(arm: ArmComparison, metric: str, label: str, bound: float, result: GateResult) -> None:
    delta = arm.paired.get(metric)
    if delta is None or delta.relative_low is None or delta.relative is None:
        result.incomplete.append(f"arm {arm.after}: {label} is unknown on a side, so it cannot be gated")
        return
    if delta.relative_low > bound:
        cases = tuple(change for change in arm.shared if (change.change_pct(metric) or 0) > bound) or tuple(arm.shared)
        result.regressions.append(
            Finding(
                arm.after,
                metric,
                f"{label} rose {delta.relative:+.1f}% (95% interval "
                f"[{delta.relative_low:+.1f}, {delta.relative_high:+.1f}]), all above the {bound:g}% allowed",
                cases,
            )
        )


# -- the PR-comment body -----------------------------------------------------------------------------


def summary_markdown(result: GateResult, *, reproduce: str = "", links: dict[str, str] | None = None) -> str:
    """Headline, significant changes, regressed cases (with links to sessions when ``links`` maps a session
    id to a URL), and how to reproduce."""
    diff = result.diff
    mark = {0: "✅", 1: "❌", 2: "⚠️"}[result.exit_code]
    out = [f"## {mark} {result.headline}", ""]
    out += [f"- baseline (A): {diff.before.label}", f"- candidate (B): {diff.after.label}"]
    out += [f"- rules: {_rules_text(result.rules)}", ""]
    out += [f"> {note}" for note in diff.notes] + ([""] if diff.notes else [])
    if result.incomplete:
        out += ["### Incomplete", ""] + [f"- {reason}" for reason in result.incomplete] + [""]
    out += ["### Changes", ""]
    for arm in diff.arms:
        out.append(f"**arm {arm.after}**")
        out += [f"- {line}" for line in summary_lines(arm)] + [""]
    if result.regressions:
        out += ["### Regressed cases", ""]
        rows = []
        for finding in result.regressions:
            for change in finding.cases:
                sessions = change.after.session_ids if change.after else ()
                before = "–" if change.before is None else change.before.verdict
                after = "–" if change.after is None else change.after.verdict
                links_text = ", ".join(_link(s, links) for s in sessions) or "–"
                rows.append([finding.arm, finding.metric, change.label, before, after, links_text])
        out += [f"- {finding.arm}: {finding.reason}" for finding in result.regressions] + [""]
        out += [*markdown_table(("arm", "rule", "case", "A", "B", "B sessions"), rows), ""]
    if result.within_bounds:
        out += ["### Within bounds", ""] + [f"- {line}" for line in result.within_bounds] + [""]
    if reproduce:
        out += ["### Reproduce", "", "```sh", reproduce, "```", ""]
    return "\n".join(out)


def _rules_text(rules: GateRules) -> str:
    parts = [f"success may drop ≤ {rules.max_success_drop:g} pts unless McNemar is significant at {rules.alpha:g}"]
    parts.append("cost not gated" if rules.max_cost_increase is None else f"cost +{rules.max_cost_increase:g}% max")
    parts.append("wall time not gated" if rules.max_time_increase is None else
                 f"wall time +{rules.max_time_increase:g}% max")  # fmt: skip
    return "; ".join(parts)


def _link(session_id: str, links: dict[str, str] | None) -> str:
    url = (links or {}).get(session_id)
    return f"[{session_id}]({url})" if url else f"`{session_id}`"
