"""One judge board for one metric (spec §17.3–§17.7): which rows appear, which are placed,
their price on the chosen measure, the filters, the frontier and the takeaway text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import pairwise
from typing import Literal

from pydantic import BaseModel, ConfigDict

from sweepbench.leaderboard.published import PAPER_JUDGE, TEACHING_PROVENANCE
from sweepbench.leaderboard.rows import OVERALL, TASK_PREFIX, BoardRow, MetricScore, Scope
from sweepbench.money.prices import blended
from sweepbench.stats.frontier import Point, frontier

PriceMeasure = Literal["blended", "input", "output", "measured"]
MEASURE_LABELS: dict[PriceMeasure, str] = {
    "blended": "$/1M tokens, blended 3:1 input:output",
    "input": "$/1M input tokens",
    "output": "$/1M output tokens",
    "measured": "measured cost of a full run (USD)",
}
OVERLAP = "When two ranges overlap, the difference could disappear on a re-run."
LISTED_MARK = "§"
"""Beside a price on the measured view that is the listed price, nothing being measured."""
LISTED_NOTE = (
    f"{LISTED_MARK} Listed price: nothing measured. A model with no measured run (every "
    "published model) is placed at its listed price ($/1M tokens, blended 3:1), not at the "
    "cost of a run."
)
"""What :data:`LISTED_MARK` means (the takeaway, the tables and the chart say it)."""


@dataclass(frozen=True)
class CatalogueTask:
    """What a board needs to know of a task."""

    area: str
    auto: bool
    """Checked automatically (needs no judge)."""
    name: str = ""
    """Its name for people (``MMLU-Pro``); empty: its id is shown."""
    region_specific: bool = False
    runtime: bool = False
    """Scored by the teaching runtime's evaluator (ELBench's Teaching tasks): a run's score
    and the final published one are not the same measurement."""


@dataclass(frozen=True)
class Catalogue:
    """The benchmark's areas (key → label) and tasks (id → facts), in order."""

    areas: Mapping[str, str]
    tasks: Mapping[str, CatalogueTask]

    def in_scope(self, scope: Scope) -> dict[str, CatalogueTask]:
        return {k: t for k, t in self.tasks.items() if scope == "paper" or not t.region_specific}

    def metric_tasks(self, metric: str, scope: Scope) -> dict[str, CatalogueTask]:
        """The in-scope tasks a metric stands on. ValueError for an unknown metric."""
        tasks = self.in_scope(scope)
        if metric == OVERALL:
            return tasks
        if metric.startswith(TASK_PREFIX):
            task_id = metric.removeprefix(TASK_PREFIX)
            if task_id not in tasks:
                raise ValueError(f"no task {task_id!r} in {scope} scope")
            return {task_id: tasks[task_id]}
        if metric not in self.areas:
            raise ValueError(f"unknown metric {metric!r}: overall, an area, or task:<id>")
        return {k: t for k, t in tasks.items() if t.area == metric}

    def runtime_tasks(self) -> frozenset[str]:
        """The tasks the teaching runtime's evaluator scores."""
        return frozenset(k for k, t in self.tasks.items() if t.runtime)

    def metric_label(self, metric: str) -> str:
        """A metric for people: Overall, the area's label, or the task's name (else its
        id)."""
        if metric == OVERALL:
            return "Overall"
        if metric in self.areas:
            return self.areas[metric]
        task_id = metric.removeprefix(TASK_PREFIX)
        task = self.tasks.get(task_id)
        return task.name if task is not None and task.name else task_id


class Filters(BaseModel):
    """The chart's filters (spec §17.5)."""

    model_config = ConfigDict(frozen=True)

    max_price: Decimal | None = None
    """Highest price on the board's measure (the price a row is placed at:
    :func:`placed_price`); None = no limit. When set, unpriced models are hidden too."""
    max_size_b: float | None = None
    """Largest total size in billions; None = no limit (applies to known sizes only)."""
    include_undisclosed: bool = True
    """Keep models that do not publish their size."""

    def hides(self, row: BoardRow, measure: PriceMeasure = "blended") -> bool:
        """Whether the filters hide ``row`` on a board priced on ``measure``."""
        if self.max_price is not None:
            price, _listed = placed_price(row, measure)
            if price is None or price > self.max_price:
                return True
        if row.size_b is None:
            return not self.include_undisclosed
        return self.max_size_b is not None and row.size_b > self.max_size_b


