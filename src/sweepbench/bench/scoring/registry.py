"""The scorer registry: every scorer name a task may use, its scoring function and its facts.

A scorer is one function decorated with :func:`scorer` in its own module; importing
:mod:`sweepbench.bench.scoring` imports those modules, which registers them::

    @scorer("exact", needs_reference=True)
    def exact_task(task: Task, item: Item, response: str) -> Score: ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sweepbench.bench.items import Grading, Item, Task
from sweepbench.bench.scoring.base import Score
from sweepbench.errors import DataError

ScoreFn = Callable[[Task, Item, str], Score]
"""Grades one response to one item of a task."""
FormatCheck = Callable[[str], bool]
"""Whether a response follows the required answer format."""
FormatCheckFor = Callable[[Task, Item], FormatCheck]
"""Builds the format check for one item of a task."""


@dataclass(frozen=True)
class ScorerInfo:
    """One registered scorer: its function and what the rest of the code needs to know."""

    name: str
    score: ScoreFn
    """The scoring function (for judged scorers, one that refuses: the runner grades them)."""
    grading: Grading = "auto"
    """``auto`` (a rule), ``judge`` (a judge model) or ``runtime`` (the teaching runtime)."""
    format_check: FormatCheckFor | None = None
    """A check that an answer is extractable (spec §10.3: one reminder when it is not)."""
    partial_credit: bool = False
    """Scores between 0 and 1 are possible, so a task is summarised by its mean score."""
    retry_when_cut: bool = False
    """An answer cut by the length limit is asked once more for only its final answer."""
    needs_reference: bool = False
    """Every item must carry a reference answer."""
    options: frozenset[str] = frozenset()
    """The task options the scorer reads."""

    @property
    def needs_judge(self) -> bool:
        """True when a judge model grades (or evaluates) the answers, not a rule."""
        return self.grading != "auto"


class UnknownScorerError(DataError):
    """A scorer name that nothing registered."""


_SCORERS: dict[str, ScorerInfo] = {}


def scorer(
    name: str,
    *,
    grading: Grading = "auto",
    format_check: FormatCheckFor | None = None,
    partial_credit: bool = False,
    retry_when_cut: bool = False,
    needs_reference: bool = False,
    options: Iterable[str] = (),
) -> Callable[[ScoreFn], ScoreFn]:
    """Register the decorated function as the scorer ``name`` (ValueError for a name already
    taken); the function is returned unchanged."""

    def register(score: ScoreFn) -> ScoreFn:
        if name in _SCORERS:
            raise ValueError(f"scorer {name!r} is already registered")
        _SCORERS[name] = ScorerInfo(
            name, score, grading, format_check, partial_credit, retry_when_cut,
            needs_reference, frozenset(options),
        )  # fmt: skip
        return score

    return register


def unregister(name: str) -> None:
    """Remove the scorer ``name`` (for tests and plug-ins that clean up); no error if absent."""
    _SCORERS.pop(name, None)


def scorer_names() -> tuple[str, ...]:
    """Every registered name: rule scorers, then judged ones, each in registration order."""
    infos = _SCORERS.values()
    return tuple(i.name for i in infos if not i.needs_judge) + tuple(
        i.name for i in infos if i.needs_judge
    )


def rule_scorer_names() -> tuple[str, ...]:
    """The names of the scorers that grade by a rule (no judge model)."""
    return tuple(i.name for i in _SCORERS.values() if not i.needs_judge)


def unknown_scorer_text(name: str) -> str:
    """``unknown scorer 'x'; known: choice, …``."""
    return f"unknown scorer {name!r}; known: {', '.join(scorer_names())}"


def find_scorer(name: str) -> ScorerInfo | None:
    """The scorer ``name``, or None when none is registered under it."""
    return _SCORERS.get(name)


def get_scorer(name: str) -> ScorerInfo:
    """The scorer ``name``; :class:`UnknownScorerError` listing the known names otherwise."""
    info = _SCORERS.get(name)
    if info is None:
        raise UnknownScorerError(unknown_scorer_text(name))
    return info
