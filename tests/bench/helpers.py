"""Small in-code benchmarks for runner tests (no data files needed)."""

from __future__ import annotations

import os
from pathlib import Path

from sweepbench.bench.items import Area, Benchmark, Item, JudgeSpec, Task


def exact_task(task_id: str, n: int, *, area: str = "math", answer: str = "42") -> Task:
    """``n`` items whose reference is ``answer`` for even rows and something else otherwise."""
    items = tuple(
        Item(
            key=Item.make_key(f"{task_id}.jsonl", f"{task_id}-{i}"),
            sample_id=f"{task_id}-{i}",
            task=task_id,
            dimension="even" if i % 2 == 0 else "odd",
            prompt=f"Question {i}: what is six times seven?",
            reference=answer if i % 2 == 0 else "41",
            source_file=f"{task_id}.jsonl",
            row=i + 1,
        )
        for i in range(n)
    )
    name = f"Task {task_id}"
    return Task(task_id, area, name, "auto", "exact", items, source_file=f"{task_id}.jsonl")


def judged_task(task_id: str, n: int, *, area: str = "talk") -> Task:
    items = tuple(
        Item(
            key=Item.make_key(f"{task_id}.jsonl", f"{task_id}-{i}"),
            sample_id=f"{task_id}-{i}",
            task=task_id,
            dimension="default",
            prompt=f"Explain idea {i} kindly.",
            source_file=f"{task_id}.jsonl",
            row=i + 1,
        )
        for i in range(n)
    )
    judge = JudgeSpec("A kind, correct explanation.", "pass", "fail")
    return Task(task_id, area, f"Judged {task_id}", "judge", "judge", items, judge=judge)


def toy_benchmark(n: int = 10, *, judged: int = 0) -> Benchmark:
    areas = [Area("math", "Math", (exact_task("arith", n),))]
    if judged:
        areas.append(Area("talk", "Talk", (judged_task("explain", judged),)))
    return Benchmark("toy", "Toy", tuple(areas), version="v1", source="tests")


def elbench_root() -> Path:
    """The reference copy of ELBench's data (never part of the project):
    ``$SWEEPBENCH_ELBENCH_DATA``, else ``shared/data/elbench/benchmark_root`` beside the
    checkout, else the work folder's copy (so a CI clone elsewhere still finds it). Tests skip
    when none exists."""
    env = os.environ.get("SWEEPBENCH_ELBENCH_DATA")
    candidates = [Path(env)] if env else []
    tail = Path("shared", "data", "elbench", "benchmark_root")
    candidates += [Path(__file__).resolve().parents[2].parent / tail, Path("/work") / tail]
    return next((p for p in candidates if p.is_dir()), candidates[0])
