"""Sweep statistics: Holm, Wilcoxon, permutation, detectable difference, pass@k, verdict."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from sweepbench.bench.sweeps.verdict import verdict
from sweepbench.stats.significance import (
    holm,
    min_detectable_difference,
    paired_permutation_p,
    pass_at_k,
    pass_hat_k,
    signed_rank_counts,
    wilcoxon_signed_rank,
)


def test_holm_known_example() -> None:
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_by_hand_monotone_and_capped() -> None:
    # statsmodels multipletests(method="holm") by hand: sorted 0.02, 0.03, 0.5, 0.6, 0.9
    # → ×5, ×4, ×3, ×2, ×1 = 0.10, 0.12, 1.5→1, 1.2→1, 0.9→max(1) = 1
    assert holm([0.5, 0.02, 0.9, 0.03, 0.6]) == pytest.approx([1.0, 0.10, 1.0, 0.12, 1.0])
    # a later smaller product is lifted to the running maximum
    assert holm([0.001, 0.012, 0.013]) == pytest.approx([0.003, 0.024, 0.024])
    assert holm([]) == []
    assert holm([0.2]) == [0.2]


def test_signed_rank_counts_enumerated() -> None:
    for n in range(0, 8):
        counts = [0] * (n * (n + 1) // 2 + 1)
        for signs in itertools.product((0, 1), repeat=n):
            counts[sum(r for r, s in zip(range(1, n + 1), signs, strict=True) if s)] += 1
        assert signed_rank_counts(n) == counts


@pytest.mark.parametrize("seed", range(6))
def test_wilcoxon_exact_matches_scipy(seed: int) -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 26))
    diffs = list(rng.normal(0.3, 1.0, n))
    expected = stats.wilcoxon(diffs, method="exact").pvalue
    assert wilcoxon_signed_rank(diffs) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_wilcoxon_approx_matches_scipy(seed: int) -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(30, 200))
    # rounded values: ties and zeros, as graded scores give
    diffs = list(np.round(rng.normal(0.2, 1.0, n), 1))
    expected = stats.wilcoxon(diffs, zero_method="wilcox", correction=True, method="approx").pvalue
    assert wilcoxon_signed_rank(diffs) == pytest.approx(expected, rel=1e-6)


def test_wilcoxon_small_with_ties_uses_the_approximation() -> None:
    stats = pytest.importorskip("scipy.stats")
    diffs = [1.0, 1.0, -2.0, 3.0, 0.0, 4.0, 5.0, 2.0]
    expected = stats.wilcoxon(diffs, correction=True, method="approx").pvalue
    assert wilcoxon_signed_rank(diffs) == pytest.approx(expected, rel=1e-6)


def test_wilcoxon_nothing_left() -> None:
    assert wilcoxon_signed_rank([0.0, 0.0]) == 1.0
    assert wilcoxon_signed_rank([]) == 1.0


def test_permutation_reproducible_and_sensible() -> None:
    rng = np.random.default_rng(3)
    shifted = list(rng.normal(1.0, 1.0, 40))
    null = list(rng.normal(0.0, 1.0, 40))
    assert paired_permutation_p(shifted) == paired_permutation_p(shifted)
    assert paired_permutation_p(shifted, resamples=2_000) < 0.01
    assert paired_permutation_p(null, resamples=2_000) > 0.05
    assert paired_permutation_p([]) == 1.0


def test_permutation_close_to_exact_enumeration() -> None:
    diffs = [0.5, 1.2, -0.3, 0.8, 2.0, -0.1, 0.9, 1.1]
    observed = abs(sum(diffs) / len(diffs))
    hits = sum(
        abs(sum(s * d for s, d in zip(signs, diffs, strict=True)) / len(diffs)) >= observed - 1e-12
        for signs in itertools.product((-1, 1), repeat=len(diffs))
    )
    exact = hits / 2 ** len(diffs)
    assert paired_permutation_p(diffs, resamples=20_000, seed=1) == pytest.approx(exact, abs=0.01)


def test_min_detectable_difference_known_values() -> None:
    assert min_detectable_difference(100, sd=1.0) == pytest.approx(0.2802, abs=1e-4)
    assert min_detectable_difference(400, sd=1.0) == pytest.approx(0.1401, abs=1e-4)
    # pass/fail: 2.8016 · √(0.2/500) = 0.05603
    share = min_detectable_difference(500, discordant_share=0.2)
    assert share == pytest.approx(2.8016 * math.sqrt(0.2 / 500), rel=1e-4)
    assert min_detectable_difference(100, sd=1.0, power=0.9) == pytest.approx(
        (1.959964 + 1.281552) / 10, abs=1e-5
    )


def test_min_detectable_difference_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        min_detectable_difference(100)
    with pytest.raises(ValueError):
        min_detectable_difference(100, sd=1.0, discordant_share=0.1)
    with pytest.raises(ValueError):
        min_detectable_difference(0, sd=1.0)


def _enumerate_pass(n: int, c: int, k: int, every: bool) -> float:
    outcomes = [True] * c + [False] * (n - c)
    draws = list(itertools.combinations(outcomes, k))
    good = sum((all(d) if every else any(d)) for d in draws)
    return good / len(draws)


@pytest.mark.parametrize(("n", "c", "k"), [(5, 2, 1), (5, 2, 3), (6, 0, 2), (6, 6, 4), (7, 3, 2)])
def test_pass_at_k_and_hat_k_by_enumeration(n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(_enumerate_pass(n, c, k, every=False))
    assert pass_hat_k(n, c, k) == pytest.approx(_enumerate_pass(n, c, k, every=True))


def test_pass_at_k_rejects_bad_counts() -> None:
    with pytest.raises(ValueError):
        pass_at_k(5, 6, 1)
    with pytest.raises(ValueError):
        pass_hat_k(5, 2, 0)


def test_verdict_not_detectably_worse() -> None:
    text = verdict(
        diff=-0.8, low=-2.1, high=0.5, p_adjusted=0.21, cost_share=0.38, min_detectable=3.1
    )
    assert text == (
        "costs 38% as much and is not detectably worse: \u22120.8 points, 95% range "
        "\u22122.1 to +0.5, p = 0.210 (Holm); this many items could detect 3.1 points"
    )


def test_verdict_worse() -> None:
    text = verdict(
        diff=-4.2, low=-6.0, high=-2.4, p_adjusted=0.0004, cost_share=0.5, min_detectable=2.0
    )
    assert text == (
        "costs 50% as much and is worse by 4.2 points "
        "(95% range \u22126.0 to \u22122.4, p < 0.001 (Holm))"
    )


def test_the_detectable_difference_never_falls_below_what_the_exact_test_can_reach() -> None:
    # no item flipped: the normal approximation would say 0, but McNemar needs 6 one-way
    # flips to reach p < 0.05, so 2,000 items detect no less than 6 / 2,000
    assert min_detectable_difference(2_000, discordant_share=0.0) == pytest.approx(0.003)
    assert min_detectable_difference(40, discordant_share=0.0) == pytest.approx(0.15)
    # with many flips the approximation is the larger and stands
    many = min_detectable_difference(2_000, discordant_share=0.2)
    assert many == pytest.approx(2.8016 * (0.2 / 2_000) ** 0.5, rel=1e-3)


def test_a_verdict_without_a_known_cost_says_nothing_of_cost() -> None:
    known = verdict(diff=-0.8, low=-2.1, high=0.5, p_adjusted=0.21, cost_share=0.38,
                    min_detectable=3.0)  # fmt: skip
    unknown = verdict(diff=-0.8, low=-2.1, high=0.5, p_adjusted=0.21, cost_share=None,
                      min_detectable=3.0)  # fmt: skip
    assert known == "costs 38% as much and " + unknown
    assert unknown.startswith("is not detectably worse: \u22120.8 points")


def test_a_verdict_on_too_few_items_says_no_difference_could_be_detected() -> None:
    text = verdict(diff=-100.0, low=-100.0, high=-100.0, p_adjusted=0.25, cost_share=None,
                   min_detectable=100.0)  # fmt: skip
    assert "too few items for any difference to be detectable" in text
    assert "at least 6 that differ" in text and "could detect" not in text
