"""Paired comparisons across a benchmark sweep (issue 16): every setting against the best.

A sweep answers one question set under several settings (models, efforts, token budgets).
:func:`compare_settings` takes each setting's per-item samples (:class:`SettingScores`),
picks the best-scoring setting and compares every other setting with it on the items both
scored:

* **Score** (:class:`SettingSummary`): the *item-pooled* mean over the setting's scored
  items of each item's mean over its samples, in points (0–100). With one area this equals
  the benchmark's score; the benchmark's own score (the mean of its areas) is reported
  elsewhere (:mod:`sweepbench.bench.results`). Its 95% range is a bootstrap stratified within
  task; with repeats it is two-stage: items are resampled within task, then the samples
  within each chosen item.
* **Paired difference** (:class:`Comparison`): the mean over shared items of (setting − best)
  per-item means, with a paired bootstrap 95% range drawn the same way on the shared items;
  the exact McNemar test when every shared item is pass/fail with one sample in each
  setting, otherwise the Wilcoxon signed-rank test on the per-item mean differences;
  Holm-adjusted across the sweep's comparisons; the difference these items could detect;
  and one verdict sentence (:func:`sweepbench.bench.sweeps.verdict.verdict`).

The bootstrap is vectorised: the per-item means form an items × settings matrix, one
stratified resample-count matrix is drawn over the items (tasks in sorted order, items in
key order, one ``np.random.default_rng(seed)``, in chunks of at most
:data:`~sweepbench.stats.bootstrap.MAX_CELLS` cells), and every resampled mean and paired
difference is a matrix product ``counts @ values``. Settings that scored the same items (the
usual case) share one draw; other item sets get their own draws from the same generator, in
a fixed order, so a seed reproduces every figure exactly.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import numpy.typing as npt

from sweepbench.bench.sweeps.verdict import verdict
from sweepbench.errors import UserError
from sweepbench.stats.bootstrap import FloatArray, chunk_rows, percentile_interval
from sweepbench.stats.frontier import Point, frontier
from sweepbench.stats.paired import ALPHA, RESAMPLES, SEED, mcnemar_exact
from sweepbench.stats.significance import (
    fewest_items,
    holm,
    min_detectable_difference,
    pass_at_k,
    pass_hat_k,
    wilcoxon_signed_rank,
)

__all__ = [
    "MCNEMAR",
    "WILCOXON",
    "Comparison",
    "ItemSamples",
    "SettingScores",
    "SettingSummary",
    "SweepComparison",
    "compare_settings",
]

MCNEMAR = "McNemar (exact)"
"""The test named when every shared item is pass/fail with one sample in each setting."""
WILCOXON = "Wilcoxon signed-rank"
"""The test named otherwise (on the per-item mean differences)."""

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class ItemSamples:
    """One item's samples (repeats) under one setting."""

    task: str
    values: tuple[float, ...]
    """One 0–1 value per sample (1/0 for a pass-rate task, score over scale otherwise)."""
    passed: tuple[bool, ...]
    """The pass verdict per sample."""


@dataclass(frozen=True)
class SettingScores:
    """What one setting of the sweep scored."""

    label: str
    """The setting's name, e.g. ``"effort=low"``; unique within a sweep."""
    items: Mapping[str, ItemSamples]
    """Scored items by item key (the key without any sample suffix)."""
    cost_usd: Decimal | None
    """The setting's measured cost (None: unknown or unpriced)."""
    graded_tasks: frozenset[str] = frozenset()
    """Tasks scored on a scale (mean score) rather than pass/fail."""


