"""``sweepbench bench estimate|run``: price a run, then run it with a progress bar. The rules
(what is refused, what needs confirming) are ``bench.request``'s; this renders them."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sweepbench.bench.plan import DEFAULT_CONCURRENCY
from sweepbench.bench.request import load, prepare, start_check
from sweepbench.bench.results import format_money
from sweepbench.bench.run import BenchRunner
from sweepbench.bench.run import Progress as RunProgress
from sweepbench.cli.bench_options import (
    DEFAULT_MODEL,
    AllowDataOutsideOpt,
    AreasOpt,
    BenchArg,
    DataOpt,
    DecisionOpt,
    EduScoringOpt,
    EffortOpt,
    JsonOpt,
    JudgeOpt,
    LimitJudgeOpt,
    LimitOpt,
    LimitTargetOpt,
    MaxItemsOpt,
    MaxTokensOpt,
    ModelOpt,
    PerTaskOpt,
    PresetOpt,
    PromptVersionOpt,
    RepeatsOpt,
    ScopeOpt,
    ScoringOpt,
    SkillsOpt,
    StudentOpt,
    TasksOpt,
    TemperatureOpt,
    build_request,
    err,
    plan_json,
    print_estimate,
)
from sweepbench.cli.bench_show import show_run
from sweepbench.engine.ratelimit import RateLimits
from sweepbench.engine.signals import stop_on_signals
from sweepbench.store import Store


def estimate_command(
    benchmark_name: BenchArg,
    model: ModelOpt = DEFAULT_MODEL,
    judge: JudgeOpt = None,
    student: StudentOpt = None,
    decision_judge: DecisionOpt = False,
    preset_name: PresetOpt = "full",
    scope_name: ScopeOpt = "core",
    areas: AreasOpt = None,
    tasks: TasksOpt = None,
    skills: SkillsOpt = None,
    per_task: PerTaskOpt = None,
    max_items: MaxItemsOpt = None,
    max_tokens: MaxTokensOpt = None,
    effort: EffortOpt = None,
    temperature: TemperatureOpt = None,
    repeats: RepeatsOpt = 1,
    prompt_version: PromptVersionOpt = None,
    limit: LimitOpt = None,
    limit_target: LimitTargetOpt = None,
    limit_judge: LimitJudgeOpt = None,
    edu_scoring: EduScoringOpt = "judge",
    scoring: ScoringOpt = "replicated",
    data: DataOpt = None,
    allow_data_outside: AllowDataOutsideOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Price a run without calling any model: every problem at once, low and high per role.

    Exit codes: 0 the run could start; 2 it could not (the reasons are printed)."""
    request = build_request(locals())
    benchmark = load(request)
    with Store.open() as store:
        prepared = prepare(request, store, benchmark=benchmark)
    if as_json:
        typer.echo(json.dumps(plan_json(prepared), indent=2, ensure_ascii=False))
    else:
        print_estimate(prepared)
    if not prepared.plan.ok:
        raise typer.Exit(2)


