"""``sweepbench sweep`` and ``sweepbench sweeps list|show|export``: parsing and rendering only."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from sweepbench.axes import AXES, AXIS_WORDS
from sweepbench.cli.bench_options import RouteOpt
from sweepbench.cli.validate import check_prompt, read_budget
from sweepbench.engine.signals import stop_on_signals
from sweepbench.errors import BudgetExceeded, UserError
from sweepbench.models.routes import DEFAULT_ROUTE
from sweepbench.money.ceilings import parse_usd_amount
from sweepbench.money.ledger import Ledger
from sweepbench.money.prices import format_usd
from sweepbench.store import Store
from sweepbench.sweeps.history import (
    SweepSummary,
    list_sweeps,
    load_sweep,
    sweep_document,
    write_artifacts,
)
from sweepbench.sweeps.outline import outline
from sweepbench.sweeps.plan import Plan, build_plan
from sweepbench.sweeps.pricing import SweepEstimate, estimate_plan
from sweepbench.sweeps.results import Sample
from sweepbench.sweeps.run import Sweep, SweepResult

if TYPE_CHECKING:
    from sweepbench.bench.start import StartDecision

err = Console(stderr=True)
CAUTION = (
    "Single samples vary from run to run: repeat (--repeats) before trusting a small "
    "difference. Costs are local estimates, not a bill."
)


def _values(raw: str) -> list[str]:
    return [v.strip() for v in raw.split(",") if v.strip()]


def _refuse(message: str) -> typer.Exit:
    """Print the refusal (text, never Rich markup: it names models, paths and values the user
    typed) and return the exit to raise."""
    err.print(f"[red]refused:[/red] {escape(message)}")
    return typer.Exit(2)


def _live_table(result: SweepResult, started: float) -> Table:
    table = Table(title=f"sweep {result.id[:8]} · {time.perf_counter() - started:.1f}s")
    noun = result.plan.kind.item_noun
    columns = ["#", "cell", "status", "out", "in", "ttft", "time", "cost", "stop"]
    judged = result.plan.judge is not None
    if judged:
        columns.insert(-1, "score")
    if noun:
        columns.insert(3, noun)
    for column in columns:
        table.add_column(column, justify="right" if column in ("out", "in", "ttft") else "left")
    for sample in result.samples:
        usage = sample.result.usage if sample.result else None
        produced = sample.result.deltas if sample.result else 0
        ttft = sample.result.ttft_s if sample.result else None
        stop = ""
        if sample.truncated:
            stop = f"TRUNCATED at {sample.cell.max_tokens:,} tokens"
        elif sample.result is not None and sample.result.stop_reason != "end":
            stop = sample.result.stop_reason
        if sample.error:
            stop = f"{stop} {sample.error}".strip()
        name = sample.cell.label + (f" #{sample.repeat + 1}" if result.plan.repeats > 1 else "")
        style = {"failed": "red", "stopped": "yellow", "done": "green"}.get(sample.status, "")
        row: list[str | Text] = [
            str(sample.cell.index + 1),
            Text(name),
            Text(sample.status, style=style),
            f"{usage.output_tokens if usage else produced:,}",
            f"{usage.input_tokens:,}" if usage else "",
            f"{ttft:.2f}s" if ttft is not None else "",
            f"{sample.seconds:.1f}s",
            f"~{format_usd(sample.cost_usd)}" if sample.result else "",
            Text(stop),
        ]
        if judged:
            row.insert(-1, _score_cell(sample))
        if noun:
            row.insert(3, str(sample.items))
        table.add_row(*row)
    return table


def _score_cell(sample: Sample) -> Text:
    """The score column: the judge's score, "grading…" while it grades, or what went wrong."""
    grade = sample.grade
    if grade is None:
        return Text("grading…" if sample.status == "done" else "", style="dim")
    if grade.status == "graded" and grade.score is not None:
        return Text(f"{grade.score:.2f}", style="green" if grade.passed else "yellow")
    words = {"unparseable": "unreadable verdict", "failed": "judge failed", "not_run": "not graded"}
    return Text(words.get(grade.status, grade.status), style="red")


