"""Scores of a benchmark run: per task, skill and area, the overall score, and bootstrap 95%
ranges.

Pure computation: the caller hands in the scored answers (failures are counted separately) and
gets back frozen results. The formulas follow the spec:

* task score (0–1, §16): the pass rate, or for a ``score_by="mean_score"`` task the mean score
  divided by ``task.options["scale"]`` (1 when absent): SATAs' partial credit, knowledge /10,
  question and cross /5;
* area score (0–100): Σ(count × task score) / Σ count over the area's tasks that have answers;
* overall (0–100): ``mean_of_areas`` = the unweighted mean of the areas present, or
  ``mean_of_tasks`` = the unweighted mean of the task scores present;
* 95% ranges (§17.7): resample each task's answers with replacement within the task, recompute
  the task, area and overall scores, take the 2.5th and 97.5th percentiles; seed 0.

The result shapes are in :mod:`~sweepbench.bench.results_shapes`, the detailed table and its CSV
in :mod:`~sweepbench.bench.results_table`, the words shown for a run in
:mod:`~sweepbench.bench.results_text`; all are re-exported here, so callers import results from
this one module.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from sweepbench.bench.items import Area, Benchmark, Scope, Task
from sweepbench.bench.results_shapes import (
    AreaResult,
    Interval,
    ScoredAnswer,
    SkillResult,
    Summary,
    TaskResult,
)
from sweepbench.bench.results_table import (
    CSV_COLUMNS,
    DEFAULT_DIMENSION,
    DetailRow,
    RowGroup,
    detailed_rows,
    summary_csv,
)
from sweepbench.bench.results_text import (
    PARTIAL_NOTE,
    TEACHING_NOTE,
    Outcome,
    Surface,
    format_money,
    format_score,
    outcome_text,
    scores_line,
    teaching_note,
)
from sweepbench.stats.bootstrap import FloatArray, percentile_interval, resample_means

__all__ = [
    "CSV_COLUMNS",
    "DEFAULT_DIMENSION",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "PARTIAL_NOTE",
    "TEACHING_NOTE",
    "AreaResult",
    "DetailRow",
    "Interval",
    "Outcome",
    "RowGroup",
    "ScoredAnswer",
    "SkillResult",
    "Summary",
    "Surface",
    "TaskResult",
    "detailed_rows",
    "format_money",
    "format_score",
    "item_values",
    "outcome_text",
    "scores_line",
    "summarise",
    "summary_csv",
    "task_scale",
    "teaching_note",
    "weighted_area_score",
]

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0


# ---------------------------------------------------------------- scores


def task_scale(task: Task) -> float:
    """The top of a task's raw score scale (``options["scale"]``, 1 when absent)."""
    scale = task.options.get("scale")
    if scale is None:
        return 1.0
    if isinstance(scale, bool) or not isinstance(scale, int | float) or scale <= 0:
        raise ValueError(f"task {task.id}: options.scale must be a positive number, got {scale!r}")
    return float(scale)


def item_values(task: Task, answers: Sequence[ScoredAnswer]) -> FloatArray:
    """One 0–1 value per answer whose mean is the task score: 1/0 for a pass rate, the raw
    score over the task's scale for a mean score."""
    if task.score_by == "mean_score":
        scale = task_scale(task)
        return np.array([answer.score / scale for answer in answers], dtype=np.float64)
    return np.array([1.0 if answer.passed else 0.0 for answer in answers], dtype=np.float64)


def _mean(values: Iterable[float]) -> float:
    """The mean of some numbers (0.0 for none)."""
    listed = list(values)
    return sum(listed) / len(listed) if listed else 0.0


def _skill_results(answers: Sequence[ScoredAnswer], task: Task | None) -> tuple[SkillResult, ...]:
    """Per-skill count, mean and pass rate, by skill name; with the task rule's score for a task."""
    by_skill: dict[str, list[ScoredAnswer]] = defaultdict(list)
    for answer in answers:
        by_skill[answer.dimension].append(answer)
    return tuple(
        SkillResult(
            dimension=name,
            count=len(group),
            mean_score=_mean(a.score for a in group),
            pass_rate=_mean(1.0 if a.passed else 0.0 for a in group),
            task=task.id if task else None,
            score=float(item_values(task, group).mean()) if task else None,
        )
        for name, group in sorted(by_skill.items())
    )