class Placed(BaseModel):
    """A row placed on the board."""

    model_config = ConfigDict(frozen=True)

    row: BoardRow
    price: Decimal
    score: MetricScore
    best: bool
    """On the best-value frontier."""
    listed: bool = False
    """Placed at its listed price because nothing was measured (the measured view only;
    marked :data:`LISTED_MARK`)."""

    @property
    def mark(self) -> str:
        """`` §`` after a listed price standing in for a measured one; empty otherwise."""
        return f" {LISTED_MARK}" if self.listed else ""


class Board(BaseModel):
    """One board for one metric, scope and price measure."""

    model_config = ConfigDict(frozen=True)

    judge: str
    metric: str
    scope: Scope
    measure: PriceMeasure
    placed: list[Placed]
    """Price order (then score, best first)."""
    no_price: list[BoardRow]
    """Shown as "not placed: no price", never at $0."""
    incomplete: list[BoardRow]
    """Runs lacking a scored answer for some in-scope question of the metric (not placed)."""
    hidden: int
    """Models the filters hid."""

    @property
    def best(self) -> list[Placed]:
        return [p for p in self.placed if p.best]


def price_of(row: BoardRow, measure: PriceMeasure) -> Decimal | None:
    """A row's price on a measure; None when unknown (either component missing)."""
    if measure == "measured":
        return row.measured_usd if row.source == "run" else None
    if row.price is None:
        return None
    p_in, p_out = row.price.input_per_million, row.price.output_per_million
    if measure == "input":
        return p_in
    if measure == "output":
        return p_out
    return blended(p_in, p_out)


def placed_price(row: BoardRow, measure: PriceMeasure) -> tuple[Decimal | None, bool]:
    """The price a row is placed at on a measure, and whether it is its listed price standing
    in for a measurement: on the measured view a row with nothing measured (a published model;
    a run whose spend is unknown) is placed at its listed blended price, marked, rather than
    left unplaced."""
    price = price_of(row, measure)
    if price is None and measure == "measured":
        listed = price_of(row, "blended")
        return listed, listed is not None
    return price, False


def on_board(row: BoardRow, judge: str, metric: str, catalogue: Catalogue) -> bool:
    """A result appears on board ``judge`` for ``metric`` if that judge graded it, or every
    task of the metric is checked automatically."""
    if row.judge == judge:
        return True
    return all(t.auto for t in catalogue.metric_tasks(metric, row.scope).values())


def board_keys(rows: Iterable[BoardRow]) -> list[str]:
    """The boards: the paper's judge first, then every other judge found, in name order."""
    others = sorted({r.judge for r in rows if r.judge is not None and r.judge != PAPER_JUDGE})
    return [PAPER_JUDGE, *others]


def build_board(
    rows: Sequence[BoardRow],
    *,
    judge: str,
    metric: str,
    scope: Scope,
    catalogue: Catalogue,
    measure: PriceMeasure = "blended",
    filters: Filters | None = None,
) -> Board:
    """The board: published rows and, per model, the newest run complete for the metric
    (measured price = that model's complete runs' mean spend; a row with nothing measured is
    placed at its listed price, marked). The filters apply to the price on ``measure``."""
    filters = filters or Filters()
    catalogue.metric_tasks(metric, scope)  # refuse an unknown metric
    shown = [
        r
        for r in rows
        if r.scope == scope and metric in r.scores and on_board(r, judge, metric, catalogue)
    ]
    incomplete = [r for r in shown if r.source == "run" and not r.scores[metric].complete]
    candidates = [r for r in shown if r.source == "published" or r.scores[metric].complete]
    chosen = _newest_runs(candidates)
    hidden = sum(1 for r in chosen if filters.hides(r, measure))
    visible = [r for r in chosen if not filters.hides(r, measure)]
    priced = [(r, *placed_price(r, measure)) for r in visible]
    no_price = [r for r, p, _ in priced if p is None]
    points = {
        _key(r): Point(_key(r), p, r.scores[metric].score) for r, p, _ in priced if p is not None
    }
    best = {p.key for p in frontier(list(points.values()))}
    placed = sorted(
        (
            Placed(row=r, price=p, score=r.scores[metric], best=_key(r) in best, listed=listed)
            for r, p, listed in priced
            if p is not None
        ),
        key=lambda x: (x.price, -x.score.score, x.row.model),
    )
    return Board(
        judge=judge, metric=metric, scope=scope, measure=measure, placed=placed,
        no_price=no_price, incomplete=incomplete, hidden=hidden,
    )  # fmt: skip


def _key(row: BoardRow) -> str:
    return row.run_id or f"published:{row.model}"


