"""Benchmark tables on every backend: answers replaced by key, spend by role, runs found by
their settings hash; the SQLite fast path writes exactly what the portable path writes."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from sweepbench.bench.storage import BenchStore
from sweepbench.bench.storage_rows import AnswerRow, RunRow, SpendLine
from sweepbench.store import Store
from tests.backends import BACKENDS, backend_url


def _run(run_id: str, status: str = "running") -> RunRow:
    now = datetime.now(UTC)
    return RunRow(run_id, "hash-1", "toy", "scripted/echo", None, status, None, now, now, 3,
                  {"config": {"scope": "core"}})  # fmt: skip


def _answers(status: str) -> list[AnswerRow]:
    return [
        AnswerRow(
            key=f"t.jsonl::{i}",
            task="t",
            dimension="d",
            status=status,
            answer="42",
            score=1.0 if status == "scored" else None,
            passed=status == "scored" or None,
            result="pass" if status == "scored" else None,
            score_metadata={"x": [i, "é"]},
            error_type=None if status == "scored" else "provider_error",
            error=None if status == "scored" else "boom",
            attempts=i + 1,
            input_tokens=7,
            output_tokens=1,
            latency_ms=3,
            retries=None if i == 0 else [{"attempt": 1, "error": "boom"}],
        )
        for i in range(3)
    ]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fast", [True, False])
def test_answers_are_replaced_by_key_and_spend_is_summed(
    backend: str, fast: bool, tmp_path: Path
) -> None:
    store = Store.open(backend_url(backend, tmp_path / "b.db"))
    runs = BenchStore(store, fast_sqlite=fast)
    runs.create_run(_run("r1"))
    runs.write("r1", _answers("failed"), [
        SpendLine("t.jsonl::0", "target", "m", 7, 1, 0, Decimal("0.000123"), "computed"),
        SpendLine("t.jsonl::0", "judge", "j", 9, 4, 0, None, "unpriced"),
    ])  # fmt: skip
    assert set(runs.statuses("r1").values()) == {"failed"}
    runs.write("r1", _answers("scored"), [
        SpendLine("t.jsonl::1", "target", "m", 7, 1, 0, Decimal("0.0000011"), "computed"),
    ])  # fmt: skip
    rows = list(runs.answers("r1"))
    assert len(rows) == 3 and {r["status"] for r in rows} == {"scored"}  # replaced, not added
    first = rows[0]
    assert first["score_metadata"] == {"x": [0, "é"]} and first["passed"] is True
    assert first["retries"] is None and rows[1]["retries"] == [{"attempt": 1, "error": "boom"}]
    assert first["updated_at"].tzinfo is not None
    assert runs.spent("r1") == {"target": Decimal("0.000125"), "judge": Decimal(0)}
    lines = list(runs.spend_lines("r1"))
    assert [line["source"] for line in lines] == ["computed", "unpriced", "computed"]
    assert lines[1]["usd"] is None
    store.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_runs_by_hash_status_and_prefix(backend: str, tmp_path: Path) -> None:
    store = Store.open(backend_url(backend, tmp_path / "b.db"))
    runs = BenchStore(store)
    runs.create_run(_run("toy-20261130-000000-aaaa"))
    assert runs.resumable("hash-1") is not None
    runs.set_status("toy-20261130-000000-aaaa", "completed", None, spent={"target": "0.1"})
    assert runs.resumable("hash-1") is None
    done = runs.resumable("hash-1", include_completed=True)
    assert done is not None and done.settings["spent"] == {"target": "0.1"}
    assert done.settings["config"] == {"scope": "core"}  # merged, not replaced
    found = runs.run("toy-2026")
    assert found is not None and found.id == "toy-20261130-000000-aaaa"  # a unique prefix
    with pytest.raises(ValueError, match="unknown run status"):
        runs.set_status(found.id, "exploded")
    runs.delete_run(found.id)
    assert runs.run(found.id) is None and runs.runs() == []
    store.close()
