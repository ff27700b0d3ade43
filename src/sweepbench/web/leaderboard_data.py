"""What the Leaderboard page shows, from the leaderboard library (no rule of its own): the
benchmarks with a board, the rows of a benchmark and scope (ELBench's bundled published
results and the store's runs; any other benchmark's runs), the board the controls pick, the
comparison of picked results and the paired test of two runs, and the pull from the
configured shared leaderboard that Refresh does first."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from urllib.parse import parse_qs

from sweepbench.bench.record import load_record
from sweepbench.bench.storage import BenchStore
from sweepbench.errors import DataError, UserError
from sweepbench.leaderboard.board import Board, Catalogue, Filters, PriceMeasure, build_board
from sweepbench.leaderboard.board import takeaway as takeaway_lines
from sweepbench.leaderboard.bundle import is_url
from sweepbench.leaderboard.bundle_pull import pull as pull_bundles
from sweepbench.leaderboard.catalogue import elbench_catalogue
from sweepbench.leaderboard.compare import Comparison, Entry, Layout, View, compare
from sweepbench.leaderboard.published import load_published
from sweepbench.leaderboard.rows import OVERALL, REVISION_MARK, Scope
from sweepbench.leaderboard.sources import (
    ELBENCH,
    BoardSource,
    board_benchmarks,
    board_source,
    published_entry,
)
from sweepbench.settings import scrub, shared_place
from sweepbench.stats.paired import PairedResult, item_values, paired_difference
from sweepbench.store import Store

PRICE_OFF = 30.0
"""The Highest price slider's top: no limit (spec §17.5)."""
SIZE_OFF = 1000.0
"""The Largest model size slider's top: no limit."""
RUN_PREFIX = "run:"
OFFICIAL_PREFIX = "official:"
DEFAULT_BASELINES = ("official:deepseek-v4-flash", "official:gpt-5.4")


def scope_of(include_regional: bool | None) -> Scope:
    """The scope the checkbox picks: paper with the region-specific sets, core without."""
    return "paper" if include_regional else "core"


def filters_of(max_price: object, max_size: object, undisclosed: object) -> Filters:
    """The filters from the sliders (at their top, off) and the undisclosed checkbox. What a
    visitor's request may send instead (nothing, an empty text, a word, a negative or
    non-finite number) is no filter, never a failure."""
    price_value = _slider(max_price)
    size_value = _slider(max_size)
    price = None if price_value is None or price_value >= PRICE_OFF else Decimal(str(price_value))
    size = None if size_value is None or size_value >= SIZE_OFF else size_value
    return Filters(max_price=price, max_size_b=size, include_undisclosed=undisclosed is not False)


def _slider(value: object) -> float | None:
    """A slider's value as a finite number of 0 or more, else None (off)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


Sources = BoardSource
"""Everything one benchmark's board of one scope stands on (the library's
:class:`~sweepbench.leaderboard.sources.BoardSource`)."""
ELBENCH_LABEL = "ELBench (published results and your runs)"


def benchmark_choices(store: Store) -> list[dict[str, str]]:
    """The Benchmark picker's choices: ELBench first (with its published results), then the
    built-in benchmarks and every benchmark with a stored run (its runs only)."""
    return [
        {"value": key, "label": ELBENCH_LABEL if key == ELBENCH else name}
        for key, name in board_benchmarks(BenchStore(store))
    ]


def benchmark_of(value: object, choices: Sequence[dict[str, str]]) -> str:
    """The benchmark a picker's value names when it is one of ``choices``; else ELBench (what
    a visitor's request may send instead is never looked up)."""
    known = {c["value"] for c in choices}
    return value if isinstance(value, str) and value in known else ELBENCH


def asked_benchmark(search: str | None) -> str | None:
    """The benchmark a page address asks for (``?benchmark=sample``), or None."""
    return parse_qs((search or "").lstrip("?")).get("benchmark", [None])[0]


def sources(store: Store, scope: Scope, benchmark: object = ELBENCH) -> Sources:
    """Read the rows of ``benchmark``'s board in ``scope`` (fresh each time): ELBench's
    published rows and your ELBench runs, or another benchmark's runs. What has no board (a
    benchmark whose last run was just deleted, or whatever else a visitor's request sends:
    only built-in names and stored runs' ids are ever looked up) is ELBench's."""
    bench = BenchStore(store)
    if isinstance(benchmark, str) and benchmark != ELBENCH:
        try:
            return board_source(bench, scope, benchmark)
        except UserError:
            pass
    return board_source(bench, scope)


