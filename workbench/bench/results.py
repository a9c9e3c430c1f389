"""One finished run of a sweep, reduced to the figures a report needs (folded from its events)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.bench.plan import BenchCase
from workbench.session import Comparison
from workbench.summary import ArmSummary


@dataclass(frozen=True)
class ArmFigures:
    """What one arm of one run did and cost (a flat, JSON-friendly slice of :class:`ArmSummary`)."""

    status: str
    passed: bool | None
    """Whether an expectation was met (``None`` without one: the arms agreeing is :attr:`verdict`)."""
    cost_usd: float | None
    wall_s: float
    requests: int
    input_tokens: int
    output_tokens: int
    tool_calls: int
    """Calls the model made itself (``run_code`` included)."""
    app_calls: int
    """Calls that reached the app: the model's own calls other than ``run_code``, and the snippets' inner calls."""
    bytes_seen: int
    bytes_produced: int
    price_label: str = ""
    error: str | None = None
    mismatches: list[str] = field(default_factory=list)
    tokens_estimated: bool = False
    """Some response reported no usage: the tokens include the workbench's own count."""
    cache_read_tokens: int = 0
    """Input tokens the provider served from its cache (0 when it reports none)."""
    cache_cost_usd: float = 0.0
    """What those cached tokens cost, at the provider's cached rate (part of ``cost_usd``)."""
    verdict: str = "not graded"
    """``passed`` | ``failed`` | ``agree`` | ``differ`` | ``not graded`` (:mod:`workbench.verdict`)."""
    verdict_reason: str = ""
    turns: int = 1
    """User turns the arm answered (a conversation's, e.g. a BFCL entry's; 1 for a run of one prompt)."""

    @classmethod
    def from_summary(cls, summary: ArmSummary) -> ArmFigures:
        app_calls = summary.tool_calls - summary.snippets + summary.inner_calls
        return cls(
            status=summary.status,
            passed=summary.passed,
            cost_usd=summary.cost_usd,
            wall_s=summary.wall_s,
            requests=summary.requests,
            input_tokens=summary.input_tokens,
            output_tokens=summary.output_tokens,
            tool_calls=summary.tool_calls,
            app_calls=app_calls,
            bytes_seen=summary.tool_output_bytes_seen,
            bytes_produced=summary.tool_output_bytes_produced,
            price_label=summary.price_label,
            error=summary.error,
            mismatches=list(summary.mismatches[:5]),
            tokens_estimated=summary.tokens_estimated,
            cache_read_tokens=summary.cache_read_tokens,
            cache_cost_usd=summary.cache_cost_usd,
            verdict=summary.verdict,
            verdict_reason=summary.verdict_reason,
            turns=len(summary.turns) or 1,
        )

    @property
    def succeeded(self) -> bool:
        """Completed and graded as passed (an ungraded run never counts as a success, nor do arms that agree)."""
        return self.status == "completed" and self.passed is True

    def value(self, metric: str) -> float | None:
        """A metric by name; ``success`` is 1 or 0, and ``None`` for a run graded by agreement (no expectation)."""
        if metric == "success":
            if self.graded_by_agreement:
                return None
            return 1.0 if self.succeeded else 0.0
        value = getattr(self, metric)
        return None if value is None else float(value)

    @property
    def graded_by_agreement(self) -> bool:
        """No expectation: the arms were compared with each other (agree / differ), which is no success or failure."""
        return self.verdict in ("agree", "differ")

    def failure_reason(self) -> str:
        if self.error:
            return self.error
        if self.status != "completed":
            return self.status
        if self.passed is False:
            return self.mismatches[0] if self.mismatches else "end state differs from the expected one"
        if self.verdict in ("agree", "differ"):
            return f"no expectation (arms {self.verdict})"
        return self.verdict_reason or "not graded"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArmFigures:
        known = {name for name in cls.__dataclass_fields__}
        return cls(**{key: value for key, value in data.items() if key in known})


@dataclass(frozen=True)
class RunResult:
    """One case of a sweep, finished: its stored session and each arm's figures, in the comparison's order."""

    case: BenchCase
    model: str
    session_id: str
    arms: dict[str, ArmFigures]
    reused: bool = False
    """Carried over from an earlier sweep by ``--resume`` rather than run again."""

    @classmethod
    def from_comparison(cls, case: BenchCase, comparison: Comparison, *, reused: bool = False) -> RunResult:
        arms = {name: ArmFigures.from_summary(arm.summary) for name, arm in comparison.arms.items()}
        return cls(case, comparison.model, comparison.session_id, arms, reused)

    @property
    def status(self) -> str:
        statuses = [arm.status for arm in self.arms.values()]
        return "completed" if all(s == "completed" for s in statuses) else next(s for s in statuses if s != "completed")

    @property
    def finished(self) -> bool:
        """Every arm ran to an end of its own (completed or failed), so ``--resume`` may skip this case."""
        return all(arm.status in ("completed", "failed") for arm in self.arms.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.case.to_dict(),
            "model": self.model,
            "session_id": self.session_id,
            "reused": self.reused,
            "arms": {name: arm.to_dict() for name, arm in self.arms.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResult:
        arms = {name: ArmFigures.from_dict(arm) for name, arm in data["arms"].items()}
        return cls(BenchCase.from_dict(data), data["model"], data["session_id"], arms, bool(data.get("reused")))