@dataclass(frozen=True)
class Comparison:
    """One setting against the best, over the items both scored (points, 0–100)."""

    label: str
    best_label: str
    n: int
    """Shared scored items."""
    diff: float
    """Mean over shared items of (setting − best) per-item means, in points."""
    low: float
    """The 2.5th percentile of the paired bootstrap of ``diff``."""
    high: float
    """The 97.5th percentile of the paired bootstrap of ``diff``."""
    test: str
    """:data:`MCNEMAR` or :data:`WILCOXON`."""
    p_value: float
    """The test's two-sided p."""
    p_holm: float
    """``p_value`` Holm-adjusted across the sweep's comparisons."""
    worse_share: float
    """Share of shared items whose per-item mean is below the best's."""
    better_share: float
    """Share of shared items whose per-item mean is above the best's."""
    min_detectable: float
    """The difference (points) these items detect with 80% power at :data:`ALPHA`."""
    cost_share: float | None
    """Cost as a share of the best's (None when either is unknown or the best's is 0)."""
    detectably_worse: bool
    """``p_holm < ALPHA`` and the whole range below 0."""
    detectably_better: bool
    """``p_holm < ALPHA`` and the whole range above 0."""
    sentence: str
    """The verdict in one sentence."""

    def as_json(self) -> dict[str, Any]:
        """The comparison as plain JSON data."""
        return {
            "label": self.label, "best_label": self.best_label, "n": self.n,
            "diff": self.diff, "low": self.low, "high": self.high, "test": self.test,
            "p_value": self.p_value, "p_holm": self.p_holm, "worse_share": self.worse_share,
            "better_share": self.better_share, "min_detectable": self.min_detectable,
            "cost_share": self.cost_share, "detectably_worse": self.detectably_worse,
            "detectably_better": self.detectably_better, "sentence": self.sentence,
        }  # fmt: skip


@dataclass(frozen=True)
class SettingSummary:
    """One setting's own score over its scored items (points, 0–100)."""

    label: str
    n: int
    """Scored items."""
    score: float
    """Item-pooled mean of per-item means."""
    low: float
    """The 2.5th percentile of the (two-stage when repeats) bootstrap of ``score``."""
    high: float
    """The 97.5th percentile of the bootstrap of ``score``."""
    pass_at_k: dict[int, float] | None
    """With K > 1 samples on every pass/fail item: the mean over those items of the
    unbiased pass@k for k = 1..K (K the fewest samples an item has); None otherwise."""
    pass_hat_k: dict[int, float] | None
    """The same for pass^k."""
    repeats: int
    """The most samples any item has."""
    on_frontier: bool
    """On the (cost, score) best-value frontier among the settings with a known cost."""

    def as_json(self) -> dict[str, Any]:
        """The summary as plain JSON data (pass@k keys as strings)."""
        return {
            "label": self.label, "n": self.n, "score": self.score, "low": self.low,
            "high": self.high, "pass_at_k": _keyed(self.pass_at_k),
            "pass_hat_k": _keyed(self.pass_hat_k), "repeats": self.repeats,
            "on_frontier": self.on_frontier,
        }  # fmt: skip


@dataclass(frozen=True)
class SweepComparison:
    """A whole sweep: each setting's summary and every other setting against the best."""

    best: str
    """The best-scoring setting's label (ties: the cheaper, then the first)."""
    settings: tuple[SettingSummary, ...]
    """In input order."""
    comparisons: tuple[Comparison, ...]
    """Every other setting against the best, in input order; Holm across these."""
    resamples: int
    seed: int

    def as_json(self) -> dict[str, Any]:
        """The sweep as plain JSON data."""
        return {
            "best": self.best,
            "settings": [summary.as_json() for summary in self.settings],
            "comparisons": [comparison.as_json() for comparison in self.comparisons],
            "resamples": self.resamples,
            "seed": self.seed,
        }


def _keyed(values: dict[int, float] | None) -> dict[str, float] | None:
    return None if values is None else {str(k): v for k, v in values.items()}


@dataclass
class _Matrix:
    """The sweep as arrays over the union of scored items, sorted by (task, key)."""

    keys: list[str]
    tasks: list[str]
    means: FloatArray
    """items × settings per-item means (0 where not scored)."""
    present: BoolArray
    """items × settings: scored."""
    sizes: IntArray
    """items × settings: samples (0 where not scored)."""
    samples: list[dict[int, tuple[float, ...]]] = field(default_factory=list)
    """Per setting: the samples of each item with more than one, by item row."""


def _validate(settings: Sequence[SettingScores]) -> None:
    if len(settings) < 2:
        raise UserError(f"a sweep comparison needs at least 2 settings, not {len(settings)}")
    seen: set[str] = set()
    for setting in settings:
        if setting.label in seen:
            raise UserError(f"the setting {setting.label!r} appears twice in the sweep")
        seen.add(setting.label)
        if not setting.items:
            raise UserError(f"the setting {setting.label!r} has no scored items")
        for key, item in setting.items.items():
            if not item.values or len(item.values) != len(item.passed):
                raise UserError(
                    f"item {key!r} of {setting.label!r} needs one value and one verdict per "
                    f"sample ({len(item.values)} values, {len(item.passed)} verdicts)"
                )