def _task_result(
    task: Task, answers: Sequence[ScoredAnswer], values: FloatArray, ci95: Interval | None
) -> TaskResult:
    """The result of one task from its answers and their 0–1 values."""
    return TaskResult(
        task=task.id,
        name=task.name,
        area=task.area,
        count=len(answers),
        mean_score=_mean(a.score for a in answers),
        pass_rate=_mean(1.0 if a.passed else 0.0 for a in answers),
        score=float(values.mean()),
        expected=len(task.items),
        ci95=ci95,
        skills=_skill_results(answers, task),
    )


def weighted_area_score(counts: Sequence[int], task_scores: Sequence[float]) -> float:
    """Σ(count × task score) / Σ count, on 0–100 (spec §16)."""
    total = sum(counts)
    if total == 0:
        raise ValueError("an area score needs at least one answer")
    return 100.0 * sum(c * s for c, s in zip(counts, task_scores, strict=True)) / total


def _area_result(
    area: Area,
    in_scope: Sequence[Task],
    results: Sequence[TaskResult],
    answers: Mapping[str, Sequence[ScoredAnswer]],
    ci95_100: Interval | None,
) -> AreaResult:
    """The result of one area from its present tasks' results."""
    area_answers = [a for r in results for a in answers[r.task]]
    present = {r.task for r in results}
    return AreaResult(
        area=area.key,
        label=area.label,
        score_100=weighted_area_score([r.count for r in results], [r.score for r in results]),
        count=len(area_answers),
        expected=sum(len(t.items) for t in in_scope),
        mean_score=_mean(a.score for a in area_answers),
        pass_rate=_mean(1.0 if a.passed else 0.0 for a in area_answers),
        tasks_present=len(results),
        tasks_in_scope=len(in_scope),
        complete=all(t.id in present for t in in_scope) and all(r.complete for r in results),
        ci95_100=ci95_100,
    )


def _overall(
    method: Literal["mean_of_areas", "mean_of_tasks"],
    area_scores: Sequence[float],
    task_scores: Sequence[float],
) -> float | None:
    """The overall 0–100 score: the unweighted mean of the area scores (or of the task scores
    × 100); None when nothing was scored."""
    if method == "mean_of_tasks":
        return 100.0 * _mean(task_scores) if task_scores else None
    return _mean(area_scores) if area_scores else None


# ---------------------------------------------------------------- bootstrap


@dataclass(frozen=True)
class _Ranges:
    """Bootstrap ranges: per task (0–1), per area and overall (0–100)."""

    tasks: Mapping[str, Interval]
    areas: Mapping[str, Interval]
    overall: Interval | None


def _bootstrap_ranges(
    method: Literal["mean_of_areas", "mean_of_tasks"],
    grouped: Sequence[tuple[str, Sequence[tuple[str, FloatArray]]]],
    resamples: int,
    seed: int,
) -> _Ranges:
    """Resample within each task (tasks in benchmark order, one generator seeded ``seed``), then
    build each resample's area and overall scores and take the 2.5th/97.5th percentiles.

    ``grouped`` lists the present areas in order, each with its present tasks' 0–1 values."""
    rng = np.random.default_rng(seed)
    task_ranges: dict[str, Interval] = {}
    area_ranges: dict[str, Interval] = {}
    area_samples: list[FloatArray] = []
    task_samples: list[FloatArray] = []
    for area_key, tasks in grouped:
        weighted = np.zeros(resamples, dtype=np.float64)
        total = 0
        for task_id, values in tasks:
            samples = resample_means(values, resamples, rng)
            task_ranges[task_id] = percentile_interval(samples)
            task_samples.append(samples)
            weighted += values.size * samples
            total += values.size
        area_sample = 100.0 * weighted / total
        area_ranges[area_key] = percentile_interval(area_sample)
        area_samples.append(area_sample)
    if method == "mean_of_tasks":
        overall_samples = 100.0 * np.mean(task_samples, axis=0) if task_samples else None
    else:
        overall_samples = np.mean(area_samples, axis=0) if area_samples else None
    overall = percentile_interval(overall_samples) if overall_samples is not None else None
    return _Ranges(task_ranges, area_ranges, overall)


# ---------------------------------------------------------------- summarise


