"""Helpers shared by the leaderboard tests."""

from __future__ import annotations

from pathlib import Path

from sweepbench.bench.record import dump_record, load_record
from sweepbench.bench.storage import BenchStore, RunRow
from sweepbench.store import Store

GOLDEN = Path(__file__).resolve().parents[1] / "bench/golden/run_record_v1.json"
"""The golden run record (an incomplete run)."""


def store_golden_run(*, as_elbench: bool = False) -> str:
    """Store the golden record as an ELBench run (the board lists ELBench runs) in the current
    home's store; ``as_elbench`` also relabels the record's own benchmark id. Its run id."""
    record = load_record(GOLDEN.read_text("utf-8"))
    if as_elbench:
        elbench = record.benchmark.model_copy(update={"id": "elbench"})
        record = load_record(dump_record(record.model_copy(update={"benchmark": elbench})))
    with Store.open() as store:
        bench = BenchStore(store)
        bench.create_run(
            RunRow(
                id=record.run_id, config_hash=record.settings.hash, benchmark="elbench",
                model=record.roles["target"].model, judge=None, status=record.status,
                reason=record.reason, created_at=record.created_at,
                updated_at=record.updated_at, items=record.coverage.overall.selected,
            )
        )  # fmt: skip
        bench.set_record(record.run_id, dump_record(record))
    return record.run_id
