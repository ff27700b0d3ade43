"""``sweepbench bench list|estimate|run|runs|show|export``: parsing and rendering only."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sweepbench.bench.catalog import PRESETS, load_benchmark, preset, scope
from sweepbench.bench.items import Benchmark
from sweepbench.bench.plan import DEFAULT_CONCURRENCY, Limits, Selection
from sweepbench.bench.ratelimit import RateLimits
from sweepbench.bench.report import export_run, load_report
from sweepbench.bench.results import format_money, outcome_text
from sweepbench.bench.resume import PreparedRun, prepare
from sweepbench.bench.run import BenchRunner
from sweepbench.bench.run import Progress as RunProgress
from sweepbench.bench.storage import BenchStore, RunRow, run_is_live
from sweepbench.bench.wording import estimate_lines
from sweepbench.errors import UserError
from sweepbench.store import Store

err = Console(stderr=True)
out = Console()
DEFAULT_MODEL = "local/smollm2-135m"

bench = typer.Typer(
    name="bench",
    help="Benchmarks: whole question sets, estimated first, resumable, scored with intervals.",
    no_args_is_help=True,
)

BenchArg = Annotated[
    str, typer.Argument(help="sample, elbench (with --data), or the path of a declaration.")
]
DataOpt = Annotated[
    Path | None, typer.Option("--data", help="The data folder (ELBench: PATH/benchmark_root).")
]
ModelOpt = Annotated[str, typer.Option("--model", "-m", help="The model under test.")]
JudgeOpt = Annotated[str | None, typer.Option("--judge", help="The judge model.")]
DecisionOpt = Annotated[
    bool, typer.Option("--decision-judge", help="Verdict-only judge: cheaper, no reasons.")
]
PresetOpt = Annotated[str, typer.Option("--preset", help="quick, auto-checked or full.")]
ScopeOpt = Annotated[
    str, typer.Option("--scope", help="core, or paper (include region-specific sets).")
]
AreasOpt = Annotated[str | None, typer.Option("--areas", help="Comma-separated area keys.")]
TasksOpt = Annotated[str | None, typer.Option("--tasks", help="Comma-separated task ids.")]
SkillsOpt = Annotated[str | None, typer.Option("--skills", help="Only these dimensions.")]
PerTaskOpt = Annotated[int | None, typer.Option("--per-task", help="First N items per task.")]
MaxItemsOpt = Annotated[int | None, typer.Option("--max-items", help="Stop after N items.")]
MaxTokensOpt = Annotated[
    int | None, typer.Option("--max-tokens", help="Answer length limit (default 8,192).")
]
LimitOpt = Annotated[str | None, typer.Option("--limit", help="Total spending limit, USD.")]
LimitTargetOpt = Annotated[
    str | None, typer.Option("--limit-target", help="Limit for the model under test, USD.")
]
LimitJudgeOpt = Annotated[str | None, typer.Option("--limit-judge", help="Limit for the judge.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="One JSON object, for scripts.")]
EduScoringOpt = Annotated[
    str,
    typer.Option(
        "--edu-scoring",
        help="judge (default), or rule: score judged tasks that have a fixed-rule fallback "
        "(ELBench's highlevel_edu) offline; such runs are labelled rule-scored.",
    ),
]


def _split(raw: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (raw or "").split(",") if v.strip())


def _usd(raw: str | None, flag: str) -> Decimal | None:
    if raw is None or not raw.strip():
        return None
    try:
        value = Decimal(raw.strip().removeprefix("$"))
    except InvalidOperation:
        raise UserError(f"{flag}: {raw!r} is not a dollar amount") from None
    if not value.is_finite() or value < 0:
        raise UserError(f"{flag}: a limit is a dollar amount ≥ 0, not {raw!r}")
    return value


def _prepare(
    store: Store | None,
    benchmark: Benchmark,
    *,
    model: str,
    judge: str | None,
    decision_judge: bool,
    preset_name: str,
    scope_name: str,
    areas: str | None,
    tasks: str | None,
    skills: str | None,
    per_task: int | None,
    max_items: int | None,
    max_tokens: int | None,
    limit: str | None,
    limit_target: str | None,
    limit_judge: str | None,
    resume: bool = True,
    retry_failed: bool = False,
    edu_scoring: str = "judge",
) -> PreparedRun:
    selection = Selection(
        preset=preset(preset_name).name,
        scope=scope(scope_name),
        areas=_split(areas),
        tasks=_split(tasks),
        dimensions=_split(skills),
        per_task=per_task,
        max_items=max_items,
    )
    limits = Limits(
        total=_usd(limit, "--limit"),
        target=_usd(limit_target, "--limit-target"),
        judge=_usd(limit_judge, "--limit-judge"),
    )
    return prepare(
        benchmark, store, model=model, judge=judge, decision_judge=decision_judge,
        selection=selection, limits=limits, max_tokens=max_tokens, resume=resume,
        retry_failed=retry_failed, rule_scoring=_rule_scoring(edu_scoring),
    )  # fmt: skip


PLAN_OPTIONS = (
    "model", "judge", "decision_judge", "preset_name", "scope_name", "areas", "tasks", "skills",
    "per_task", "max_items", "max_tokens", "limit", "limit_target", "limit_judge", "edu_scoring",
)  # fmt: skip
"""The options `bench estimate` and `bench run` share (Typer reads each command's own
signature, so both declare them; this is the one place that passes them on)."""


def _plan_options(values: dict[str, Any]) -> dict[str, Any]:
    """The shared plan options out of a command's arguments (its ``locals()``)."""
    return {name: values[name] for name in PLAN_OPTIONS}


