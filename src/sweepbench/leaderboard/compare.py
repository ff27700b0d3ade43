"""Comparing results side by side (spec §17.8; issue 15, item 7; issue 25, section 3).

An entry is one result: a stored run (``run:<id>``, from its :class:`RunRecord`) or a
published row (``official:<model>``, handed in by the caller so that this module does not
depend on where published rows come from). Two views:

* **Task by task (matched subset)**: rows are the tasks the first entry covers, in benchmark
  order; a cell is that entry's task score (0–100) or "—" when it lacks the task; a final row
  gives each entry's mean over the tasks every entry covers, and the note says how many tasks
  were matched. A published row's task figures are the 2026-06-08 revision's, marked †.
* **By area**: rows are the areas and Overall; an entry that covers only some of an area's
  tasks shows "partial (n/N)" instead of a score. A published row shows its final figures
  (as the board shows them), never a figure made from its task figures; one that stands on
  the 2026-06-08 revision is marked †.

Where a run stands beside a published row, the rows that hold a Teaching task (and Overall,
by area) are marked ‡: a run's Teaching score is the runtime evaluator's, the final published
one a re-judge no run can replicate. :attr:`Comparison.notes` says what each mark means.

The areas and their tasks (the :class:`Layout`) come from the first run's record, or are
handed in (:meth:`Layout.of_catalogue`) when only published rows are compared.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sweepbench.bench.record import RunRecord
from sweepbench.errors import UserError
from sweepbench.leaderboard.board import Catalogue
from sweepbench.leaderboard.published import TASK_FIGURES_MARK, TEACHING_MARK
from sweepbench.leaderboard.rows import REVISION_MARK, Scope

View = Literal["task", "area"]
Source = Literal["run", "published"]
DASH = "—"
REVISED = "†"
"""Marks a published figure of the 2026-06-08 revision (a task figure, or an area or overall
figure that stands on it)."""
TEACHING = "‡"
"""Marks a row where a run's Teaching score stands beside a published one."""


@dataclass(frozen=True)
class LayoutArea:
    """One area: its key, its name for people, its in-scope tasks in order."""

    key: str
    label: str
    tasks: tuple[str, ...]


@dataclass(frozen=True)
class Layout:
    """The areas of a benchmark's scope, in order, with their tasks."""

    areas: tuple[LayoutArea, ...]

    @property
    def tasks(self) -> tuple[str, ...]:
        """Every task, in order."""
        return tuple(task for area in self.areas for task in area.tasks)

    @classmethod
    def of_catalogue(cls, catalogue: Catalogue, scope: Scope) -> Layout:
        """A benchmark's areas and in-scope tasks, in catalogue order (comparing published
        rows alone)."""
        tasks = catalogue.in_scope(scope)
        return cls(
            tuple(
                LayoutArea(key, label, tuple(t for t, task in tasks.items() if task.area == key))
                for key, label in catalogue.areas.items()
            )
        )

    @classmethod
    def of_record(cls, record: RunRecord) -> Layout:
        """The in-scope areas and tasks of a run, as its record's coverage lists them."""
        return cls(
            tuple(
                LayoutArea(
                    key,
                    area.label,
                    tuple(t for t, cov in record.coverage.tasks.items() if cov.area == key),
                )
                for key, area in record.coverage.areas.items()
            )
        )


@dataclass(frozen=True)
class Entry:
    """One result to compare: its key, a name for people, and its 0–100 scores."""

    key: str
    """``run:<id>`` or ``official:<model>``."""
    label: str
    """The model, for people."""
    tasks: Mapping[str, float]
    """Task id → score (0–100), for the tasks it covers."""
    areas: Mapping[str, float] = field(default_factory=dict)
    """Area key → score (0–100) where known (a run's count-weighted area scores, a published
    row's final figures); a run's area left out is the mean of its task scores."""
    overall: float | None = None
    """The overall score where known; else (a run) the mean of the area scores."""
    layout: Layout | None = None
    """A run's own areas and tasks (None for a published row)."""
    source: Source = "run"
    """``published``: areas and overall are only ever its final figures (an area it lacks
    is "—", never the mean of its task figures) and its task figures are marked †."""
    revised: frozenset[str] = frozenset()
    """Area keys (and ``overall``) of a published row whose figure stands partly or wholly
    on the 2026-06-08 revision (marked †)."""
    teaching: frozenset[str] = frozenset()
    """A published row's tasks whose published Teaching figure a run cannot replicate
    (scored by the teaching runtime's evaluator in a run; re-judged in the final table)."""
    scope: Scope | None = None
    """The scope a run was scored in (None for a published row: it is built for one)."""

    @classmethod
    def of_record(cls, record: RunRecord) -> Entry:
        """A stored run's entry: its task, area and overall scores from its record."""
        scores = record.scores
        return cls(
            key=f"run:{record.run_id}",
            label=record.roles["target"].model,
            tasks={task: s.score for task, s in scores.tasks.items()},
            areas={area: s.score for area, s in scores.areas.items()},
            overall=scores.overall.score if scores.overall else None,
            layout=Layout.of_record(record),
            scope=record.selection.scope,
        )

    @classmethod
    def published(
        cls,
        model: str,
        tasks: Mapping[str, float],
        label: str | None = None,
        *,
        areas: Mapping[str, float] | None = None,
        overall: float | None = None,
        revised: Collection[str] = (),
        teaching: Collection[str] = (),
    ) -> Entry:
        """A published row's entry (``official:<model>``): its task figures (the 2026-06-08
        revision) and its final area and overall figures (those given)."""
        return cls(
            key=f"official:{model}",
            label=label or model,
            tasks=dict(tasks),
            areas=dict(areas or {}),
            overall=overall,
            source="published",
            revised=frozenset(revised),
            teaching=frozenset(teaching),
        )


