"""The Leaderboard page (spec §17): ELBench's published results and your runs, by price and
score, one board per judge.

The controls (benchmark, area, scope, judge board, filters, one task, price measure, your runs
on or off) pick a board from :mod:`sweepbench.leaderboard` (no rule lives here). ELBench's
board, the default, holds its published results beside your runs; every other benchmark with a
board (the built-in ones, and any with a stored run; ``?benchmark=ID`` opens one) holds your
runs of it, side by side. The chart (Plotly, served by this app, log price against score, the
frontier as a step line), the takeaway and the value table; accordions hold the published
results (with the task-by-task picker), your runs, and the comparison of picked results (task
by task or by area, and the paired test of two runs). Refresh first pulls the configured shared
leaderboard into the store (when there is one), then re-reads the store. Nothing here spends or
takes a key."""

from __future__ import annotations

from typing import Any

import dash_mantine_components as dmc
from dash import Dash, Input, Output, State, callback_context, dcc, html, no_update

from sweepbench.errors import UserError
from sweepbench.leaderboard.board import MEASURE_LABELS
from sweepbench.leaderboard.chart import chart_figure
from sweepbench.leaderboard.published import PAPER_JUDGE, TEACHING_PROVENANCE, load_published
from sweepbench.leaderboard.rows import OVERALL, REVISION_MARK
from sweepbench.leaderboard.sources import ELBENCH
from sweepbench.web.context import WebContext
from sweepbench.web.leaderboard_data import (
    DEFAULT_BASELINES,
    PRICE_OFF,
    RUN_PREFIX,
    SIZE_OFF,
    Sources,
    asked_benchmark,
    benchmark_choices,
    benchmark_of,
    board_view,
    comparison,
    filters_of,
    metric_of,
    paired,
    pull_shared,
    scope_of,
    sources,
)
from sweepbench.web.leaderboard_tables import (
    DEFAULT_TASKS_FOR,
    NO_TASK,
    area_choices,
    board_choices,
    comparison_notes,
    comparison_table,
    published_table,
    result_choices,
    runs_table,
    takeaway_list,
    task_choices,
    tasks_for_choices,
    tasks_table,
    value_table,
)

TITLE = "How well do AI models meet education-relevant constraints?"
GRAPH_CONFIG: Any = {
    "displaylogo": False,
    "responsive": True,
    "modeBarButtonsToRemove": ["toImage"],
}
"""No button that would reach for anything off this app; Plotly itself is served locally."""
REFRESH_NOTE = "Re-read the store: {runs} of your runs in this scope."
NO_SHARED_NOTE = (
    "No shared leaderboard is configured here; import others' runs with `sweepbench "
    "leaderboard pull`, then Refresh."
)


def headline(found: Sources) -> str:
    count = len(found.catalogue.areas)
    areas = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}.get(count, str(count))
    text = (
        f"{found.name} scores models on {found.questions:,} questions in {areas} "
        f"area{'' if count == 1 else 's'}. "
        "Each dot is a model: higher scores better, further left costs less."
    )
    if found.snapshot is None:
        text += " This board holds your runs only: it has no published results."
    return text


def default_compare(found: Sources) -> tuple[str | None, list[str]]:
    """The first result (your newest run, else the first baseline; None when there is
    neither) and the baselines minus it."""
    choices = [c["value"] for c in result_choices(found)]
    runs = [c for c in choices if c.startswith(RUN_PREFIX)]
    first: str | None = runs[0] if runs else DEFAULT_BASELINES[0]
    if first not in choices:
        first = None
    return first, [b for b in DEFAULT_BASELINES if b != first and b in choices]


def default_board(found: Sources) -> str:
    """The board a benchmark opens on: the paper's judge's for ELBench (its published
    results); for another benchmark, the board of your newest run of it."""
    if found.snapshot is None and found.runs.rows:
        newest = max(found.runs.rows, key=lambda r: (r.created_at is not None, r.created_at))
        if newest.judge is not None:
            return newest.judge
    return PAPER_JUDGE


def price_limit_label(measure: object) -> str:
    """The Highest price slider's title on the chosen measure (the filter is on it)."""
    key = measure if isinstance(measure, str) and measure in MEASURE_LABELS else "blended"
    return f"Highest price ({MEASURE_LABELS[key]}; {PRICE_OFF:g} = no limit)"


