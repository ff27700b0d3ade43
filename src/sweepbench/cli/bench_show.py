"""``sweepbench bench runs|show|export``: stored runs, one run's scores, its files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from sweepbench.bench.items import Benchmark
from sweepbench.cli.bench_options import JsonOpt, out
from sweepbench.errors import UserError

if TYPE_CHECKING:
    from sweepbench.bench.storage_rows import RunRow
    from sweepbench.store import Store

text_only = Console(markup=False)
"""Standard output for the scores table: its titles and names come from declarations, so they
are text, never Rich markup (a task named "[/x]" must not end the report in a traceback)."""
STATUS_WORDS = {
    "running": "running",
    "completed": "finished",
    "completed_with_errors": "finished with errors",
    "paused_budget": "paused at the spending limit",
    "interrupted": "stopped early",
}


def show_run(
    store: Store,
    run_id: str,
    *,
    as_json: bool,
    skills: bool = False,
    benchmark: Benchmark | None = None,
) -> None:
    """A run's outcome and scores table (or its report as JSON) on standard output;
    ``benchmark``: the run's, when the caller has it loaded already (never loaded twice)."""
    from sweepbench.bench.report import load_report
    from sweepbench.bench.results import format_money, outcome_text

    report = load_report(store, run_id, benchmark=benchmark)
    if as_json:
        typer.echo(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
        return
    if report.live:
        worker = report.run.settings.get("worker", {})
        errors = f", {report.errors:,} hit errors" if report.errors else ""
        heading = "Still running"
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
    out.print(f"[bold]{escape(heading)}.[/bold] {escape(body)}", highlight=False)
    text_only.print(report.table(skills=skills))
    for line in report.footer_lines():  # names from declarations: text, never Rich markup
        out.print(line, highlight=False, markup=False)


def runs_command(
    limit: Annotated[int, typer.Option("--limit")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Stored benchmark runs, newest first."""
    from sweepbench.bench.storage import BenchStore
    from sweepbench.store import Store

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
            f"{escape(row.benchmark)}{escape(judge)} · {row.updated_at:%Y-%m-%d %H:%M} UTC",
            highlight=False,
        )
    out.print("[dim]sweepbench bench show RUN for the scores[/dim]")


def _status_words(row: RunRow) -> str:
    from sweepbench.bench.run_liveness import run_is_live

    if row.status == "running" and not run_is_live(row):
        return "stopped unexpectedly"
    return STATUS_WORDS.get(row.status, row.status)


def show_command(
    run_id: Annotated[str, typer.Argument(help="A run id (or a unique prefix).")],
    skills: Annotated[bool, typer.Option("--skills", help="Add a row per skill.")] = False,
    item: Annotated[
        str | None,
        typer.Option("--item", metavar="ID", help="Print one teaching dialogue (its id or key)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """A run's outcome and scores: per area and task, with 95% intervals."""
    from sweepbench.store import Store

    with Store.open() as store:
        if item is not None:
            show_dialogue(store, run_id, item, as_json=as_json)
            return
        show_run(store, run_id, as_json=as_json, skills=skills)


def show_dialogue(store: Store, run_id: str, wanted: str, *, as_json: bool) -> None:
    """One stored teaching dialogue, turn by turn, and its evaluation."""
    from sweepbench.bench.dialogue.export import dialogue_document, find_key
    from sweepbench.bench.storage import BenchStore

    row = BenchStore(store).run(run_id)
    if row is None:
        raise UserError(f"no benchmark run {run_id!r} (sweepbench bench runs lists them)")
    key = find_key(store, row.id, wanted)
    answer = next((a for a in BenchStore(store).answers(row.id) if a["key"] == key), None)
    document = dialogue_document(store, row.id, key, answer)
    if as_json:
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    task = document["task"]
    ended = {"keyword": "the teacher ended the lesson", "step_limit": "the step limit",
             "single": "one turn"}.get(task.get("ended") or "", "not finished yet")  # fmt: skip
    text_only.print(f"Dialogue {task['sample_id']} · {len(document['messages'])} turns · {ended}")
    for message in document["messages"]:
        text_only.print(f"{message['role']}: {message['content']}", highlight=False)
    evaluation = document["evaluation"]
    if evaluation is None:
        text_only.print("Not evaluated yet: running the same settings again continues it.")
    elif evaluation["score"] is None:
        text_only.print(f"Evaluation failed ({evaluation['error_type']}): {evaluation['error']}")
    else:
        items = ", ".join(f"{k} {v}" for k, v in (evaluation["score_items"] or {}).items())
        veto = " (vetoed: role confusion)" if evaluation["vetoed"] else ""
        text_only.print(
            f"Evaluation: {evaluation['score']:.2f}, {evaluation['result']}{veto} — {items}",
            highlight=False,
        )


def export_command(
    run_id: Annotated[str, typer.Argument(help="A run id (or a unique prefix).")],
    directory: Annotated[Path, typer.Argument(help="Folder to write into (created).")],
) -> None:
    """Write a run's answers, failures and spend as JSONL and its summary as CSV and JSON."""
    from sweepbench.bench.report import export_run
    from sweepbench.store import Store

    with Store.open() as store:
        written = export_run(store, run_id, directory)
    for path in written:
        out.print(str(path), highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``bench runs``, ``bench show`` and ``bench export`` (loaded by
    ``cli.bench.BENCH_COMMANDS``)."""
    app.command("runs")(runs_command)
    app.command("show")(show_command)
    app.command("export")(export_command)
