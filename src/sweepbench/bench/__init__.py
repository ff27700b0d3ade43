"""Benchmarks: whole question sets, estimated low/high before running, resumable, scored with
bootstrap intervals. The CLI (``sweepbench bench``) and the web app use these same parts.

Importing a module of this package does not import all of them: each name below is imported
from its module the first time it is used (PEP 562, as the root package does), so a command
that only reads a stored run does not load the runner, the engine and every scorer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sweepbench.lazy import lazy_exports

if TYPE_CHECKING:
    from sweepbench.bench.catalog import PRESETS, load_benchmark
    from sweepbench.bench.items import Area, Benchmark, Item, JudgeSpec, Task
    from sweepbench.bench.plan import BenchPlan, build_plan
    from sweepbench.bench.report import RunReport, export_run, load_report
    from sweepbench.bench.results import Summary, summarise
    from sweepbench.bench.resume import PreparedRun
    from sweepbench.bench.run import BenchRunner
    from sweepbench.bench.run_config import Limits, Selection
    from sweepbench.bench.run_progress import RunOutcome
    from sweepbench.bench.start import prepare
    from sweepbench.engine.retry import RetryPolicy

_EXPORTS: dict[str, str] = {
    "PRESETS": "sweepbench.bench.catalog",
    "load_benchmark": "sweepbench.bench.catalog",
    "Area": "sweepbench.bench.items",
    "Benchmark": "sweepbench.bench.items",
    "Item": "sweepbench.bench.items",
    "JudgeSpec": "sweepbench.bench.items",
    "Task": "sweepbench.bench.items",
    "BenchPlan": "sweepbench.bench.plan",
    "Limits": "sweepbench.bench.run_config",
    "Selection": "sweepbench.bench.run_config",
    "build_plan": "sweepbench.bench.plan",
    "RunReport": "sweepbench.bench.report",
    "export_run": "sweepbench.bench.report",
    "load_report": "sweepbench.bench.report",
    "Summary": "sweepbench.bench.results",
    "summarise": "sweepbench.bench.results",
    "PreparedRun": "sweepbench.bench.resume",
    "prepare": "sweepbench.bench.start",
    "BenchRunner": "sweepbench.bench.run",
    "RunOutcome": "sweepbench.bench.run_progress",
    "RetryPolicy": "sweepbench.engine.retry",
}

__all__ = [
    "PRESETS", "Area", "BenchPlan", "BenchRunner", "Benchmark", "Item", "JudgeSpec", "Limits",
    "PreparedRun", "RetryPolicy", "RunOutcome", "RunReport", "Selection", "Summary", "Task",
    "build_plan", "export_run", "load_benchmark", "load_report", "prepare", "summarise",
]  # fmt: skip


if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