def pull_shared(store: Store) -> list[str] | None:
    """Pull the configured shared leaderboard into the store (spec §17.9): one line saying
    how many runs were added, already here and skipped, then one line per skipped bundle (why);
    or one line saying why nothing could be pulled. None when no shared place is
    configured."""
    try:
        place = shared_place()
    except UserError as exc:
        return [f"The shared leaderboard setting cannot be used: {scrub(str(exc))}"]
    if place is None:
        return None
    if not is_url(place) and not Path(place).exists():
        return [f"Pulled from the shared leaderboard at {place}: nothing is published there yet."]
    try:
        result = pull_bundles(BenchStore(store), place)
    except Exception as exc:  # unreachable, refused, a store error: said, the page goes on
        return [f"Could not pull from the shared leaderboard at {place}: {scrub(str(exc))}"]
    head = (
        f"Pulled from the shared leaderboard at {place}: {len(result.imported)} added, "
        f"{len(result.present)} already here, {len(result.skipped)} skipped."
    )
    return [head, *(scrub(reason) for reason in result.skipped)]


@dataclass(frozen=True)
class BoardView:
    """One board as the page shows it: the board, its takeaway and a title."""

    board: Board
    lines: list[str]
    title: str


def metric_of(area: str | None, task: str | None) -> str:
    """The metric: one task when picked (it overrides the area), else the area or overall."""
    if task:
        return task
    return area or OVERALL


def board_view(
    found: Sources,
    *,
    judge: str,
    metric: str,
    measure: PriceMeasure,
    filters: Filters,
    show_runs: bool,
) -> BoardView:
    """The board the controls pick, with its takeaway (ValueError for a metric the scope
    lacks)."""
    rows = found.rows if show_runs else found.published
    board = build_board(
        rows, judge=judge, metric=metric, scope=found.scope, catalogue=found.catalogue,
        measure=measure, filters=filters,
    )  # fmt: skip
    lines = takeaway_lines(board, found.catalogue, questions=found.questions)
    if any(p.score.note for p in board.placed):
        lines.append(REVISION_MARK)
    if not show_runs:
        lines.append("Your runs are not shown (More ways to look at the results).")
    if found.runs.unreadable:
        count = len(found.runs.unreadable)
        lines.append(f"{count} stored run record(s) could not be read and are left out.")
    label = found.catalogue.metric_label(metric)
    title = f"{label} · board: {judge} · {found.scope} scope"
    if found.benchmark != ELBENCH:
        title = f"{found.name} · {title}"
    return BoardView(board, lines, title)


# ---------------------------------------------------------------- comparison


def run_entry(bench: BenchStore, run_id: str) -> Entry:
    """A stored run's entry from its record."""
    row = bench.run(run_id)
    if row is None or row.record is None:
        raise UserError(f"run {run_id} has no scores yet")
    try:
        return Entry.of_record(load_record(row.record, where=f"run {row.id}'s record"))
    except DataError as exc:
        raise UserError(str(exc)) from None


def comparison(
    store: Store, keys: Sequence[str], *, by: View, scope: Scope, benchmark: str = ELBENCH
) -> Comparison:
    """The picked results of ``benchmark``'s board side by side in ``scope`` (UserError when
    they cannot be compared): published results (ELBench's only) with the figures the board
    shows them with, marked as the library marks them
    (:mod:`sweepbench.leaderboard.compare`)."""
    bench = BenchStore(store)
    catalogue: Catalogue = elbench_catalogue()
    if benchmark != ELBENCH:
        catalogue = board_source(bench, scope, benchmark).catalogue
        if any(key.startswith(OFFICIAL_PREFIX) for key in keys):
            raise UserError("only ELBench has published results to compare with")
    snapshot = load_published()
    entries = [
        published_entry(snapshot, catalogue, scope, key.removeprefix(OFFICIAL_PREFIX))
        if key.startswith(OFFICIAL_PREFIX)
        else run_entry(bench, key.removeprefix(RUN_PREFIX))
        for key in keys
    ]
    return compare(entries, by=by, layout=Layout.of_catalogue(catalogue, scope))


def paired(store: Store, first: str, second: str) -> PairedResult:
    """The paired test of two runs on the items both scored (UserError when they share
    none)."""
    bench = BenchStore(store)
    values = []
    for key in (first, second):
        run_id = key.removeprefix(RUN_PREFIX)
        row = bench.run(run_id)
        if row is None:
            raise UserError(f"no benchmark run {run_id!r}")
        catalogue = row.settings.get("catalogue", [])
        values.append(item_values(bench.outcomes(row.id), catalogue))
    a, b = values
    return paired_difference(a, b, label_a=first, label_b=second)