def _group_answers(
    benchmark: Benchmark, answers: Iterable[ScoredAnswer], counted: Collection[str]
) -> tuple[dict[str, list[ScoredAnswer]], int]:
    """Answers by task id for the counted tasks, and how many were left out. An answer naming
    a task the benchmark does not have is an error."""
    known = {task.id for task in benchmark.tasks}
    by_task: dict[str, list[ScoredAnswer]] = defaultdict(list)
    left_out = 0
    for answer in answers:
        if answer.task not in known:
            raise ValueError(f"scored answer for unknown task {answer.task!r}")
        if answer.task in counted:
            by_task[answer.task].append(answer)
        else:
            left_out += 1
    return by_task, left_out


def summarise(
    benchmark: Benchmark,
    answers: Iterable[ScoredAnswer],
    *,
    scope: Scope,
    selected_tasks: Collection[str],
    bootstrap: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Summary:
    """Every score of a run from its scored answers.

    Only answers of selected, in-scope tasks count (others are tallied in ``left_out``); tasks
    and areas with no answers are absent, never 0. ``bootstrap`` = the number of resamples for
    the 95% ranges (0 for none)."""
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be 0 or more resamples, got {bootstrap}")
    in_scope = benchmark.in_scope(scope)
    scope_ids = {t.id for t in in_scope}
    counted = scope_ids & set(selected_tasks)
    by_task, left_out = _group_answers(benchmark, answers, counted)
    task_results: list[TaskResult] = []
    area_results: list[AreaResult] = []
    grouped: list[tuple[str, list[tuple[str, FloatArray]]]] = []
    values_by_task: dict[str, FloatArray] = {}
    for area in benchmark.areas:
        present = [t for t in area.tasks if t.id in counted and by_task.get(t.id)]
        for task in present:
            values_by_task[task.id] = item_values(task, by_task[task.id])
        if present:
            grouped.append((area.key, [(t.id, values_by_task[t.id]) for t in present]))
    ranges = _bootstrap_ranges(benchmark.overall, grouped, bootstrap, seed) if bootstrap else None
    for area in benchmark.areas:
        area_scope = [t for t in area.tasks if t.id in scope_ids]
        results = [
            _task_result(t, by_task[t.id], values_by_task[t.id], _get(ranges, "tasks", t.id))
            for t in area.tasks
            if t.id in values_by_task
        ]
        task_results.extend(results)
        if results:
            area_ci = _get(ranges, "areas", area.key)
            area_results.append(_area_result(area, area_scope, results, by_task, area_ci))
    return _build_summary(
        benchmark, scope, in_scope, task_results, area_results, by_task, counted, left_out,
        ranges, bootstrap, seed,
    )  # fmt: skip


def _get(ranges: _Ranges | None, kind: Literal["tasks", "areas"], key: str) -> Interval | None:
    """A task's or area's bootstrap range, or None when no bootstrap ran."""
    if ranges is None:
        return None
    return (ranges.tasks if kind == "tasks" else ranges.areas).get(key)


def _build_summary(
    benchmark: Benchmark,
    scope: Scope,
    in_scope: Sequence[Task],
    task_results: Sequence[TaskResult],
    area_results: Sequence[AreaResult],
    by_task: Mapping[str, Sequence[ScoredAnswer]],
    counted: Collection[str],
    left_out: int,
    ranges: _Ranges | None,
    resamples: int,
    seed: int,
) -> Summary:
    """Assemble the summary from the task and area results."""
    everything = [a for r in task_results for a in by_task[r.task]]
    scope_ids = {t.id for t in in_scope}
    scoped_areas = [a for a in benchmark.areas if any(t.id in scope_ids for t in a.tasks)]
    present_areas = {r.area for r in area_results}
    all_present = bool(scoped_areas) and all(a.key in present_areas for a in scoped_areas)
    return Summary(
        benchmark=benchmark.id,
        scope=scope,
        overall_method=benchmark.overall,
        tasks=tuple(task_results),
        areas=tuple(area_results),
        skills=_skill_results(everything, None),
        count=len(everything),
        expected=sum(len(t.items) for t in in_scope),
        mean_score=_mean(a.score for a in everything),
        pass_rate=_mean(1.0 if a.passed else 0.0 for a in everything),
        overall_100=_overall(
            benchmark.overall, [r.score_100 for r in area_results], [r.score for r in task_results]
        ),
        overall_ci95=ranges.overall if ranges else None,
        covers_scope=all_present and all(r.complete for r in area_results),
        all_areas_present=all_present,
        missing_tasks=tuple(t.id for t in in_scope if t.id in counted and not by_task.get(t.id)),
        left_out=left_out,
        resamples=resamples,
        seed=seed,
    )
