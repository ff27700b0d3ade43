"""The shapes every part of a benchmark speaks: a benchmark has areas, an area has tasks, a
task has items. Built by the sources (``bench.sources``), read by the plan, the runner, the
scorers and the results. Frozen and plain so that a loaded benchmark can be shared freely.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from sweepbench.judging.contract import JudgeSpec as JudgeSpec  # the contract's, re-exported

Grading = Literal["auto", "judge", "runtime"]
"""How a task is scored: checked automatically by a rule, graded by a judge model, or by the
multi-turn teaching runtime (an evaluator model, ``bench.dialogue``)."""
TaskScore = Literal["pass_rate", "mean_score"]
"""Which figure is the task's 0–1 score in area and overall scores."""
Scope = Literal["core", "paper"]
"""``core`` leaves out tasks a benchmark marks region-specific; ``paper`` (the original
scoring) includes them."""
SCOPE_ALIASES: dict[str, Scope] = {"core": "core", "default": "core", "paper": "paper",
                                   "original": "paper", "all": "paper"}  # fmt: skip


@dataclass(frozen=True)
class LoadProblem:
    """A row or file that could not be loaded, said by file, line and field."""

    file: str
    message: str
    line: int | None = None
    """1-based line (JSONL, CSV, YAML list entry) or spreadsheet row; None for the whole file."""
    field: str | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


@dataclass(frozen=True, slots=True)
class Item:
    """One question, normalised (spec §2.4)."""

    key: str
    """The checkpoint key, unique within a benchmark: ``<source_file>::<sample_id>``."""
    sample_id: str
    task: str
    dimension: str
    """The skill the item tests ("default" when the data names none)."""
    prompt: str
    """The user message exactly as sent (any answer-format suffix included)."""
    reference: Any = None
    """The answer key: a string, a JSON-able object, or None (judge-only tasks)."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Fields the scorer or judge needs (choice count, IFEval instructions, scene, …)."""
    source_file: str = ""
    """The data file's canonical name."""
    row: int = 0
    """1-based line or row in the source file."""
    system: str | None = None
    """A system prompt, when the benchmark sends one."""
    sample: int = 0
    """Which repeat of the question this is (0: the first; ``--repeats K`` asks each item K
    times, the later ones keyed ``<key>#sample-<n>``, n from 2)."""

    @staticmethod
    def make_key(source_file: str, sample_id: str) -> str:
        """The checkpoint key of an item."""
        return f"{source_file}::{sample_id}"

    def repeated(self, sample: int) -> Item:
        """This item's ``sample``-th repeat (0-based; 0 is the item itself)."""
        if sample == 0:
            return self
        return replace(self, key=f"{self.key}{SAMPLE_MARK}{sample + 1}", sample=sample)


SAMPLE_MARK = "#sample-"
"""What separates an item's key from its repeat number (``--repeats``)."""


def base_key(key: str) -> str:
    """The key of the item a repeat asks again (the key itself for a first sample)."""
    head, mark, tail = key.rpartition(SAMPLE_MARK)
    return head if mark and tail.isdigit() else key


@dataclass(frozen=True)
class PromptVersion:
    """Another version of a benchmark's prompts, to compare with its own (``--prompt-version``,
    the ``prompt_version`` axis of ``bench sweep``). Declared under ``prompt_versions``."""

    name: str
    system: str | None = None
    """Every item's system prompt under this version (None: the item's own)."""
    template: str | None = None
    """The user message under this version, ``{prompt}`` standing for the item's own prompt
    (None: the item's prompt as it is)."""

    def apply(self, item: Item) -> Item:
        """The item as this version asks it."""
        prompt = (
            item.prompt if self.template is None else self.template.replace("{prompt}", item.prompt)
        )
        system = item.system if self.system is None else self.system
        return replace(item, prompt=prompt, system=system)


