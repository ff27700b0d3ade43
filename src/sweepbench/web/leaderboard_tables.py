"""The Leaderboard page's tables and choices, rendered from the library's results (the value
table, the published results and their task-by-task figures, your runs, the comparison)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import dash_mantine_components as dmc
from dash import html

from sweepbench.leaderboard.board import OVERLAP, Board, board_keys, price_of
from sweepbench.leaderboard.compare import Comparison
from sweepbench.leaderboard.published import PAPER_JUDGE, PublishedModel
from sweepbench.leaderboard.rows import OVERALL, TASK_PREFIX, BoardRow, MetricScore
from sweepbench.web.leaderboard_data import OFFICIAL_PREFIX, RUN_PREFIX, Sources

ALL_MODELS = "all"
NO_TASK = "none"
"""The One task only choice that leaves the area in charge."""
DEFAULT_TASKS_FOR = "gpt-5.4"


def table(head: Sequence[str], rows: Sequence[Sequence[Any]], *, id: str, empty: str) -> Any:
    """A striped table (scrolls sideways on a phone), or ``empty`` as dimmed text."""
    if not rows:
        return dmc.Text(empty, c="dimmed", size="sm", id=id)
    body = html.Tbody([html.Tr([html.Td(cell) for cell in row]) for row in rows])
    content = dmc.Table(
        [html.Thead(html.Tr([html.Th(h) for h in head])), body],
        striped=True,
        highlightOnHover=True,
        id=id,
    )
    return dmc.TableScrollContainer(content, minWidth=640)


def usd(value: Decimal | None) -> str:
    return "—" if value is None else f"${value:,.4f}".rstrip("0").rstrip(".")


def score_text(score: MetricScore | None, *, computed_here: bool = False) -> str:
    if score is None:
        return "—"
    text = f"{score.score:.1f}"
    if score.low is not None and score.high is not None:
        text += f" [{score.low:.1f}–{score.high:.1f}]"
        if computed_here:
            text += " computed here"
    if score.note:
        text += " †"
    return text


# ---------------------------------------------------------------- choices


def area_choices(found: Sources) -> list[dict[str, str]]:
    return [
        {"value": OVERALL, "label": "Overall"},
        *({"value": key, "label": label} for key, label in found.catalogue.areas.items()),
    ]


def task_choices(found: Sources) -> list[dict[str, str]]:
    """One task only: the scope's tasks by name (the board's own label of a task metric)."""
    metrics = [f"{TASK_PREFIX}{task}" for task in found.catalogue.in_scope(found.scope)]
    return [
        {"value": NO_TASK, "label": "None, use the area above"},
        *({"value": m, "label": found.catalogue.metric_label(m)} for m in metrics),
    ]


def published_models(found: Sources) -> list[PublishedModel]:
    """The published models of the board's benchmark (ELBench's; none for another)."""
    return [] if found.snapshot is None else found.snapshot.models


def board_choices(found: Sources) -> list[dict[str, str]]:
    """The judge boards: the paper's judge first (so labelled on ELBench's board), then the
    runs' judges."""
    paper = found.snapshot is not None
    return [
        {"value": key, "label": f"{key} (the paper's judge)" if paper and key == PAPER_JUDGE
         else key}
        for key in board_keys(found.rows)
    ]  # fmt: skip


def result_choices(found: Sources) -> list[dict[str, str]]:
    """The results to compare: the published models, then your runs (newest first)."""
    published = [
        {"value": f"{OFFICIAL_PREFIX}{m.key}", "label": f"{m.display_name} · published"}
        for m in published_models(found)
    ]
    runs = sorted(
        found.runs.rows, key=lambda r: (r.created_at is not None, r.created_at), reverse=True
    )
    mine = [{"value": f"{RUN_PREFIX}{r.run_id}", "label": f"{r.model} · {r.label}"} for r in runs]
    return [*mine, *published]


def tasks_for_choices(found: Sources) -> list[dict[str, str]]:
    return [
        {"value": ALL_MODELS, "label": "All models"},
        *({"value": m.key, "label": m.display_name} for m in published_models(found)),
    ]


# ---------------------------------------------------------------- tables