@dataclass(frozen=True)
class Cell:
    """One entry's value in one row: a score, or how much of the row it covers."""

    score: float | None
    covered: int = 1
    total: int = 1
    mark: str = ""
    """``†`` on a published figure of the 2026-06-08 revision; empty otherwise."""

    @property
    def text(self) -> str:
        """``71.3``, ``71.3 †``, ``partial (2/3)`` or ``—``."""
        if self.covered == 0 or (self.score is None and self.covered == self.total):
            return DASH
        if self.covered < self.total:
            return f"partial ({self.covered}/{self.total})"
        if self.score is None:
            return DASH
        return f"{self.score:.1f} {self.mark}" if self.mark else f"{self.score:.1f}"

    def as_json(self) -> dict[str, Any]:
        return {
            "score": self.score, "covered": self.covered, "of": self.total, "text": self.text,
            "mark": self.mark or None,
        }  # fmt: skip


@dataclass(frozen=True)
class Line:
    """One row of a comparison: what it is (a task, an area, the matched mean, Overall)
    and a cell per entry."""

    kind: Literal["task", "area", "mean", "overall"]
    key: str
    label: str
    cells: tuple[Cell, ...]
    mark: str = ""
    """``‡`` where a run's Teaching score stands beside a published one; empty otherwise."""

    @property
    def title(self) -> str:
        """The row's label with its mark."""
        return f"{self.label} {self.mark}" if self.mark else self.label


@dataclass(frozen=True)
class Comparison:
    """A comparison of entries in one view."""

    by: View
    entries: tuple[Entry, ...]
    lines: tuple[Line, ...]
    matched: int
    """Tasks every entry covers."""
    tasks: int
    """Tasks in the view (the first entry's, or the layout's)."""

    @property
    def note(self) -> str:
        """How many tasks were matched."""
        word = "task" if self.tasks == 1 else "tasks"
        if self.by == "area":
            return (
                f"{self.matched} of {self.tasks} {word} covered by every entry; an area an "
                "entry covers only partly shows partial (tasks covered/tasks)."
            )
        return (
            f"{self.matched} of {self.tasks} {word} matched (covered by every entry); the "
            "mean is over the matched tasks."
        )

    @property
    def marks(self) -> list[str]:
        """What each mark shown in the table means (none when none is shown)."""
        found = []
        if any(cell.mark == REVISED for line in self.lines for cell in line.cells):
            found.append(TASK_FIGURES_MARK if self.by == "task" else REVISION_MARK)
        if any(line.mark == TEACHING for line in self.lines):
            found.append(TEACHING_MARK)
        return found

    @property
    def notes(self) -> list[str]:
        """Every line shown under the table: the matched note, the marks', and by area a line
        per published row without final figures."""
        missing = [
            f"{e.key} is not in the final published table: it has task figures only "
            "(2026-06-08 revision), no area or overall figure."
            for e in self.entries
            if self.by == "area" and e.source == "published" and not e.areas and e.overall is None
        ]
        return [self.note, *self.marks, *missing]

    def header(self) -> list[str]:
        """The table's column titles."""
        return ["Task" if self.by == "task" else "Area", *(e.key for e in self.entries)]

    def rows(self) -> list[list[str]]:
        """The table as text: a row per line, its label then one cell per entry."""
        return [[line.title, *(cell.text for cell in line.cells)] for line in self.lines]

    def as_json(self) -> dict[str, Any]:
        """The comparison as plain JSON data."""
        return {
            "by": self.by,
            "entries": [{"key": e.key, "label": e.label, "source": e.source}
                        for e in self.entries],
            "matched": self.matched,
            "tasks": self.tasks,
            "note": self.note,
            "marks": self.marks,
            "rows": [
                {"kind": line.kind, "key": line.key, "label": line.label,
                 "mark": line.mark or None, "cells": [cell.as_json() for cell in line.cells]}
                for line in self.lines
            ],
        }  # fmt: skip


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _layout(entries: Sequence[Entry], layout: Layout | None) -> Layout:
    if layout is not None:
        return layout
    for entry in entries:
        if entry.layout is not None:
            return entry.layout
    raise UserError("comparing published rows alone needs the benchmark's areas and tasks")