@dataclass(frozen=True)
class Task:
    """A set of items scored one way."""

    id: str
    area: str
    """The key of the area the task belongs to."""
    name: str
    """A plain name for people ("MMLU-Pro", "Safety refusals")."""
    grading: Grading
    scorer: str
    """The scorer's name: ``choice``, ``choice_multi``, ``option_set``, ``ifeval``, ``math``,
    ``aime``, ``exact``, ``normalised``, ``regex``, ``numeric``, ``edu_rule``, ``judge`` or
    ``runtime``."""
    items: tuple[Item, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    """Scorer options (``choices``, ``prefixes``, ``pattern``, ``tolerance``, …)."""
    judge: JudgeSpec | None = None
    region_specific: bool = False
    multi_turn: bool = False
    score_by: TaskScore = "pass_rate"
    source_file: str = ""
    missing: str | None = None
    """Why the task's data could not be loaded; such a task cannot be selected."""
    problems: tuple[LoadProblem, ...] = ()
    """Rows that were skipped while loading (the rest loaded)."""
    description: str = ""

    @property
    def available(self) -> bool:
        """Loaded and runnable: a multi-turn task needs its dialogue scenario
        (``options["dialogue"]``, played by the teaching runtime)."""
        return self.missing is None and (not self.multi_turn or "dialogue" in self.options)

    @property
    def needs_judge(self) -> bool:
        """True when a judge model grades (or evaluates) this task's answers."""
        return self.grading != "auto"

    @property
    def grading_words(self) -> str:
        """The grading label for people (spec §2.2)."""
        return "checked automatically" if self.grading == "auto" else "graded by the judge model"


@dataclass(frozen=True)
class Area:
    """A group of tasks that gets one 0–100 score."""

    key: str
    label: str
    tasks: tuple[Task, ...] = ()


@dataclass(frozen=True)
class RoleDefaults:
    """The models a benchmark names for its roles, as its own published runs used them
    (ELBench's declaration; none for the others). Every surface reads them through the loaded
    benchmark: ``bench.start.prepare`` fills the judge in, the web page offers them."""

    judge: str | None = None
    """The judge of the benchmark's published results: a run's judge when none is chosen; a
    run graded by any other judge, or by this one verdict-only, is ranked on its own
    leaderboard board, not beside the published results."""
    decision_judge: str | None = None
    """The verdict-only judge offered first when a decision judge is asked for."""
    student: str | None = None
    """The simulated student offered when a separate one is asked for (without one, the judge
    plays the student, as in the benchmark's own templates)."""


@dataclass(frozen=True)
class Benchmark:
    """A whole question set."""

    id: str
    name: str
    areas: tuple[Area, ...]
    description: str = ""
    version: str = ""
    """A fingerprint of the loaded data (part of a run's settings hash)."""
    prompt_version: str = "1"
    """The version of the prompts the benchmark builds (part of the settings hash)."""
    prompt_versions: tuple[PromptVersion, ...] = ()
    """Other versions of its prompts a run may choose instead (declared ones)."""
    overall: Literal["mean_of_areas", "mean_of_tasks"] = "mean_of_areas"
    """How the overall score is made from area scores (ELBench: the unweighted mean)."""
    source: str = ""
    """Where it was loaded from (a path, or "built in")."""
    problems: tuple[LoadProblem, ...] = ()
    """Problems not tied to one task (a registry entry, a declaration field)."""
    data_outside: bool = False
    """Loaded with ``--allow-data-outside``: a run stores it, so reading the run back later
    (``bench show``) reloads the same data."""
    defaults: RoleDefaults = RoleDefaults()
    """The models it names for its roles (its published results' judge, say)."""

    @property
    def versions(self) -> tuple[str, ...]:
        """Every prompt version a run may choose: the benchmark's own first."""
        return (self.prompt_version, *(v.name for v in self.prompt_versions))

    def prompt_variant(self, name: str) -> PromptVersion | None:
        """The declared version ``name`` (None for the benchmark's own prompts); KeyError when
        there is no such version."""
        if name == self.prompt_version:
            return None
        for version in self.prompt_versions:
            if version.name == name:
                return version
        raise KeyError(name)

    @property
    def tasks(self) -> tuple[Task, ...]:
        """Every task, area by area."""
        return tuple(task for area in self.areas for task in area.tasks)

    def task(self, task_id: str) -> Task:
        """The task with this id; KeyError when there is none."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    def area_of(self, task_id: str) -> Area:
        """The area holding a task."""
        for area in self.areas:
            if any(task.id == task_id for task in area.tasks):
                return area
        raise KeyError(task_id)

    def in_scope(self, scope: Scope) -> tuple[Task, ...]:
        """The tasks a scope includes (``core`` leaves out region-specific ones)."""
        return tuple(t for t in self.tasks if scope == "paper" or not t.region_specific)
