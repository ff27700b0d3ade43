"""The shapes of a benchmark run's results: the scored answers that go in, and the frozen
task, skill, area and overall results that come out (computed by
:func:`sweepbench.bench.results.summarise`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sweepbench.bench.items import Scope

Interval = tuple[float, float]
"""A (low, high) range."""


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
