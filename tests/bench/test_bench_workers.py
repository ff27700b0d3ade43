"""One benchmark run shared by several worker processes (``bench run --workers N``): the items
are claimed in the store, so every item is answered exactly once, by more than one process,
and the last worker to end ends the run (its status and record).

The model waits at a gate (tests/bench/gate_helpers.py) until every worker holds claims, so
the first worker cannot answer everything before the others have joined, however loaded the
machine is."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa

from sweepbench.bench.storage import BenchStore
from sweepbench.store import Store
from sweepbench.store.schema import bench_answers, bench_claims, spend_reservations
from tests.bench.gate_helpers import every_worker_holding, gated, kill_then_open, open_when
from tests.bench.helpers import set_prices
from tests.bench.scale_helpers import answered_exactly_once, run_account
from tests.bench.sweep_helpers import guess, marked_benchmark
from tests.helpers import run_cli

ITEMS = 240


def test_three_worker_processes_answer_every_item_exactly_once(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    set_prices(isolated_home, {"scripted.guess": (1, 1)})  # priced: every call holds a lease
    path = marked_benchmark(tmp_path / "bench", ITEMS)
    # every call waits until all three workers hold claims: the work is shared by construction
    opener, failed = open_when("all", every_worker_holding(3), "three workers holding claims")
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "run", str(path), "--model", gated(guess("0.9"), "all"),
        "--workers", "3", "--concurrency", "2", "--limit", "5", "--yes", "--json",
    )  # fmt: skip
    opener.join()
    assert not failed, failed
    assert code == 0, err
    assert "2 more worker(s) (local) joined run" in err
    report = json.loads(out)
    assert report["status"] == "completed" and report["scored"] == ITEMS
    with Store.open() as store:
        calls = [c for c in store.list_calls(limit=None) if c.stop_reason != "cancelled"]
        assert Counter(c.item_key for c in calls) == Counter(
            {k: 1 for k in {c.item_key for c in calls}}
        )
        assert len(calls) == ITEMS  # every item asked once, none twice
        with store.engine.connect() as conn:
            answers = conn.scalar(sa.select(sa.func.count()).select_from(bench_answers))
            left = conn.scalar(sa.select(sa.func.count()).select_from(bench_claims))
            holders = set(conn.scalars(sa.select(spend_reservations.c.worker).distinct()))
        assert answers == ITEMS and left == 0
        assert len(holders) == 3, "the work was not shared between processes"
        run = BenchStore(store).run(report["run_id"])
        assert run is not None and run.record is not None and run.settings["claims"] is True


def test_workers_is_checked(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(monkeypatch, capsys, "bench", "run", "sample", "--workers", "0")
    assert code == 2 and "--workers must be between 1 and 64" in err


def test_a_worker_killed_mid_run_loses_nothing_and_doubles_nothing(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    set_prices(isolated_home, {"scripted.guess": (1, 1)})
    path = marked_benchmark(tmp_path / "bench", ITEMS)
    # each worker answers 8 items, then waits at the gate holding the rest of its claims; once
    # all three do (24 answers stored), one joined worker is killed and the gate opens
    model = gated(guess("0.9"), "kill", after=8)
    thread, failed, killed = kill_then_open(
        "kill", every_worker_holding(3, answered=24), "three workers holding claims, 24 answers"
    )
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "run", str(path), "--model", model,
        "--workers", "3", "--concurrency", "2", "--limit", "5", "--yes", "--json",
    )  # fmt: skip
    thread.join()
    assert not failed, failed
    assert killed, "no joined worker was found to kill"
    assert code == 0, err
    report = json.loads(out)
    assert report["status"] == "completed" and report["scored"] == ITEMS
    answered_exactly_once(ITEMS)
    account = run_account(report["run_id"], killed)
    assert account.open_holds == 0
    assert account.settled == account.answers + account.unaccounted >= account.answers


def test_joining_from_another_machine_is_refused_with_a_sqlite_store(
    isolated_home: Path, tmp_path: Path
) -> None:
    from datetime import UTC, datetime

    from sweepbench.bench.storage_rows import RunRow
    from sweepbench.errors import UserError

    now = datetime.now(UTC)
    elsewhere = {"host": "another-machine", "pid": 4242}
    with Store.open() as store:
        runs = BenchStore(store)
        runs.create_run(
            RunRow(
                id="shared-run", config_hash="0" * 64, benchmark="marked", model="m",
                judge=None, status="running", reason=None, created_at=now, updated_at=now,
                items=10, settings={"claims": True, "worker": elsewhere, "joined": []},
            )
        )  # fmt: skip
        runs.touch("shared-run")  # its worker on the other machine is alive (a fresh beat)
        with pytest.raises(UserError, match="machines cannot share"):
            runs.join_run("shared-run")


def test_what_other_workers_say_is_scrubbed_of_keys(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """A worker's failure is another process's text (a Ray actor's exception, a child's last
    lines): it is scrubbed before it is shown, as every message is."""
    from sweepbench.bench.workers import ProcessWorkers

    key = "sk-" + "scrubme" * 4
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setattr(ProcessWorkers, "start", lambda self, run_id: None)
    monkeypatch.setattr(ProcessWorkers, "wait", lambda self: [f"a worker said {key}"])
    path = marked_benchmark(tmp_path / "bench", 8)
    code, _out, err = run_cli(
        monkeypatch, capsys, "bench", "run", str(path), "--model", guess("0.9"),
        "--workers", "2", "--yes", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert "a worker said [redacted]" in err and key not in err