def layout(context: WebContext, search: str) -> Any:
    """The page, its choices read from the store now (``?benchmark=ID`` opens that
    benchmark's board when it has one)."""
    benchmarks = benchmark_choices(context.store)
    benchmark = benchmark_of(asked_benchmark(search), benchmarks)
    found = sources(context.store, "core", benchmark)
    first, others = default_compare(found)
    controls = dmc.Group(
        [
            dmc.Select(
                id="lb-benchmark", label="Benchmark", data=benchmarks, value=found.benchmark,
                allowDeselect=False, w=300,
            ),
            dmc.Select(
                id="lb-area", label="Area", data=area_choices(found), value=OVERALL,
                allowDeselect=False, w=220,
            ),
            dmc.Select(
                id="lb-board", label="Graded by", data=board_choices(found),
                value=default_board(found), allowDeselect=False, w=320,
            ),
            dmc.Checkbox(id="lb-scope", label="Include the region-specific sets", checked=False),
            dmc.Button("Refresh", id="lb-refresh", variant="light"),
            dcc.Link("Test your own model →", href="/benchmarks", id="lb-test-own"),
        ],
        align="flex-end",
    )  # fmt: skip
    filters = dmc.Group(
        [
            dmc.Stack(
                [
                    dmc.Text(price_limit_label("blended"), size="sm", id="lb-max-price-label"),
                    dmc.Slider(
                        id="lb-max-price", min=0.1, max=PRICE_OFF, step=0.1, value=PRICE_OFF,
                        marks=[{"value": 0.1, "label": "$0.1"}, {"value": 30, "label": "no limit"}],
                        w=260,
                    ),
                ],
                gap=4,
            ),
            dmc.Stack(
                [
                    dmc.Text("Largest model size (billions; 1,000 = no limit)", size="sm"),
                    dmc.Slider(
                        id="lb-max-size", min=1, max=SIZE_OFF, step=1, value=SIZE_OFF,
                        marks=[{"value": 1, "label": "1B"}, {"value": 1000, "label": "no limit"}],
                        w=260,
                    ),
                ],
                gap=4,
            ),
            dmc.Checkbox(
                id="lb-undisclosed", label="Include models that don't publish their size",
                checked=True,
            ),
        ],
        align="flex-start",
        gap="xl",
        mb="md",
    )  # fmt: skip
    more = dmc.Fieldset(
        [
            dmc.Group(
                [
                    dmc.Select(
                        id="lb-task", label="One task only", data=task_choices(found),
                        value=NO_TASK, allowDeselect=False, w=260,
                    ),
                    dmc.Select(
                        id="lb-measure", label="Price measure",
                        data=[{"value": k, "label": v} for k, v in MEASURE_LABELS.items()],
                        value="blended", allowDeselect=False, w=320,
                    ),
                    dmc.Switch(id="lb-show-runs", label="Show your runs", checked=True),
                ],
                align="flex-end",
            ),
            dmc.Text("Value table (★ = best value)", fw=500, size="sm", mt="sm"),
            html.Div(id="lb-value-table"),
        ],
        legend="More ways to look at the results",
    )  # fmt: skip
    accordions = dmc.Accordion(
        [
            _item(
                "published",
                "Published results",
                hidden=found.snapshot is None,
                children=[
                    html.Div(id="lb-published-table"),
                    dmc.Text(REVISION_MARK, size="xs", c="dimmed"),
                    dmc.Select(
                        id="lb-tasks-for", label="Task-by-task scores for",
                        data=tasks_for_choices(found), value=DEFAULT_TASKS_FOR,
                        allowDeselect=False, w=260, mt="sm",
                    ),
                    html.Div(id="lb-tasks-table"),
                    dmc.Text(load_published().provenance, size="xs", c="dimmed"),
                    dmc.Text(
                        TEACHING_PROVENANCE, size="xs", c="dimmed", id="lb-teaching-provenance"
                    ),
                ],
            ),
            _item("runs", "Your runs", [html.Div(id="lb-runs-table")]),
            _item(
                "compare",
                "Compare results side by side",
                [
                    dmc.Group(
                        [
                            dmc.Select(
                                id="lb-compare-first", label="Result",
                                data=result_choices(found), value=first, allowDeselect=False,
                                searchable=True, w=320,
                            ),
                            dmc.MultiSelect(
                                id="lb-compare-with", label="Compare with",
                                data=result_choices(found), value=others, searchable=True,
                                w=420,
                            ),
                            dmc.SegmentedControl(
                                id="lb-compare-by", value="task",
                                data=[
                                    {"value": "task", "label": "Task by task (matched subset)"},
                                    {"value": "area", "label": "By area (0–100)"},
                                ],
                            ),
                        ],
                        align="flex-end",
                    ),
                    html.Div(id="lb-compare-table", style={"marginTop": 12}),
                    html.Div(id="lb-compare-note"),
                    dmc.Text(id="lb-paired", size="sm"),
                ],
            ),
        ],
        multiple=True,
        variant="separated",
        id="lb-accordion",
    )  # fmt: skip
    return dmc.Stack(
        [
            dmc.Title(TITLE, order=2),
            dmc.Text(headline(found), id="lb-headline"),
            controls,
            filters,
            dmc.Text(id="lb-refresh-note", size="sm", c="dimmed"),
            dcc.Store(id="lb-pulled"),
            dcc.Graph(id="lb-chart", config=GRAPH_CONFIG, mathjax=False, style={"height": 520}),
            html.Div(id="lb-takeaway"),
            more,
            accordions,
        ],
        id="lb-page",
    )


