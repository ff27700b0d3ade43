"""``sweepbench bench sweep`` and ``sweepbench bench sweeps list|show|export``: one question set
under several settings, priced first, run at once, compared on the same items. The rules are
in ``bench.sweeps.plan`` / ``bench.sweeps.run`` / ``bench.sweeps.result``; this renders them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from sweepbench.cli.bench_options import (
    JsonOpt,
    RunOptions,
    build_request,
    confirm_spending,
    err,
    refuse,
    run_options,
)

if TYPE_CHECKING:
    from sweepbench.bench.run_progress import Progress as RunProgress
    from sweepbench.bench.sweeps.plan import BenchSweepPlan
    from sweepbench.bench.sweeps.run import BenchSweepRunner, SweepOutcome
    from sweepbench.store import Store
from sweepbench.axes import AXES
from sweepbench.cli.bench_stop import sweep_stop_command

text_out = Console(markup=False, highlight=False)
"""Standard output: labels and verdicts name models and values the user typed (text only)."""

AxisOpt = Annotated[str, typer.Option("--axis", help=" | ".join(AXES))]
ValuesOpt = Annotated[
    str, typer.Option("--values", help="Comma-separated values of the axis (models, efforts…).")
]


@run_options("sweep")
def sweep_command(
    options: RunOptions,
    axis: AxisOpt,
    values: ValuesOpt,
    estimate_only: Annotated[
        bool, typer.Option("--estimate-only", help="Price the sweep; call no model.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Sweep a benchmark: the same questions under several settings, compared on the same items.

    One axis varies. Priced per setting and in total before anything starts, run at once, then
    each setting compared with the best-scoring one on the same items (paired range, McNemar or
    Wilcoxon, Holm, the smallest detectable difference).

    Limits are the whole sweep's. Ctrl-C stops every setting, keeping every answer; the same
    command again continues them. Exit codes: 0 finished; 1 paused, stopped or finished with
    errors; 2 refused."""
    from sweepbench.bench.start import load
    from sweepbench.bench.sweeps.plan import plan_bench_sweep, sweep_start_check
    from sweepbench.bench.sweeps.run import BenchSweepRunner
    from sweepbench.bench.sweeps.wording import sweep_estimate_lines
    from sweepbench.engine.ratelimit import RateLimits
    from sweepbench.store import Store

    request = build_request(options)
    benchmark = load(request)
    with Store.open() as store:
        plan = plan_bench_sweep(
            request, axis, [v.strip() for v in values.split(",")], store, benchmark=benchmark
        )
        if not as_json or estimate_only:
            for line in sweep_estimate_lines(plan):
                err.print(line, highlight=False, markup=False)
        decision = sweep_start_check(plan, request)
        if estimate_only:
            if as_json:
                typer.echo(json.dumps(plan_json(plan), indent=2, ensure_ascii=False))
            raise typer.Exit(2 if decision.refused else 0)
        if decision.refused:
            refuse(decision, {*plan.errors, *plan.blocked, *plan.limit_problems})  # listed already
        if decision.nothing_left:
            err.print("Nothing left to run: every setting has scored every selected item.")
            if plan.previous is not None:
                show_sweep(store, plan.previous.id, as_json=as_json)
            return
        confirm_spending(decision, noun="sweep", question="Spend up to {high} on this sweep?")
        runner = BenchSweepRunner(
            plan, store, concurrency=request.concurrency,
            accept_unpriced=request.accept_unpriced,
            rate_limits=RateLimits(rpm=request.rpm, tpm=request.tpm),
        )  # fmt: skip
        outcome = _run_with_progress(runner, quiet=as_json)
        show_sweep(store, outcome.sweep_id, as_json=as_json)
    if outcome.status != "completed":
        raise typer.Exit(1)


def plan_json(plan: BenchSweepPlan) -> dict[str, object]:
    """The sweep's estimate as one JSON object (``--estimate-only --json``)."""

    from sweepbench.bench.sweeps.wording import sweep_estimate_lines

    def usd(value: object) -> str | None:
        return None if value is None else str(value)

    return {
        "benchmark": plan.benchmark.id,
        "axis": plan.axis,
        "held": plan.held,
        "settings": [
            {
                "label": s.label, "value": s.value, "questions": len(s.prepared.plan.items),
                "already_done": s.prepared.plan.already_done, "low_usd": usd(s.low),
                "high_usd": usd(s.high), "config_hash": s.prepared.plan.config.hash,
                "limit_usd": usd(s.prepared.plan.limits.total),
            }
            for s in plan.settings
        ],
        "roles": [
            {"role": r.role, "calls": r.calls, "low_usd": usd(r.low), "high_usd": usd(r.high)}
            for r in plan.roles
        ],
        "low_usd": usd(plan.low),
        "high_usd": usd(plan.high),
        "errors": list(plan.errors),
        "blocked": list(plan.blocked),
        "limit_problems": list(plan.limit_problems),
        "notes": list(plan.notes),
        "continues": None if plan.previous is None else plan.previous.id,
        "text": sweep_estimate_lines(plan),
    }  # fmt: skip


