"""Sweep comparisons: every setting against the best, paired bootstrap, tests, verdicts."""

from __future__ import annotations

import json
import math
from decimal import Decimal

import numpy as np
import pytest

from sweepbench.bench.sweeps.compare import (
    MCNEMAR,
    WILCOXON,
    ItemSamples,
    SettingScores,
    compare_settings,
)
from sweepbench.bench.sweeps.verdict import verdict
from sweepbench.errors import UserError
from sweepbench.stats.paired import ItemValue, paired_difference
from sweepbench.stats.significance import holm


def pass_fail(
    label: str,
    passed: np.ndarray | list[bool],
    *,
    cost: str | None = "1",
    tasks: int = 2,
    start: int = 0,
) -> SettingScores:
    """One sample per item, pass/fail; item i is in task ``t{i % tasks}``."""
    items = {
        f"k{start + i:05d}": ItemSamples(f"t{(start + i) % tasks}", (float(ok),), (bool(ok),))
        for i, ok in enumerate(passed)
    }
    return SettingScores(label, items, None if cost is None else Decimal(cost))


def graded(label: str, values: np.ndarray, *, cost: str | None = "1") -> SettingScores:
    """One sample per item on a graded task ``g`` (pass when at least one half)."""
    items = {
        f"k{i:05d}": ItemSamples("g", (float(v),), (bool(v >= 0.5),)) for i, v in enumerate(values)
    }
    return SettingScores(label, items, None if cost is None else Decimal(cost), frozenset({"g"}))


def repeated(label: str, passes: np.ndarray, k: int, *, cost: str = "1") -> SettingScores:
    """``k`` pass/fail samples per item, ``passes[i]`` of them passing (the first ones)."""
    items = {}
    for i, c in enumerate(passes):
        verdicts = tuple(j < c for j in range(k))
        items[f"k{i:05d}"] = ItemSamples(f"t{i % 2}", tuple(map(float, verdicts)), verdicts)
    return SettingScores(label, items, Decimal(cost))


def accuracies(n: int, seed: int = 7) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.random(n) < acc for acc in (0.90, 0.85, 0.60)]


# --- the bootstrap ---------------------------------------------------------------------------


def test_seeded_and_reproducible() -> None:
    a, b, c = accuracies(300)
    settings = [pass_fail("a", a), pass_fail("b", b), pass_fail("c", c)]
    first = compare_settings(settings, resamples=2_000, seed=5)
    assert first == compare_settings(settings, resamples=2_000, seed=5)
    assert first.as_json() == compare_settings(settings, resamples=2_000, seed=5).as_json()
    other = compare_settings(settings, resamples=2_000, seed=6)
    assert [x.low for x in other.comparisons] != [x.low for x in first.comparisons] or [
        s.low for s in other.settings
    ] != [s.low for s in first.settings]
    # the item order of the mappings does not matter
    shuffled = [
        SettingScores(s.label, dict(reversed(list(s.items.items()))), s.cost_usd) for s in settings
    ]
    assert compare_settings(shuffled, resamples=2_000, seed=5) == first


def slow_bootstrap(
    by_task: dict[str, list[float]], resamples: int, seed: int
) -> tuple[float, float]:
    """A loop-based stratified bootstrap of the mean (points): each resample draws each
    task's values with replacement, one at a time."""
    rng = np.random.default_rng(seed)
    n = sum(len(v) for v in by_task.values())
    means = []
    for _ in range(resamples):
        total = 0.0
        for task in sorted(by_task):
            values = by_task[task]
            for _ in range(len(values)):
                total += values[int(rng.integers(len(values)))]
        means.append(100.0 * total / n)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def test_ranges_match_a_slow_bootstrap() -> None:
    n = 200
    rng = np.random.default_rng(11)
    best = rng.random(n) < 0.8
    worse = rng.random(n) < 0.65
    tasks = 3
    result = compare_settings(
        [pass_fail("best", best, tasks=tasks), pass_fail("worse", worse, tasks=tasks)],
        resamples=10_000,
        seed=1,
    )
    diffs: dict[str, list[float]] = {}
    own: dict[str, list[float]] = {}
    for i in range(n):
        diffs.setdefault(f"t{i % tasks}", []).append(float(worse[i]) - float(best[i]))
        own.setdefault(f"t{i % tasks}", []).append(float(best[i]))
    low, high = slow_bootstrap(diffs, 4_000, seed=99)
    comparison = result.comparisons[0]
    assert comparison.diff == pytest.approx(100 * (worse.mean() - best.mean()))
    assert comparison.low == pytest.approx(low, abs=0.5)
    assert comparison.high == pytest.approx(high, abs=0.5)
    summary = result.settings[0]
    assert summary.score == pytest.approx(100 * best.mean())
    low, high = slow_bootstrap(own, 4_000, seed=98)
    assert summary.low == pytest.approx(low, abs=0.5)
    assert summary.high == pytest.approx(high, abs=0.5)


