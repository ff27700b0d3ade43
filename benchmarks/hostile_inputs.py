"""What the bounds on hostile or large inputs cost, measured here instead of asserted in tests.

The tests prove what these paths do (refuse a deep document, survive an alias bomb, bootstrap
to the normal interval); a duration in a test fails on a loaded machine (issue 27), so the
time is measured here, each against a baseline measured in the same run:

* ``bounded_json_loads`` on a wide 50,000-row document, against ``json.loads`` of the same;
* ``bounded_json_loads`` refusing 1,000,000 levels of nesting, and the sculpture builder on a
  model answer that hides 200,000 levels in one part;
* a declaration whose description nests 100,000 levels (lists) or 20,000 (mappings), and one
  that holds a billion-laughs alias bomb, against loading a small valid declaration;
* the bootstrap of 2 × 10,000 items with 2,000 resamples, against one resample;
* loading ELBench (when its data is found), against reading its files' bytes.

    python benchmarks/hostile_inputs.py            # best of 3 for each
    python benchmarks/hostile_inputs.py --reps 5 --json hostile.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests/ helpers
sys.path.insert(0, str(ROOT / "src"))  # sweepbench when it is not installed


def best(fn: Callable[[], object], reps: int) -> float:
    """The fastest of ``reps`` runs, in seconds (the least disturbed by other work)."""
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def refused(fn: Callable[[], object], error: type[BaseException]) -> Callable[[], None]:
    def run() -> None:
        try:
            fn()
        except error:
            return
        raise AssertionError("not refused")

    return run


def json_rows(reps: int) -> list[dict[str, Any]]:
    from sweepbench.nesting import TooDeep, bounded_json_loads

    flat = json.dumps([{"q": "x" * 50, "n": [1, 2]} for _ in range(50_000)])
    deep = "[" * 200_000 + "]" * 200_000
    baseline = best(lambda: json.loads(flat), reps)
    wide = best(lambda: bounded_json_loads(flat), reps)
    deep_s = best(refused(lambda: bounded_json_loads(deep * 5), TooDeep), reps)
    return [
        {"case": "json: 50,000 wide rows", "seconds": wide, "baseline": "json.loads",
         "baseline_s": baseline},
        {"case": "json: refuse 1,000,000 levels", "seconds": deep_s, "baseline": "json.loads wide",
         "baseline_s": baseline},
    ]  # fmt: skip


def sculpture_rows(reps: int) -> list[dict[str, Any]]:
    from tests.artifacts.test_sculpture_hostile import PART as part

    from sweepbench.artifacts.sculpture.kind import build

    small = json.dumps({"parts": [part]})
    deep = '{"parts": [' + json.dumps(part) + ', {"name": ' + "[" * 200_000 + "]" * 200_000 + "}]}"
    baseline = best(lambda: build(small, "end", "v1"), reps)
    return [
        {"case": "sculpture: answer 200,000 levels deep", "seconds":
         best(lambda: build(deep, "end", "v1"), reps), "baseline": "one small part",
         "baseline_s": baseline},
    ]  # fmt: skip


def declaration_rows(reps: int) -> list[dict[str, Any]]:
    from tests.bench.test_hostile_files import BILLION_LAUGHS

    from sweepbench.bench.sources.declared import load_declared
    from sweepbench.errors import DataError

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        plain = base / "plain.yaml"
        plain.write_text("id: x\nname: X\ndescription: a small one\n", encoding="utf-8")
        baseline = best(refused(lambda: load_declared(plain), DataError), reps)
        cases = {
            "declaration: 100,000 nested lists": "description: " + "[" * 100_000,
            "declaration: 20,000 nested mappings": "description: " + "{a: " * 20_000,
            "declaration: billion-laughs alias bomb": f"options:\n{BILLION_LAUGHS}",
        }
        for case, body in cases.items():
            path = base / "hostile.yaml"
            path.write_text(f"id: x\nname: X\n{body}\n", encoding="utf-8")
            seconds = best(refused(lambda p=path: load_declared(p), DataError), reps)
            rows.append({"case": case, "seconds": seconds, "baseline": "a small declaration",
                         "baseline_s": baseline})  # fmt: skip
    return rows


def bootstrap_rows(reps: int) -> list[dict[str, Any]]:
    import numpy as np
    from tests.bench.test_results import make_benchmark, make_task
    from tests.bench.test_results import run as summarise

    from sweepbench.bench.results import ScoredAnswer

    n = 10_000
    rng = np.random.default_rng(1)
    bench = make_benchmark(
        ("a", "A", [make_task("bin", "a", n)]),
        ("b", "B", [make_task("raw", "b", n, score_by="mean_score")]),
    )
    answers = [ScoredAnswer("bin", "default", float(p), bool(p)) for p in rng.random(n) < 0.7]
    answers += [ScoredAnswer("raw", "default", float(s), s > 0.5) for s in rng.random(n)]
    baseline = best(lambda: summarise(bench, answers, bootstrap=1), reps)
    seconds = best(lambda: summarise(bench, answers, bootstrap=2000), reps)
    return [{"case": "bootstrap: 2 x 10,000 items, 2,000 resamples", "seconds": seconds,
             "baseline": "1 resample", "baseline_s": baseline}]  # fmt: skip


def elbench_rows(reps: int) -> list[dict[str, Any]]:
    from sweepbench.bench.sources.elbench import load_elbench

    env = os.environ.get("SWEEPBENCH_ELBENCH_DATA")
    root = Path(env) if env else ROOT.parent / "shared" / "data" / "elbench" / "benchmark_root"
    if not root.exists():
        print(f"(no ELBench data at {root}: its load is not measured)")
        return []
    files = [p for p in root.rglob("*") if p.is_file()]
    baseline = best(lambda: [p.read_bytes() for p in files], reps)
    return [{"case": "ELBench: load", "seconds": best(lambda: load_elbench(root), reps),
             "baseline": f"read its {len(files)} files", "baseline_s": baseline}]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    parser.add_argument("--quick", action="store_true", help="once each (CI: that it runs)")
    args = parser.parse_args()
    if args.quick:
        args.reps = 1
    rows: list[dict[str, Any]] = []
    for measure in (json_rows, sculpture_rows, declaration_rows, bootstrap_rows, elbench_rows):
        try:
            rows += measure(args.reps)
        except ImportError as exc:  # an optional part is missing: say so, measure the rest
            print(f"({measure.__name__}: {exc})")
    width = max(len(r["case"]) for r in rows)
    for row in rows:
        ratio = row["seconds"] / row["baseline_s"] if row["baseline_s"] else float("inf")
        print(f"{row['case']:<{width}}  {row['seconds']:8.3f} s  "
              f"{ratio:8.1f}x {row['baseline']} ({row['baseline_s']:.3f} s)")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