def _matrix(settings: Sequence[SettingScores]) -> _Matrix:
    task_of: dict[str, str] = {}
    for setting in settings:
        for key, item in setting.items.items():
            task_of.setdefault(key, item.task)
    keys = sorted(task_of, key=lambda key: (task_of[key], key))
    row = {key: index for index, key in enumerate(keys)}
    shape = (len(keys), len(settings))
    means = np.zeros(shape, dtype=np.float64)
    present = np.zeros(shape, dtype=np.bool_)
    sizes = np.zeros(shape, dtype=np.int64)
    matrix = _Matrix(keys, [task_of[key] for key in keys], means, present, sizes)
    for column, setting in enumerate(settings):
        repeats: dict[int, tuple[float, ...]] = {}
        for key, item in setting.items.items():
            index = row[key]
            means[index, column] = math.fsum(item.values) / len(item.values)
            present[index, column] = True
            sizes[index, column] = len(item.values)
            if len(item.values) > 1:
                repeats[index] = tuple(float(v) for v in item.values)
        matrix.samples.append(repeats)
    return matrix


@dataclass
class _Group:
    """Bootstrap requests over one item set: each a coefficient vector over settings."""

    rows: IntArray
    coefficients: list[FloatArray] = field(default_factory=list)
    names: list[tuple[str, int]] = field(default_factory=list)


def _bootstrap(
    matrix: _Matrix, groups: Sequence[_Group], resamples: int, seed: int
) -> dict[tuple[str, int], tuple[float, float]]:
    """Each request's 95% range (points), the groups drawn in order from one generator."""
    rng = np.random.default_rng(seed)
    ranges: dict[tuple[str, int], tuple[float, float]] = {}
    for group in groups:
        samples = _group_samples(matrix, group, resamples, rng)
        for name, column in zip(group.names, samples.T, strict=True):
            ranges[name] = percentile_interval(100.0 * column)
    return ranges


def _group_samples(
    matrix: _Matrix, group: _Group, resamples: int, rng: np.random.Generator
) -> FloatArray:
    """resamples × requests bootstrap means over the group's items (0–1 units)."""
    rows = group.rows
    size = rows.size
    coefficients = np.vstack(group.coefficients)  # requests × settings
    involved = [int(s) for s in np.flatnonzero(np.any(coefficients != 0, axis=0))]
    repeated = {
        s: [(i, int(r)) for i, r in enumerate(rows) if int(r) in matrix.samples[s]]
        for s in involved
    }
    two_stage = any(repeated.values())
    widest = int(matrix.sizes[rows][:, involved].max()) if two_stage else 1
    tasks = [matrix.tasks[int(r)] for r in rows]
    bounds = [0] + [i for i in range(1, size) if tasks[i] != tasks[i - 1]] + [size]
    strata = list(itertools.pairwise(bounds))  # tasks in sorted order
    values = matrix.means[rows]  # items × settings
    direct = values @ coefficients.T  # items × requests
    out = np.empty((resamples, coefficients.shape[0]), dtype=np.float64)
    step = chunk_rows(size * widest)
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        counts = _stratified_counts(strata, size, stop - start, rng)
        if not two_stage:
            out[start:stop] = counts @ direct
            continue
        totals = np.empty((stop - start, len(involved)), dtype=np.float64)
        for position, s in enumerate(involved):
            totals[:, position] = _two_stage_totals(
                counts, values[:, s], repeated[s], matrix.samples[s], rows, rng
            )
        out[start:stop] = totals @ coefficients[:, involved].T
    return out / size


def _stratified_counts(
    strata: Sequence[tuple[int, int]], size: int, rows: int, rng: np.random.Generator
) -> FloatArray:
    """rows × size: how often each item is drawn, items drawn with replacement within each
    stratum ``[start, stop)`` (as many as it holds)."""
    counts = np.empty((rows, size), dtype=np.float64)
    for begin, end in strata:
        width = end - begin
        picks = rng.integers(0, width, size=(rows, width), dtype=np.int32)
        picks += (np.arange(rows, dtype=np.int32) * width)[:, None]
        drawn = np.bincount(picks.ravel(), minlength=rows * width)
        counts[:, begin:end] = drawn.reshape(rows, width)
    return counts