def _rule_scoring(edu_scoring: str) -> bool:
    choice = edu_scoring.strip().lower()
    if choice not in ("judge", "rule"):
        raise UserError(f"--edu-scoring is judge or rule, not {edu_scoring!r}")
    return choice == "rule"


def _plan_json(prepared: PreparedRun) -> dict[str, Any]:
    plan = prepared.plan

    def usd(value: Decimal | None) -> str | None:
        return None if value is None else str(value)

    return {
        "benchmark": plan.benchmark.id,
        "config_hash": plan.config.hash,
        "config": plan.config.as_json(),
        "questions": len(plan.items),
        "already_done": plan.already_done,
        "judged": plan.judged,
        "per_task": dict(plan.counts),
        "roles": [
            {
                "role": r.role,
                "model": r.model,
                "calls": r.calls,
                "input_tokens": r.input_tokens,
                "low_usd": usd(r.low),
                "high_usd": usd(r.high),
                "limit_usd": usd(r.limit),
                "spent_usd": usd(r.spent),
            }
            for r in plan.roles
        ],
        "low_usd": usd(plan.low),
        "high_usd": usd(plan.high),
        "errors": list(plan.errors),
        "limit_problems": list(plan.limit_problems),
        "notes": list(plan.notes),
        "needs_price_ack": plan.needs_price_ack,
        "resumes": None if prepared.previous is None else prepared.previous.id,
        "text": estimate_lines(prepared),
    }


