"""The paired comparison of two runs: mean difference, paired bootstrap range, exact McNemar."""

from __future__ import annotations

import math

import pytest

from sweepbench.errors import UserError
from sweepbench.stats.paired import (
    ItemValue,
    format_p,
    item_values,
    mcnemar_exact,
    paired_difference,
)


def exact_two_sided(b: int, c: int) -> float:
    """The exact McNemar p by hand: twice the lower binomial tail at one half, at most 1."""
    n, k = b + c, min(b, c)
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def pairs(
    both: int, neither: int, a_only: int, b_only: int, *, tasks: int = 2
) -> tuple[dict[str, ItemValue], dict[str, ItemValue]]:
    """Made-up paired pass/fail data: ``both`` items pass in both runs, ``neither`` in
    neither, ``a_only`` only in A, ``b_only`` only in B; spread over ``tasks`` tasks."""
    kinds = [(True, True)] * both + [(False, False)] * neither
    kinds += [(True, False)] * a_only + [(False, True)] * b_only
    a: dict[str, ItemValue] = {}
    b: dict[str, ItemValue] = {}
    for i, (in_a, in_b) in enumerate(kinds):
        task = f"t{i % tasks}"
        a[f"k{i}"] = ItemValue(task, 1.0 if in_a else 0.0, in_a)
        b[f"k{i}"] = ItemValue(task, 1.0 if in_b else 0.0, in_b)
    return a, b


@pytest.mark.parametrize(
    ("b", "c"), [(0, 1), (1, 0), (3, 7), (7, 3), (5, 5), (0, 12), (10, 40), (18, 20), (1, 30)]
)
def test_mcnemar_matches_the_binomial_by_hand(b: int, c: int) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(exact_two_sided(b, c), rel=1e-12)


def test_mcnemar_matches_scipy_binomtest() -> None:
    stats = pytest.importorskip("scipy.stats")
    for b, c in [(3, 7), (10, 40), (18, 20), (0, 5), (120, 95), (1000, 1100)]:
        expected = stats.binomtest(min(b, c), b + c, 0.5).pvalue
        assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-9)


def test_mcnemar_reference_values() -> None:
    # b=3, c=7: 2 × (1 + 10 + 45 + 120) / 1024 = 352/1024
    assert mcnemar_exact(3, 7) == pytest.approx(352 / 1024)
    # one discordant pair: p = 1; none: p = 1
    assert mcnemar_exact(0, 1) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    # all 12 one way: 2 / 4096
    assert mcnemar_exact(0, 12) == pytest.approx(2 / 4096)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_a_real_difference_at_n_500() -> None:
    a, b = pairs(both=250, neither=200, a_only=10, b_only=40)
    result = paired_difference(a, b, label_a="run:a", label_b="run:b")
    assert result.n == 500
    assert (result.b, result.c) == (10, 40)
    assert result.mean_a == pytest.approx(100 * 260 / 500)
    assert result.mean_b == pytest.approx(100 * 290 / 500)
    assert result.diff == pytest.approx(6.0)
    assert 0 < result.low < 6.0 < result.high
    assert result.p_value == pytest.approx(exact_two_sided(10, 40))
    assert result.p_value < 0.001
    assert result.flips_share == pytest.approx(50 / 500)
    assert result.real
    assert result.sentence() == (
        f"run:b scores 6.0 points higher on 500 shared items (95% range {result.low:.1f} to "
        f"{result.high:.1f}); 50 items flip, McNemar p < 0.001: a real difference."
    )


def test_no_real_difference_at_n_20() -> None:
    a, b = pairs(both=8, neither=8, a_only=1, b_only=3)
    result = paired_difference(a, b)
    assert result.n == 20
    assert result.diff == pytest.approx(10.0)
    assert result.low < 0 < result.high
    assert result.p_value == pytest.approx(exact_two_sided(1, 3))  # 0.625
    assert not result.real
    assert result.sentence().endswith("4 items flip, McNemar p = 0.625: could be noise.")
    assert result.sentence().startswith("B scores 10.0 points higher on 20 shared items")


