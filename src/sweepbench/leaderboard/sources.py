"""Where a board's rows come from: the bundled published snapshot (priced by OpenRouter id)
and the stored runs' records of one benchmark (records that fail to load are counted and
left out, never guessed at)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sweepbench.bench.record import load_record
from sweepbench.bench.storage import BenchStore
from sweepbench.errors import DataError
from sweepbench.leaderboard.board import Catalogue
from sweepbench.leaderboard.pricing import openrouter_price
from sweepbench.leaderboard.published import PublishedSnapshot
from sweepbench.leaderboard.rows import BoardRow, Scope, published_rows, run_row
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
