"""A paired comparison of two runs that answered the same items (issue 15, item 7).

Items are matched by key; only items scored in both runs count. Each item gives a 0–1 value
per run (1/0 for a pass-rate task, the raw score over the task's scale for a mean-score task,
as :func:`sweepbench.bench.results.item_values` makes them), so the mean of the per-item
differences is the difference of the two runs' scores on the shared items, in points (0–100).

* **Range**: a paired bootstrap: the per-item differences are resampled with replacement
  within each task (tasks in sorted order, one generator seeded ``seed``, as the runs' own
  ranges are made by :mod:`sweepbench.stats.bootstrap`), the count-weighted mean over tasks
  is taken, and the 2.5th/97.5th percentiles give the 95% range.
* **McNemar**: the exact test on the pass verdicts: ``b`` items pass in A and fail in B,
  ``c`` fail in A and pass in B; p is the two-sided exact binomial probability of
  ``min(b, c)`` out of ``b + c`` at one half (1 when no item flips), computed exactly in
  integers.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from sweepbench.errors import UserError
from sweepbench.stats.bootstrap import FloatArray, percentile_interval, resample_means

RESAMPLES = 10_000
"""Resamples behind the paired 95% range (as the runs' own ranges)."""
SEED = 0
"""The paired bootstrap's seed."""
ALPHA = 0.05
"""A difference is called real when its 95% range leaves out 0 and McNemar's p is below this."""


@dataclass(frozen=True)
class ItemValue:
    """One scored answer as the comparison needs it."""

    task: str
    value: float
    """The item's 0–1 value (its share of the task score)."""
    passed: bool
    """The pass verdict."""


@dataclass(frozen=True)
class PairedResult:
    """The paired difference B − A over the items both runs scored (points, 0–100)."""

    n: int
    """Shared scored items."""
    mean_a: float
    """A's mean on the shared items (0–100)."""
    mean_b: float
    """B's mean on the shared items (0–100)."""
    diff: float
    """``mean_b − mean_a`` in points."""
    low: float
    """The 2.5th percentile of the paired bootstrap of ``diff``."""
    high: float
    """The 97.5th percentile of the paired bootstrap of ``diff``."""
    b: int
    """Items that pass in A and fail in B."""
    c: int
    """Items that fail in A and pass in B."""
    p_value: float
    """The exact McNemar test's two-sided p (1 when no item flips)."""
    flips_share: float
    """The share of shared items whose verdict differs: ``(b + c) / n``."""
    label_a: str = "A"
    label_b: str = "B"

    @property
    def flips(self) -> int:
        """Items whose pass verdict differs between the runs."""
        return self.b + self.c

    @property
    def real(self) -> bool:
        """True when the 95% range leaves out 0 and McNemar's p is below :data:`ALPHA`."""
        return (self.low > 0 or self.high < 0) and self.p_value < ALPHA

    def sentence(self) -> str:
        """The comparison in one sentence."""
        size = abs(self.diff)
        if round(size, 1) == 0:
            lead = f"{self.label_b} scores the same as {self.label_a}"
        else:
            way = "higher" if self.diff > 0 else "lower"
            lead = f"{self.label_b} scores {size:.1f} points {way}"
        items = "item" if self.n == 1 else "items"
        flips = "item flips" if self.flips == 1 else "items flip"
        verdict = "a real difference" if self.real else "could be noise"
        return (
            f"{lead} on {self.n:,} shared {items} (95% range {self.low:.1f} to "
            f"{self.high:.1f}); {self.flips:,} {flips}, McNemar {format_p(self.p_value)}: "
            f"{verdict}."
        )

    def as_json(self) -> dict[str, Any]:
        """The result as plain JSON data (the sentence included)."""
        return {
            "a": self.label_a, "b": self.label_b, "n": self.n,
            "mean_a": self.mean_a, "mean_b": self.mean_b, "diff": self.diff,
            "low": self.low, "high": self.high, "discordant_b": self.b, "discordant_c": self.c,
            "p_value": self.p_value, "flips_share": self.flips_share, "real": self.real,
            "sentence": self.sentence(),
        }  # fmt: skip


def format_p(p: float) -> str:
    """``p = 0.003``, ``p < 0.001``, ``p = 1``."""
    if p < 0.001:
        return "p < 0.001"
    if p >= 0.9995:
        return "p = 1"
    return f"p = {p:.3f}"


def mcnemar_exact(b: int, c: int) -> float:
    """The exact McNemar test's two-sided p on the discordant pairs ``b`` and ``c``."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts cannot be negative (b={b}, c={c})")
    n = b + c
    if n == 0:
        return 1.0
    # exact, in integers: twice the lower tail of Binomial(n, 1/2) at min(b, c), at most 1
    # (what scipy.stats.binomtest(min(b, c), n, 0.5).pvalue gives; scipy is not a dependency)
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def item_values(
    outcomes: Iterable[Mapping[str, Any]], catalogue: Sequence[Mapping[str, Any]]
) -> dict[str, ItemValue]:
    """The scored answers of a run (``BenchStore.outcomes`` rows) by key, valued by the
    run's stored catalogue (``settings["catalogue"]``: areas with tasks naming ``score_by``
    and ``scale``). A task the catalogue lacks is valued as a pass rate."""
    scales: dict[str, float | None] = {}
    for area in catalogue:
        for task in area.get("tasks", []):
            if task.get("score_by") == "mean_score":
                scales[task["id"]] = float(task.get("scale") or 1.0)
            else:
                scales[task["id"]] = None
    values: dict[str, ItemValue] = {}
    for row in outcomes:
        if row["status"] != "scored":
            continue
        scale = scales.get(row["task"])
        passed = bool(row["passed"])
        value = float(row["score"]) / scale if scale else (1.0 if passed else 0.0)
        values[row["key"]] = ItemValue(row["task"], value, passed)
    return values


def paired_difference(
    a: Mapping[str, ItemValue],
    b: Mapping[str, ItemValue],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    label_a: str = "A",
    label_b: str = "B",
) -> PairedResult:
    """B − A over the items both ``a`` and ``b`` scored (by key), with a paired bootstrap
    95% range stratified within task and the exact McNemar test. UserError when they share
    no scored item."""
    shared = sorted(set(a) & set(b))
    if not shared:
        raise UserError(f"{label_a} and {label_b} share no scored item, so they cannot be paired")
    by_task: dict[str, list[float]] = defaultdict(list)
    worse = better = 0
    total_a = total_b = 0.0
    for key in shared:
        first, second = a[key], b[key]
        by_task[first.task].append(100.0 * (second.value - first.value))
        total_a += first.value
        total_b += second.value
        if first.passed and not second.passed:
            worse += 1
        elif second.passed and not first.passed:
            better += 1
    n = len(shared)
    mean_a, mean_b = 100.0 * total_a / n, 100.0 * total_b / n
    low, high = _paired_range(by_task, n, resamples, seed)
    return PairedResult(
        n=n,
        mean_a=mean_a,
        mean_b=mean_b,
        diff=mean_b - mean_a,
        low=low,
        high=high,
        b=worse,
        c=better,
        p_value=mcnemar_exact(worse, better),
        flips_share=(worse + better) / n,
        label_a=label_a,
        label_b=label_b,
    )


def _paired_range(
    by_task: Mapping[str, Sequence[float]], n: int, resamples: int, seed: int
) -> tuple[float, float]:
    """The 95% range of the mean difference: resampled within each task (sorted task order,
    one generator), count-weighted over tasks."""
    rng = np.random.default_rng(seed)
    weighted: FloatArray = np.zeros(resamples, dtype=np.float64)
    for task in sorted(by_task):
        values = np.asarray(by_task[task], dtype=np.float64)
        weighted += values.size * resample_means(values, resamples, rng)
    if resamples <= 0:
        mean = sum(sum(v) for v in by_task.values()) / n
        return mean, mean
    return percentile_interval(weighted / n)
