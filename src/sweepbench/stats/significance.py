"""Significance for paired comparisons (issue 16): which cheaper setting is detectably worse.

* :func:`holm`: Holm–Bonferroni adjusted p-values for the many comparisons of a sweep.
* :func:`wilcoxon_signed_rank`: the two-sided Wilcoxon signed-rank test on paired
  differences (exact for small samples, normal approximation otherwise), and
  :func:`paired_permutation_p`, a sign-flip permutation test.
* :func:`min_detectable_difference`: how big a difference this many items could detect.
* :func:`pass_at_k` / :func:`pass_hat_k`: the unbiased pass@k and pass^k estimators.

The paired bootstrap range and the exact McNemar test live in :mod:`sweepbench.stats.paired`
and are reused from there. No scipy: numpy, exact
integer arithmetic and :class:`statistics.NormalDist`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from statistics import NormalDist

import numpy as np

from sweepbench.stats.paired import ALPHA, mcnemar_exact

__all__ = [
    "EXACT_MAX_N",
    "fewest_items",
    "holm",
    "mcnemar_exact",
    "min_detectable_difference",
    "paired_permutation_p",
    "pass_at_k",
    "pass_hat_k",
    "wilcoxon_signed_rank",
]

EXACT_MAX_N = 25
"""The Wilcoxon test is exact up to this many non-zero differences (without ties)."""
_NORMAL = NormalDist()


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the input order: the i-th smallest p (from 0)
    is multiplied by ``m − i``, made non-decreasing along the sorted order, capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p_values[index])))
        adjusted[index] = running
    return adjusted


def _average_ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, ties given their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def signed_rank_counts(n: int) -> list[int]:
    """``counts[s]``: how many of the ``2**n`` sign patterns give the signed-rank sum ``s``
    (ranks 1..n, no ties), by dynamic programming over the ranks."""
    counts = [1]
    for rank in range(1, n + 1):
        grown = counts + [0] * rank
        for total, ways in enumerate(counts):
            grown[total + rank] += ways
        counts = grown
    return counts


def _exact_p(n: int, r_plus: int) -> float:
    """The exact two-sided p of the signed-rank sum ``r_plus`` over ``n`` untied ranks."""
    counts = signed_rank_counts(n)
    low = min(r_plus, n * (n + 1) // 2 - r_plus)
    tail = sum(counts[: low + 1])
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def _normal_p(ranks: Sequence[float], r_plus: float) -> float:
    """The two-sided p by the normal approximation, with tie and continuity correction."""
    n = len(ranks)
    mean = n * (n + 1) / 4
    ties: dict[float, int] = {}
    for rank in ranks:
        ties[rank] = ties.get(rank, 0) + 1
    correction = sum(t**3 - t for t in ties.values()) / 48
    variance = n * (n + 1) * (2 * n + 1) / 24 - correction
    if variance <= 0:
        return 1.0
    distance = max(abs(r_plus - mean) - 0.5, 0.0)
    return min(1.0, 2 * (1 - _NORMAL.cdf(distance / math.sqrt(variance))))


def wilcoxon_signed_rank(diffs: Sequence[float]) -> float:
    """The two-sided p of the Wilcoxon signed-rank test on paired differences. Zero
    differences are dropped (scipy's ``zero_method="wilcox"``); exact for at most
    :data:`EXACT_MAX_N` remaining differences when none were zero and none tie, otherwise
    the normal approximation with tie and continuity correction. 1 when nothing is left."""
    nonzero = [float(d) for d in diffs if d != 0]
    if not nonzero:
        return 1.0
    ranks = _average_ranks([abs(d) for d in nonzero])
    r_plus = sum(rank for rank, d in zip(ranks, nonzero, strict=True) if d > 0)
    untied = len(set(ranks)) == len(ranks)
    if len(nonzero) <= EXACT_MAX_N and untied and len(nonzero) == len(diffs):
        return _exact_p(len(nonzero), round(r_plus))
    return _normal_p(ranks, r_plus)


def paired_permutation_p(diffs: Sequence[float], resamples: int = 10_000, seed: int = 0) -> float:
    """The two-sided p of a sign-flip permutation test on the mean paired difference:
    ``(1 + #{|mean of flipped| ≥ |observed mean|}) / (1 + resamples)``, reproducible
    for a given ``seed``."""
    values = np.asarray(diffs, dtype=np.float64)
    if values.size == 0 or resamples <= 0:
        return 1.0
    rng = np.random.default_rng(seed)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(resamples, values.size))
    observed = abs(float(values.mean()))
    flipped = np.abs((signs * values).mean(axis=1))
    extreme = int(np.count_nonzero(flipped >= observed - 1e-12 * max(1.0, observed)))
    return (1 + extreme) / (1 + resamples)


def min_detectable_difference(
    n: int,
    *,
    sd: float | None = None,
    discordant_share: float | None = None,
    alpha: float = ALPHA,
    power: float = 0.8,
) -> float:
    """The smallest paired mean difference a two-sided test at ``alpha`` detects with
    ``power``, over ``n`` paired items; give exactly one of:

    * ``sd`` (graded scores; the sd of the paired differences):
      ``(z_{1−α/2} + z_power) · sd / √n``, in the units of ``sd``;
    * ``discordant_share`` (pass/fail; the share of items whose verdict flips): the normal
      approximation to McNemar, ``(z_{1−α/2} + z_power) · √(discordant_share / n)``, as a
      proportion (× 100 for points). A difference ``δ = (c − b)/n`` has variance about
      ``(b + c)/n² = discordant_share / n`` under the null. Never below ``m / n``, ``m`` the
      fewest flips (all one way) the exact test needs to reach ``alpha`` (6 at 0.05): with
      few or no flips observed the normal approximation would claim too small a difference.
    """
    if n <= 0:
        raise ValueError(f"n must be positive, not {n}")
    if (sd is None) == (discordant_share is None):
        raise ValueError("give exactly one of sd and discordant_share")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must be between 0 and 1")
    z_total = _NORMAL.inv_cdf(1 - alpha / 2) + _NORMAL.inv_cdf(power)
    if sd is not None:
        if sd < 0:
            raise ValueError(f"sd cannot be negative ({sd})")
        return z_total * sd / math.sqrt(n)
    assert discordant_share is not None
    if not 0 <= discordant_share <= 1:
        raise ValueError(f"discordant_share must be between 0 and 1 ({discordant_share})")
    # the exact test cannot reach alpha with fewer one-way flips than this, whatever the
    # share of flips observed: never claim a smaller detectable difference
    return max(z_total * math.sqrt(discordant_share / n), fewest_items(alpha) / n)


def fewest_items(alpha: float = ALPHA) -> int:
    """The fewest changed items (all one way) with which an exact two-sided sign test —
    McNemar, or the signed-rank test — can reach ``alpha``: the smallest ``m`` with
    ``2 · 2^−m < alpha`` (6 at 0.05). No difference carried by fewer items is detectable."""
    return math.ceil(math.log2(2 / alpha) + 1e-12)


def _check_counts(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 ≤ c ≤ n and 1 ≤ k ≤ n (n={n}, c={c}, k={k})")


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k from ``n`` samples of which ``c`` pass:
    ``1 − C(n−c, k) / C(n, k)`` (the chance at least one of ``k`` drawn samples passes)."""
    _check_counts(n, c, k)
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k from ``n`` samples of which ``c`` pass: ``C(c, k) / C(n, k)`` (the chance all
    ``k`` drawn samples pass)."""
    _check_counts(n, c, k)
    return float(Fraction(math.comb(c, k), math.comb(n, k)))
