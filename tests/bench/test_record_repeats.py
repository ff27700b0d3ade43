"""A run asked with ``--repeats`` has a record: its coverage counts items (an item is scored
when every repeat of it is), where it once counted answers and failed its own validation
("selected (12) exceeds items (4)", ``unasked`` = −80), so no record was stored."""

from __future__ import annotations

from pathlib import Path

from sweepbench.bench.record import load_record
from sweepbench.bench.run import BenchRunner
from sweepbench.bench.storage import BenchStore
from sweepbench.engine import RetryPolicy
from sweepbench.store import Store
from tests.bench.helpers import toy_benchmark
from tests.bench.plans import prepare

FAST = RetryPolicy(base_delay_s=0.001, max_delay_s=0.002, rate_limit_floor_s=0.001)


async def test_a_repeated_runs_coverage_counts_every_repeat(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'bench.db'}")
    prepared = prepare(toy_benchmark(4), store, model="scripted/echo?text=42", repeats=3)
    outcome = await BenchRunner(prepared, store, retry=FAST).run()
    assert outcome.status == "completed" and outcome.scored == 12
    row = BenchStore(store).run(outcome.run_id)
    assert row is not None and row.record is not None
    coverage = load_record(row.record).coverage.tasks["arith"]
    assert (coverage.items, coverage.selected, coverage.scored) == (4, 4, 4)  # items
    assert coverage.unasked == 0 and coverage.failed == 0 and coverage.complete
    store.close()
