"""``compare A B…``: results side by side, task by task or by area, and a paired test of two
runs (spec §17.8; issue 15, item 7). :func:`register` adds the command to a Typer app."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from sweepbench.bench.record import load_record
from sweepbench.bench.storage import BenchStore
from sweepbench.errors import UserError
from sweepbench.leaderboard.compare import Comparison, Entry, Layout, View, compare
from sweepbench.leaderboard.rows import Scope
from sweepbench.stats.paired import PairedResult, item_values, paired_difference
from sweepbench.store import Store

RUN_PREFIX = "run:"
OFFICIAL_PREFIX = "official:"

text_only = Console(markup=False, highlight=False)
"""Standard output: names come from records and the snapshot, so they are text, never Rich
markup."""


def run_entry(runs: BenchStore, run_id: str) -> Entry:
    """A stored run's entry from its record. UserError for an unknown run or one whose first
    session has not ended (no record yet)."""
    row = runs.run(run_id)
    if row is None:
        raise UserError(f"no benchmark run {run_id!r} (see sweepbench bench runs)")
    if row.record is None:
        raise UserError(f"run {row.id} has no scores yet (its first session has not ended)")
    return Entry.of_record(load_record(row.record, where=f"run {row.id}'s record"))


def official_entry(model: str, scope: Scope) -> Entry:
    """A published model's entry in ``scope``: its final area and overall figures (as the
    board shows them) and the 2026-06-08 revision's task figures, marked. UserError when the
    published rows are not available or the model is not among them."""
    try:
        from sweepbench.leaderboard.catalogue import elbench_catalogue
        from sweepbench.leaderboard.published import load_published
        from sweepbench.leaderboard.sources import published_entry
    except ImportError:
        raise UserError(
            f"published rows are not available yet in this sweepbench, so {OFFICIAL_PREFIX}"
            f"{model} cannot be compared"
        ) from None
    return published_entry(load_published(), elbench_catalogue(), scope, model)


def published_layout(scope: Scope) -> Layout:
    """ELBench's areas and tasks of ``scope``: the rows when only published results are
    compared."""
    from sweepbench.leaderboard.catalogue import elbench_catalogue

    return Layout.of_catalogue(elbench_catalogue(), scope)


def comparison_scope(chosen: str | None, runs: Sequence[Entry]) -> Scope:
    """The scope published rows are compared in: ``--scope``, else the first run's, else core.
    UserError for an unknown scope or a run scored in another scope than the one chosen."""
    if chosen is not None and chosen not in ("core", "paper"):
        raise UserError(f"--scope is core or paper, not {chosen!r}")
    scope: Scope = "paper" if chosen == "paper" else "core"
    if chosen is None:
        scope = next((r.scope for r in runs if r.scope is not None), "core")
    for run in runs:
        if run.scope is not None and run.scope != scope:
            raise UserError(
                f"{run.key} was scored in {run.scope} scope: compare it with published results "
                f"in the same scope (--scope {run.scope})"
            )
    return scope


def _run_id(key: str) -> str | None:
    """The run id a key names (``run:<id>`` or a bare id); None for ``official:``."""
    if key.startswith(OFFICIAL_PREFIX):
        return None
    run_id = key.removeprefix(RUN_PREFIX).strip()
    if not run_id:
        raise UserError(f"{key!r} names no run (run:<id> or a run id)")
    return run_id


def paired_runs(runs: BenchStore, first: str, second: str) -> PairedResult:
    """The paired comparison of two stored runs over the items both scored."""
    values = []
    for run_id in (first, second):
        row = runs.run(run_id)
        if row is None:
            raise UserError(f"no benchmark run {run_id!r} (see sweepbench bench runs)")
        catalogue = row.settings.get("catalogue", [])
        values.append((row.id, item_values(runs.outcomes(row.id), catalogue)))
    (id_a, a), (id_b, b) = values
    return paired_difference(a, b, label_a=f"{RUN_PREFIX}{id_a}", label_b=f"{RUN_PREFIX}{id_b}")


def comparison_table(comparison: Comparison) -> Table:
    """The comparison as a Rich table (no markup in any cell)."""
    title = "Task by task (matched subset)" if comparison.by == "task" else "By area (0–100)"
    table = Table(title=title, title_justify="left")
    header = comparison.header()
    table.add_column(header[0], overflow="fold")
    for entry in comparison.entries:
        table.add_column(f"{entry.label}\n{entry.key}", justify="right", overflow="fold")
    for line, row in zip(comparison.lines, comparison.rows(), strict=True):  # labels marked
        table.add_row(
            *row,
            end_section=line.kind in ("mean",),
            style="bold" if line.kind in ("mean", "overall") else None,
        )
    return table


def compare_command(
    keys: Annotated[
        list[str],
        typer.Argument(help="Two or more results: run:<id> (or a run id) or official:<model>."),
    ],
    by: Annotated[
        str, typer.Option("--by", help="task (matched subset) or area.", metavar="task|area")
    ] = "task",
    scope: Annotated[
        str | None,
        typer.Option(
            "--scope",
            help="The published results' scope: core or paper (default: the first run's, "
            "else core).",
            metavar="core|paper",
        ),
    ] = None,
    paired: Annotated[
        bool,
        typer.Option("--paired", help="With exactly two runs: a paired test on shared items."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, for scripts.")] = False,
) -> None:
    """Results side by side, task by task or by area; --paired tests two runs item by item.
    Published results show their final area and overall figures; their task figures are the
    2026-06-08 revision's (marked)."""
    if by not in ("task", "area"):
        raise UserError(f"--by is task or area, not {by!r}")
    view: View = "task" if by == "task" else "area"
    if len(keys) < 2:
        raise UserError("compare needs two or more results (run:<id> or official:<model>)")
    run_ids = [_run_id(key) for key in keys]
    if paired and (len(keys) != 2 or None in run_ids):
        raise UserError("--paired compares exactly two runs (run:<id>), not published rows")
    with Store.open() as store:
        runs = BenchStore(store)
        ran = {r: run_entry(runs, r) for r in run_ids if r is not None}
        chosen = comparison_scope(scope, list(ran.values()))
        entries = [
            official_entry(key.removeprefix(OFFICIAL_PREFIX), chosen) if run_id is None
            else ran[run_id]
            for key, run_id in zip(keys, run_ids, strict=True)
        ]  # fmt: skip
        comparison = compare(entries, by=view, layout=None if ran else published_layout(chosen))
        result = None
        if paired:
            first, second = (r for r in run_ids if r is not None)
            result = paired_runs(runs, first, second)
    if as_json:
        data: dict[str, Any] = comparison.as_json()
        data["scope"] = chosen
        data["paired"] = result.as_json() if result else None
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    text_only.print(comparison_table(comparison))
    for line in comparison.notes:
        text_only.print(line)
    if result is not None:
        text_only.print(result.sentence())


def register(app: typer.Typer) -> None:
    """Add ``compare`` to ``app``."""
    app.command("compare")(compare_command)