def _two_stage_totals(
    counts: FloatArray,
    means: FloatArray,
    repeated: Sequence[tuple[int, int]],
    samples: Mapping[int, tuple[float, ...]],
    rows: IntArray,
    rng: np.random.Generator,
) -> FloatArray:
    """Per resample: the sum over drawn item copies of each copy's resampled sample mean.

    An item with one sample adds ``count × value``. An item with K samples drawn ``c`` times
    adds the sum of ``c`` means of K samples drawn with replacement, i.e. ``1/K`` times the
    sum of ``c·K`` draws: ``multinomial(c·K, 1/K each) @ samples / K``.
    """
    single = np.ones(rows.size, dtype=np.bool_)
    by_width: dict[int, list[int]] = {}
    for position, row in repeated:
        single[position] = False
        by_width.setdefault(len(samples[row]), []).append(position)
    totals: FloatArray = counts[:, single] @ means[single]
    for width in sorted(by_width):
        positions = by_width[width]
        table = np.array([samples[int(rows[p])] for p in positions], dtype=np.float64)
        draws = rng.multinomial(
            (counts[:, positions] * width).astype(np.int64), np.full(width, 1.0 / width)
        )  # resamples × items × K
        totals = totals + np.einsum("rik,ik->r", draws, table) / width
    return totals


def _pass_rates(
    setting: SettingScores,
) -> tuple[dict[int, float] | None, dict[int, float] | None]:
    """Mean pass@k and pass^k over the setting's pass/fail items, k = 1..K."""
    counts = [
        (len(item.passed), sum(item.passed))
        for item in setting.items.values()
        if item.task not in setting.graded_tasks
    ]
    if not counts:
        return None, None
    fewest = min(n for n, _ in counts)
    if fewest < 2:
        return None, None
    at = {
        k: math.fsum(pass_at_k(n, c, k) for n, c in counts) / len(counts)
        for k in range(1, fewest + 1)
    }
    hat = {
        k: math.fsum(pass_hat_k(n, c, k) for n, c in counts) / len(counts)
        for k in range(1, fewest + 1)
    }
    return at, hat


def _pick_best(settings: Sequence[SettingScores], scores: Sequence[float]) -> int:
    """The highest score; ties: a known lower cost first, then the first given."""

    def rank(index: int) -> tuple[float, bool, Decimal, int]:
        cost = settings[index].cost_usd
        return (-scores[index], cost is None, cost if cost is not None else Decimal(0), index)

    return min(range(len(settings)), key=rank)


