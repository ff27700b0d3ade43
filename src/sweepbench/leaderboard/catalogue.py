"""The ELBench catalogue as a board needs it (areas, tasks, grading, region-specific), from
the registry data — no benchmark items are loaded."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from sweepbench.leaderboard.board import Catalogue, CatalogueTask
from sweepbench.leaderboard.published import PublishedSnapshot
from sweepbench.leaderboard.rows import Scope

if TYPE_CHECKING:
    from sweepbench.bench.items import Benchmark


@cache
def elbench_catalogue() -> Catalogue:
    """ELBench's areas and tasks from its registry."""
    from sweepbench.bench.sources.elbench_registry import load_registry

    registry = load_registry()
    return Catalogue(
        areas={a.key: a.label for a in registry.areas},
        tasks={
            t.id: CatalogueTask(
                area=t.area,
                auto=t.grading == "auto",
                region_specific=t.region_specific,
                runtime=t.grading == "runtime",
            )
            for t in registry.tasks
        },
    )


def published_questions(snapshot: PublishedSnapshot, catalogue: Catalogue, scope: Scope) -> int:
    """How many questions the scope has, from the published per-task counts (the first model's
    counts of the catalogue's in-scope tasks)."""
    tasks = catalogue.in_scope(scope)
    for model in snapshot.models:
        if model.tasks:
            return sum(t.count for k, t in model.tasks.items() if k in tasks)
    return 0


def benchmark_catalogue(benchmark: Benchmark) -> Catalogue:
    """Any loaded benchmark's areas and tasks (a declared one's board: your runs only)."""
    return Catalogue(
        areas={a.key: a.label for a in benchmark.areas},
        tasks={
            t.id: CatalogueTask(
                area=t.area,
                auto=t.grading == "auto",
                region_specific=t.region_specific,
                runtime=t.grading == "runtime",
            )
            for t in benchmark.tasks
        },
    )


def benchmark_questions(benchmark: Benchmark, scope: Scope) -> int:
    """How many questions a loaded benchmark has in ``scope``."""
    return sum(len(t.items) for t in benchmark.tasks if scope == "paper" or not t.region_specific)
