"""``sweepbench leaderboard``: the ELBench value table and takeaway for one judge board
(spec §17), and ``leaderboard published`` for the published figures (rendering only)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.console import Console
from rich.table import Table

from sweepbench.errors import UserError

if TYPE_CHECKING:
    from sweepbench.leaderboard.board import Board, Catalogue
    from sweepbench.leaderboard.published import PublishedModel, PublishedSnapshot
    from sweepbench.leaderboard.rows import BoardRow, MetricScore

HELP = "The leaderboard: published ELBench results and your runs, by price and score."

leaderboard = typer.Typer(
    name="leaderboard",
    help=f"{HELP}\n\nOne board per judge; the paper's judge's board holds the published results.",
    invoke_without_command=True,
    no_args_is_help=False,
)


def register(app: typer.Typer) -> None:
    """Add ``sweepbench leaderboard …`` (with ``leaderboard compare``)."""
    from sweepbench.cli.leaderboard_bundle import register as add_bundle
    from sweepbench.cli.leaderboard_compare import register as add_compare

    add_compare(leaderboard)
    add_bundle(leaderboard)  # publish and pull
    app.add_typer(leaderboard)


@leaderboard.callback(invoke_without_command=True)
def board(
    ctx: typer.Context,
    judge: Annotated[
        str | None, typer.Option("--board", help="The judge board (default: the paper's judge).")
    ] = None,
    focus: Annotated[
        str, typer.Option("--focus", help="overall, an area (key or name), or task:NAME.")
    ] = "overall",
    scope: Annotated[
        str, typer.Option("--scope", help="core (without the region-specific sets) or paper.")
    ] = "core",
    price: Annotated[
        str, typer.Option("--price", help="Price measure: blended, input, output or measured.")
    ] = "blended",
    max_price: Annotated[
        float | None,
        typer.Option(
            "--max-price",
            help="Highest price on the --price measure: $/1M tokens, or USD for measured "
            "(default: none).",
        ),
    ] = None,
    max_size: Annotated[
        float | None, typer.Option("--max-size", help="Largest model, billions of parameters.")
    ] = None,
    undisclosed: Annotated[
        bool,
        typer.Option(
            "--undisclosed/--no-undisclosed", help="Include models that don't publish their size."
        ),
    ] = True,
    chart: Annotated[
        Path | None,
        typer.Option("--chart", help="Also write the chart as one offline HTML file here."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, for scripts.")] = False,
    benchmark_name: Annotated[
        str,
        typer.Option(
            "--benchmark",
            help="elbench (default: with the published results), sample, or a declaration "
            "of your own (its board holds your runs).",
        ),
    ] = "elbench",
) -> None:
    """The value table (★ = best value) and the takeaway of one judge board."""
    if ctx.invoked_subcommand is not None:
        return
    from sweepbench.leaderboard.board import Filters, board_keys, build_board, takeaway
    from sweepbench.leaderboard.published import PAPER_JUDGE

    chosen_scope = _choice(scope, ("core", "paper"), "--scope")
    measure = _choice(price, ("blended", "input", "output", "measured"), "--price")
    catalogue, rows, unreadable, questions = _source(benchmark_name, chosen_scope)
    metric = _metric(focus, catalogue)
    price_limit = _limit(max_price, "--max-price", "dollars")
    filters = Filters(
        max_price=None if price_limit is None else Decimal(str(price_limit)),
        max_size_b=_limit(max_size, "--max-size", "billions of parameters"),
        include_undisclosed=undisclosed,
    )
    boards = board_keys(rows)
    if judge is not None and judge not in boards:
        raise UserError(f"--board: no board {judge!r}; the boards: {', '.join(boards)}")
    try:
        result = build_board(
            rows, judge=judge or PAPER_JUDGE, metric=metric, scope=chosen_scope,
            catalogue=catalogue, measure=measure, filters=filters,
        )  # fmt: skip
    except ValueError as exc:
        raise UserError(str(exc)) from None
    lines = takeaway(result, catalogue, questions=questions)
    if unreadable:
        lines.append(f"{len(unreadable)} stored run record(s) could not be read and are left out.")
    title = f"{catalogue.metric_label(metric)} · board: {result.judge} · {result.scope} scope"
    if chart is not None:
        _write_chart(result, chart, title)
    if as_json:
        data = {**_board_json(result, lines), "boards": boards}
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    out = Console()
    out.print(_table(result, title))
    if any(p.score.note for p in result.placed):
        from sweepbench.leaderboard.rows import REVISION_MARK

        out.print(REVISION_MARK)
    if chart is not None:
        out.print(f"Chart written to {chart}")
    for line in lines:
        out.print(line)
    if len(boards) > 1:
        listed = ", ".join(boards)
        out.print(f"[dim]Boards (--board): {listed}; the first is the paper's judge.[/dim]")


@leaderboard.command("published")
def published(
    tasks: Annotated[
        str | None,
        typer.Option("--tasks", help="Task-by-task figures for this model (key or name), or all."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, for scripts.")] = False,
) -> None:
    """The published results (paper scope, with their 95% ranges), or one model's tasks."""
    from sweepbench.leaderboard.catalogue import elbench_catalogue
    from sweepbench.leaderboard.published import TEACHING_PROVENANCE, load_published

    snapshot = load_published()
    catalogue = elbench_catalogue()
    if as_json:
        typer.echo(snapshot.model_dump_json(indent=2))
        return
    out = Console()
    if tasks is None:
        out.print(_published_table(snapshot, catalogue.areas))
    else:
        models = snapshot.models if tasks.casefold() == "all" else [snapshot.model(tasks)]
        if models == [None]:
            names = ", ".join(m.key for m in snapshot.models)
            raise UserError(f"no published model {tasks!r}; one of: {names}, or all")
        out.print(_tasks_table([m for m in models if m is not None], catalogue.areas))
        out.print(
            f"Per-task figures are the {snapshot.per_task_revision} revision; they do not add up "
            "to the final table."
        )
    out.print(f"[dim]{snapshot.provenance}[/dim]")
    out.print(TEACHING_PROVENANCE, style="dim", markup=False)