def compare(
    entries: Sequence[Entry], *, by: View = "task", layout: Layout | None = None
) -> Comparison:
    """Compare two or more entries task by task (``by="task"``) or by area (``by="area"``).
    ``layout`` gives the areas and tasks; by default the first run's."""
    if len(entries) < 2:
        raise UserError("a comparison needs two or more results")
    keys = [e.key for e in entries]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise UserError(f"{', '.join(twice)} is given more than once")
    shape = _layout(entries, layout)
    if by == "task":
        return _by_task(tuple(entries), shape)
    if by == "area":
        return _by_area(tuple(entries), shape)
    raise UserError(f"compare by task or area, not {by!r}")


def _teaching_tasks(entries: Sequence[Entry]) -> frozenset[str]:
    """The Teaching tasks of the published rows when a run stands beside one (else none):
    their rows carry the Teaching mark."""
    if not any(e.source == "run" for e in entries):
        return frozenset()
    return frozenset().union(*(e.teaching for e in entries if e.source == "published"))


def _task_cell(entry: Entry, task: str) -> Cell:
    """An entry's task score; a published row's is the 2026-06-08 revision's (†)."""
    mark = REVISED if entry.source == "published" else ""
    return Cell(entry.tasks.get(task), int(task in entry.tasks), mark=mark)


def _by_task(entries: tuple[Entry, ...], layout: Layout) -> Comparison:
    first = entries[0]
    teaching = _teaching_tasks(entries)
    rows = [task for task in layout.tasks if task in first.tasks]
    rows += sorted(set(first.tasks) - set(rows))  # a published row's tasks beyond the layout
    matched = [task for task in rows if all(task in e.tasks for e in entries)]
    lines = [
        Line(
            "task",
            task,
            task,
            tuple(_task_cell(e, task) for e in entries),
            mark=TEACHING if task in teaching else "",
        )
        for task in rows
    ]
    means = tuple(
        Cell(
            _mean([e.tasks[t] for t in matched]),
            int(bool(matched)),
            mark=REVISED if e.source == "published" else "",
        )
        for e in entries
    )
    word = "task" if len(matched) == 1 else "tasks"
    lines.append(Line("mean", "mean", f"Mean over {len(matched)} matched {word}", means))
    return Comparison("task", entries, tuple(lines), len(matched), len(rows))


def _published_cell(entry: Entry, key: str, score: float | None) -> Cell:
    """A published row's final figure for an area or ``overall`` ("—" when it has none),
    marked † when it stands on the 2026-06-08 revision."""
    if score is None:
        return Cell(None, 0)
    return Cell(score, mark=REVISED if key in entry.revised else "")


def _area_cell(entry: Entry, area: LayoutArea) -> Cell:
    if entry.source == "published":
        return _published_cell(entry, area.key, entry.areas.get(area.key))
    covered = [t for t in area.tasks if t in entry.tasks]
    total = len(area.tasks)
    if len(covered) < total:
        return Cell(None, len(covered), total)
    score = entry.areas.get(area.key)
    if score is None:
        score = _mean([entry.tasks[t] for t in covered])
    return Cell(score, total, total)


def _overall_cell(entry: Entry, layout: Layout, areas: Sequence[Cell]) -> Cell:
    if entry.source == "published":
        return _published_cell(entry, "overall", entry.overall)
    tasks = layout.tasks
    covered = sum(1 for t in tasks if t in entry.tasks)
    if covered < len(tasks):
        return Cell(None, covered, len(tasks))
    score = entry.overall
    if score is None:
        score = _mean([c.score for c in areas if c.score is not None])
    return Cell(score, len(tasks), len(tasks))


def _by_area(entries: tuple[Entry, ...], layout: Layout) -> Comparison:
    teaching = _teaching_tasks(entries)
    lines: list[Line] = []
    per_entry: list[list[Cell]] = [[] for _ in entries]
    for area in layout.areas:
        cells = tuple(_area_cell(e, area) for e in entries)
        for found, cell in zip(per_entry, cells, strict=True):
            found.append(cell)
        mark = TEACHING if teaching & set(area.tasks) else ""
        lines.append(Line("area", area.key, area.label, cells, mark=mark))
    overall = tuple(
        _overall_cell(e, layout, cells) for e, cells in zip(entries, per_entry, strict=True)
    )
    overall_mark = TEACHING if any(line.mark for line in lines) else ""
    lines.append(Line("overall", "overall", "Overall", overall, mark=overall_mark))
    tasks = layout.tasks
    matched = sum(1 for t in tasks if all(t in e.tasks for e in entries))
    return Comparison("area", entries, tuple(lines), matched, len(tasks))