def _run_with_progress(runner: BenchSweepRunner, *, quiet: bool) -> SweepOutcome:
    from sweepbench.engine.signals import stop_on_signals

    async def go() -> SweepOutcome:
        with stop_on_signals(runner.stop):  # Ctrl-C or SIGTERM: stop all, keeping answers
            return await runner.run()

    if quiet:
        return asyncio.run(go())
    with Progress(
        TextColumn("{task.fields[label]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    ) as bar:
        tasks: dict[int, TaskID] = {}
        for index, (setting, progress) in enumerate(
            zip(runner.plan.settings, runner.progress, strict=True)
        ):
            if progress is None:
                continue
            tasks[index] = bar.add_task(
                _describe(progress), total=progress.total, label=escape(setting.label)
            )

        def update(index: int, p: RunProgress) -> None:
            bar.update(tasks[index], completed=p.done, description=_describe(p))

        runner.on_progress(update)
        return asyncio.run(go())


def _describe(p: RunProgress) -> str:
    from sweepbench.bench.results import format_money

    errors = f" · [red]{p.failed} errors[/red]" if p.failed else ""
    return f"{p.scored:,} scored{errors} · {format_money(p.spent)}"


def show_sweep(store: Store, sweep_id: str, *, as_json: bool, detail: bool = False) -> None:
    """A sweep's settings table and verdicts (or everything as JSON) on standard output;
    ``detail``: every area's and task's score under each setting too."""
    from sweepbench.bench.sweeps.result import (
        SETTINGS_COLUMNS,
        breakdown_rows,
        load_sweep,
        settings_table_rows,
    )

    result = load_sweep(store, sweep_id)
    if as_json:
        typer.echo(json.dumps(result.as_json(), indent=2, ensure_ascii=False, default=str))
        return
    sweep = result.sweep
    held = ", ".join(f"{k} {v}" for k, v in sweep.held.items())
    table = Table(title=f"{sweep.id} · {sweep.benchmark} · varying {sweep.axis} · held {held}")
    for column in SETTINGS_COLUMNS:
        if column == "setting":
            table.add_column(column, overflow="fold")
        else:
            table.add_column(column, justify="right")
    table.caption = "vs best: the paired difference in points (95% range); * detectable"
    for row in settings_table_rows(result):
        table.add_row(*row)
    text_out.print(table)
    if detail:
        header, rows = breakdown_rows(result)
        scores = Table(title="Scores per area and task (0–100, 95% range)")
        for index, column in enumerate(header):
            scores.add_column(column, justify="left" if index < 2 else "right", overflow="fold")
        for row in rows:
            scores.add_row(*row)
        text_out.print(scores)
    for line in result.lines():
        text_out.print(line)


sweeps = typer.Typer(
    name="sweeps", help="Stored benchmark sweeps: list, show, export, stop.", no_args_is_help=True
)


@sweeps.command("list")
def list_sweeps(
    limit: Annotated[int, typer.Option("--limit")] = 20, as_json: JsonOpt = False
) -> None:
    """Stored benchmark sweeps, newest first."""
    from sweepbench.bench.sweeps.store import SweepStore
    from sweepbench.store import Store

    with Store.open() as store:
        rows = SweepStore(store).sweeps(limit)
    if as_json:
        typer.echo(json.dumps([r.as_json() for r in rows], indent=2, ensure_ascii=False))
        return
    if not rows:
        text_out.print("No benchmark sweeps yet: start one with sweepbench bench sweep.")
        return
    table = Table(title="Benchmark sweeps")
    for column in ("id", "benchmark", "axis", "settings", "updated"):
        table.add_column(column)
    for row in rows:
        labels = ", ".join(s.label for s in row.settings)
        table.add_row(
            row.id, row.benchmark, row.axis, labels, row.updated_at.strftime("%Y-%m-%d %H:%M")
        )
    text_out.print(table)


@sweeps.command("show")
def show_command(
    sweep_id: Annotated[str, typer.Argument(help="The sweep's id (bench sweeps list).")],
    detail: Annotated[
        bool, typer.Option("--detail", help="Every area's and task's score under each setting.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """A sweep's settings, their scores and costs, and every verdict against the best."""
    from sweepbench.store import Store

    with Store.open() as store:
        show_sweep(store, sweep_id, as_json=as_json, detail=detail)


@sweeps.command("export")
def export_command(
    sweep_id: Annotated[str, typer.Argument(help="The sweep's id (bench sweeps list).")],
    out_dir: Annotated[Path, typer.Option("--out", help="The folder to write into.")] = Path("."),
) -> None:
    """Write the sweep as sweep.json, settings.csv and comparisons.csv (no keys in them)."""
    from sweepbench.bench.sweeps.result import load_sweep
    from sweepbench.store import Store

    with Store.open() as store:
        result = load_sweep(store, sweep_id)
    target = out_dir / sweep_id
    for path in result.export(target):
        text_out.print(str(path))


sweeps.command("stop")(sweep_stop_command)


def register(app: typer.Typer) -> None:
    """Add ``bench sweep`` and ``bench sweeps …`` (loaded by ``cli.bench.BENCH_COMMANDS``)."""
    app.command("sweep")(sweep_command)
    app.add_typer(sweeps)