# ---------------------------------------------------------------- helpers


def _choice(value: str, allowed: tuple[str, ...], option: str) -> Any:
    if value not in allowed:
        raise UserError(f"{option} must be one of {', '.join(allowed)}, not {value!r}")
    return value


def _limit(value: float | None, option: str, unit: str) -> float | None:
    """A filter's limit as given (None = none); UserError for one that is not a finite
    number, 0 or more (``nan``, ``1e999``, a negative number)."""
    if value is None:
        return None
    if not math.isfinite(value) or value < 0:
        raise UserError(f"{option} must be a number of {unit}, 0 or more, not {value!r}")
    return value


def _write_chart(result: Board, path: Path, title: str) -> None:
    """The chart written whole to ``path``, or a UserError saying where and why not."""
    from sweepbench.leaderboard.chart import write_chart
    from sweepbench.safe_files import FileRefused

    try:
        write_chart(result, path, title=title)
    except FileRefused as exc:
        raise UserError(f"--chart {path}: the chart is not written: {exc.reason}") from None


def _metric(focus: str, catalogue: Catalogue) -> str:
    """``overall``, ``task:<id>``, or an area key from its key, name or first word."""
    if focus == "overall" or focus.startswith("task:"):
        return focus
    wanted = focus.casefold()
    for key, label in catalogue.areas.items():
        if wanted in (key.casefold(), label.casefold(), label.split()[0].casefold()):
            return str(key)
    areas = ", ".join(label.split()[0].lower() for label in catalogue.areas.values())
    raise UserError(f"--focus: no area {focus!r}; overall, {areas}, or task:NAME")