def _item(value: str, title: str, children: list[Any], *, hidden: bool = False) -> Any:
    return dmc.AccordionItem(
        [dmc.AccordionControl(title, id=f"lb-open-{value}"), dmc.AccordionPanel(children)],
        value=value,
        id=f"lb-item-{value}",
        style=_shown(not hidden),
    )


def _shown(shown: bool) -> dict[str, str]:
    return {} if shown else {"display": "none"}


def _keep(value: Any, data: list[dict[str, str]], fallback: Any) -> Any:
    """A selection that still exists is kept; else ``fallback``."""
    values = {c["value"] for c in data}
    if isinstance(value, list):
        kept = [v for v in value if v in values]
        return kept if kept else fallback
    return value if value in values else fallback


def register(app: Dash, context: WebContext) -> None:
    """The page's callbacks: choices and tables on scope change and Refresh, the board, the
    task-by-task table and the comparison. Refresh pulls first (:func:`pull_shared`); the
    views follow its answer, so they read the store after the pull."""

    @app.callback(
        Output("lb-pulled", "data"),
        Input("lb-refresh", "n_clicks"),
        prevent_initial_call=True,
    )
    def refresh(clicks: int | None) -> dict[str, Any]:
        """Pull the shared leaderboard into the store; what it did, for the note."""
        return {"clicks": clicks, "lines": pull_shared(context.store)}

    @app.callback(
        Output("lb-headline", "children"),
        Output("lb-benchmark", "data"),
        Output("lb-area", "data"),
        Output("lb-area", "value"),
        Output("lb-board", "data"),
        Output("lb-board", "value"),
        Output("lb-task", "data"),
        Output("lb-task", "value"),
        Output("lb-compare-first", "data"),
        Output("lb-compare-first", "value"),
        Output("lb-compare-with", "data"),
        Output("lb-compare-with", "value"),
        Output("lb-item-published", "style"),
        Output("lb-tasks-for", "data"),
        Output("lb-published-table", "children"),
        Output("lb-runs-table", "children"),
        Output("lb-refresh-note", "children"),
        Input("lb-benchmark", "value"),
        Input("lb-scope", "checked"),
        Input("lb-pulled", "data"),
        State("lb-area", "value"),
        State("lb-board", "value"),
        State("lb-task", "value"),
        State("lb-compare-first", "value"),
        State("lb-compare-with", "value"),
    )
    def rescope(
        benchmark: Any,
        regional: bool | None,
        pulled: dict[str, Any] | None,
        area: str | None,
        board: str | None,
        task: str | None,
        first: str | None,
        others: list[str] | None,
    ) -> tuple[Any, ...]:
        """Rebuild the choices and the tables: on a benchmark change its own defaults, else
        keeping selections that still exist."""
        benchmarks = benchmark_choices(context.store)
        found = sources(context.store, scope_of(regional), benchmark_of(benchmark, benchmarks))
        areas, boards = area_choices(found), board_choices(found)
        tasks, results = task_choices(found), result_choices(found)
        default_first, default_others = default_compare(found)
        if callback_context.triggered_id == "lb-benchmark":  # another benchmark's board
            area, board, task, first, others = None, None, None, None, None
        note: Any = ""
        if isinstance(pulled, dict) and pulled:
            lines = pulled.get("lines") or [NO_SHARED_NOTE]
            reread = REFRESH_NOTE.format(runs=len(found.runs.rows))
            note = [html.Div(line) for line in [*lines, reread]]
        return (
            headline(found),
            benchmarks,
            areas,
            _keep(area, areas, OVERALL),
            boards,
            _keep(board, boards, default_board(found)),
            tasks,
            _keep(task, tasks, NO_TASK),
            results,
            _keep(first, results, default_first),
            results,
            _keep(others or [], results, default_others),
            _shown(found.snapshot is not None),
            tasks_for_choices(found),
            published_table(found),
            runs_table(found.runs.rows),
            note,
        )

    @app.callback(Output("lb-max-price-label", "children"), Input("lb-measure", "value"))
    def price_label(measure: Any) -> str:
        """The price limit is on the chosen measure: its title says which."""
        return price_limit_label(measure)

    @app.callback(
        Output("lb-chart", "figure"),
        Output("lb-takeaway", "children"),
        Output("lb-value-table", "children"),
        Input("lb-benchmark", "value"),
        Input("lb-scope", "checked"),
        Input("lb-area", "value"),
        Input("lb-task", "value"),
        Input("lb-board", "value"),
        Input("lb-measure", "value"),
        Input("lb-show-runs", "checked"),
        Input("lb-max-price", "value"),
        Input("lb-max-size", "value"),
        Input("lb-undisclosed", "checked"),
        Input("lb-pulled", "data"),
    )
    def draw(
        benchmark: Any,
        regional: bool | None,
        area: str | None,
        task: str | None,
        board: str | None,
        measure: Any,
        show_runs: bool | None,
        max_price: float | None,
        max_size: float | None,
        undisclosed: bool | None,
        _pulled: Any,
    ) -> tuple[Any, ...]:
        """The board the controls pick: chart, takeaway and value table."""
        found = sources(context.store, scope_of(regional), benchmark)
        metric = metric_of(area, None if task in (None, NO_TASK) else task)
        try:
            view = board_view(
                found, judge=board or PAPER_JUDGE, metric=metric,
                measure=measure if isinstance(measure, str) and measure in MEASURE_LABELS
                else "blended",
                filters=filters_of(max_price, max_size, undisclosed),
                show_runs=show_runs is not False,
            )  # fmt: skip
        except ValueError as exc:  # a task the scope lacks, until the choices catch up
            return no_update, dmc.Text(str(exc), c="dimmed"), no_update
        ranges = any(p.score.low is not None for p in view.board.placed)
        figure = chart_figure(view.board, title=view.title)
        figure.update_layout(height=520, margin={"t": 60, "r": 20, "b": 50, "l": 60})
        return figure, takeaway_list(view.lines, ranges=ranges), value_table(view.board)

    @app.callback(
        Output("lb-tasks-table", "children"),
        Input("lb-tasks-for", "value"),
        Input("lb-scope", "checked"),
        Input("lb-benchmark", "value"),
    )
    def tasks(which: str | None, regional: bool | None, benchmark: Any) -> Any:
        """The task-by-task figures of one published model, or all (ELBench's only)."""
        return tasks_table(sources(context.store, scope_of(regional), benchmark), which)

    @app.callback(
        Output("lb-compare-table", "children"),
        Output("lb-compare-note", "children"),
        Output("lb-paired", "children"),
        Input("lb-compare-first", "value"),
        Input("lb-compare-with", "value"),
        Input("lb-compare-by", "value"),
        Input("lb-scope", "checked"),
        Input("lb-pulled", "data"),
        State("lb-benchmark", "value"),
    )
    def compared(
        first: str | None,
        others: list[str] | None,
        by: str | None,
        regional: bool | None,
        _pulled: Any,
        benchmark: Any,
    ) -> tuple[Any, ...]:
        """The picked results side by side, and the paired test of exactly two runs."""
        keys = [k for k in [first, *(others or [])] if k]
        keys = list(dict.fromkeys(keys))
        if len(keys) < 2:
            return dmc.Text("Pick a result and at least one to compare with.", c="dimmed"), "", ""
        try:
            result = comparison(
                context.store, keys, by="area" if by == "area" else "task",
                scope=scope_of(regional),
                benchmark=benchmark if isinstance(benchmark, str) else ELBENCH,
            )  # fmt: skip
        except UserError as exc:
            return dmc.Alert(str(exc), color="yellow"), "", ""
        runs = [k for k in keys if k.startswith(RUN_PREFIX)]
        if len(keys) == 2 and len(runs) == 2:
            try:
                test = paired(context.store, runs[0], runs[1]).sentence()
            except UserError as exc:
                test = f"No paired test: {exc}."
        else:
            test = "The paired test compares exactly two of your runs that answered the same items."
        return comparison_table(result), comparison_notes(result), test
