"""The detailed results table of a run (spec §11): an Overall row, then each Area row with
its Task rows, each Task row with its Skill rows; and the same table as CSV."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Literal

from sweepbench.bench.results_shapes import Interval, Summary, TaskResult

RowGroup = Literal["Overall", "Area", "Task", "Skill"]
DEFAULT_DIMENSION = "default"
"""The skill name of items whose data names none (no Skill row of its own)."""
CSV_COLUMNS = (
    "Group", "Name", "Count", "Mean score", "Pass rate", "score_100", "ci95_lo", "ci95_hi",
)  # fmt: skip


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
