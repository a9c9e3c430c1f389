"""The report's arithmetic: means, paired deltas with a cluster bootstrap, payload suppression, crossovers.

Pure Python and deterministic (seeded), so a report computed twice from the same runs is identical.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

DEFAULT_RESAMPLES = 2000
CONFIDENCE = 0.95


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the known values, ``None`` when there are none."""
    known = [value for value in values if value is not None]
    return sum(known) / len(known) if known else None


def payload_suppression(seen: int, produced: int) -> float | None:
    """1 - (bytes of tool output the model saw) / (bytes of tool output the tools produced)."""
    if produced <= 0:
        return None
    return 1 - seen / produced


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values, linearly interpolated (numpy's default method)."""
    if not ordered:
        raise ValueError("quantile of no values")
    position = (len(ordered) - 1) * q
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


@dataclass(frozen=True)
class Pair:
    """One metric of one run in both arms. ``cluster`` groups the runs of one task at one item count."""

    cluster: str
    tool: float
    code: float

    @property
    def delta(self) -> float:
        return self.code - self.tool


@dataclass(frozen=True)
class PairedDelta:
    """Code minus tool on the same task and seed, averaged, with a bootstrap confidence interval.

    ``relative`` is the same delta over the tool arm's mean, in % (``None`` when that mean is 0).
    """

    metric: str
    pairs: int
    clusters: int
    delta: float
    low: float
    high: float
    relative: float | None
    relative_low: float | None
    relative_high: float | None
    confidence: float = CONFIDENCE
    resamples: int = DEFAULT_RESAMPLES

    @property
    def significant(self) -> bool:
        """Whether the interval excludes zero."""
        return self.low > 0 or self.high < 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _estimates(pairs: Sequence[Pair]) -> tuple[float, float | None]:
    deltas = sum(pair.delta for pair in pairs)
    tools = sum(pair.tool for pair in pairs)
    return deltas / len(pairs), (deltas / tools * 100 if tools else None)


def paired_delta(
    metric: str,
    pairs: Sequence[Pair],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int | str = 0,
) -> PairedDelta | None:
    """The mean paired delta of ``pairs`` and its percentile bootstrap interval.

    The bootstrap resamples tasks (clusters), then repeats within each task, so runs of one task are
    not treated as independent evidence. ``None`` when there are no pairs.
    """
    if not pairs:
        return None
    delta, relative = _estimates(pairs)
    clusters: dict[str, list[Pair]] = {}
    for pair in pairs:
        clusters.setdefault(pair.cluster, []).append(pair)
    groups = list(clusters.values())
    rng = random.Random(f"{seed}:{metric}")
    deltas: list[float] = []
    relatives: list[float] = []
    for _ in range(resamples):
        total_delta = total_tool = 0.0
        count = 0
        for group in rng.choices(groups, k=len(groups)):
            chosen = group if len(group) == 1 else rng.choices(group, k=len(group))
            for pair in chosen:
                total_delta += pair.code - pair.tool
                total_tool += pair.tool
            count += len(chosen)
        deltas.append(total_delta / count)
        if total_tool:
            relatives.append(total_delta / total_tool * 100)
    deltas.sort()
    relatives.sort()
    tail = (1 - confidence) / 2
    keep_relative = relative is not None and len(relatives) >= resamples * 0.9
    return PairedDelta(
        metric=metric,
        pairs=len(pairs),
        clusters=len(groups),
        delta=delta,
        low=quantile(deltas, tail),
        high=quantile(deltas, 1 - tail),
        relative=relative,
        relative_low=quantile(relatives, tail) if keep_relative else None,
        relative_high=quantile(relatives, 1 - tail) if keep_relative else None,
        confidence=confidence,
        resamples=resamples,
    )


@dataclass(frozen=True)
class Crossover:
    """Where code mode starts to pay on one metric of a scaling rule (lower is better)."""

    metric: str
    kind: str
    """``always`` (code mode lower at every count), ``never``, ``from`` (lower from ``items`` on), or ``unknown``."""
    items: int | None = None
    """The first item count tried from which code mode is lower at every larger count."""
    previous: int | None = None
    """The count tried just before ``items`` (where code mode was not lower)."""
    estimate: float | None = None
    """Linear interpolation of where the difference crosses zero between ``previous`` and ``items``."""

    def describe(self, unit: str = "") -> str:
        what = f" on {unit}" if unit else ""
        if self.kind == "always":
            return f"code mode is lower{what} at every size tried (from {self.items} items)"
        if self.kind == "never":
            return f"code mode never gets lower{what} up to {self.previous} items"
        if self.kind == "from":
            around = f"about {self.estimate:.0f} items, " if self.estimate is not None else ""
            return f"code mode pays{what} from {around}between {self.previous} and {self.items} items"
        return f"no crossover{what} can be named (missing values)"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def crossover(
    metric: str, sizes: Sequence[int], tool: Sequence[float | None], code: Sequence[float | None]
) -> Crossover:
    """Find the item count from which code mode stays below the tool arm on ``metric``."""
    points = [(n, t, c) for n, t, c in zip(sizes, tool, code, strict=True) if t is not None and c is not None]
    if not points:
        return Crossover(metric, "unknown")
    lower = [c < t for _, t, c in points]
    if all(lower):
        return Crossover(metric, "always", items=points[0][0])
    if not lower[-1]:
        return Crossover(metric, "never", previous=points[-1][0])
    first = len(points) - 1
    while first > 0 and lower[first - 1]:
        first -= 1
    (n0, t0, c0), (n1, t1, c1) = points[first - 1], points[first]
    before, after = c0 - t0, c1 - t1
    estimate = n0 + (n1 - n0) * before / (before - after) if before != after else None
    return Crossover(metric, "from", items=n1, previous=n0, estimate=estimate)