def run_command(
    benchmark_name: BenchArg,
    model: ModelOpt = DEFAULT_MODEL,
    judge: JudgeOpt = None,
    student: StudentOpt = None,
    decision_judge: DecisionOpt = False,
    preset_name: PresetOpt = "full",
    scope_name: ScopeOpt = "core",
    areas: AreasOpt = None,
    tasks: TasksOpt = None,
    skills: SkillsOpt = None,
    per_task: PerTaskOpt = None,
    max_items: MaxItemsOpt = None,
    max_tokens: MaxTokensOpt = None,
    effort: EffortOpt = None,
    temperature: TemperatureOpt = None,
    repeats: RepeatsOpt = 1,
    prompt_version: PromptVersionOpt = None,
    limit: LimitOpt = None,
    limit_target: LimitTargetOpt = None,
    limit_judge: LimitJudgeOpt = None,
    edu_scoring: EduScoringOpt = "judge",
    scoring: ScoringOpt = "replicated",
    concurrency: Annotated[
        int, typer.Option("--concurrency", help="Requests at once (1–100).")
    ] = DEFAULT_CONCURRENCY,
    no_resume: Annotated[
        bool, typer.Option("--no-resume", help="Start afresh even if a run can continue.")
    ] = False,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Re-run only the items that errored.")
    ] = False,
    accept_unpriced: Annotated[
        bool, typer.Option("--accept-unpriced", help="Run a model that has no listed price.")
    ] = False,
    rpm: Annotated[
        int | None, typer.Option("--rpm", help="At most N requests a minute, per model.")
    ] = None,
    tpm: Annotated[
        int | None, typer.Option("--tpm", help="At most N tokens a minute, per model.")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before spending.")] = False,
    data: DataOpt = None,
    allow_data_outside: AllowDataOutsideOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Run a benchmark: estimate, confirm, answer and score every item, store as it goes.

    Running the same settings again continues an unfinished run. Ctrl-C stops it, keeping
    every finished answer. Exit codes: 0 finished; 1 paused, stopped or finished with errors;
    2 refused."""
    request = build_request(locals())
    benchmark = load(request)
    with Store.open() as store:
        prepared = prepare(request, store, benchmark=benchmark)
        plan = prepared.plan
        decision = start_check(prepared, request)
        if not as_json:
            print_estimate(prepared)
        if decision.refused:
            if as_json and not plan.ok:
                typer.echo(json.dumps(plan_json(prepared), indent=2, ensure_ascii=False))
            shown = {*plan.errors, *plan.limit_problems}  # the estimate listed these
            for reason in decision.reasons:
                if reason not in shown:
                    err.print(f"[red]refused:[/red] {escape(reason)}")
            raise typer.Exit(2)
        if decision.nothing_left:
            err.print("Nothing left to run: every selected item is already scored.")
            if prepared.previous is not None:
                show_run(store, prepared.previous.id, as_json=as_json)
            return
        if decision.needs_confirmation:
            if not sys.stdin.isatty():
                err.print("[red]refused:[/red] this run spends money; confirm with --yes")
                raise typer.Exit(2)
            up_to = decision.spend_up_to
            high = "an unknown amount" if up_to is None else format_money(up_to)
            if not typer.confirm(f"Spend up to {high}?", default=False, err=True):
                err.print("Not confirmed; nothing was spent.")
                raise typer.Exit(2)
        runner = BenchRunner(
            prepared, store, concurrency=request.concurrency,
            accept_unpriced=request.accept_unpriced,
            rate_limits=RateLimits(rpm=request.rpm, tpm=request.tpm),
        )  # fmt: skip
        outcome = _run_with_progress(runner, quiet=as_json)
        show_run(store, outcome.run_id, as_json=as_json)
    if outcome.status != "completed":
        raise typer.Exit(1)


def _run_with_progress(runner: BenchRunner, *, quiet: bool) -> Any:
    total = runner.progress.total
    limit = runner.progress.limit

    def describe(p: RunProgress) -> str:
        spent = format_money(p.spent)
        money = f"{spent} of {format_money(limit)}" if limit is not None else spent
        errors = f" · [red]{p.failed} errors[/red]" if p.failed else ""
        return f"{p.scored:,} scored{errors} · {money}"

    async def go() -> Any:
        with stop_on_signals(runner.stop):  # Ctrl-C or SIGTERM: stop, keeping every answer
            return await runner.run()

    if quiet:
        return asyncio.run(go())
    verb = "Continuing" if runner.progress.resumed else "Running"
    with Progress(
        TextColumn(f"{verb} {runner.run_id}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    ) as bar:
        task = bar.add_task(describe(runner.progress), total=total)

        def update(p: RunProgress) -> None:
            bar.update(task, completed=p.done, description=describe(p))

        runner.on_progress = update
        return asyncio.run(go())
