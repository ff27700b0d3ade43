"""Benchmarks: whole question sets, estimated low/high before running, resumable, scored with
bootstrap intervals. The CLI (``sweepbench bench``) and the web app use these same parts."""

from sweepbench.bench.catalog import PRESETS, load_benchmark
from sweepbench.bench.items import Area, Benchmark, Item, JudgeSpec, Task
from sweepbench.bench.plan import BenchPlan, Limits, Selection, build_plan
from sweepbench.bench.report import RunReport, export_run, load_report
from sweepbench.bench.results import Summary, summarise
from sweepbench.bench.resume import PreparedRun, prepare
from sweepbench.bench.run import BenchRunner, RunOutcome
from sweepbench.engine.retry import RetryPolicy

__all__ = [
    "PRESETS", "Area", "BenchPlan", "BenchRunner", "Benchmark", "Item", "JudgeSpec", "Limits",
    "PreparedRun", "RetryPolicy", "RunOutcome", "RunReport", "Selection", "Summary", "Task",
    "build_plan", "export_run", "load_benchmark", "load_report", "prepare", "summarise",
]  # fmt: skip
