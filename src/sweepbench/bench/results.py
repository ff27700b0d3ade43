"""Scores of a benchmark run: per task, skill and area, the overall score, bootstrap 95% ranges,
the detailed results table, and the words shown when a run ends.

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
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

import numpy as np

from sweepbench.bench.bootstrap import FloatArray, percentile_interval, resample_means
from sweepbench.bench.items import Area, Benchmark, Scope, Task

Interval = tuple[float, float]
"""A (low, high) range."""
Outcome = Literal["completed", "completed_with_errors", "paused_budget", "interrupted"]
"""How a run ended (spec §8.3)."""
Surface = Literal["cli", "web"]
"""Where the outcome text is shown: the CLI says what command to run, the web says which button."""
RowGroup = Literal["Overall", "Area", "Task", "Skill"]

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
DEFAULT_DIMENSION = "default"
"""The skill name of items whose data names none (no Skill row of its own)."""
CSV_COLUMNS = (
    "Group", "Name", "Count", "Mean score", "Pass rate", "score_100", "ci95_lo", "ci95_hi",
)  # fmt: skip


# ---------------------------------------------------------------- input and result shapes


@dataclass(frozen=True)
class ScoredAnswer:
    """One scored answer: the raw score (0–1, or 1–N on a scaled task) and the pass verdict."""

    task: str
    dimension: str
    score: float
    passed: bool


@dataclass(frozen=True)
class SkillResult:
    """One skill (dimension): within one task, or across every task when ``task`` is None."""

    dimension: str
    count: int
    mean_score: float
    pass_rate: float
    task: str | None = None
    score: float | None = None
    """The task rule's 0–1 score on this skill's answers (None across tasks)."""


@dataclass(frozen=True)
class TaskResult:
    """One task's results (only tasks with at least one scored answer get one)."""

    task: str
    name: str
    area: str
    count: int
    mean_score: float
    """The mean raw score (on the task's own scale)."""
    pass_rate: float
    score: float
    """The task's 0–1 score used in area and overall scores (per ``task.score_by``)."""
    expected: int
    """How many items the task has in the loaded data."""
    ci95: Interval | None
    """The bootstrap 95% range of ``score`` (0–1); None when no resamples were asked for."""
    skills: tuple[SkillResult, ...] = ()

    @property
    def complete(self) -> bool:
        """True when every item of the task has a scored answer."""
        return self.count == self.expected


@dataclass(frozen=True)
class AreaResult:
    """One area's 0–100 score (only areas with at least one scored answer get one)."""

    area: str
    label: str
    score_100: float
    count: int
    expected: int
    """Items of the area's in-scope tasks."""
    mean_score: float
    pass_rate: float
    tasks_present: int
    tasks_in_scope: int
    complete: bool
    """True when every in-scope task of the area is present and complete."""
    ci95_100: Interval | None


@dataclass(frozen=True)
class Summary:
    """Every score of a run."""

    benchmark: str
    scope: Scope
    overall_method: Literal["mean_of_areas", "mean_of_tasks"]
    tasks: tuple[TaskResult, ...]
    areas: tuple[AreaResult, ...]
    skills: tuple[SkillResult, ...]
    """Per skill across every task, by name."""
    count: int
    expected: int
    """Items of every in-scope task."""
    mean_score: float
    pass_rate: float
    overall_100: float | None
    """None when nothing was scored."""
    overall_ci95: Interval | None
    """The bootstrap 95% range of the overall score (0–100)."""
    covers_scope: bool
    """True when every area of the scope is present and complete (the overall is comparable)."""
    all_areas_present: bool
    missing_tasks: tuple[str, ...]
    """Selected in-scope tasks with no scored answer."""
    left_out: int
    """Answers given for tasks outside the selection or the scope (not counted)."""
    resamples: int
    seed: int

    def task(self, task_id: str) -> TaskResult:
        """The result of a task; KeyError when it has none."""
        for result in self.tasks:
            if result.task == task_id:
                return result
        raise KeyError(task_id)

    def area(self, area_key: str) -> AreaResult:
        """The result of an area; KeyError when it has none."""
        for result in self.areas:
            if result.area == area_key:
                return result
        raise KeyError(area_key)


@dataclass(frozen=True)
class DetailRow:
    """One row of the detailed results table (spec §11)."""

    group: RowGroup
    name: str
    count: int
    mean_score: float
    pass_rate: float
    score_100: float | None
    ci95_100: Interval | None
    area: str | None = None
    task: str | None = None
    dimension: str | None = None


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


# ---------------------------------------------------------------- detailed table and CSV


def _scaled(interval: Interval | None) -> Interval | None:
    """A 0–1 range on 0–100."""
    return (interval[0] * 100.0, interval[1] * 100.0) if interval else None


def _skill_rows(result: TaskResult) -> list[DetailRow]:
    """A task's Skill rows; none when its only skill is the unnamed default one."""
    if [s.dimension for s in result.skills] == [DEFAULT_DIMENSION]:
        return []
    return [
        DetailRow(
            group="Skill",
            name=f"{result.name} · {skill.dimension}",
            count=skill.count,
            mean_score=skill.mean_score,
            pass_rate=skill.pass_rate,
            score_100=None if skill.score is None else skill.score * 100.0,
            ci95_100=None,
            area=result.area,
            task=result.task,
            dimension=skill.dimension,
        )
        for skill in result.skills
    ]


