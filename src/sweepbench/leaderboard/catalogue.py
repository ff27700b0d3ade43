"""A benchmark's catalogue as a board needs it (areas, tasks, their names, grading,
region-specific): ELBench's from the registry data (no benchmark item is loaded), a loaded
benchmark's, or the one a stored run keeps in its settings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

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
                name=t.name,
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
                name=t.name,
                region_specific=t.region_specific,
                runtime=t.grading == "runtime",
            )
            for t in benchmark.tasks
        },
    )


def benchmark_questions(benchmark: Benchmark, scope: Scope) -> int:
    """How many questions a loaded benchmark has in ``scope``."""
    return sum(len(t.items) for t in benchmark.tasks if scope == "paper" or not t.region_specific)


def stored_catalogue(areas: Sequence[Mapping[str, Any]]) -> Catalogue:
    """The catalogue a stored run keeps (``settings["catalogue"]``, as
    :func:`~sweepbench.bench.report.catalogue_json` writes it): the board of a benchmark
    known only from its runs. ValueError when it is not that shape."""
    try:
        return Catalogue(
            areas={str(a["key"]): str(a["label"]) for a in areas},
            tasks={
                str(t["id"]): CatalogueTask(
                    area=str(a["key"]),
                    auto=t["grading"] == "auto",
                    name=str(t.get("name") or ""),
                    region_specific=bool(t.get("region_specific")),
                    runtime=t["grading"] == "runtime",
                )
                for a in areas
                for t in a["tasks"]
            },
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"not a stored catalogue ({exc})") from None