def test_lower_is_said_so() -> None:
    a, b = pairs(both=250, neither=200, a_only=40, b_only=10)
    result = paired_difference(a, b)
    assert result.diff == pytest.approx(-6.0)
    assert result.high < 0
    assert result.sentence().startswith("B scores 6.0 points lower on 500 shared items")
    assert result.real


def test_ties_and_no_discordant_pairs() -> None:
    a, b = pairs(both=30, neither=10, a_only=0, b_only=0)
    result = paired_difference(a, b)
    assert (result.b, result.c, result.p_value, result.flips_share) == (0, 0, 1.0, 0.0)
    assert (result.diff, result.low, result.high) == (0.0, 0.0, 0.0)
    assert not result.real
    assert result.sentence() == (
        "B scores the same as A on 40 shared items (95% range 0.0 to 0.0); 0 items flip, "
        "McNemar p = 1: could be noise."
    )
    # balanced flips: a tie in the mean, p = 1
    a, b = pairs(both=30, neither=10, a_only=6, b_only=6)
    result = paired_difference(a, b)
    assert result.diff == 0.0
    assert result.p_value == 1.0
    assert result.flips_share == pytest.approx(12 / 52)


def test_same_seed_same_range_and_the_seed_matters() -> None:
    a, b = pairs(both=100, neither=80, a_only=12, b_only=20, tasks=3)
    first = paired_difference(a, b)
    again = paired_difference(dict(reversed(list(a.items()))), b)
    assert (first.low, first.high) == (again.low, again.high)
    # mean-score values (many distinct differences): another seed draws another range
    a = {f"k{i}": ItemValue(f"t{i % 3}", (i * 7 % 11) / 10, True) for i in range(60)}
    b = {f"k{i}": ItemValue(f"t{i % 3}", (i * 5 % 13) / 12, True) for i in range(60)}
    first = paired_difference(a, b)
    assert (first.low, first.high) == (paired_difference(a, b).low, paired_difference(a, b).high)
    other = paired_difference(a, b, seed=1)
    assert (other.low, other.high) != (first.low, first.high)
    assert other.diff == first.diff


def test_only_items_scored_in_both_count() -> None:
    a, b = pairs(both=10, neither=10, a_only=0, b_only=0)
    a["extra-a"] = ItemValue("t0", 1.0, True)
    b["extra-b"] = ItemValue("t0", 0.0, False)
    assert paired_difference(a, b).n == 20
    with pytest.raises(UserError, match="share no scored item"):
        paired_difference({"x": ItemValue("t0", 1.0, True)}, {"y": ItemValue("t0", 1.0, True)})


def test_resampling_is_stratified_within_task() -> None:
    # every item of t0 gains 100 points, every item of t1 none: resampling within each task
    # cannot change the mix, so the range is the mean itself (pooled resampling would not)
    a = {f"x{i}": ItemValue("t0", 0.0, False) for i in range(10)}
    a |= {f"y{i}": ItemValue("t1", 1.0, True) for i in range(30)}
    b = {f"x{i}": ItemValue("t0", 1.0, True) for i in range(10)}
    b |= {f"y{i}": ItemValue("t1", 1.0, True) for i in range(30)}
    result = paired_difference(a, b)
    assert result.diff == pytest.approx(25.0)
    assert result.low == pytest.approx(25.0)
    assert result.high == pytest.approx(25.0)


def test_mean_score_items_are_valued_over_the_scale() -> None:
    catalogue = [
        {"key": "m", "tasks": [{"id": "essay", "score_by": "mean_score", "scale": 5}]},
        {"key": "p", "tasks": [{"id": "quiz", "score_by": "pass_rate"}]},
    ]
    rows = [
        {"key": "e1", "task": "essay", "status": "scored", "score": 4.0, "passed": True},
        {"key": "q1", "task": "quiz", "status": "scored", "score": 0.0, "passed": False},
        {"key": "q2", "task": "quiz", "status": "failed", "score": None, "passed": None},
    ]
    values = item_values(rows, catalogue)
    assert values == {
        "e1": ItemValue("essay", 0.8, True),
        "q1": ItemValue("quiz", 0.0, False),
    }


def test_p_words() -> None:
    assert format_p(0.0031) == "p = 0.003"
    assert format_p(0.0004) == "p < 0.001"
    assert format_p(1.0) == "p = 1"
