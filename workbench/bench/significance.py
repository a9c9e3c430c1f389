"""Is a difference in success real? McNemar's exact test, pass^k, and how many pairs it would take.

Pure functions on counts, no I/O, so the same figures come out of the bench report, ``workbench diff`` and
``workbench gate``.

- **McNemar's exact test** looks only at the *discordant* pairs of paired verdicts: ``b`` cases the baseline
  passed and the other side failed, ``c`` the reverse. Under "no difference" each discordant pair is a fair
  coin, so the two-sided p-value is ``min(1, 2 * P(X <= min(b, c)))`` with ``X ~ Binomial(b + c, 1/2)``.
- **pass^k** (tau-bench): per case, the chance that k repeats drawn from its n all pass,
  ``C(successes, k) / C(n, k)``, averaged over cases.
- **Pairs needed**: the normal-approximation sample size for McNemar's test (Connor 1987),
  ``n = (z_{1-a/2} * sqrt(psi) + z_{power} * sqrt(psi - delta^2))^2 / delta^2``, where ``psi`` is the
  discordance rate (share of pairs whose verdicts differ) and ``delta`` the difference in success rate to
  detect. ``psi`` is taken from the observed pairs, but never below ``|delta|``: a difference of ``delta``
  needs at least that share of pairs to disagree.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

ALPHA = 0.05
"""The level every significance statement is made at (two-sided)."""
POWER = 0.8


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs (1.0 when there are none)."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must not be negative, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)


def pairs_needed(delta: float, discordance: float, *, alpha: float = ALPHA, power: float = POWER) -> int | None:
    """Paired cases needed for McNemar's test to detect a success difference of ``delta`` (a rate, 0-1)
    at two-sided level ``alpha`` with ``power``, given the discordance rate (Connor 1987). ``None`` for no
    difference (``delta == 0``: no number of pairs detects nothing)."""
    delta = abs(delta)
    if delta == 0:
        return None
    if delta > 1:
        raise ValueError(f"a difference in success rate lies between 0 and 1, got {delta}")
    psi = min(1.0, max(discordance, delta))
    z_alpha = NormalDist().inv_cdf(1 - alpha / 2)
    z_power = NormalDist().inv_cdf(power)
    n = (z_alpha * math.sqrt(psi) + z_power * math.sqrt(psi - delta**2)) ** 2 / delta**2
    return math.ceil(n - 1e-9)


def pass_hat_k(outcomes: Iterable[tuple[str, bool]]) -> dict[str, float]:
    """pass^k as tau-bench reports it: per case, the chance that k repeats drawn from its n all pass,
    C(successes, k) / C(n, k), averaged over cases; for k = 1 up to the fewest repeats any case had."""
    trials: dict[str, list[bool]] = {}
    for case, passed in outcomes:
        trials.setdefault(case, []).append(passed)
    if not trials:
        return {}
    most = min(len(results) for results in trials.values())
    return {
        str(k): sum(math.comb(sum(results), k) / math.comb(len(results), k) for results in trials.values())
        / len(trials)
        for k in range(1, most + 1)
    }


@dataclass(frozen=True)
class SuccessTest:
    """Paired verdicts of one side against another (the baseline), with McNemar's exact test.

    ``regressed`` (b) counts pairs the baseline passed and the other side failed; ``improved`` (c) the reverse.
    """

    pairs: int
    regressed: int
    improved: int
    p_value: float
    alpha: float = ALPHA
    needed: int | None = None
    """Pairs needed to detect :attr:`delta_points` (or :attr:`target_points`, when given) at ``alpha``, 80% power."""
    target_points: float | None = None

    @property
    def delta_points(self) -> float:
        """The other side's success rate minus the baseline's, in points, over the paired runs."""
        return (self.improved - self.regressed) / self.pairs * 100 if self.pairs else 0.0

    @property
    def discordance(self) -> float:
        return (self.regressed + self.improved) / self.pairs if self.pairs else 0.0

    @property
    def significant(self) -> bool:
        return self.p_value < self.alpha

    def describe(self) -> str:
        """One honest line: a direction only when the test is significant at :attr:`alpha`."""
        figures = f"p = {self.p_value:.2g}, {self.pairs} pair{'s' if self.pairs != 1 else ''}"
        flips = f"{self.regressed} pass→fail, {self.improved} fail→pass"
        if not self.pairs:
            return "no paired verdicts to compare"
        if not self.significant:
            return f"no significant difference in success ({figures}; {flips})"
        direction = "lower" if self.delta_points < 0 else "higher"
        return f"success {direction} by {abs(self.delta_points):.0f} pts, significant at {self.alpha:g} ({figures})"

    def needed_text(self) -> str:
        """How many pairs it would take, and for what difference, or why no figure can be given."""
        target = self.target_points if self.target_points is not None else self.delta_points
        if self.needed is None:
            return "pairs needed: no difference to detect"
        return (
            f"~{self.needed} pairs to detect {abs(target):.0f} pts at α = {self.alpha:g} with 80% power "
            f"(McNemar, Connor 1987; discordance {self.discordance * 100:.0f}% observed)"
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(delta_points=self.delta_points, significant=self.significant, summary=self.describe())
        return data


def success_test(
    verdicts: Iterable[tuple[bool, bool]], *, alpha: float = ALPHA, target_points: float | None = None
) -> SuccessTest:
    """McNemar's exact test on (baseline passed, other passed) pairs; ``target_points`` is the difference to
    size the "pairs needed" figure for (default: the one observed)."""
    pairs = regressed = improved = 0
    for base, other in verdicts:
        pairs += 1
        regressed += base and not other
        improved += other and not base
    p_value = mcnemar_exact(regressed, improved)
    observed = (improved - regressed) / pairs if pairs else 0.0
    delta = observed if target_points is None else target_points / 100
    discordance = (regressed + improved) / pairs if pairs else 0.0
    needed = pairs_needed(delta, discordance, alpha=alpha) if pairs and delta else None
    return SuccessTest(pairs, regressed, improved, p_value, alpha, needed, target_points)