def compare_settings(
    settings: Sequence[SettingScores], *, resamples: int = RESAMPLES, seed: int = SEED
) -> SweepComparison:
    """Every setting's score and every other setting against the best-scoring one.

    UserError when there are fewer than 2 settings, a label repeats, a setting has no scored
    items (or an item no samples), or a setting shares no item with the best."""
    _validate(settings)
    matrix = _matrix(settings)
    count = len(settings)
    scores = [100.0 * float(matrix.means[matrix.present[:, s], s].mean()) for s in range(count)]
    best = _pick_best(settings, scores)
    groups: dict[bytes, _Group] = {}

    def request(mask: BoolArray, coefficient: FloatArray, name: tuple[str, int]) -> None:
        group = groups.setdefault(mask.tobytes(), _Group(np.flatnonzero(mask)))
        group.coefficients.append(coefficient)
        group.names.append(name)

    for s in range(count):
        request(matrix.present[:, s], np.eye(count)[s], ("score", s))
    others = [s for s in range(count) if s != best]
    for s in others:
        shared = matrix.present[:, s] & matrix.present[:, best]
        if not shared.any():
            raise UserError(
                f"the setting {settings[s].label!r} shares no scored item with the best "
                f"setting {settings[best].label!r}, so they cannot be compared"
            )
        request(shared, np.eye(count)[s] - np.eye(count)[best], ("diff", s))
    ranges = _bootstrap(matrix, list(groups.values()), resamples, seed) if resamples > 0 else {}

    priced = [
        Point(setting.label, setting.cost_usd, scores[s])
        for s, setting in enumerate(settings)
        if setting.cost_usd is not None
    ]
    best_value = {point.key for point in frontier(priced)}
    summaries = []
    for s, setting in enumerate(settings):
        at, hat = _pass_rates(setting)
        low, high = ranges.get(("score", s), (scores[s], scores[s]))
        summaries.append(
            SettingSummary(
                label=setting.label,
                n=len(setting.items),
                score=scores[s],
                low=low,
                high=high,
                pass_at_k=at,
                pass_hat_k=hat,
                repeats=int(matrix.sizes[:, s].max()),
                on_frontier=setting.label in best_value,
            )
        )

    raw = [_paired(matrix, settings, s, best) for s in others]
    adjusted = holm([fields["p_value"] for fields in raw])
    comparisons = []
    best_cost = settings[best].cost_usd
    for s, fields, p_holm in zip(others, raw, adjusted, strict=True):
        diff = fields["diff"]
        low, high = ranges.get(("diff", s), (diff, diff))
        cost = settings[s].cost_usd
        cost_share = (
            None if cost is None or best_cost is None or best_cost == 0 else float(cost / best_cost)
        )
        comparisons.append(
            Comparison(
                label=settings[s].label,
                best_label=settings[best].label,
                low=low,
                high=high,
                p_holm=p_holm,
                cost_share=cost_share,
                detectably_worse=p_holm < ALPHA and high < 0,
                detectably_better=p_holm < ALPHA and low > 0,
                sentence=verdict(
                    diff=diff,
                    low=low,
                    high=high,
                    p_adjusted=p_holm,
                    cost_share=cost_share,
                    min_detectable=fields["min_detectable"],
                ),
                **fields,
            )
        )
    return SweepComparison(
        best=settings[best].label,
        settings=tuple(summaries),
        comparisons=tuple(comparisons),
        resamples=resamples,
        seed=seed,
    )


def _paired(
    matrix: _Matrix, settings: Sequence[SettingScores], s: int, best: int
) -> dict[str, Any]:
    """The non-bootstrap fields of one comparison: n, diff, test, p, shares, detectable."""
    shared = np.flatnonzero(matrix.present[:, s] & matrix.present[:, best])
    n = int(shared.size)
    diffs = matrix.means[shared, s] - matrix.means[shared, best]
    graded = settings[s].graded_tasks | settings[best].graded_tasks
    keys = [matrix.keys[int(r)] for r in shared]
    pass_fail = all(matrix.tasks[int(r)] not in graded for r in shared) and bool(
        np.all(matrix.sizes[shared][:, [s, best]] == 1)
    )
    if pass_fail:
        here = [settings[s].items[key].passed[0] for key in keys]
        there = [settings[best].items[key].passed[0] for key in keys]
        worse = sum(1 for a, b in zip(here, there, strict=True) if b and not a)
        better = sum(1 for a, b in zip(here, there, strict=True) if a and not b)
        test, p_value = MCNEMAR, mcnemar_exact(worse, better)
        detectable = min_detectable_difference(n, discordant_share=(worse + better) / n)
        worse_share, better_share = worse / n, better / n
    else:
        test, p_value = WILCOXON, wilcoxon_signed_rank([float(d) for d in diffs])
        spread = float(np.std(diffs, ddof=1)) if n > 1 else 0.0
        # never below what the fewest items the exact test needs could carry, each moved by
        # the typical change seen (a whole item when none changed)
        moved = np.abs(diffs[diffs != 0])
        typical = float(moved.mean()) if moved.size else 1.0
        detectable = max(min_detectable_difference(n, sd=spread), fewest_items() * typical / n)
        worse_share = float(np.count_nonzero(diffs < 0)) / n
        better_share = float(np.count_nonzero(diffs > 0)) / n
    return {
        "n": n,
        "diff": 100.0 * float(diffs.mean()),
        "test": test,
        "p_value": p_value,
        "worse_share": worse_share,
        "better_share": better_share,
        "min_detectable": min(100.0 * detectable, 100.0),  # no difference exceeds 100 points
    }
