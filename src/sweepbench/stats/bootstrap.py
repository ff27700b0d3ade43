"""Bootstrap resampling of per-item values (spec §17.7 "Bootstrap ranges").

A task's score is the mean of one value per answer (1/0 for a pass rate, the raw score divided
by the task's scale for a mean score). Resampling the task's answers with replacement and taking
the mean gives one bootstrap task score; doing it ``resamples`` times gives a vector that the
results turn into area and overall ranges.

Two ways to draw, equal in distribution:

* **Counts over distinct values** when a task has few distinct values (pass/fail tasks have two,
  SATAs three): drawing ``n`` items with replacement is the same as drawing how many times each
  distinct value is picked from a multinomial with the values' frequencies. Fast whatever ``n``.
* **Index matrix** otherwise: a (resamples × n) matrix of item indices, drawn in chunks so that
  no more than :data:`MAX_CELLS` cells exist at once.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

MAX_CELLS = 6_000_000
"""The most matrix cells one chunk draws; int64 indices plus float64 gathered values are 16 bytes a
cell, so a chunk stays under ~100 MB."""
COUNTS_FACTOR = 8
"""Use the counts draw when ``distinct values × COUNTS_FACTOR ≤ n`` (a multinomial cell costs
roughly eight index cells)."""


def chunk_rows(width: int, max_cells: int = MAX_CELLS) -> int:
    """How many resamples one chunk may hold when each resample is ``width`` cells wide."""
    return max(1, max_cells // max(1, width))


def resample_means(
    values: FloatArray,
    resamples: int,
    rng: np.random.Generator,
    *,
    max_cells: int = MAX_CELLS,
) -> FloatArray:
    """``resamples`` bootstrap means of ``values`` (drawn with replacement, same size).

    Deterministic for a given generator state, multiset of values and ``max_cells``: the order of
    ``values`` does not matter (answers arrive in completion order, which varies run to run).
    """
    data = np.asarray(values, dtype=np.float64)
    size = data.size
    if size == 0:
        raise ValueError("cannot resample an empty set of values")
    if resamples <= 0:
        return np.empty(0, dtype=np.float64)
    distinct, frequency = np.unique(data, return_counts=True)
    if distinct.size == 1:
        return np.full(resamples, float(distinct[0]), dtype=np.float64)
    if distinct.size * COUNTS_FACTOR <= size:
        return _means_from_counts(distinct, frequency, size, resamples, rng, max_cells)
    return _means_from_indices(np.sort(data), resamples, rng, max_cells)


def _means_from_counts(
    distinct: FloatArray,
    frequency: npt.NDArray[np.int64],
    size: int,
    resamples: int,
    rng: np.random.Generator,
    max_cells: int,
) -> FloatArray:
    """Bootstrap means drawn as multinomial counts over the distinct values."""
    probabilities = frequency / size
    means = np.empty(resamples, dtype=np.float64)
    step = chunk_rows(distinct.size, max_cells)
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        counts = rng.multinomial(size, probabilities, size=stop - start)
        means[start:stop] = (counts @ distinct) / size
    return means


def _means_from_indices(
    data: FloatArray, resamples: int, rng: np.random.Generator, max_cells: int
) -> FloatArray:
    """Bootstrap means drawn as a chunked (resamples × n) index matrix."""
    size = data.size
    means = np.empty(resamples, dtype=np.float64)
    step = chunk_rows(size, max_cells)
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        indices = rng.integers(0, size, size=(stop - start, size))
        means[start:stop] = data[indices].mean(axis=1)
    return means


def percentile_interval(samples: FloatArray, level: float = 0.95) -> tuple[float, float]:
    """The central ``level`` percentile range of bootstrap samples (2.5th/97.5th for 0.95)."""
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(samples, [tail, 100.0 - tail])
    return float(low), float(high)
