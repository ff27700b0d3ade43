"""``sweepbench bench rescore RUN --scoring corrected``: a stored run's answers graded again by
another scoring version into a new run, offline (the rules are in
``sweepbench.bench.scoring.rescore``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from sweepbench.bench.scoring.versions import SCORING_VERSIONS
from sweepbench.cli.bench_options import JsonOpt, out

if TYPE_CHECKING:
    from sweepbench.bench.scoring.rescore import Flip, Rescored

ScoringOpt = Annotated[
    str,
    typer.Option(
        "--scoring",
        help=f"The scoring version to grade by: {', '.join(SCORING_VERSIONS)}.",
    ),
]


def flips_table(flips: tuple[Flip, ...]) -> Table:
    """The answers whose grade changed: key, task, old → new, what was read."""
    table = Table(title=Text(f"{len(flips):,} answers changed grade"))
    for column in ("key", "task", "old → new", "read now"):
        table.add_column(column)
    for flip in flips:
        change = f"{flip.old_score:g} {flip.old_result} → {flip.new_score:g} {flip.new_result}"
        table.add_row(Text(flip.key), Text(flip.task), change, Text(flip.seen or "nothing"))
    return table


def print_rescored(result: Rescored) -> None:
    """The outcome in words, the flips table and where to look next."""
    out.print(
        f"[bold]Rescored.[/bold] Run {escape(result.source_id)} (scoring: {result.old_version}) "
        f"graded again by the {result.version} rules: {result.rescored:,} answers rescored, "
        f"{result.kept:,} kept as they were (judged, failed or not rule-scored). The original "
        "run is unchanged.",
        highlight=False,
    )
    if result.flips:
        out.print(flips_table(result.flips))
    else:
        out.print("No answer changed grade.")
    out.print(f"New run: [bold]{escape(result.run_id)}[/bold]", soft_wrap=True, highlight=False)
    out.print(f"[dim]sweepbench bench show {escape(result.run_id)} for its scores[/dim]")


def rescore_command(
    run_id: Annotated[str, typer.Argument(help="A run id (or a unique prefix).")],
    scoring: ScoringOpt = "corrected",
    as_json: JsonOpt = False,
) -> None:
    """Grade a stored run's answers again by another scoring version, into a new run (no model
    calls; judged answers keep their verdicts; the original run is left as it is)."""
    from sweepbench.bench.scoring.rescore import rescore_run
    from sweepbench.store import Store

    with Store.open() as store:
        result = rescore_run(store, run_id, scoring)
    if as_json:
        typer.echo(json.dumps(result.as_json(), indent=2, ensure_ascii=False))
        return
    print_rescored(result)


def register(app: typer.Typer) -> None:
    """Add ``bench rescore`` (loaded by ``cli.bench.BENCH_COMMANDS``)."""
    app.command("rescore")(rescore_command)