def grade_lines(result: SweepResult) -> list[str]:
    """With a judge: each sample's score and the judge's reason, one line each, then with
    repeats each cell's verdict against the best cell (paired by repeat number)."""
    plan = result.plan
    if plan.judge is None:
        return []
    cost = result.judge_cost_usd
    lines = [f"graded by {plan.judge.model} · ~{format_usd(cost)} for grading"]
    for sample in result.samples:
        grade = sample.grade
        name = sample.cell.label + (f" #{sample.repeat + 1}" if plan.repeats > 1 else "")
        if grade is None:
            lines.append(f"{name}: not graded")
        elif grade.status == "graded" and grade.score is not None:
            lines.append(f"{name}: score {grade.score:.2f} · {grade.reason or '(no reason)'}")
        else:
            lines.append(f"{name}: {grade.status.replace('_', ' ')} · {grade.reason}")
    lines += comparison_lines(result.comparison)
    return lines


def comparison_lines(comparison: dict[str, Any] | None) -> list[str]:
    """The paired comparison in words: the best cell, then each other cell's verdict."""
    if not comparison:
        return []
    if comparison.get("error"):
        return [f"no comparison: {comparison['error']}"]
    lines = [f"best cell: {comparison['best']} (repeats paired by repeat number)"]
    for summary in comparison.get("settings", []):
        lines.append(
            f"  {summary['label']}: score {summary['score']:.1f} "
            f"(95% {summary['low']:.1f}–{summary['high']:.1f}) over {summary['n']} samples"
        )
    for item in comparison.get("comparisons", []):
        lines.append(f"  {item['label']} vs best: {item['sentence']}")
    for label in comparison.get("left_out", []):
        lines.append(f"  {label}: left out, no sample was graded")
    return lines


def status_line(result: SweepResult) -> str:
    """The finished status (spec §12): calls, wall vs serial time, tokens, cost."""
    samples = result.samples
    ok = sum(1 for s in samples if s.status == "done" and not s.truncated)
    out = sum(s.result.usage.output_tokens for s in samples if s.result)
    stopped = sum(1 for s in samples if s.status == "stopped")
    serial = f" (≈{result.serial_s:.1f}s if run one at a time)"  # only true when calls overlapped
    text = (
        f"{ok}/{len(samples)} calls ok in {result.wall_s:.1f}s wall clock"
        f"{serial if result.ran_at_once else ''} · {out:,} tokens out · "
        f"~{format_usd(result.cost_usd)} total"
    )
    if stopped:
        text += (
            f" · stopped {stopped} call(s); what was produced is kept, "
            "no further tokens are being generated"
        )
    return text


def spread_lines(result: SweepResult) -> list[str]:
    """With repeats: each cell's mean and spread of tokens out, time and cost."""
    from sweepbench.sweeps.results import Spread

    lines = []
    for cell in result.plan.cells:
        samples = [s for s in result.cell_samples(cell.index) if s.result is not None]
        if len(samples) < 2:
            continue
        outs = Spread.of([float(s.result.usage.output_tokens) for s in samples if s.result])
        secs = Spread.of([s.seconds for s in samples])
        lines.append(f"{cell.label}: tokens out {outs.text()} · seconds {secs.text(1)}")
    return lines