def test_no_resamples_gives_point_ranges() -> None:
    a, b, _ = accuracies(50)
    result = compare_settings([pass_fail("a", a), pass_fail("b", b)], resamples=0)
    comparison = result.comparisons[0]
    assert comparison.low == comparison.high == comparison.diff


# --- verdicts --------------------------------------------------------------------------------


def test_large_sweep_detects_worse_settings() -> None:
    a, b, c = accuracies(2_000)
    result = compare_settings(
        [pass_fail("p90", a, cost="10"), pass_fail("p85", b, cost="5"), pass_fail("p60", c)]
    )
    assert result.best == "p90"
    by_label = {x.label: x for x in result.comparisons}
    for label in ("p85", "p60"):
        comparison = by_label[label]
        assert comparison.test == MCNEMAR
        assert comparison.detectably_worse
        assert not comparison.detectably_better
        assert comparison.high < 0
        assert "worse by" in comparison.sentence
    assert by_label["p85"].sentence.startswith("costs 50% as much and is worse by")
    assert by_label["p85"].cost_share == pytest.approx(0.5)
    assert by_label["p60"].diff < by_label["p85"].diff < 0


def test_small_sweep_is_not_detectably_worse() -> None:
    a, b, c = (x[:40] for x in accuracies(2_000))
    result = compare_settings([pass_fail("p90", a), pass_fail("p85", b), pass_fail("p60", c)])
    assert result.best == "p90"
    comparison = next(x for x in result.comparisons if x.label == "p85")
    assert not comparison.detectably_worse
    assert "not detectably worse" in comparison.sentence
    assert "could detect" in comparison.sentence
    assert comparison.min_detectable > 5
    assert f"could detect {comparison.min_detectable:.1f} points" in comparison.sentence


def test_sentence_without_cost_is_verdict_without_its_cost_clause() -> None:
    for n in (40, 2_000):
        a, b, _ = (x[:n] for x in accuracies(2_000))
        result = compare_settings([pass_fail("a", a), pass_fail("b", b, cost=None)])
        x = result.comparisons[0]
        assert x.cost_share is None
        with_cost = verdict(
            diff=x.diff,
            low=x.low,
            high=x.high,
            p_adjusted=x.p_holm,
            cost_share=0.5,
            min_detectable=x.min_detectable,
        )
        assert with_cost == "costs 50% as much and " + x.sentence


# --- the tests -------------------------------------------------------------------------------


def test_mcnemar_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    a, b, _ = accuracies(500, seed=3)
    comparison = compare_settings([pass_fail("a", a), pass_fail("b", b)]).comparisons[0]
    assert comparison.test == MCNEMAR
    worse = int(np.count_nonzero(a & ~b))
    better = int(np.count_nonzero(~a & b))
    expected = stats.binomtest(min(worse, better), worse + better, 0.5).pvalue
    assert comparison.p_value == pytest.approx(expected, rel=1e-9)
    assert comparison.worse_share == worse / 500
    assert comparison.better_share == better / 500
    assert comparison.min_detectable == pytest.approx(
        100 * 2.8016 * math.sqrt((worse + better) / 500 / 500), rel=1e-3
    )


def test_wilcoxon_on_graded_items_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(4)
    n = 150
    top = np.round(rng.uniform(0.3, 1.0, n), 1)
    low = np.clip(np.round(top - rng.normal(0.05, 0.2, n), 1), 0, 1)
    comparison = compare_settings([graded("top", top), graded("low", low)]).comparisons[0]
    assert comparison.test == WILCOXON
    diffs = [float(y) - float(x) for x, y in zip(top, low, strict=True)]
    expected = stats.wilcoxon(diffs, zero_method="wilcox", correction=True, method="approx").pvalue
    assert comparison.p_value == pytest.approx(expected, abs=1e-9)
    assert comparison.worse_share == sum(d < 0 for d in diffs) / n
    assert comparison.better_share == sum(d > 0 for d in diffs) / n
    sd = float(np.std(diffs, ddof=1))
    assert comparison.min_detectable == pytest.approx(100 * 2.8016 * sd / math.sqrt(n), rel=1e-3)


def test_wilcoxon_on_repeats_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(8)
    n = 120
    top = rng.binomial(4, 0.8, n)
    low = rng.binomial(4, 0.6, n)
    comparison = compare_settings([repeated("top", top, 4), repeated("low", low, 4)]).comparisons[0]
    assert comparison.test == WILCOXON
    diffs = [(int(y) - int(x)) / 4 for x, y in zip(top, low, strict=True)]
    expected = stats.wilcoxon(diffs, zero_method="wilcox", correction=True, method="approx").pvalue
    assert comparison.p_value == pytest.approx(expected, abs=1e-9)
    assert comparison.diff == pytest.approx(100 * float(np.mean(diffs)))


