"""A teaching run to be killed: ``python -m tests.bench.dialogue_kill_driver DBURL``.

Plays the guided dialogues of :func:`benchmark` on the scripted tutor (20 ms a turn) and
evaluator, continuing the unfinished run with the same settings if the store has one; prints
``finished STATUS`` when the session ends on its own (the parent kills it before that).
"""

from __future__ import annotations

import asyncio
import sys

from sweepbench.bench.items import Area, Benchmark, Item, Task
from sweepbench.bench.run import BenchRunner
from sweepbench.bench.run_progress import RunOutcome
from sweepbench.engine.retry import RetryPolicy
from sweepbench.store import Store
from tests.bench.plans import prepare

TUTOR = "scripted/tutor?end_after=8&ttft=0.02"
EVALUATOR = "scripted/evaluator?score=4"
DIALOGUES = 4
FAST_RETRY = RetryPolicy(base_delay_s=0.001, max_delay_s=0.002, rate_limit_floor_s=0.001)


def benchmark() -> Benchmark:
    """Four guided lessons of eight teacher turns."""
    items = tuple(
        Item(
            key=f"lessons.yaml::lesson-{i}", sample_id=f"lesson-{i}", task="guided",
            dimension="default", prompt=f"{i} + {i} = ?",
            metadata={"payload": {"question": f"{i} + {i} = ?", "profile": "curious"}},
        )
        for i in range(DIALOGUES)
    )  # fmt: skip
    options = {"scale": 5, "dialogue": {"flow": "guided", "fields": ["a", "b"], "rubric": "Rate."}}
    task = Task("guided", "teach", "Guided", "runtime", "runtime", items, options=options,
                multi_turn=True)  # fmt: skip
    return Benchmark("lessons", "Lessons", (Area("teach", "Teaching", (task,)),), version="v1")


async def drive(url: str) -> RunOutcome:
    """One session of the driver's run in the store at ``url``."""
    store = Store.open(url)
    try:
        prepared = prepare(benchmark(), store, model=TUTOR, judge=EVALUATOR)
        runner = BenchRunner(prepared, store, concurrency=2, retry=FAST_RETRY,
                             dialogue_retry_delay_s=0.0)  # fmt: skip
        return await runner.run()
    finally:
        store.close()


def main(argv: list[str]) -> int:
    """Entry point: ``DBURL``."""
    if len(argv) != 1:
        print("usage: python -m tests.bench.dialogue_kill_driver DBURL", file=sys.stderr)
        return 2
    outcome = asyncio.run(drive(argv[0]))
    print(f"finished {outcome.status}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
