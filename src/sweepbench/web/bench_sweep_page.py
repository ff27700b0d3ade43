"""The Benchmark sweep page (``/bench-sweep``): one question set under several settings, one
axis varying — the Sweep page's axis controls over a benchmark selection.

It shows the estimate per setting (the words of ``bench sweep --estimate-only``), runs the
sweep on the app's background loop (it goes on when the tab closes), shows each setting's
progress every second, Stop, the settings on a score-against-price chart, the paired verdicts
(pass@k too, with repeats), a link into each setting's run, the scores per area and task, and
the files ``bench sweeps export`` writes to download. Advanced settings hold what the CLI's
options do (repeats, temperature, requests at once, rate limits, student, decision judge, rule
scoring, scoring version, answer length limit). ``?sweep=ID`` opens a stored sweep, its
settings filled in. Every rule is the library's (``bench.sweeps.plan``, ``bench.sweeps.run``,
``bench.sweeps.result``); a sweep that may spend money is gated off loopback like the Sweep
page's runs (no key field: configured keys only)."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import parse_qs

import dash_mantine_components as dmc
from dash import Dash, Input, Output, State, ctx, dcc, html, no_update
from dash.exceptions import PreventUpdate

from sweepbench.axes import AXES
from sweepbench.bench.sweeps.plan import sweep_start_check
from sweepbench.bench.sweeps.run import BenchSweepRunner
from sweepbench.bench.sweeps.store import SweepStore
from sweepbench.bench.sweeps.wording import sweep_estimate_lines
from sweepbench.engine.ratelimit import RateLimits
from sweepbench.errors import SweepbenchError
from sweepbench.web.bench_sweep_controls import (
    CONTROL_INPUTS,
    CONTROL_STATES,
    HIDDEN,
    SHOWN,
    Controls,
    controls_from_request,
    controls_layout,
    plan_for,
    value_choices,
    values_label,
)
from sweepbench.web.bench_sweep_live import live_sweeps
from sweepbench.web.bench_sweep_view import DOWNLOADS, SweepView, export_file, sweep_view
from sweepbench.web.context import WebContext

TICK_MS = 1000
"""Progress is refreshed every second."""
INTRO = (
    "The same questions under several settings that differ in one thing — models, effort, max "
    "tokens or prompt version — priced per setting before anything starts, run at once, then "
    "each setting compared with the best-scoring one on the same items."
)
EMPTY_FIGURE: dict[str, Any] = {"data": [], "layout": {"height": 380}}


def _sweep_from_search(search: str) -> str | None:
    values = parse_qs((search or "").lstrip("?")).get("sweep")
    return values[0] if values else None


def _reopened(context: WebContext, sweep_id: str | None) -> Controls:
    """The controls of a stored sweep (its held request and values), else the defaults."""
    if sweep_id:
        try:
            row = SweepStore(context.store).get(sweep_id)
        except SweepbenchError:
            row = None
        if row is not None:
            values = [s.value for s in row.settings]
            return controls_from_request(dict(row.request), row.axis, values)
    return Controls()


def layout(context: WebContext, search: str) -> Any:
    """The page; opened on a sweep (``?sweep=ID``) it shows that sweep and holds its settings
    (so it can be tweaked, or continued, and run again)."""
    sweep_id = _sweep_from_search(search)
    view: SweepView | None = None
    if sweep_id:
        view = sweep_view(context, live_sweeps(context).get(sweep_id), sweep_id)
    figure = view.figure if view is not None else None
    return dmc.Stack(
        gap="md",
        children=[
            dmc.Title("Benchmark sweep", order=2),
            dmc.Text(INTRO, size="sm", c="dimmed"),
            controls_layout(_reopened(context, sweep_id), context.benchmarks),
            dmc.Group(
                [
                    dmc.Button("Run sweep", id="bs-run", color="blue"),
                    dmc.Button(
                        "Stop",
                        id="bs-stop",
                        color="red",
                        variant="outline",
                        disabled=not (view is not None and view.running),
                    ),
                ]
            ),
            html.Pre(
                id="bs-estimate",
                style={"whiteSpace": "pre-wrap", "fontSize": "0.85rem", "margin": 0},
            ),
            html.Div(id="bs-refusals"),
            dmc.Text(
                view.status if view else "Ready.",
                id="bs-status",
                size="sm",
                c=view.colour if view else "gray",
            ),
            html.Div(view.progress if view else [], id="bs-progress"),
            html.Div(
                dcc.Graph(
                    id="bs-chart",
                    figure=figure or EMPTY_FIGURE,
                    config={"displaylogo": False},
                    style={"height": "400px"},
                ),
                id="bs-chart-wrap",
                style=SHOWN if figure else HIDDEN,
            ),
            html.Div(view.results if view else [], id="bs-results"),
            dcc.Download(id="bs-download"),
            dcc.Store(id="bs-sweep-id", data=sweep_id),
            dcc.Store(id="bs-running", data=bool(view and view.running)),
            dcc.Interval(
                id="bs-tick", interval=TICK_MS, disabled=not (view is not None and view.running)
            ),
        ],
    )


def start_sweep(context: WebContext, controls: Controls) -> tuple[str | None, str, str]:
    """Plan, gate, check and start the sweep the controls describe: (its id or None, the
    status line, its colour). Refusals name every reason; nothing is started then."""
    planned = plan_for(controls, context.store, context.benchmarks)
    if planned.plan is None or planned.request is None:
        return None, f"Refused: {planned.problem}", "red"
    plan, request = planned.plan, planned.request
    # off loopback the visitor signed in with the token (web/security.py) to see this page
    closed = context.gate.why_closed(None, spends=plan.spends)
    if closed:
        return None, closed, "red"
    decision = sweep_start_check(plan, request)
    if decision.refused:
        return None, "Refused: " + "; ".join(decision.reasons), "red"
    if decision.needs_confirmation:
        return None, "This sweep may spend money: tick “I agree to spend” first.", "red"
    if decision.nothing_left:
        assert plan.previous is not None or not plan.settings
        sweep_id = plan.previous.id if plan.previous is not None else None
        return sweep_id, "Nothing left to run: every setting has scored every item.", "gray"
    try:
        runner = BenchSweepRunner(
            plan, context.store, concurrency=request.concurrency,
            accept_unpriced=request.accept_unpriced,
            rate_limits=RateLimits(rpm=request.rpm, tpm=request.tpm),
        )  # fmt: skip
        live_sweeps(context).start(runner)
    except SweepbenchError as exc:
        return None, f"Refused: {exc}", "red"
    n = len(plan.settings)
    return runner.sweep_id, f"Running {n} settings at once…", "gray"


def register(app: Dash, context: WebContext) -> None:
    """The page's callbacks."""
    live = live_sweeps(context)

    @app.callback(
        Output("bs-values", "data"),
        Output("bs-values", "label"),
        Output("bs-wrap-model", "style"),
        Output("bs-wrap-effort", "style"),
        Output("bs-wrap-max-tokens", "style"),
        Output("bs-wrap-prompt-version", "style"),
        Input("bs-axis", "value"),
        Input("bs-benchmark", "value"),
        Input("bs-data", "value"),
        prevent_initial_call=True,
    )
    def on_axis(axis: str, benchmark: str | None, data: str | None) -> tuple[Any, ...]:
        """The values box suggests the axis's values; the held control of the varied setting
        is hidden (it is not read). An axis the page does not offer changes nothing."""
        if axis not in AXES:  # no control sends it: a stale tab or a hostile request
            raise PreventUpdate
        benchmark = benchmark if isinstance(benchmark, str) else None
        data = data if isinstance(data, str) else None

        def show(hidden: bool) -> dict[str, Any]:
            return HIDDEN if hidden else SHOWN

        return (
            value_choices(axis, benchmark, data, context.benchmarks),
            values_label(axis),
            show(axis == "model"),
            show(axis == "effort"),
            show(axis == "max_tokens"),
            show(axis == "prompt_version"),
        )

    @app.callback(
        Output("bs-values", "value"),
        Input("bs-axis", "value"),
        prevent_initial_call=True,
    )
    def on_axis_change(_axis: str) -> list[str]:
        """Another axis: the values of the last one mean nothing there."""
        return []

    @app.callback(
        Output("bs-estimate", "children"),
        Output("bs-refusals", "children"),
        Output("bs-run", "disabled"),
        *CONTROL_INPUTS,
        Input("bs-running", "data"),
    )
    def on_change(*values: Any) -> tuple[Any, Any, bool]:
        """The estimate, per setting and in total: the plan the run would use, in the words
        of ``bench sweep --estimate-only``."""
        *controls, running = values
        if running:  # the estimate stays as it was when Run was clicked
            return no_update, no_update, True
        planned = plan_for(Controls(*controls), context.store, context.benchmarks)
        if planned.plan is None:
            alert = dmc.Alert(planned.problem, color="red", id="bs-problem")
            return "", [alert], True
        plan = planned.plan
        lines = sweep_estimate_lines(plan)
        alerts: list[Any] = []
        closed = context.gate.why_closed(None, spends=plan.spends)
        if closed:
            alerts.append(dmc.Alert(closed, color="red", id="bs-gate-closed"))
        blocked = not plan.ok or bool(closed)
        return "\n".join(lines), alerts, bool(running) or blocked

    @app.callback(
        Output("bs-sweep-id", "data"),
        Output("bs-status", "children", allow_duplicate=True),
        Output("bs-status", "c", allow_duplicate=True),
        Input("bs-run", "n_clicks"),
        *CONTROL_STATES,
        prevent_initial_call=True,
    )
    def on_run(_clicks: int | None, *controls: Any) -> tuple[Any, str, str]:
        """Start the sweep in the background (gated, checked as a whole first)."""
        sweep_id, status, colour = start_sweep(context, Controls(*controls))
        return (sweep_id if sweep_id else no_update), status, colour

    @app.callback(
        Output("bs-status", "children", allow_duplicate=True),
        Output("bs-status", "c", allow_duplicate=True),
        Input("bs-stop", "n_clicks"),
        State("bs-sweep-id", "data"),
        prevent_initial_call=True,
    )
    def on_stop(_clicks: int | None, sweep_id: str | None) -> tuple[Any, Any]:
        """Stop every setting; their answers are kept (the same sweep continues them)."""
        if not live.stop(sweep_id):
            return "Nothing is running.", "gray"
        return "Stopping every setting (answers are kept)…", "yellow"

    @app.callback(
        Output("bs-tick", "disabled", allow_duplicate=True),
        Input("bs-sweep-id", "data"),
        prevent_initial_call=True,
    )
    def on_sweep(sweep_id: str | None) -> bool:
        """A sweep started (or continued): follow it."""
        return not sweep_id

    @app.callback(
        Output("bs-progress", "children"),
        Output("bs-results", "children"),
        Output("bs-chart", "figure"),
        Output("bs-chart-wrap", "style"),
        Output("bs-status", "children"),
        Output("bs-status", "c"),
        Output("bs-tick", "disabled"),
        Output("bs-running", "data"),
        Output("bs-stop", "disabled"),
        Input("bs-tick", "n_intervals"),
        State("bs-sweep-id", "data"),
        prevent_initial_call=True,
    )
    def on_tick(_n: int | None, sweep_id: str | None) -> tuple[Any, ...]:
        """Every second while a sweep runs: each setting's progress, the table so far, the
        chart and the verdicts; the ticker stops when the sweep's session ends."""
        if not sweep_id:
            return [], [], EMPTY_FIGURE, HIDDEN, "Ready.", "gray", True, False, True
        view = sweep_view(context, live.get(sweep_id), sweep_id)
        return (
            view.progress,
            view.results,
            view.figure or EMPTY_FIGURE,
            SHOWN if view.figure else HIDDEN,
            view.status,
            view.colour,
            not view.running,
            view.running,
            not view.running,
        )

    @app.callback(
        Output("bs-download", "data"),
        *[Input(f"bs-dl-{suffix}", "n_clicks") for suffix, _n, _l in DOWNLOADS],
        State("bs-sweep-id", "data"),
        prevent_initial_call=True,
    )
    def on_download(*args: Any) -> Any:
        """One of the files ``bench sweeps export`` writes for the sweep shown."""
        *clicks, sweep_id = args
        chosen = ctx.triggered_id
        if not sweep_id or not isinstance(chosen, str) or not any(clicks):
            return no_update
        name = next(n for s, n, _l in DOWNLOADS if f"bs-dl-{s}" == chosen)
        content = export_file(context, str(sweep_id), name)
        if content is None:
            return no_update
        return {"content": base64.b64encode(content).decode("ascii"), "base64": True,
                "filename": f"{sweep_id}-{name}", "type": None}  # fmt: skip
