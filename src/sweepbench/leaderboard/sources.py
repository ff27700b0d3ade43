"""Where a board's rows come from: the bundled published snapshot (priced by OpenRouter id)
and the stored runs' records of one benchmark (records that fail to load are counted and
left out, never guessed at); which benchmarks have a board, and what one benchmark's board
stands on (:func:`board_source`, for the command and the page alike); and a published model
as a comparison's entry, with the same figures as its row."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sweepbench.bench.record import load_record
from sweepbench.bench.storage import BenchStore
from sweepbench.bench.storage_rows import RunRow
from sweepbench.errors import DataError, UserError
from sweepbench.leaderboard.board import Catalogue
from sweepbench.leaderboard.catalogue import (
    benchmark_catalogue,
    benchmark_questions,
    elbench_catalogue,
    published_questions,
    stored_catalogue,
)
from sweepbench.leaderboard.compare import Entry
from sweepbench.leaderboard.pricing import openrouter_price
from sweepbench.leaderboard.published import PublishedSnapshot, load_published
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

if TYPE_CHECKING:
    from sweepbench.bench.items import Benchmark

MAX_RUNS = 100_000
ELBENCH = "elbench"
"""The benchmark whose board holds the published results (every board's default)."""


@dataclass
class LoadedRows:
    """The rows of one scope, and the stored records that could not be read."""

    rows: list[BoardRow]
    unreadable: list[str] = field(default_factory=list)
    pulled: dict[str, str] = field(default_factory=dict)
    """Run id → where it came from, for rows of runs imported by ``leaderboard pull``."""
    newest: RunRow | None = None
    """The benchmark's newest run with a record (any scope): what a benchmark known only from
    its runs is described by."""
    in_data: int | None = None
    """The in-scope questions the newest run of the scope found in its data (its record's
    coverage); None when no run of the scope has a record."""


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
    for run in bench.runs(limit=MAX_RUNS):  # newest first
        if run.benchmark != benchmark or run.record is None:
            continue
        try:
            record = load_record(run.record, where=f"run {run.id}")
        except DataError:
            loaded.unreadable.append(run.id)
            continue
        loaded.newest = loaded.newest or run
        if record.selection.scope == scope:
            if loaded.in_data is None:
                loaded.in_data = record.coverage.overall.items
            row = run_row(record)
            if row.model not in sizes:
                sizes[row.model] = model_size_b(row.model)
            pulled = None
            if run.settings.get("source") == "pulled":
                pulled = loaded.pulled[run.id] = str(run.settings.get("pulled_from", ""))
            update = {"size_b": sizes[row.model], "pulled_from": pulled}
            loaded.rows.append(row.model_copy(update=update))
    return loaded


@dataclass(frozen=True)
class BoardSource:
    """Everything one benchmark's boards in one scope stand on."""

    benchmark: str
    """The id its runs are stored under (``elbench``, ``sample``, a declaration's id)."""
    name: str
    """The benchmark for people (``ELBench``, ``sweepbench sample``)."""
    scope: Scope
    catalogue: Catalogue
    snapshot: PublishedSnapshot | None
    """ELBench's published figures; None for any other benchmark (its board: your runs)."""
    published: list[BoardRow]
    runs: LoadedRows
    questions: int
    """The questions of the scope (ELBench: the published counts)."""

    @property
    def rows(self) -> list[BoardRow]:
        return [*self.published, *self.runs.rows]


def board_source(
    bench: BenchStore, scope: Scope, benchmark: str = ELBENCH, *, loaded: Benchmark | None = None
) -> BoardSource:
    """What the board of ``benchmark`` in ``scope`` stands on, read fresh: ELBench's published
    results beside your runs, or any other benchmark's runs alone. That benchmark's catalogue
    and question count come from ``loaded`` (as the caller loaded it), else from the built-in
    benchmark of that name when it needs no data, else from its newest stored run (the
    catalogue its settings keep, the questions its record counted). UserError for a benchmark
    that is none of these."""
    if benchmark == ELBENCH:
        catalogue = elbench_catalogue()
        snapshot = load_published()
        return BoardSource(
            benchmark=ELBENCH, name="ELBench", scope=scope, catalogue=catalogue,
            snapshot=snapshot, published=published_board_rows(snapshot, catalogue, scope),
            runs=stored_run_rows(bench, scope), questions=published_questions(
                snapshot, catalogue, scope),
        )  # fmt: skip
    runs = stored_run_rows(bench, scope, benchmark=benchmark)
    if loaded is None:
        loaded = _built_in(benchmark)
    if loaded is not None:
        catalogue, questions = benchmark_catalogue(loaded), benchmark_questions(loaded, scope)
        name = loaded.name
    elif runs.newest is not None:
        try:
            catalogue = stored_catalogue(runs.newest.settings.get("catalogue") or [])
        except ValueError as exc:
            raise UserError(f"benchmark {benchmark!r}: its runs' catalogue: {exc}") from None
        questions, name = runs.in_data or 0, _stored_name(runs.newest)
    else:
        raise UserError(f"no benchmark {benchmark!r} has a board: no run of it is stored")
    return BoardSource(
        benchmark=benchmark, name=name, scope=scope, catalogue=catalogue, snapshot=None,
        published=[], runs=runs, questions=questions,
    )  # fmt: skip


def board_benchmarks(bench: BenchStore) -> list[tuple[str, str]]:
    """The benchmarks with a board, as (id, name): ELBench first, then the built-in ones that
    need no data (listed), then every other benchmark with a stored run's record (newest
    first)."""
    from sweepbench.bench.sources.registry import sources

    found = {ELBENCH: "ELBench"}
    for source in sources():
        if source.listed and not source.needs_data:
            found.setdefault(source.name, source.label)
    for run in bench.runs(limit=MAX_RUNS):
        if run.record is not None and run.benchmark not in found:
            found[run.benchmark] = _stored_name(run)
    return list(found.items())


def _built_in(benchmark: str) -> Benchmark | None:
    """The built-in benchmark of this id when it needs no data (None otherwise)."""
    from sweepbench.bench.sources.registry import find

    known = find(benchmark)
    if known is None or known.needs_data or known.name != benchmark:
        return None
    return known.load(None)


def _stored_name(run: RunRow) -> str:
    return str(run.settings.get("benchmark_name") or run.benchmark)
