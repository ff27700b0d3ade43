"""The sweep statistics' speed: `compare_settings`, 10 settings × 3,000 items × 10,000 resamples.

One pass/fail sample per item over 5 tasks (accuracies 0.90 down to 0.63), every setting
priced. Compares, in the same script run (this machine is shared and noisy, so ratios matter):

- **baseline**: one plain ``sweepbench.stats.bootstrap.resample_means`` of 3,000 distinct
  values × 10,000 resamples (its index-matrix draw: one unstratified range), and one
  numpy matmul of a 10,000 × 3,000 float matrix by a 3,000 × 19 one (the products the
  comparison takes);
- **compare**: the whole ``compare_settings`` (summaries, the paired bootstrap of every
  setting against the best, McNemar, Holm, frontier, verdicts), inputs built beforehand.

Each figure is the best of ``--repeats`` wall times, the parts interleaved.

    python benchmarks/bench_sweep_verdicts.py [--settings 10] [--items 3000]
        [--resamples 10000] [--tasks 5] [--repeats 5]
"""

from __future__ import annotations

import argparse
import time
from decimal import Decimal

import numpy as np

from sweepbench.bench.sweeps.compare import ItemSamples, SettingScores, compare_settings
from sweepbench.stats.bootstrap import resample_means

GOAL = "goal: compare < 1 s on a 2-core machine"


def make_settings(count: int, items: int, tasks: int, seed: int = 0) -> list[SettingScores]:
    """``count`` pass/fail settings over the same ``items`` items, one sample each."""
    rng = np.random.default_rng(seed)
    task_of = [f"task{i % tasks}" for i in range(items)]
    settings = []
    for s in range(count):
        passed = rng.random(items) < 0.90 - 0.03 * s
        scored = {
            f"item{i:05d}": ItemSamples(task_of[i], (float(ok),), (bool(ok),))
            for i, ok in enumerate(passed)
        }
        settings.append(SettingScores(f"setting{s}", scored, Decimal(count - s)))
    return settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", type=int, default=10)
    parser.add_argument("--items", type=int, default=3_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--tasks", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--quick", action="store_true", help="a few items, once (CI: no figure judged)"
    )
    args = parser.parse_args()
    if args.quick:
        args.settings, args.items, args.resamples, args.tasks, args.repeats = 3, 300, 200, 2, 1
    settings = make_settings(args.settings, args.items, args.tasks)
    values = np.random.default_rng(1).random(args.items)  # distinct: the index-matrix draw
    left = np.random.default_rng(2).random((args.resamples, args.items))
    right = np.random.default_rng(3).random((args.items, 2 * args.settings - 1))
    compare_settings(settings, resamples=args.resamples)  # warm up (imports, caches)
    plain, matmul, compare = [], [], []
    result = None
    for _ in range(args.repeats):  # interleaved, so every part sees the same machine load
        started = time.perf_counter()
        resample_means(values, args.resamples, np.random.default_rng(0))
        plain.append(time.perf_counter() - started)
        started = time.perf_counter()
        left @ right
        matmul.append(time.perf_counter() - started)
        started = time.perf_counter()
        result = compare_settings(settings, resamples=args.resamples)
        compare.append(time.perf_counter() - started)
    assert result is not None
    best_plain, best_matmul, best_compare = min(plain), min(matmul), min(compare)
    print(
        f"{args.settings} settings × {args.items:,} items × {args.resamples:,} resamples, "
        f"{args.tasks} tasks, 1 pass/fail sample each; best of {args.repeats}"
    )
    print(f"  baseline resample_means ({args.items:,} values): {best_plain:.3f} s")
    print(f"  baseline matmul ({args.resamples:,}×{args.items:,} @ ×{right.shape[1]}): "
          f"{best_matmul:.3f} s")  # fmt: skip
    print(
        f"  compare_settings: {best_compare:.3f} s = {best_compare / best_plain:.1f} × "
        f"resample_means = {best_compare / best_matmul:.1f} × matmul "
        f"(all runs: {', '.join(f'{t:.3f}' for t in compare)})"
    )
    worse = sum(x.detectably_worse for x in result.comparisons)
    print(
        f"  best {result.best}; {worse} of {len(result.comparisons)} detectably worse; "
        f"{sum(s.on_frontier for s in result.settings)} on the frontier"
    )
    print(f"  {GOAL}")


if __name__ == "__main__":
    main()
