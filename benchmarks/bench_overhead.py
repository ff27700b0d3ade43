"""The benchmark runner's own overhead: 10,000 items on an instantly answering scripted model.

Compares, in the same script run (this machine is shared and noisy, so ratios matter):

- **floor**: the same items through a bare asyncio coroutine that "asks" an instant model,
  scores by exact match and appends one JSON line per item to a file;
- **run**: ``sweepbench.bench`` — plan, answer (a scripted model *with a price*, so every call
  goes the whole way through the engine: held in the spend ledger by a lease, logged as a
  ``calls`` row, settled in the group commit; concurrency 8), score, store every answer and
  spend line in SQLite — timed from the runner's start (after start-up);
- **resume**: preparing the same settings again after the run finished (no calls are made);
- **peak memory** of the process that ran (maximum resident set size, imports included).

Each measured part runs in a fresh subprocess; the figures are medians over ``--repeats``.

    python benchmarks/bench_overhead.py [--items 10000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MODEL = "scripted/echo?text=42"
GOALS = "goals: run < 1 s, run ≤ 5 × floor, resume < 2 s with 0 calls, peak memory < 300 MB"


def make_benchmark(n: int):  # type: ignore[no-untyped-def]
    """``n`` exact-match items; half expect the scripted answer."""
    from sweepbench.bench.items import Area, Benchmark, Item, Task

    items = tuple(
        Item(
            key=Item.make_key("overhead.jsonl", f"q{i}"),
            sample_id=f"q{i}",
            task="overhead",
            dimension="even" if i % 2 == 0 else "odd",
            prompt=f"Question {i}: what is six times seven?",
            reference="42" if i % 2 == 0 else "41",
            source_file="overhead.jsonl",
            row=i + 1,
        )
        for i in range(n)
    )
    task = Task("overhead", "all", "Overhead", "auto", "exact", items)
    return Benchmark("overhead", "Overhead", (Area("all", "All", (task,)),), version="1")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_floor(n: int, folder: Path) -> dict[str, float]:
    """The bare-asyncio floor: one coroutine per item (run together with ``gather``, as any
    concurrent harness must) that asks an instant model, scores by exact match and appends a
    JSON line; and the same work as one sequential loop (no concurrency at all)."""
    benchmark = make_benchmark(n)
    items = benchmark.tasks[0].items

    async def ask(prompt: str) -> str:
        return "42"

    def line(key: str, answer: str, ok: bool) -> str:
        return json.dumps({"key": key, "answer": answer, "score": float(ok)}) + "\n"

    async def concurrent() -> int:
        with (folder / "floor.jsonl").open("w", encoding="utf-8") as out:

            async def one(item: Any) -> bool:
                answer = await ask(item.prompt)
                ok = answer.strip() == str(item.reference).strip()
                out.write(line(item.key, answer, ok))
                return ok

            return sum(await asyncio.gather(*(one(item) for item in items)))

    async def sequential() -> int:
        passed = 0
        with (folder / "sequential.jsonl").open("w", encoding="utf-8") as out:
            for item in items:
                answer = await ask(item.prompt)
                ok = answer.strip() == str(item.reference).strip()
                passed += ok
                out.write(line(item.key, answer, ok))
        return passed

    started = time.perf_counter()
    passed = asyncio.run(concurrent())
    floor_s = time.perf_counter() - started
    started = time.perf_counter()
    asyncio.run(sequential())
    sequential_s = time.perf_counter() - started
    return {"seconds": floor_s, "sequential_seconds": sequential_s, "passed": passed,
            "peak_mb": _peak_mb()}  # fmt: skip


def child_run(n: int, folder: Path) -> dict[str, Any]:
    """The full runner on a fresh store, then a resume of the finished run."""
    import os

    from sweepbench.bench.request import BenchRequest
    from sweepbench.bench.resume import plan_run
    from sweepbench.bench.run import BenchRunner
    from sweepbench.bench.storage import BenchStore
    from sweepbench.store import Store

    os.environ["SWEEPBENCH_HOME"] = str(folder)  # a price for the scripted model: $1 per 1M
    if not os.environ.get("SWEEPBENCH_OVERHEAD_UNPRICED"):  # compare_commits.py's unpriced arm
        (folder / "models.toml").write_text("[scripted.echo]\nprice_in = 1\nprice_out = 1\n")
    store = Store.open(f"sqlite:///{folder / 'bench.db'}")
    benchmark = make_benchmark(n)
    started = time.perf_counter()
    request = BenchRequest(benchmark=benchmark.id, models={"target": MODEL})
    prepared = plan_run(benchmark, request, store)
    outcome = asyncio.run(BenchRunner(prepared, store, concurrency=8).run())
    run_s = time.perf_counter() - started
    runs = BenchStore(store)
    stored = len(runs.statuses(outcome.run_id))
    spend_lines = sum(1 for _ in runs.spend_lines(outcome.run_id))
    import sqlalchemy as sa

    from sweepbench.money.ledger import Ledger
    from sweepbench.store.schema import calls, spend_reservations

    with store.engine.connect() as conn:
        call_rows = int(conn.scalar(sa.select(sa.func.count()).select_from(calls)) or 0)
        holds = conn.execute(
            sa.select(spend_reservations.c.state, sa.func.count()).group_by(
                spend_reservations.c.state
            )
        ).all()
    ledger_spent = Ledger(store).summary().spent_today
    started = time.perf_counter()
    again = plan_run(benchmark, request, store)
    resumed = asyncio.run(BenchRunner(again, store, concurrency=8).run())
    resume_s = time.perf_counter() - started
    return {
        "seconds": run_s,
        "status": outcome.status,
        "scored": outcome.scored,
        "stored": stored,
        "spend_lines": spend_lines,
        "call_rows": call_rows,
        "holds": {state: count for state, count in holds},
        "ledger_spent": str(ledger_spent),
        "outcome_spent": str(outcome.spent),
        "resume_seconds": resume_s,
        "resume_calls": len(again.plan.items),
        "resume_same_run": float(resumed.run_id == outcome.run_id),
        "peak_mb": _peak_mb(),
    }


def _spawn(part: str, n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            [sys.executable, __file__, "--child", part, "--items", str(n), "--folder", folder],
            capture_output=True,
            text=True,
            check=True,
        )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", choices=("floor", "run"))
    parser.add_argument("--folder", type=Path)
    parser.add_argument(
        "--quick", action="store_true", help="a few items, once (CI: no figure judged)"
    )
    args = parser.parse_args()
    if args.quick:
        args.items, args.repeats = 200, 1
    if args.child:
        part = child_floor if args.child == "floor" else child_run
        print(json.dumps(part(args.items, args.folder)))
        return
    floors, runs = [], []
    for _ in range(args.repeats):  # interleaved, so both see the same machine load
        floors.append(_spawn("floor", args.items))
        runs.append(_spawn("run", args.items))
    floor_s = statistics.median(f["seconds"] for f in floors)
    run_s = statistics.median(r["seconds"] for r in runs)
    resume_s = statistics.median(r["resume_seconds"] for r in runs)
    last = runs[-1]
    print(f"{args.items:,} items, median of {args.repeats} (each part in a fresh process)")
    sequential_s = statistics.median(f["sequential_seconds"] for f in floors)
    print(f"  floor  (bare asyncio, gather + JSON lines): {floor_s:.3f} s")
    print(f"  sequential loop (no concurrency, for scale): {sequential_s:.3f} s")
    print(
        f"  run    (sweepbench, stored):        {run_s:.3f} s  = {run_s / floor_s:.1f} × floor "
        f"· {args.items / run_s:,.0f} items/s · {last['status']}, {last['stored']:,} answers "
        f"and {last['spend_lines']:,} spend lines stored"
    )
    print(
        f"         every call in the ledger and the call log: {last['call_rows']:,} calls rows, "
        f"holds {last['holds']}, ledger settled ${last['ledger_spent']} "
        f"(the run counted ${last['outcome_spent']})"
    )
    print(
        f"  resume (finished run, same settings): {resume_s:.3f} s, "
        f"{last['resume_calls']:.0f} calls, same run id: {bool(last['resume_same_run'])}"
    )
    print(
        f"  peak memory: run process {max(r['peak_mb'] for r in runs):.0f} MB "
        f"(floor process {max(f['peak_mb'] for f in floors):.0f} MB)"
    )
    print(f"  {GOALS}")


if __name__ == "__main__":
    main()