def detailed_rows(summary: Summary) -> list[DetailRow]:
    """The detailed results table (spec §11): an Overall row, then each Area row followed by
    its Task rows, each Task row followed by its Skill rows."""
    rows: list[DetailRow] = []
    if summary.count:
        rows.append(
            DetailRow("Overall", "Overall", summary.count, summary.mean_score, summary.pass_rate,
                      summary.overall_100, summary.overall_ci95)
        )  # fmt: skip
    for area in summary.areas:
        rows.append(
            DetailRow("Area", area.label, area.count, area.mean_score, area.pass_rate,
                      area.score_100, area.ci95_100, area=area.area)
        )  # fmt: skip
        for result in (t for t in summary.tasks if t.area == area.area):
            rows.append(
                DetailRow("Task", result.name, result.count, result.mean_score, result.pass_rate,
                          result.score * 100.0, _scaled(result.ci95), area=result.area,
                          task=result.task)
            )  # fmt: skip
            rows.extend(_skill_rows(result))
    return rows


def _number(value: float | None, decimals: int) -> str:
    """A number for the CSV, rounded; empty for None."""
    return "" if value is None else f"{value:.{decimals}f}"


def summary_csv(summary: Summary) -> str:
    """The detailed table as CSV: Group, Name, Count, Mean score, Pass rate (0–1), score_100,
    ci95_lo, ci95_hi (0–100)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in detailed_rows(summary):
        low, high = row.ci95_100 if row.ci95_100 else (None, None)
        writer.writerow(
            [row.group, row.name, row.count, _number(row.mean_score, 4),
             _number(row.pass_rate, 4), _number(row.score_100, 2), _number(low, 2),
             _number(high, 2)]
        )  # fmt: skip
    return buffer.getvalue()


# ---------------------------------------------------------------- words


def format_score(value_100: float, decimals: int = 1) -> str:
    """A 0–100 score rounded half up (83.65 → "83.7"), ignoring float noise past 9 decimals."""
    exact = Decimal(f"{value_100:.9f}")
    return str(exact.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


def format_money(amount: Decimal | None) -> str:
    """Dollars as the run flow shows them (spec §6.2): ``?`` unknown, ``$1,234.56`` from 0.995,
    ``$0.12`` from 0.01, ``$0`` for exactly zero, else six decimals without trailing zeros."""
    if amount is None:
        return "?"
    value = amount if isinstance(amount, Decimal) else Decimal(str(amount))
    if value < 0:
        return "-" + format_money(-value)
    if value == 0:
        return "$0"
    if value >= Decimal("0.01"):
        return f"${value.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP):,.2f}"
    small = f"{value.quantize(Decimal('0.000001'), rounding=ROUND_HALF_UP):.6f}"
    return "$" + small.rstrip("0").rstrip(".")


def _answers(count: int) -> str:
    """ "1 answer" / "N answers"."""
    return f"{count:,} answer" + ("" if count == 1 else "s")


def _error_clause(errors: int) -> str:
    """ "F hit errors" / "1 hit an error"."""
    return "1 hit an error" if errors == 1 else f"{errors:,} hit errors"


def _sentence(text: str) -> str:
    """Text with its first letter capitalised (the rest kept as is)."""
    return text[:1].upper() + text[1:]


def outcome_text(
    outcome: Outcome,
    *,
    scored: int,
    errors: int,
    spent: Decimal,
    reason: str | None = None,
    surface: Surface = "cli",
) -> tuple[str, str]:
    """The heading and body shown when a run ends (spec §8.3). ``reason`` (why an interrupted
    run stopped) must already be scrubbed of secrets."""
    done = f"{_answers(scored)} scored for {format_money(spent)}"
    again = "press Run again" if surface == "web" else "run the same command again"
    errors_note = f" {_sentence(_error_clause(errors))}." if errors else ""
    if outcome == "paused_budget":
        body = (f"{done}. Everything finished is saved.{errors_note} Raise the limit and "
                f"{again} to carry on from here.")  # fmt: skip
        return "Paused at your spending limit", body
    if outcome == "interrupted":
        why = f": {reason.strip().rstrip('.')}" if reason and reason.strip() else ""
        body = f"{done} before the run stopped{why}.{errors_note} {_sentence(again)} to continue."
        return "Stopped early", body
    if outcome == "completed_with_errors":
        retry = (
            "press Run again" if surface == "web" else "run the same command with --retry-failed"
        )
        body = (f"{done}; {_error_clause(errors)}, usually rate limits or timeouts. "
                f"{_sentence(retry)} to retry only those.")  # fmt: skip
        return "Finished with some errors", body
    return "Finished", f"{done}."


PARTIAL_NOTE = "A partial run is too small to compare with the leaderboard."


def scores_line(summary: Summary) -> str:
    """ "Scores on the questions that ran: Knowledge & reasoning 71.2 · Safety 80.4 · …" (areas
    present, one decimal), with the partial-run note when the run does not cover its scope."""
    if not summary.areas:
        return "No questions were scored."
    parts = " · ".join(f"{a.label} {format_score(a.score_100)}" for a in summary.areas)
    line = f"Scores on the questions that ran: {parts}"
    return line if summary.covers_scope else f"{line}. {PARTIAL_NOTE}"