def _source(
    name: str, scope: Literal["core", "paper"]
) -> tuple[Catalogue, list[BoardRow], list[str], int]:
    """The catalogue, rows, unreadable records and question count of a benchmark's board:
    ELBench's with the published results beside your runs; any other benchmark's with your
    runs only."""
    from sweepbench.bench.storage import BenchStore
    from sweepbench.leaderboard.sources import ELBENCH, board_source
    from sweepbench.store import Store

    benchmark = None
    if name.strip().lower() != ELBENCH:
        from sweepbench.bench.catalog import load_benchmark

        benchmark = load_benchmark(name)
    with Store.open() as store:
        found = board_source(
            BenchStore(store), scope, ELBENCH if benchmark is None else benchmark.id,
            loaded=benchmark,
        )  # fmt: skip
    return found.catalogue, found.rows, found.runs.unreadable, found.questions


def _usd(value: Decimal | None) -> str:
    return "—" if value is None else f"${value:,.4f}".rstrip("0").rstrip(".")


def _score(score: MetricScore | Any) -> str:
    text = f"{score.score:.1f}"
    if score.low is not None and score.high is not None:
        text += f" [{score.low:.1f}–{score.high:.1f}]"
    return text


def _table(result: Board, label: str) -> Table:
    table = Table(title=label)
    for column in ("★", "Model", "Source", "OpenRouter id", "Input $/1M", "Output $/1M",
                   "Price", "Score"):  # fmt: skip
        table.add_column(
            column, justify="right" if "$" in column or column in ("Price", "Score") else "left"
        )
    for p in result.placed:
        row = p.row
        table.add_row(
            "★" if p.best else "",
            row.model,
            row.label,
            row.model_id or "—",
            _usd(row.price.input_per_million if row.price else None),
            _usd(row.price.output_per_million if row.price else None),
            _usd(p.price) + p.mark,
            _score(p.score) + (" †" if p.score.note else ""),
        )
    return table


def _board_json(result: Board, lines: list[str]) -> dict[str, Any]:
    return {
        "board": result.judge,
        "metric": result.metric,
        "scope": result.scope,
        "price_measure": result.measure,
        "placed": [
            {
                "best_value": p.best,
                "price": str(p.price),
                "listed_price": p.listed,
                "score": p.score.model_dump(mode="json"),
                "row": p.row.model_dump(mode="json", exclude={"scores"}),
            }
            for p in result.placed
        ],
        "not_placed_no_price": [r.model for r in result.no_price],
        "incomplete_runs": [r.run_id for r in result.incomplete],
        "hidden_by_filters": result.hidden,
        "takeaway": lines,
    }


def _published_table(snapshot: PublishedSnapshot, areas: Mapping[str, str]) -> Table:
    table = Table(title="Published results (paper scope, 95% ranges)")
    for column in ("Rank", "Model", "Overall [95% range]", *areas.values(), "Questions"):
        table.add_column(column)
    for m in snapshot.models:
        if m.overall is None:
            continue
        questions = sum(t.count for k, t in m.tasks.items() if k != "gsm8k")
        table.add_row(
            str(m.rank), m.display_name, _score(m.overall),
            *(f"{m.areas[a].score:.1f}" for a in areas), f"{questions:,}",
        )  # fmt: skip
    return table


def _tasks_table(models: list[PublishedModel], areas: Mapping[str, str]) -> Table:
    table = Table(title="Task-by-task scores (2026-06-08 revision)")
    for column in ("Model", "Area", "Task", "Questions", "Score", "Pass rate (%)", "Mean raw"):
        table.add_column(column)
    for m in models:
        for task_id, t in m.tasks.items():
            table.add_row(
                m.display_name, areas.get(t.area, t.area), task_id, str(t.count),
                f"{100 * t.score:.1f}", f"{100 * t.pass_rate:.1f}", f"{t.mean_raw:.3f}",
            )  # fmt: skip
    return table