def test_holm_across_comparisons() -> None:
    rng = np.random.default_rng(2)
    n = 150
    rates = (0.8, 0.78, 0.74, 0.7, 0.6)
    settings = [pass_fail(f"s{i}", rng.random(n) < r) for i, r in enumerate(rates)]
    result = compare_settings(settings, resamples=500)
    raw = [x.p_value for x in result.comparisons]
    assert len(raw) == len(settings) - 1
    assert [x.p_holm for x in result.comparisons] == holm(raw)
    assert any(x.p_holm > x.p_value for x in result.comparisons)
    for x in result.comparisons:
        assert x.detectably_worse == (x.p_holm < 0.05 and x.high < 0)


def test_matches_the_two_run_paired_comparison() -> None:
    a, b, _ = accuracies(400, seed=12)
    first, second = pass_fail("a", a), pass_fail("b", b, start=50)  # 350 shared items
    result = compare_settings([first, second])
    x = next(iter(result.comparisons))
    best, other = (first, second) if result.best == "a" else (second, first)
    pair = paired_difference(
        {k: ItemValue(v.task, v.values[0], v.passed[0]) for k, v in best.items.items()},
        {k: ItemValue(v.task, v.values[0], v.passed[0]) for k, v in other.items.items()},
    )
    assert x.n == pair.n == 350
    assert x.diff == pytest.approx(pair.diff)
    assert x.p_value == pair.p_value
    assert x.low == pytest.approx(pair.low, abs=1.0)
    assert x.high == pytest.approx(pair.high, abs=1.0)
    assert result.settings[0].n == 400
    assert result.settings[1].n == 400


# --- repeats ---------------------------------------------------------------------------------


def test_pass_at_k_with_repeats() -> None:
    rng = np.random.default_rng(9)
    k = 4
    passes = rng.binomial(k, 0.6, 60)
    result = compare_settings(
        [repeated("r", passes, k), repeated("s", rng.binomial(k, 0.4, 60), k)], resamples=200
    )
    summary = result.settings[0]
    assert summary.repeats == 4
    assert summary.pass_at_k is not None and summary.pass_hat_k is not None
    assert sorted(summary.pass_at_k) == [1, 2, 3, 4]
    for j in range(1, k + 1):
        at = [1 - math.comb(k - int(c), j) / math.comb(k, j) for c in passes]
        hat = [math.comb(int(c), j) / math.comb(k, j) for c in passes]
        assert summary.pass_at_k[j] == pytest.approx(sum(at) / len(at), rel=1e-12)
        assert summary.pass_hat_k[j] == pytest.approx(sum(hat) / len(hat), rel=1e-12)
    assert summary.pass_at_k[1] == pytest.approx(summary.score / 100)
    one = compare_settings([pass_fail("a", [True, False]), pass_fail("b", [True, True])])
    assert one.settings[0].pass_at_k is None and one.settings[0].repeats == 1


def test_two_stage_range_is_wider() -> None:
    rng = np.random.default_rng(10)
    k, n = 4, 300
    top = rng.binomial(k, 0.7, n)  # within-item variance: 1 to 3 of 4 often pass
    low = rng.binomial(k, 0.6, n)
    two = compare_settings([repeated("top", top, k), repeated("low", low, k)], seed=3)

    def flattened(label: str, passes: np.ndarray) -> SettingScores:
        items = {
            f"k{i:05d}": ItemSamples(f"t{i % 2}", (int(c) / k,), (int(c) * 2 >= k,))
            for i, c in enumerate(passes)
        }
        return SettingScores(label, items, Decimal(1), frozenset({"t0", "t1"}))

    one = compare_settings([flattened("top", top), flattened("low", low)], seed=3)
    # the within-item variance p(1−p)(K−1)/K² adds about 3/4 to the between-item variance
    # p(1−p)/K here, so the range should be about √1.75 ≈ 1.3 times as wide
    for two_stage, one_stage in zip(two.settings, one.settings, strict=True):
        assert two_stage.score == pytest.approx(one_stage.score)
        assert two_stage.high - two_stage.low >= 1.15 * (one_stage.high - one_stage.low)
    x2, x1 = two.comparisons[0], one.comparisons[0]
    assert x2.diff == pytest.approx(x1.diff)
    assert x2.high - x2.low >= 1.15 * (x1.high - x1.low)
    assert two == compare_settings([repeated("top", top, k), repeated("low", low, k)], seed=3)


