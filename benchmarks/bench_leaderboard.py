"""Building a leaderboard over 1,000 stored runs.

Stores ``--runs`` ELBench runs (the golden record, re-keyed: 50 models, varied start times) in
a fresh SQLite store, then times, in the same process (medians over ``--repeats``):

- **baseline**: reading every run's record (``BenchStore.runs`` + ``load_record``);
- **board**: the whole ``sweepbench leaderboard`` path below rendering — the stored runs' rows,
  the published rows (priced), and the board with its frontier and takeaway.

    python benchmarks/bench_leaderboard.py [--runs 1000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

GOAL = "goal: board < 0.5 s"
GOLDEN = Path(__file__).resolve().parents[1] / "tests/bench/golden/run_record_v1.json"


def fill(store: Any, runs: int) -> None:
    from sweepbench.bench.record import dump_record, load_record
    from sweepbench.bench.storage import BenchStore
    from sweepbench.bench.storage_rows import RunRow

    golden: dict[str, Any] = json.loads(GOLDEN.read_text("utf-8"))
    bench = BenchStore(store)
    start = datetime(2026, 5, 1, tzinfo=UTC)
    for i in range(runs):
        data = json.loads(json.dumps(golden))
        model = f"openrouter/vendor/model-{i % 50}"
        old = data["roles"]["target"]["model"]
        data["roles"]["target"]["model"] = model
        data["prices"][model] = data["prices"].pop(old)
        data["run_id"] = f"run-{i:05d}"
        created = start + timedelta(minutes=i)
        data["created_at"] = created.isoformat()
        data["updated_at"] = (created + timedelta(minutes=1)).isoformat()
        record = load_record(data)
        bench.create_run(
            RunRow(
                id=record.run_id, config_hash=record.settings.hash, benchmark="elbench",
                model=model, judge=None, status=record.status, reason=record.reason,
                created_at=record.created_at, updated_at=record.updated_at,
                items=record.coverage.overall.selected,
            )
        )  # fmt: skip
        bench.set_record(record.run_id, dump_record(record))


def baseline(store: Any) -> int:
    from sweepbench.bench.record import load_record
    from sweepbench.bench.storage import BenchStore

    return sum(
        1 for run in BenchStore(store).runs(limit=100_000) if run.record and load_record(run.record)
    )


def board(store: Any) -> int:
    from sweepbench.bench.storage import BenchStore
    from sweepbench.leaderboard.board import build_board, takeaway
    from sweepbench.leaderboard.catalogue import elbench_catalogue, published_questions
    from sweepbench.leaderboard.published import PAPER_JUDGE, load_published
    from sweepbench.leaderboard.sources import published_board_rows, stored_run_rows

    catalogue = elbench_catalogue()
    snapshot = load_published()
    rows = published_board_rows(snapshot, catalogue, "core")
    rows += stored_run_rows(BenchStore(store), "core").rows
    result = build_board(rows, judge=PAPER_JUDGE, metric="overall", scope="core",
                         catalogue=catalogue)  # fmt: skip
    takeaway(result, catalogue, questions=published_questions(snapshot, catalogue, "core"))
    return len(rows)


def median_time(fn: Any, store: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn(store)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="20 runs, once (CI: no goal judged)")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.repeats = 20, 1
    from sweepbench.store import Store

    with (
        tempfile.TemporaryDirectory() as folder,
        Store.open(f"sqlite:///{Path(folder) / 'bench.db'}") as store,
    ):
        fill(store, args.runs)
        board(store)  # warm: imports, the catalogue, prices
        base = median_time(baseline, store, args.repeats)
        full = median_time(board, store, args.repeats)
    print(f"runs {args.runs}: baseline (read records) {base:.3f} s, board {full:.3f} s, "
          f"ratio {full / base:.2f}×; {GOAL}")  # fmt: skip
    return 0 if full < 0.5 or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
