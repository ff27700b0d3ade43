"""A benchmark run to be killed: ``python -m tests.bench.kill_driver DBURL [ITEMS]``.

Runs the toy benchmark (``ITEMS`` items, 2,000 by default) on the scripted model at
concurrency 8, continuing the unfinished run with the same settings if the store has one. The
model's price comes from ``$SWEEPBENCH_HOME/models.toml`` (the test writes it; the child
inherits the variable), so every call goes through the ledger like a paid one.
Prints ``started RUN_ID`` once the run row exists (the parent kills it after that) and
``finished STATUS SESSION_SCORED`` when the session ends on its own.
"""

from __future__ import annotations

import asyncio
import sys

from sweepbench.bench.resume import PreparedRun
from sweepbench.bench.run import BenchRunner
from sweepbench.bench.run_progress import RunOutcome
from sweepbench.bench.storage import BenchStore
from sweepbench.engine.retry import RetryPolicy
from sweepbench.store import Store
from tests.bench.helpers import toy_benchmark
from tests.bench.plans import prepare

MODEL = "scripted/echo?text=42&ttft=0.002"
"""Answers the even rows right; about 2 ms per call, so 2,000 items take a second or two."""
CONCURRENCY = 8
ITEMS = 2000
FAST_RETRY = RetryPolicy(base_delay_s=0.001, max_delay_s=0.002, rate_limit_floor_s=0.001)


def prepare_run(store: Store, items: int = ITEMS) -> PreparedRun:
    """The run the driver makes: the same settings every time, so a new process resumes it."""
    return prepare(toy_benchmark(items), store, model=MODEL)


def _announce_when_started(runner: BenchRunner) -> None:
    """Print ``started`` after the runner has stored its run row (its first progress call)."""
    announced = False
    runs = BenchStore(runner.store)

    def on_progress(_progress: object) -> None:
        nonlocal announced
        if not announced and runs.run(runner.run_id) is not None:
            announced = True
            print(f"started {runner.run_id}", flush=True)

    runner.on_progress = on_progress


async def drive(url: str, items: int = ITEMS) -> RunOutcome:
    """Prepare and run one session of the driver's run in the store at ``url``."""
    store = Store.open(url)
    try:
        runner = BenchRunner(
            prepare_run(store, items), store, concurrency=CONCURRENCY, retry=FAST_RETRY
        )
        _announce_when_started(runner)
        return await runner.run()
    finally:
        store.close()


def main(argv: list[str]) -> int:
    """Entry point: ``DBURL [ITEMS]``."""
    if not 1 <= len(argv) <= 2:
        print("usage: python -m tests.bench.kill_driver DBURL [ITEMS]", file=sys.stderr)
        return 2
    items = int(argv[1]) if len(argv) == 2 else ITEMS
    outcome = asyncio.run(drive(argv[0], items))
    print(f"finished {outcome.status} {outcome.session_scored}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