# --- cost, frontier, best --------------------------------------------------------------------


def fixed(label: str, passes: int, cost: str | None, n: int = 100) -> SettingScores:
    return pass_fail(label, [i < passes for i in range(n)], cost=cost)


def test_frontier_and_cost_share() -> None:
    result = compare_settings(
        [
            fixed("big", 90, "10"),
            fixed("mid", 85, "5"),
            fixed("dominated", 80, "8"),
            fixed("free", 50, "0"),
            fixed("unpriced", 95, None),
        ]
    )
    assert result.best == "unpriced"
    flags = {s.label: s.on_frontier for s in result.settings}
    assert flags == {
        "big": True,
        "mid": True,
        "dominated": False,
        "free": True,
        "unpriced": False,
    }
    assert all(x.cost_share is None for x in result.comparisons)  # the best's cost unknown
    assert all(x.sentence.startswith("is ") for x in result.comparisons)

    priced = compare_settings(
        [fixed("big", 90, "10"), fixed("mid", 85, "5"), fixed("unpriced", 80, None)]
    )
    shares = {x.label: x.cost_share for x in priced.comparisons}
    assert shares == {"mid": 0.5, "unpriced": None}
    zero = compare_settings([fixed("a", 90, "0"), fixed("b", 80, "1")])
    assert zero.comparisons[0].cost_share is None
    json.dumps(priced.as_json())
    assert priced.as_json()["best"] == "big"


def test_best_ties_go_to_the_cheaper_then_the_first() -> None:
    result = compare_settings([fixed("a", 80, "3"), fixed("b", 80, "2"), fixed("c", 80, "2")])
    assert result.best == "b"
    assert [x.label for x in result.comparisons] == ["a", "c"]
    unknown = compare_settings([fixed("a", 80, None), fixed("b", 80, "9")])
    assert unknown.best == "b"
    first = compare_settings([fixed("a", 80, None), fixed("b", 80, None)])
    assert first.best == "a"
    same = first.comparisons[0]
    assert same.diff == 0 and same.p_value == 1.0 and not same.detectably_worse


def test_user_errors() -> None:
    with pytest.raises(UserError, match="at least 2"):
        compare_settings([fixed("a", 5, "1")])
    with pytest.raises(UserError, match="no scored items"):
        compare_settings([fixed("a", 5, "1"), SettingScores("b", {}, None)])
    with pytest.raises(UserError, match="shares no scored item"):
        compare_settings([pass_fail("a", [True] * 5), pass_fail("b", [False] * 5, start=100)])
    with pytest.raises(UserError, match="twice"):
        compare_settings([fixed("a", 5, "1"), fixed("a", 6, "1")])
    empty = SettingScores("b", {"k00000": ItemSamples("t0", (), ())}, None)
    with pytest.raises(UserError, match="one value"):
        compare_settings([fixed("a", 5, "1"), empty])


def test_two_stage_range_matches_a_slow_bootstrap() -> None:
    rng = np.random.default_rng(13)
    k, n = 4, 120
    passes = rng.binomial(k, 0.6, n)
    other = rng.binomial(k, 0.5, n)
    result = compare_settings([repeated("a", passes, k), repeated("b", other, k)], seed=2)
    assert result.best == "a"
    samples: dict[str, list[list[float]]] = {"t0": [], "t1": []}
    for i, c in enumerate(passes):
        samples[f"t{i % 2}"].append([float(j < c) for j in range(k)])
    slow = np.random.default_rng(77)
    means = []
    for _ in range(3_000):
        total = 0.0
        for task in sorted(samples):
            items = samples[task]
            for index in slow.integers(0, len(items), len(items)):
                chosen = items[int(index)]
                total += sum(chosen[int(j)] for j in slow.integers(0, k, k)) / k
        means.append(100.0 * total / n)
    low, high = np.percentile(means, [2.5, 97.5])
    summary = result.settings[0]
    assert summary.low == pytest.approx(low, abs=0.7)
    assert summary.high == pytest.approx(high, abs=0.7)


def test_identical_graded_settings_never_claim_to_detect_less_than_six_items_can_carry() -> None:
    values = np.linspace(0.0, 1.0, 200)
    same = compare_settings([graded("a", values), graded("b", values)]).comparisons[0]
    assert same.diff == 0 and same.min_detectable == pytest.approx(100 * 6 / 200)
    nudged = values.copy()
    nudged[:3] -= 0.1  # three items a tenth lower: far too few to detect
    moved = compare_settings([graded("a", values), graded("b", nudged)]).comparisons[0]
    assert not moved.detectably_worse
    assert moved.min_detectable >= 100 * 6 * 0.1 / 200 - 1e-9