def value_table(board: Board) -> Any:
    """★, Model, Source, OpenRouter id, Input $/1M, Output $/1M, Price, Score (spec §17.2)."""
    rows = [
        [
            "★" if p.best else "",
            p.row.model,
            "Published" if p.row.source == "published" else p.row.label,
            p.row.model_id or "—",
            usd(p.row.price.input_per_million if p.row.price else None),
            usd(p.row.price.output_per_million if p.row.price else None),
            usd(p.price) + p.mark,
            score_text(p.score, computed_here=p.row.source == "run"),
        ]
        for p in board.placed
    ]
    head = ("★", "Model", "Source", "OpenRouter id", "Input $/1M", "Output $/1M", "Price", "Score")
    return table(head, rows, id="lb-value", empty="No model is placed on this board.")


def published_table(found: Sources) -> Any:
    """Rank, Model, Overall [95% range], the areas, Questions (ranges in paper scope only)."""
    in_scope = found.catalogue.in_scope(found.scope)
    by_name = {r.model: r for r in found.published}
    rows = []
    for m in published_models(found):
        row = by_name.get(m.display_name)
        if row is None:
            continue
        questions = sum(t.count for k, t in m.tasks.items() if k in in_scope)
        rows.append(
            [
                "—" if m.rank is None else str(m.rank),
                m.display_name,
                score_text(row.scores.get(OVERALL)),
                *(score_text(row.scores.get(area)) for area in found.catalogue.areas),
                f"{questions:,}",
            ]
        )
    head = ("Rank", "Model", "Overall [95% range]", *found.catalogue.areas.values(), "Questions")
    empty = "No published results."
    if found.snapshot is None:
        empty = f"No published results for {found.name}: its board holds your runs only."
    return table(head, rows, id="lb-published", empty=empty)


def tasks_table(found: Sources, which: str | None) -> Any:
    """Model, Area, Task, Questions, Score, Pass rate (%), Mean raw score (the scope's tasks,
    the 2026-06-08 revision)."""
    in_scope = found.catalogue.in_scope(found.scope)
    models = [m for m in published_models(found) if which in (None, ALL_MODELS) or m.key == which]
    rows = [
        [
            m.display_name,
            found.catalogue.areas.get(t.area, t.area),
            task_id,
            str(t.count),
            f"{100 * t.score:.1f}",
            f"{100 * t.pass_rate:.1f}",
            f"{t.mean_raw:.3f}",
        ]
        for m in models
        for task_id, t in m.tasks.items()
        if task_id in in_scope
    ]
    head = ("Model", "Area", "Task", "Questions", "Score", "Pass rate (%)", "Mean raw score")
    return table(head, rows, id="lb-tasks", empty="No task-by-task figures for this model.")


def runs_table(rows: Sequence[BoardRow]) -> Any:
    """Your runs of the scope (pulled ones so labelled): every run, placed or not."""
    ordered = sorted(rows, key=lambda r: (r.created_at is not None, r.created_at), reverse=True)
    body = []
    for r in ordered:
        overall = r.scores.get(OVERALL)
        body.append(
            [
                r.run_id or "—",
                r.model,
                r.label.removesuffix(f" {r.run_id}"),
                r.judge or "no judge",
                score_text(overall, computed_here=True),
                "complete" if overall is not None and overall.complete else "incomplete",
                usd(price_of(r, "blended")),
                usd(r.measured_usd),
                r.created_at.strftime("%Y-%m-%d %H:%M UTC") if r.created_at else "—",
            ]
        )
    head = ("Run", "Model", "Source", "Board", "Overall [95% range]", "Coverage",
            "Blended $/1M", "Spent", "Started")  # fmt: skip
    return table(
        head,
        body,
        id="lb-runs",
        empty="No runs of yours in this scope yet. Test your own model on Run a benchmark.",
    )


def comparison_table(result: Comparison) -> Any:
    head = [result.header()[0], *(f"{e.label} ({e.key})" for e in result.entries)]
    return table(head, result.rows(), id="lb-compare", empty="Nothing to compare.")


def comparison_notes(result: Comparison) -> Any:
    """Under the comparison: how many tasks matched, then what each mark in it means (the
    2026-06-08 revision's †, the Teaching ‡)."""
    return dmc.Stack([dmc.Text(line, size="sm", c="dimmed") for line in result.notes], gap=2)


def takeaway_list(lines: Sequence[str], *, ranges: bool) -> Any:
    items = [dmc.ListItem(line) for line in lines]
    if ranges:
        items.append(dmc.ListItem(OVERLAP))
    return dmc.List(items, size="sm", spacing=4, id="lb-takeaway-list")
