"""Scoring: one entry point, :func:`score_answer`, that checks an answer by its task's rule.

Each scorer is a function registered by name with :func:`~.registry.scorer` in its own module;
importing this package imports those modules. Judged tasks are graded by a judge model through
the runner (see :mod:`.judge` for the request and verdict contract); multi-turn tasks by the
teaching runtime (later).
"""

from __future__ import annotations

from collections.abc import Callable

from sweepbench.bench.items import Item, Task
from sweepbench.bench.scoring.base import Score
from sweepbench.bench.scoring.registry import (
    ScorerInfo,
    UnknownScorerError,
    find_scorer,
    get_scorer,
    rule_scorer_names,
    scorer,
    scorer_names,
    unknown_scorer_text,
)
from sweepbench.bench.scoring.versions import (
    DEFAULT_SCORING_VERSION,
    SCORING_VERSIONS,
    ScoringVersion,
    using_rules,
)

# Importing the scorer modules registers their scorers (rule scorers are listed in this order).
# isort: off
from sweepbench.bench.scoring import choice, option_set, ifeval, mathanswer, text  # noqa: F401
from sweepbench.bench.scoring import edu_rule, judge  # noqa: F401
# isort: on

RULE_SCORERS = rule_scorer_names()
"""The built-in rule scorers' names (:func:`rule_scorer_names` also has any registered later)."""
SCORERS = scorer_names()
"""Every built-in scorer's name (:func:`scorer_names` also has any registered later)."""

__all__ = [
    "DEFAULT_SCORING_VERSION",
    "RULE_SCORERS",
    "SCORERS",
    "SCORING_VERSIONS",
    "Score",
    "ScorerInfo",
    "ScoringVersion",
    "UnknownScorerError",
    "find_scorer",
    "format_checker",
    "get_scorer",
    "retries_when_cut",
    "rule_scorer_names",
    "score_answer",
    "scorer",
    "scorer_names",
    "task_scoring_version",
    "unknown_scorer_text",
]


def task_scoring_version(task: Task, version: str | None = None) -> str:
    """The scoring version to read ``task``'s answers by: ``version`` if given, else the one
    the plan stamped on the task (``options.scoring_version``), else the default."""
    return version or str(task.options.get("scoring_version") or DEFAULT_SCORING_VERSION)


def score_answer(task: Task, item: Item, response: str, *, version: str | None = None) -> Score:
    """Check ``response`` to ``item`` by the rule of ``task``, read by the scoring version
    (:func:`task_scoring_version`, :mod:`.versions`). DataError for a task whose scorer is not
    a rule (judged tasks) or whose item lacks what the rule needs."""
    info = find_scorer(task.scorer)
    if info is None:
        raise UnknownScorerError(f"task {task.id}: {unknown_scorer_text(task.scorer)}")
    with using_rules(task_scoring_version(task, version)):
        return info.score(task, item, response)


def format_checker(
    task: Task, item: Item, *, version: str | None = None
) -> Callable[[str], bool] | None:
    """For choice tasks, a check that an answer has an extractable letter (spec §10.3: a
    reply without one gets one reminder), by the scoring ``version``; None for other tasks."""
    info = find_scorer(task.scorer)
    if info is None or info.format_check is None:
        return None
    with using_rules(task_scoring_version(task, version)):
        return info.format_check(task, item)


def retries_when_cut(task: Task) -> bool:
    """Whether an answer cut by the length limit is asked once more for only its final answer
    (math and AIME, spec §10.3)."""
    info = find_scorer(task.scorer)
    return info is not None and info.retry_when_cut
