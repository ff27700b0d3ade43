"""``sweepbench bench list``: the benchmarks and their tasks."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from sweepbench.bench.catalog import PRESETS, load_benchmark, scope
from sweepbench.bench.items import Benchmark
from sweepbench.bench.sources.registry import sources
from sweepbench.cli.bench_options import (
    AllowDataOutsideOpt,
    DataOpt,
    JsonOpt,
    ScopeOpt,
    err,
    out,
)


def list_command(
    benchmarks: Annotated[list[str] | None, typer.Argument(help="Benchmarks to list.")] = None,
    data: DataOpt = None,
    scope_name: ScopeOpt = "core",
    allow_data_outside: AllowDataOutsideOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """The benchmarks and their tasks: area, items, grading and whether each can run."""
    listed = [s for s in sources() if s.listed]
    names = list(benchmarks or [s.name for s in listed if data or not s.needs_data])
    chosen_scope = scope(scope_name)
    loaded = [load_benchmark(name, data, allow_data_outside=allow_data_outside) for name in names]
    if as_json:
        typer.echo(json.dumps([_benchmark_json(b, chosen_scope) for b in loaded], indent=2,
                              ensure_ascii=False))  # fmt: skip
        return
    for benchmark in loaded:
        _print_benchmark(benchmark, chosen_scope)
    if not data:  # say how to list what needs its data
        asked = {name.strip().lower() for name in names}
        for left_out in (s for s in listed if s.needs_data and s.name not in asked):
            hint = left_out.data_hint or f"{left_out.name}: list it with --data PATH"
            err.print(Text(hint), style="dim")


def _task_state(task: Any, scope_name: str) -> str:
    if task.missing:
        return f"data missing: {task.missing}"
    if not task.available:  # a teaching template with no playable dialogue
        return "multi-turn: no dialogue to play"
    if task.region_specific and scope_name == "core":
        return "region-specific (--scope paper)"
    return "ready"


def _benchmark_json(benchmark: Benchmark, chosen_scope: str) -> dict[str, Any]:
    return {
        "id": benchmark.id,
        "name": benchmark.name,
        "source": benchmark.source,
        "version": benchmark.version,
        "presets": {k: p.label(benchmark, chosen_scope) for k, p in PRESETS.items()},  # type: ignore[arg-type]
        "tasks": [
            {
                "area": t.area,
                "task": t.id,
                "name": t.name,
                "items": len(t.items),
                "grading": t.grading,
                "scorer": t.scorer,
                "region_specific": t.region_specific,
                "state": _task_state(t, chosen_scope),
                "problems": [str(p) for p in t.problems],
            }
            for t in benchmark.tasks
        ],
        "problems": [str(p) for p in benchmark.problems],
    }


def _print_benchmark(benchmark: Benchmark, chosen_scope: Any) -> None:
    # Names, labels and problems come from declarations and data files: shown as text, never
    # read as Rich markup (a "[/x]" in a task name must not end the listing in a traceback).
    table = Table(title=Text(f"{benchmark.name} ({benchmark.id}) · {benchmark.source}"))
    for column in ("area", "task", "items", "grading", "state"):
        table.add_column(column, justify="right" if column == "items" else "left")
    for area in benchmark.areas:
        for task in area.tasks:
            problems = f" · {len(task.problems)} rows skipped" if task.problems else ""
            table.add_row(
                Text(area.label), Text(f"{task.id} ({task.name})"), f"{len(task.items):,}",
                task.grading_words, Text(_task_state(task, chosen_scope) + problems),
            )  # fmt: skip
    out.print(table)
    for p in PRESETS.values():
        label = p.label(benchmark, chosen_scope)
        out.print(f"  --preset {p.name}: {label}", highlight=False, markup=False)
    for task in benchmark.tasks:
        for problem in task.problems[:5]:
            err.print(Text.assemble(("skipped", "yellow"), f" {problem}"), highlight=False)
    for problem in benchmark.problems:  # data text: never read as markup
        err.print(Text.assemble(("problem", "yellow"), f" {problem}"), highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``bench list`` (loaded by ``cli.bench.BENCH_COMMANDS``)."""
    app.command("list")(list_command)
