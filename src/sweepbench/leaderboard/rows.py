"""Leaderboard rows (spec §17): one per published model or stored run, with its scores per
metric (``overall``, an area key, ``task:<id>``) on 0–100, ranges, completeness and price.

Published rows come from the bundled snapshot: in paper scope the final table (with its 95%
ranges) and the 2026-06-08 per-task figures; in core scope the areas are recomputed from the
2026-06-08 per-task figures without the region-specific tasks (no ranges: the published ones
cover the paper's scope only). Run rows come from stored ``RunRecord``s as they are.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict

from sweepbench.bench.record import RunRecord
from sweepbench.leaderboard.published import PAPER_JUDGE, PublishedModel, PublishedSnapshot

Scope = Literal["core", "paper"]
OVERALL = "overall"
TASK_PREFIX = "task:"


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class MetricScore(_Frozen):
    """A row's score for one metric."""

    score: float
    """0–100."""
    low: float | None = None
    """The 95% range's low end; None when no range is known for this scope."""
    high: float | None = None
    complete: bool
    """Every in-scope question of the metric has a scored answer and none failed."""
    note: str | None = None
    """Where the figure comes from when it is not the row's own final figure."""


class RowPrice(_Frozen):
    """USD per million tokens, with where and when the figure came from."""

    input_per_million: Decimal
    output_per_million: Decimal
    source: str
    date: str | None = None


class BoardRow(_Frozen):
    """One published model or one stored run."""

    model: str
    """The model's name for people (a run: its target model id)."""
    model_id: str | None
    """The OpenRouter id (published) or the full model id (run); None when unknown."""
    source: Literal["published", "run"]
    run_id: str | None = None
    judge: str | None
    """The board key of the judge that graded it (``<id> (decision)`` for a decision judge);
    None when no judge graded anything."""
    scope: Scope
    scores: dict[str, MetricScore]
    """By metric: ``overall``, an area key, or ``task:<id>``."""
    price: RowPrice | None
    """None = no price on file."""
    measured_usd: Decimal | None = None
    """A run's spend (every role); None for published rows."""
    size_b: float | None = None
    """Total parameters in billions when disclosed."""
    created_at: datetime | None = None
    """When the run started (runs only)."""
    pulled_from: str | None = None
    """Where a pulled run came from (``leaderboard pull``); None for this store's own runs."""

    @property
    def label(self) -> str:
        """Where the row comes from, for people: published, a pulled run or one of yours."""
        if self.source == "published":
            return "Published"
        return (
            f"Pulled run {self.run_id}"
            if self.pulled_from is not None
            else f"Your run {self.run_id}"
        )


RULE_SCORED = "rule-scored"


def judge_key(model: str | None, *, decision: bool, rule_scored: bool = False) -> str | None:
    """A judge's board key: its model id, suffixed `` (decision)`` for a decision judge and
    `` (rule-scored)`` when judged tasks were scored by rule (never ranked with judged runs);
    None when no judge graded and no rule stood in for one. The paper's judge called through
    OpenRouter (``openrouter/`` + :data:`PAPER_JUDGE`, ELBench's default judge) grades on the
    published results' board."""
    if model is None:
        return RULE_SCORED if rule_scored else None
    from sweepbench.models.openrouter import model_id

    if model == model_id(PAPER_JUDGE):
        model = PAPER_JUDGE
    key = f"{model} (decision)" if decision else model
    return f"{key} ({RULE_SCORED})" if rule_scored else key


def run_row(record: RunRecord) -> BoardRow:
    """The row of a stored run, from its record."""
    target = record.roles["target"].model
    judge = record.roles.get("judge")
    price = record.prices.get(target)
    scores: dict[str, MetricScore] = {}
    coverage = record.coverage
    for task_id, s in record.scores.tasks.items():
        cov = coverage.tasks[task_id]
        scores[TASK_PREFIX + task_id] = MetricScore(
            score=s.score, low=s.low, high=s.high, complete=cov.complete and not cov.failed
        )
    for area, s in record.scores.areas.items():
        done = coverage.areas[area].complete and not coverage.areas[area].failed
        scores[area] = MetricScore(score=s.score, low=s.low, high=s.high, complete=done)
    if record.scores.overall is not None:
        s = record.scores.overall
        overall = coverage.overall
        scores[OVERALL] = MetricScore(
            score=s.score, low=s.low, high=s.high, complete=overall.complete and not overall.failed
        )
    return BoardRow(
        model=target,
        model_id=target,
        source="run",
        run_id=record.run_id,
        judge=judge_key(
            None if judge is None else judge.model,
            decision=record.scoring.decision_judge,
            rule_scored=record.scoring.rule_scored,
        ),
        scope=record.selection.scope,
        scores=scores,
        price=None
        if price is None
        else RowPrice(
            input_per_million=price.input_per_million,
            output_per_million=price.output_per_million,
            source=price.source,
            date=price.date,
        ),
        measured_usd=record.spent_usd,
        created_at=record.created_at,
    )


