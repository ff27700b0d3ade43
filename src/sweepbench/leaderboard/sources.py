"""Where a board's rows come from: the bundled published snapshot (priced by OpenRouter id)
and the stored runs' records of one benchmark (records that fail to load are counted and
left out, never guessed at); and a published model as a comparison's entry, with the same
figures as its row."""

from __future__ import annotations

from dataclasses import dataclass, field

from sweepbench.bench.record import load_record
from sweepbench.bench.storage import BenchStore
from sweepbench.errors import DataError, UserError
from sweepbench.leaderboard.board import Catalogue
from sweepbench.leaderboard.compare import Entry
from sweepbench.leaderboard.pricing import openrouter_price
from sweepbench.leaderboard.published import PublishedSnapshot
from sweepbench.leaderboard.rows import (
    OVERALL,
    TASK_PREFIX,
    BoardRow,
    Scope,
    published_row,
    published_rows,
    run_row,
)
from sweepbench.models.gguf_size import model_size_b

MAX_RUNS = 100_000


@dataclass
class LoadedRows:
    """The rows of one scope, and the stored records that could not be read."""

    rows: list[BoardRow]
    unreadable: list[str] = field(default_factory=list)
    pulled: dict[str, str] = field(default_factory=dict)
    """Run id → where it came from, for rows of runs imported by ``leaderboard pull``."""


def published_board_rows(
    snapshot: PublishedSnapshot, catalogue: Catalogue, scope: Scope
) -> list[BoardRow]:
    """The published models as rows of ``scope``, priced."""
    region = {k for k, t in catalogue.tasks.items() if t.region_specific}
    prices = {m.openrouter_id: openrouter_price(m.openrouter_id) for m in snapshot.models
              if m.openrouter_id}  # fmt: skip
    return published_rows(
        snapshot, scope, region_specific=region, catalogue_tasks=set(catalogue.tasks),
        price=prices,
    )  # fmt: skip


def published_entry(
    snapshot: PublishedSnapshot, catalogue: Catalogue, scope: Scope, key: str
) -> Entry:
    """A published model (its key or name) as a comparison entry of ``scope``: the area and
    overall figures of its row on the board (final, † where they stand on the 2026-06-08
    revision) and the revision's task figures for the scope's tasks. A model that is not in
    the final table has task figures only. UserError for an unknown model."""
    found = snapshot.model(key)
    if found is None:
        known = ", ".join(m.key for m in snapshot.models[:5])
        raise UserError(f"no published model {key!r} (for example: {known}…)")
    in_scope = catalogue.in_scope(scope)
    region = {k for k, t in catalogue.tasks.items() if t.region_specific}
    row = published_row(found, scope, region_specific=region, catalogue_tasks=set(catalogue.tasks))
    scores = {} if row is None else row.scores
    finals = {k: s for k, s in scores.items() if not k.startswith(TASK_PREFIX) and k != OVERALL}
    overall = scores.get(OVERALL)
    revised = {k for k, s in finals.items() if s.note}
    if overall is not None and overall.note:
        revised.add(OVERALL)
    return Entry.published(
        found.key,
        {t: 100.0 * s.score for t, s in found.tasks.items() if t in in_scope},
        found.display_name,
        areas={k: s.score for k, s in finals.items()},
        overall=None if overall is None else overall.score,
        revised=revised,
        teaching=catalogue.runtime_tasks() & set(in_scope),
    )


def stored_run_rows(bench: BenchStore, scope: Scope, *, benchmark: str = "elbench") -> LoadedRows:
    """The rows of the stored runs of ``benchmark`` in ``scope`` that have a record, each with
    its model's size from the catalogue (or a local model's GGUF; None = undisclosed)."""
    loaded = LoadedRows(rows=[])
    sizes: dict[str, float | None] = {}
    for run in bench.runs(limit=MAX_RUNS):
        if run.benchmark != benchmark or run.record is None:
            continue
        try:
            record = load_record(run.record, where=f"run {run.id}")
        except DataError:
            loaded.unreadable.append(run.id)
            continue
        if record.selection.scope == scope:
            row = run_row(record)
            if row.model not in sizes:
                sizes[row.model] = model_size_b(row.model)
            pulled = None
            if run.settings.get("source") == "pulled":
                pulled = loaded.pulled[run.id] = str(run.settings.get("pulled_from", ""))
            update = {"size_b": sizes[row.model], "pulled_from": pulled}
            loaded.rows.append(row.model_copy(update=update))
    return loaded