def sweep_command(
    prompt: Annotated[str, typer.Argument(help="The prompt every cell gets.")],
    axis: Annotated[str, typer.Option("--axis", help=" | ".join(AXES))],
    values: Annotated[
        str, typer.Option("--values", help="Comma-separated values of the axis (64000 or 64k)")
    ],
    model: Annotated[str | None, typer.Option("--model", help="Held model.")] = None,
    effort: Annotated[str | None, typer.Option("--effort", help="Held effort.")] = None,
    max_tokens: Annotated[
        str | None, typer.Option("--max-tokens", help="Held output budget.")
    ] = None,
    prompt_version: Annotated[str | None, typer.Option("--prompt-version")] = None,
    kind: Annotated[
        str, typer.Option("--kind", "--task", help="text | excalidraw | sculpture")
    ] = "text",
    repeats: Annotated[int, typer.Option("--repeats", help="Samples per cell (1–5).")] = 1,
    max_cells: Annotated[
        int | None, typer.Option("--max-cells", help="Cap on cells (default 6 for text).")
    ] = None,
    estimate_only: Annotated[
        bool, typer.Option("--estimate-only", help="Price the plan and stop (no key needed).")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask before spending.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    judge: Annotated[
        str | None,
        typer.Option("--judge", help="A model that grades each cell's output (score 0–1)."),
    ] = None,
    rubric: Annotated[
        str | None,
        typer.Option("--rubric", help="What a good answer does, for --judge (TEXT or FILE)."),
    ] = None,
    reference: Annotated[
        str | None,
        typer.Option("--reference", help="A reference answer, for --judge (TEXT or FILE)."),
    ] = None,
    limit_judge: Annotated[
        str | None,
        typer.Option("--limit-judge", help="The most the grading may spend (USD)."),
    ] = None,
    route: RouteOpt = DEFAULT_ROUTE,
) -> None:
    """Run one prompt under several settings at once, priced before anything is spent.

    Exit codes: 0 all cells ok; 1 some failed, truncated or stopped; 2 refused."""
    check_prompt(prompt)  # the same rule and sentence as generate's
    judge_limit = _judge_limit(limit_judge, judge)
    if max_tokens is not None and axis == "max_tokens":
        pass  # varying max tokens, the held budget is not used
    elif max_tokens is not None:
        read_budget(max_tokens)  # read as generate reads it: unreadable is refused too
    plan = build_plan(
        prompt,
        axis,
        _values(values),
        kind=kind,
        model=model,
        effort=effort,
        max_tokens=max_tokens,
        prompt_version=prompt_version,
        repeats=repeats,
        max_cells=max_cells,
        judge=judge,
        rubric=rubric,
        reference=reference,
        route=route,
    )
    blocking = plan.blocking(spending=not estimate_only)
    if blocking:  # only the refusal: no estimate of a plan that cannot run
        raise _refuse(blocking[0].message)
    with Store.open() as store:
        estimate = estimate_plan(plan, store)
        ledger = Ledger(store)
        allowance = ledger.summary().allowance_text()
        if estimate_only:
            _print_plan(plan, estimate, allowance, quiet=as_json)
            if as_json:
                typer.echo(json.dumps(_estimate_json(plan, estimate), indent=2))
            return
        sweep = Sweep(plan, store=store, ledger=ledger, judge_limit_usd=judge_limit)
        decision = _start_decision(estimate, confirmed=yes)
        if decision.needs_confirmation:  # the price first, to decide on; admitted after
            _print_plan(plan, estimate, allowance, quiet=as_json)
            if not sys.stdin.isatty():
                raise _refuse("this sweep spends money; confirm with --yes")
            if not typer.confirm(
                f"Spend up to {format_usd(estimate.ceiling)}?", default=False, err=True
            ):
                raise _refuse("not confirmed; nothing was spent")
            _admit(sweep)
        else:  # admitted first: a sweep the ceilings refuse prints only the refusal
            _admit(sweep)
            _print_plan(plan, estimate, allowance, quiet=as_json)
        result = _run(sweep, live=not as_json)
        if as_json:
            typer.echo(json.dumps(_result_json(result), ensure_ascii=False, indent=2))
        else:
            err.print(status_line(result), markup=False)
            for line in spread_lines(result):
                err.print(line, style="dim", markup=False)
            for line in grade_lines(result):
                err.print(line, markup=False, highlight=False)
            err.print(f"sweep {result.id} · {CAUTION}", style="dim", markup=False)
    if not result.ok:
        raise typer.Exit(1)


def list_command(
    limit: Annotated[
        int, typer.Option("--limit", min=1, max=100_000, help="How many (1–100,000).")
    ] = 20,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Stored sweeps, newest first."""
    with Store.open() as store:
        rows = list_sweeps(store, limit)
    if as_json:
        typer.echo(
            json.dumps(
                [
                    {
                        "id": r.id,
                        "created": r.created_at.isoformat(),
                        "kind": r.kind,
                        "axis": r.axis,
                        "prompt": r.prompt,
                        "status": r.status,
                        "cells": r.cells,
                        "cost_usd": None if r.cost_usd is None else str(r.cost_usd),
                    }
                    for r in rows
                ],
                indent=2,
            )
        )
        return
    Console().print(_list_table(rows))


def show_command(
    sweep_id: Annotated[str, typer.Argument(help="Id or unique prefix.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """One stored sweep: settings, estimate, cells."""
    with Store.open() as store:
        document = load_sweep(store, sweep_id)
    if as_json:
        typer.echo(json.dumps(document, ensure_ascii=False, indent=2))
        return
    console = Console()
    # Stored prompts, labels and lines are text, never Rich markup.
    console.print(f"[bold]sweep {escape(document['id'])}[/bold] · {document['created']}")
    console.print(
        f"varying {document['axis']} · held {document['held']} · {document['status']}",
        markup=False,
    )
    console.print(f"prompt: {document['prompt']}", markup=False, highlight=False)
    console.print(f"estimate: {document['estimate']['line']}", markup=False)
    if document.get("judge"):
        console.print(f"graded by {document['judge']['model']}", markup=False)
    for line in comparison_lines(document.get("comparison")):
        console.print(line, markup=False, highlight=False)
    for cell in document["cells"]:
        cost = format_usd(None if cell["cost_usd"] is None else Decimal(cell["cost_usd"]))
        console.rule(
            Text(
                f"{cell['label']} · {cell['status']} · "
                f"{cell['usage']['output_tokens']:,} out · ~{cost}"
            )
        )
        preview = outline(document["kind"], cell.get("artifact") or {})
        numbers = " · ".join(
            f"{k} {v}"
            for k, v in (cell.get("metrics") or {}).items()
            if isinstance(v, int | float | str) and not isinstance(v, bool)
        )
        if numbers:
            console.print(numbers, markup=False, highlight=False, style="dim")
        if cell.get("reason"):
            console.print(cell["reason"], markup=False, highlight=False, style="yellow")
        grade = cell.get("grade")
        if grade:
            console.print(_grade_words(grade), markup=False, highlight=False, style="cyan")
        if preview:
            for line in preview:
                console.print(f"  {line}", markup=False, highlight=False)
        else:
            text = cell["text"] or "(no text)"
            console.print(text, markup=False, highlight=False)


def export_command(
    sweep_id: Annotated[str, typer.Argument(help="Id or unique prefix.")],
    json_file: Annotated[Path | None, typer.Option("--json", help="Write sweep.json")] = None,
    html_file: Annotated[
        Path | None, typer.Option("--html", help="Write a self-contained HTML page")
    ] = None,
    artifacts_dir: Annotated[
        Path | None,
        typer.Option("--artifacts", help="Write each cell's artifact files into this folder"),
    ] = None,
) -> None:
    """Write a stored sweep as JSON, a single offline HTML file, and/or per-cell files
    (.txt, .excalidraw + .svg, .manifest.json + .glb)."""
    from sweepbench.sweeps.export_html import render_html

    if json_file is None and html_file is None and artifacts_dir is None:
        raise UserError("say where: --json FILE, --html FILE and/or --artifacts DIR")
    with Store.open() as store:
        document = load_sweep(store, sweep_id)
    if json_file is not None:
        _write(json_file, json.dumps(document, ensure_ascii=False, indent=2), "--json")
    if html_file is not None:
        _write(html_file, render_html(document), "--html")
    if artifacts_dir is not None:
        try:
            written = write_artifacts(document, artifacts_dir)
        except OSError as exc:
            raise UserError(
                f"--artifacts {artifacts_dir}: cannot write {exc.filename or artifacts_dir} "
                f"({exc.strerror or exc})"
            ) from None
        for path in written:
            err.print(f"wrote {path}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``sweep`` and the ``sweeps`` group to the app."""
    sweeps = typer.Typer(help="Stored sweeps: list, show, export.", no_args_is_help=True)
    app.add_typer(sweeps, name="sweeps")
    app.command("sweep")(sweep_command)
    sweeps.command("list")(list_command)
    sweeps.command("show")(show_command)
    sweeps.command("export")(export_command)


def _list_table(rows: list[SweepSummary]) -> Table:
    """Stored sweeps, readable at 80 columns: id, date, what was swept over the prompt (one
    line each, cut with an ellipsis), cost and status; no column of its own for the kind, the
    axis or the cell count. Prompts are text, never Rich markup."""
    table = Table(
        title="Sweeps", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True
    )
    table.add_column("id", no_wrap=True)
    table.add_column("date (UTC)", no_wrap=True)
    table.add_column("sweep · prompt", min_width=16)  # the one column that gives way
    table.add_column("cost", justify="right", no_wrap=True)
    table.add_column("status", no_wrap=True)
    for r in rows:
        cells = f"{r.cells} cell{'s' if r.cells != 1 else ''}"
        what = f"{r.kind} · {AXIS_WORDS.get(r.axis, r.axis)} · {cells}"
        prompt = " ".join(r.prompt.split()) or "(no prompt)"
        table.add_row(
            r.id[:8],
            r.created_at.strftime("%Y-%m-%d %H:%M"),
            Text.assemble(what, "\n", (prompt, "dim"), no_wrap=True, overflow="ellipsis"),
            format_usd(r.cost_usd),
            Text(r.status),
        )
    return table


def _grade_words(grade: dict[str, Any]) -> str:
    """A stored grade in words: "score 0.80 · reason" or "unparseable · why"."""
    if grade.get("status") == "graded" and grade.get("score") is not None:
        return f"score {float(grade['score']):.2f} · {grade.get('reason') or '(no reason)'}"
    return f"{str(grade.get('status', '')).replace('_', ' ')} · {grade.get('reason', '')}"


def _judge_limit(text: str | None, judge: str | None) -> Decimal | None:
    """``--limit-judge USD`` read (a refusal naming the flag otherwise); it needs ``--judge``."""
    if text is None:
        return None
    if not judge:
        raise _refuse("--limit-judge needs --judge MODEL (the grading it limits)")
    try:
        return parse_usd_amount(text)
    except ValueError as exc:
        raise _refuse(f"--limit-judge {text}: {exc}") from None


def _write(path: Path, text: str, flag: str) -> None:
    """Write an export file; a folder, a missing folder or no permission is a UserError."""
    try:
        path.write_text(text, "utf-8")
    except OSError as exc:
        raise UserError(f"{flag} {path}: cannot write the file ({exc.strerror or exc})") from None
    err.print(f"wrote {path}", markup=False, highlight=False)


def _print_plan(plan: Plan, estimate: SweepEstimate, allowance: str, *, quiet: bool) -> None:
    if quiet:
        return
    for note in plan.notes:
        err.print(f"[yellow]note:[/yellow] {escape(note)}")
    err.print(estimate.line(allowance), markup=False)


def _estimate_json(plan: Plan, estimate: SweepEstimate) -> dict[str, Any]:
    return {
        "axis": plan.axis,
        "cells": [
            {
                "label": c.cell.label,
                "model": c.cell.model,
                "effort": c.cell.effort_applied,
                "max_tokens": c.cell.max_tokens,
                "prompt_version": c.cell.prompt_version,
                "typical_usd": None if c.typical is None else str(c.typical),
                "ceiling_usd": None if c.ceiling is None else str(c.ceiling),
            }
            for c in estimate.cells
        ],
        "estimate": {
            "typical_usd": None if estimate.typical is None else str(estimate.typical),
            "ceiling_usd": None if estimate.ceiling is None else str(estimate.ceiling),
            "line": estimate.line(),
        },
        "refusals": [r.message for r in plan.refusals],
        "judge": None if plan.judge is None else plan.judge.as_json(),
        "judge_ceiling_usd": None
        if estimate.judge_ceiling is None
        else str(estimate.judge_ceiling),
    }


def _result_json(result: SweepResult) -> dict[str, Any]:
    document = sweep_document(result)
    return {
        "id": document["id"],
        "axis": document["axis"],
        "estimate": {
            "typical_usd": document["estimate"]["typical_usd"],
            "ceiling_usd": document["estimate"]["ceiling_usd"],
        },
        "status": document["status"],
        "wall_s": document["wall_s"],
        "serial_s": document["serial_s"],
        "cost_usd": document["totals"]["cost_usd"],
        "cells": document["cells"],
        "judge": document["judge"],
        "judge_cost_usd": document["totals"]["judge_cost_usd"],
        "comparison": document["comparison"],
    }


def _start_decision(estimate: SweepEstimate, *, confirmed: bool) -> StartDecision:
    """The start rule every run shares (:func:`~sweepbench.bench.start.start_decision`), for
    a sweep whose plan is runnable (its refusals were said already): one that may spend asks
    first. The host's ceilings are its admission's (:meth:`Sweep.admit`): a sweep is admitted
    as a whole at its worst case, all or nothing, before anything is stored."""
    from sweepbench.bench.start import start_decision

    return start_decision(
        [],
        nothing_left=False,
        spends=bool(estimate.ceiling) and not estimate.free,
        spend_up_to=estimate.ceiling,
        confirmed=confirmed,
    )


def _admit(sweep: Sweep) -> None:
    """Hold the sweep's worst case in the ledger before anything is shown running: a sweep the
    ceilings refuse is one ``refused:`` sentence, never a table of queued cells."""
    try:
        sweep.admit()
    except BudgetExceeded as exc:
        raise _refuse(str(exc)) from None


def _run(sweep: Sweep, *, live: bool) -> SweepResult:
    """Run an admitted sweep with a live table; Ctrl-C is Stop all."""
    started = time.perf_counter()

    async def main() -> SweepResult:
        with stop_on_signals(sweep.stop_all):
            if not live:
                return await sweep.run()
            view = sweep.result
            with Live(_live_table(view, started), console=err, refresh_per_second=4) as screen:
                task = asyncio.create_task(sweep.run())
                while not task.done():
                    await asyncio.wait({task}, timeout=0.25)
                    screen.update(_live_table(view, started))
            if not err.is_terminal:
                err.line()  # a non-terminal Live leaves its last line open
            return await task

    try:
        return asyncio.run(main())
    except BudgetExceeded as exc:
        raise _refuse(str(exc)) from None