def published_rows(
    snapshot: PublishedSnapshot,
    scope: Scope,
    *,
    region_specific: set[str],
    catalogue_tasks: set[str],
    price: dict[str, RowPrice | None] | None = None,
) -> list[BoardRow]:
    """The final table's models as rows for ``scope``. ``region_specific`` and
    ``catalogue_tasks`` are task ids from the catalogue (core scope leaves the first out;
    only catalogue tasks count); ``price`` maps OpenRouter ids to prices."""
    prices = price or {}
    rows = []
    for model in snapshot.models:
        row = published_row(
            model, scope, region_specific=region_specific, catalogue_tasks=catalogue_tasks
        )
        if row is not None:
            price_of_model = prices.get(model.openrouter_id) if model.openrouter_id else None
            rows.append(row.model_copy(update={"price": price_of_model}))
    return rows


def published_row(
    model: PublishedModel,
    scope: Scope,
    *,
    region_specific: set[str],
    catalogue_tasks: set[str],
) -> BoardRow | None:
    """One published model's row for ``scope`` (unpriced), as the board shows it; None for a
    model that is not in the final table (it has no final figures)."""
    if model.overall is None:
        return None
    scores = (
        _paper_scores(model, catalogue_tasks)
        if scope == "paper"
        else _core_scores(model, catalogue_tasks - region_specific)
    )
    return BoardRow(
        model=model.display_name,
        model_id=model.openrouter_id,
        source="published",
        judge=PAPER_JUDGE,
        scope=scope,
        scores=scores,
        price=None,
        size_b=model.size_b,
    )


REVISION_NOTE = "2026-06-08 revision"
REVISION_MARK = (
    "† Stands partly or wholly on the 2026-06-08 revision's per-task figures: the final "
    "figures cannot be reconstructed for this scope."
)
"""What † beside a published area or overall figure means (the board, its tables and the
comparison by area)."""


def _task_scores(model: PublishedModel, tasks: set[str]) -> dict[str, MetricScore]:
    return {
        TASK_PREFIX + task_id: MetricScore(score=100 * t.score, complete=True, note=REVISION_NOTE)
        for task_id, t in model.tasks.items()
        if task_id in tasks
    }


def _paper_scores(model: PublishedModel, tasks: set[str]) -> dict[str, MetricScore]:
    assert model.overall is not None
    scores = _task_scores(model, tasks)
    for area, s in model.areas.items():
        scores[area] = MetricScore(score=s.score, low=s.low, high=s.high, complete=True)
    scores[OVERALL] = MetricScore(
        score=model.overall.score, low=model.overall.low, high=model.overall.high, complete=True
    )
    return scores


def _core_scores(model: PublishedModel, tasks: set[str]) -> dict[str, MetricScore]:
    """Core scope: the snapshot's reconstructed core areas (final where the final figures
    allow it, else the 2026-06-08 revision, so labelled), or failing those the revision's
    per-task figures; tasks are always the revision's."""
    scores = _task_scores(model, tasks)
    areas: dict[str, float] = {}
    revised = False
    for area in model.areas:
        core = model.core_areas.get(area)
        if core is not None:
            areas[area] = core.score
            note = None if core.basis == "final" else core.basis
        else:
            chosen = [t for k, t in model.tasks.items() if t.area == area and k in tasks]
            total = sum(t.count for t in chosen)
            if not total:
                continue
            areas[area] = 100 * sum(t.count * t.score for t in chosen) / total
            note = REVISION_NOTE
        revised = revised or note is not None
        scores[area] = MetricScore(score=areas[area], complete=True, note=note)
    if len(areas) == len(model.areas):
        scores[OVERALL] = MetricScore(
            score=sum(areas.values()) / len(areas),
            complete=True,
            note=f"partly the {REVISION_NOTE}" if revised else None,
        )
    return scores