def _newest_runs(rows: Sequence[BoardRow]) -> list[BoardRow]:
    """Published rows, and for each run model the newest run with its mean spend."""
    out = [r for r in rows if r.source == "published"]
    by_model: dict[str, list[BoardRow]] = {}
    for r in rows:
        if r.source == "run":
            by_model.setdefault(r.model, []).append(r)
    for runs in by_model.values():
        newest = max(runs, key=lambda r: (r.created_at is not None, r.created_at, r.run_id))
        spends = [r.measured_usd for r in runs if r.measured_usd is not None]
        mean = sum(spends, Decimal(0)) / len(spends) if spends else None
        out.append(newest.model_copy(update={"measured_usd": mean}))
    return out


def _overlap(a: MetricScore, b: MetricScore) -> bool:
    if a.low is None or a.high is None or b.low is None or b.high is None:
        return False
    return a.low <= b.high and b.low <= a.high


def _money(value: Decimal) -> str:
    return f"${value:,.2f}" if value >= Decimal("0.01") else f"${value:.4f}".rstrip("0")


def takeaway(board: Board, catalogue: Catalogue, *, questions: int) -> list[str]:
    """The takeaway lines under the chart (spec §17.2)."""
    lines: list[str] = []
    best = board.best
    if best:
        listed = ", ".join(
            f"{p.row.model} ({_money(p.price)}{p.mark}, {p.score.score:.1f})" for p in best
        )
        lines.append(f"Best value, cheapest first: {listed}.")
    else:
        lines.append("No model is placed on this board.")
    for a, b in pairwise(best):
        if _overlap(a.score, b.score):
            flip = f"The order between {a.row.model} and {b.row.model} could flip on a re-run."
            lines.append(flip)
    if board.no_price:
        names = ", ".join(r.model for r in board.no_price)
        lines.append(f"Not placed: no price: {names}.")
    if board.incomplete:
        lines.append(
            f"{len(board.incomplete)} incomplete run(s) not placed: every in-scope question "
            f"of {catalogue.metric_label(board.metric)} needs a scored answer."
        )
    if board.hidden:
        lines.append(f"The filters hid {board.hidden} model(s).")
    published = any(
        r.source == "published" for r in (*(p.row for p in board.placed), *board.no_price)
    )
    if published and _teaching_beside_published(board, catalogue):
        lines.append(TEACHING_PROVENANCE)
    if any(p.listed for p in board.placed):
        lines.append(LISTED_NOTE)
    regional = sum(1 for t in catalogue.tasks.values() if t.region_specific)
    lines.append(scope_note(board.scope, questions, regional=regional, published=published))
    lines.append(price_source_label(board))
    return lines


def _teaching_beside_published(board: Board, catalogue: Catalogue) -> bool:
    """A run stands on the board and the metric covers a task the teaching runtime scores (a
    run's Teaching score and the published one are not the same measurement)."""
    shown = (*(p.row for p in board.placed), *board.no_price, *board.incomplete)
    if not any(r.source == "run" for r in shown):
        return False
    tasks = catalogue.metric_tasks(board.metric, board.scope)
    return any(t.runtime for t in tasks.values())


def scope_note(scope: Scope, questions: int, *, regional: int = 2, published: bool = True) -> str:
    """What the scope covers: ``regional`` region-specific sets left out of the core scope;
    ``published``: published rows are on the board (their ranges are the paper scope's)."""
    sets = f"the {_count_words(regional)} region-specific set{'s' if regional != 1 else ''}"
    if scope == "core":
        if not regional:
            return f"Scored on {questions:,} questions."
        text = f"Scored on {questions:,} questions, without {sets}."
        if published:
            text += " Published 95% ranges cover the paper's original scoring only, so none are "
            text += "shown here."
        return text
    if not regional:
        return f"Scored on all {questions:,} questions."
    origin = "Paper's original scoring: all" if published else "Scored on all"
    return f"{origin} {questions:,} questions, including {sets}."


def _count_words(n: int) -> str:
    return {1: "one", 2: "two", 3: "three"}.get(n, f"{n:,}")


def price_source_label(board: Board) -> str:
    """Where the board's prices come from: the price sources of the listed prices placed (on
    the measured view: the runs' own spend, and the sources of the listed prices marked
    :data:`LISTED_MARK`)."""
    measured = board.measure == "measured"
    sources = sorted(
        {
            f"{p.row.price.source}" + (f", {p.row.price.date}" if p.row.price.date else "")
            for p in board.placed
            if p.row.price is not None and (p.listed or not measured)
        }
    )
    measure = MEASURE_LABELS[board.measure]
    if measured:
        listed = f"; {LISTED_MARK} listed prices from {'; '.join(sources)}" if sources else ""
        return f"Price: {measure}, from the runs' own spend{listed}."
    return f"Price: {measure}; prices from {'; '.join(sources) if sources else 'no source'}."