def _print_estimate(prepared: PreparedRun) -> None:
    for line in estimate_lines(prepared):
        err.print(line, highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    """Add ``sweepbench bench …``."""
    app.add_typer(bench)


@bench.command("list")
def list_command(
    benchmarks: Annotated[list[str] | None, typer.Argument(help="Benchmarks to list.")] = None,
    data: DataOpt = None,
    scope_name: ScopeOpt = "core",
    as_json: JsonOpt = False,
) -> None:
    """The benchmarks and their tasks: area, items, grading and whether each can run."""
    names = list(benchmarks or (["sample", "elbench"] if data else ["sample"]))
    chosen_scope = scope(scope_name)
    loaded = [load_benchmark(name, data) for name in names]
    if as_json:
        typer.echo(json.dumps([_benchmark_json(b, chosen_scope) for b in loaded], indent=2,
                              ensure_ascii=False))  # fmt: skip
        return
    for benchmark in loaded:
        _print_benchmark(benchmark, chosen_scope)
    if not data and "elbench" not in names:
        err.print(
            "[dim]ELBench: its data is not shipped (no licence); list it with "
            "--data PATH/benchmark_root.[/dim]"
        )


def _task_state(task: Any, scope_name: str) -> str:
    if task.missing:
        return f"data missing: {task.missing}"
    if task.multi_turn:
        return "multi-turn (later)"
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
    table = Table(title=f"{benchmark.name} ({benchmark.id}) · {benchmark.source}")
    for column in ("area", "task", "items", "grading", "state"):
        table.add_column(column, justify="right" if column == "items" else "left")
    for area in benchmark.areas:
        for task in area.tasks:
            problems = f" · {len(task.problems)} rows skipped" if task.problems else ""
            table.add_row(
                area.label, f"{task.id} ({task.name})", f"{len(task.items):,}",
                task.grading_words, _task_state(task, chosen_scope) + problems,
            )  # fmt: skip
    out.print(table)
    for p in PRESETS.values():
        out.print(f"  --preset {p.name}: {p.label(benchmark, chosen_scope)}", highlight=False)
    for task in benchmark.tasks:
        for problem in task.problems[:5]:
            err.print(f"[yellow]skipped[/yellow] {problem}", highlight=False, markup=False)
    for problem in benchmark.problems:
        err.print(f"[yellow]problem[/yellow] {problem}", highlight=False)


@bench.command("estimate")
def estimate_command(
    benchmark_name: BenchArg,
    model: ModelOpt = DEFAULT_MODEL,
    judge: JudgeOpt = None,
    decision_judge: DecisionOpt = False,
    preset_name: PresetOpt = "full",
    scope_name: ScopeOpt = "core",
    areas: AreasOpt = None,
    tasks: TasksOpt = None,
    skills: SkillsOpt = None,
    per_task: PerTaskOpt = None,
    max_items: MaxItemsOpt = None,
    max_tokens: MaxTokensOpt = None,
    limit: LimitOpt = None,
    limit_target: LimitTargetOpt = None,
    limit_judge: LimitJudgeOpt = None,
    edu_scoring: EduScoringOpt = "judge",
    data: DataOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Price a run without calling any model: every problem at once, low and high per role.

    Exit codes: 0 the run could start; 2 it could not (the reasons are printed)."""
    benchmark = load_benchmark(benchmark_name, data)
    with Store.open() as store:
        prepared = _prepare(store, benchmark, **_plan_options(locals()))
    if as_json:
        typer.echo(json.dumps(_plan_json(prepared), indent=2, ensure_ascii=False))
    else:
        _print_estimate(prepared)
    if not prepared.plan.ok:
        raise typer.Exit(2)


@bench.command("run")
def run_command(
    benchmark_name: BenchArg,
    model: ModelOpt = DEFAULT_MODEL,
    judge: JudgeOpt = None,
    decision_judge: DecisionOpt = False,
    preset_name: PresetOpt = "full",
    scope_name: ScopeOpt = "core",
    areas: AreasOpt = None,
    tasks: TasksOpt = None,
    skills: SkillsOpt = None,
    per_task: PerTaskOpt = None,
    max_items: MaxItemsOpt = None,
    max_tokens: MaxTokensOpt = None,
    limit: LimitOpt = None,
    limit_target: LimitTargetOpt = None,
    limit_judge: LimitJudgeOpt = None,
    edu_scoring: EduScoringOpt = "judge",
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
    as_json: JsonOpt = False,
) -> None:
    """Run a benchmark: estimate, confirm, answer and score every item, store as it goes.

    Running the same settings again continues an unfinished run. Ctrl-C stops it, keeping
    every finished answer. Exit codes: 0 finished; 1 paused, stopped or finished with errors;
    2 refused."""
    if not 1 <= concurrency <= 100:
        raise UserError(f"--concurrency must be between 1 and 100, not {concurrency}")
    for flag, value in (("--rpm", rpm), ("--tpm", tpm)):
        if value is not None and value < 1:
            raise UserError(f"{flag} must be at least 1, not {value}")
    benchmark = load_benchmark(benchmark_name, data)
    with Store.open() as store:
        prepared = _prepare(
            store, benchmark, resume=not no_resume, retry_failed=retry_failed,
            **_plan_options(locals()),
        )  # fmt: skip
        plan = prepared.plan
        if not as_json:
            _print_estimate(prepared)
        if not plan.ok:
            if as_json:
                typer.echo(json.dumps(_plan_json(prepared), indent=2, ensure_ascii=False))
            raise typer.Exit(2)
        if plan.needs_price_ack and not accept_unpriced:
            err.print("[red]refused:[/red] no listed price; add --accept-unpriced to run anyway")
            raise typer.Exit(2)
        if not plan.items:
            err.print("Nothing left to run: every selected item is already scored.")
            if prepared.previous is not None:
                _show(store, prepared.previous.id, as_json=as_json)
            return
        spends = plan.needs_price_ack or bool(plan.high)
        if spends and not yes:
            if not sys.stdin.isatty():
                err.print("[red]refused:[/red] this run spends money; confirm with --yes")
                raise typer.Exit(2)
            high = "an unknown amount" if plan.high is None else format_money(plan.high)
            if not typer.confirm(f"Spend up to {high}?", default=False, err=True):
                err.print("Not confirmed; nothing was spent.")
                raise typer.Exit(2)
        runner = BenchRunner(
            prepared, store, concurrency=concurrency, accept_unpriced=accept_unpriced,
            rate_limits=RateLimits(rpm=rpm, tpm=tpm),
        )  # fmt: skip
        outcome = _run_with_progress(runner, quiet=as_json)
        _show(store, outcome.run_id, as_json=as_json)
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
        loop = asyncio.get_running_loop()
        with_signal = True
        try:
            loop.add_signal_handler(signal.SIGINT, runner.stop)
        except (NotImplementedError, RuntimeError):
            with_signal = False
        try:
            return await runner.run()
        finally:
            if with_signal:
                loop.remove_signal_handler(signal.SIGINT)

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


def _show(store: Store, run_id: str, *, as_json: bool, skills: bool = False) -> None:
    report = load_report(store, run_id)
    if as_json:
        typer.echo(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
        return
    if report.live:
        worker = report.run.settings.get("worker", {})
        errors = f", {report.errors:,} hit errors" if report.errors else ""
        heading = "Running…"
        body = (
            f"{report.scored:,} answers scored so far{errors}, {format_money(report.spent)} "
            f"spent; the run is still going (process {worker.get('pid')} on "
            f"{worker.get('host')})."
        )
    else:
        heading, body = outcome_text(
            report.outcome, scored=report.scored, errors=report.errors, spent=report.spent,
            reason=report.run.reason,
        )  # fmt: skip
    out.print(f"[bold]{heading}[/bold]  {escape(body)}", highlight=False)
    out.print(report.table(skills=skills))
    for line in report.footer_lines():
        out.print(line, highlight=False)


@bench.command("runs")
def runs_command(
    limit: Annotated[int, typer.Option("--limit")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Stored benchmark runs, newest first."""
    with Store.open() as store:
        runs = BenchStore(store)
        summaries = [(row, runs.statuses(row.id)) for row in runs.runs(limit)]
    if as_json:
        typer.echo(json.dumps([
            {"run_id": r.id, "benchmark": r.benchmark, "model": r.model, "judge": r.judge,
             "status": r.status, "stopped_unexpectedly": _status_words(r) == "stopped unexpectedly",
             "updated_utc": r.updated_at.isoformat(), "items": r.items,
             "scored": sum(1 for s in st.values() if s == "scored"),
             "errors": sum(1 for s in st.values() if s == "failed")}
            for r, st in summaries
        ], indent=2))  # fmt: skip
        return
    if not summaries:
        out.print("No benchmark runs yet (sweepbench bench run …).")
        return
    # Two lines a run, so the id — what `bench show` takes — is never cut at any width.
    for row, statuses in summaries:
        scored = sum(1 for s in statuses.values() if s == "scored")
        failed = len(statuses) - scored
        errors = f" ({failed:,} errors)" if failed else ""
        judge = f" · judge {row.judge}" if row.judge else ""
        out.print(f"[bold]{escape(row.id)}[/bold]", soft_wrap=True)
        out.print(
            f"    {_status_words(row)} · {scored:,}/{row.items:,} scored{errors} · "
            f"{row.benchmark}{escape(judge)} · {row.updated_at:%Y-%m-%d %H:%M} UTC",
            highlight=False,
        )
    out.print("[dim]sweepbench bench show RUN for the scores[/dim]")


STATUS_WORDS = {
    "running": "running",
    "completed": "finished",
    "completed_with_errors": "finished with errors",
    "paused_budget": "paused at the spending limit",
    "interrupted": "stopped early",
}


def _status_words(row: RunRow) -> str:
    if row.status == "running" and not run_is_live(row):
        return "stopped unexpectedly"
    return STATUS_WORDS.get(row.status, row.status)


@bench.command("show")
def show_command(
    run_id: Annotated[str, typer.Argument(help="A run id (or a unique prefix).")],
    skills: Annotated[bool, typer.Option("--skills", help="Add a row per skill.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """A run's outcome and scores: per area and task, with 95% intervals."""
    with Store.open() as store:
        _show(store, run_id, as_json=as_json, skills=skills)


@bench.command("export")
def export_command(
    run_id: Annotated[str, typer.Argument(help="A run id (or a unique prefix).")],
    directory: Annotated[Path, typer.Argument(help="Folder to write into (created).")],
) -> None:
    """Write a run's answers, failures and spend as JSONL and its summary as CSV and JSON."""
    with Store.open() as store:
        written = export_run(store, run_id, directory)
    for path in written:
        out.print(str(path), highlight=False)
