"""Two sessions never continue one run: starting and claiming a run are atomic, within one
process (two sessions of the Python API at once) and across processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from sweepbench.bench.run import BenchRunner
from sweepbench.bench.run_progress import Progress
from sweepbench.errors import UserError
from sweepbench.store import Store
from sweepbench.store.schema import bench_runs, calls
from tests.bench.helpers import toy_benchmark
from tests.bench.plans import prepare

ROOT = Path(__file__).resolve().parents[2]
SLOW = "scripted/echo?text=42&ttft=0.02"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'claims.db'}")


async def test_two_sessions_in_one_process_never_both_run_the_same_settings(
    store: Store,
) -> None:
    benchmark = toy_benchmark(40)
    first = BenchRunner(prepare(benchmark, store, model=SLOW), store, concurrency=2)
    second = BenchRunner(prepare(benchmark, store, model=SLOW), store, concurrency=2)
    results = await asyncio.gather(first.run(), second.run(), return_exceptions=True)
    refused = [r for r in results if isinstance(r, UserError)]
    finished = [r for r in results if not isinstance(r, BaseException)]
    assert len(refused) == 1 and "being run by another session" in str(refused[0])
    assert len(finished) == 1 and finished[0].scored == 40
    with store.engine.connect() as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(bench_runs)) == 1
        assert conn.scalar(sa.select(sa.func.count()).select_from(calls)) == 40  # paid once


async def test_two_sessions_resuming_at_once_claim_it_once(store: Store) -> None:
    benchmark = toy_benchmark(30)
    seen = asyncio.Event()

    def progress(p: Progress) -> None:
        if p.done >= 5:
            seen.set()

    runner = BenchRunner(
        prepare(benchmark, store, model=SLOW), store, concurrency=1, on_progress=progress
    )
    task = asyncio.create_task(runner.run())
    await seen.wait()
    runner.stop()
    stopped = await task
    assert stopped.status == "interrupted"
    resumers = [
        BenchRunner(prepare(benchmark, store, model=SLOW), store, concurrency=2) for _ in range(2)
    ]
    assert all(r.run_id == stopped.run_id for r in resumers)
    results = await asyncio.gather(*(r.run() for r in resumers), return_exceptions=True)
    refused = [r for r in results if isinstance(r, UserError)]
    assert len(refused) == 1 and "being run by another session" in str(refused[0])
    with store.engine.connect() as conn:
        answered = sa.select(calls.c.item_key).where(calls.c.stop_reason != "cancelled")
        keys = conn.execute(answered).scalars().all()
    # every item answered exactly once over both sessions (the Stop's cancelled call is asked
    # again, and stays in the call log as cancelled)
    assert len(keys) == len(set(keys)) == 30


DRIVER = """
import asyncio, os, pathlib, sys, time
from tests.bench.plans import prepare
from sweepbench.bench.run import BenchRunner
from sweepbench.bench.run_progress import Progress
from sweepbench.errors import UserError
from sweepbench.store import Store
from tests.bench.helpers import toy_benchmark
store = Store.open(sys.argv[1])
# a barrier, whatever the machine's load: every process has imported and opened the store
# before any of them prepares (a fixed start time let a slow starter find the run finished)
barrier = pathlib.Path(sys.argv[2])
(barrier / str(os.getpid())).touch()
while len(list(barrier.iterdir())) < int(sys.argv[4]):
    time.sleep(0.001)
try:  # a session that finds the run already taken is refused, at prepare or at its claim
    prepared = prepare(toy_benchmark(60), store, model=sys.argv[3])
    outcome = asyncio.run(BenchRunner(prepared, store, concurrency=2).run())
    print("ran", outcome.run_id, outcome.session_scored)
except UserError as exc:
    print("refused", exc)
"""


@pytest.mark.parametrize("trial", range(3))
def test_processes_started_together_run_a_run_once(tmp_path: Path, trial: int) -> None:
    url = f"sqlite:///{tmp_path / 'procs.db'}"
    Store.open(url).close()  # migrated before the race
    barrier = tmp_path / "ready"
    barrier.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", DRIVER, url, str(barrier), SLOW, "3"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=60) for p in procs]
    lines = [(out.strip().splitlines() or [f"crashed: {err[-2000:]}"])[-1] for out, err in outs]
    assert sum(line.startswith("ran") for line in lines) == 1, (lines, [e for _, e in outs])
    assert sum(line.startswith("refused") for line in lines) == 2, lines
    store = Store.open(url)
    with store.engine.connect() as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(bench_runs)) == 1
        keys = conn.execute(sa.select(calls.c.item_key)).scalars().all()
    assert len(keys) == len(set(keys)) == 60
