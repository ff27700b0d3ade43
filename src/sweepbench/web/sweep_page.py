"""The Sweep page: controls (only those the run will read), the live estimate, Run and Stop all,
and up to six cells that fill in while the models write (spec sweeps.md §3, §9–§13).

The page never prices or plans on its own: every estimate and every run goes through
``build_plan`` — the same plan the CLI and the runner use. This module holds the layout and
the callbacks; :mod:`.sweep_controls` builds and reads the controls, :mod:`.sweep_views` holds
what the page shows besides them and the cells."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

import dash_mantine_components as dmc
import flask
from dash import ALL, Dash, Input, Output, State, dcc, html, no_update
from dash.exceptions import PreventUpdate

from sweepbench.artifacts import artifact_kind
from sweepbench.axes.cells import coerce_budget
from sweepbench.errors import SweepbenchError
from sweepbench.sweeps.history import SweepSettings, sweep_settings
from sweepbench.sweeps.live import SweepRunner
from sweepbench.sweeps.pricing import estimate_plan
from sweepbench.web.cell_cards import cell_grid, tick_outputs
from sweepbench.web.defaults import (
    AXIS_LABELS,
    axes_for,
    budget_chips,
    default_prompts,
    kind_defaults,
    kinds_offered,
)
from sweepbench.web.gate import Gate
from sweepbench.web.offer import has_provider_key, offered_models
from sweepbench.web.sweep_controls import (
    CONTROL_INPUTS,
    CONTROL_STATES,
    HELD_MODEL_STYLE,
    checkboxes,
    effort_chips,
    effort_choice,
    effort_description,
    known_kind,
    layout_controls,
    plan_from_controls,
    prompt_placeholder,
    with_settings,
)
from sweepbench.web.sweep_views import (
    AXIS_HELP,
    CAUTIONS,
    SPEND_WARNING,
    missing_sweep,
    refusal_alerts,
)

TICK_MS = 250
"""One ticker for the whole sweep (spec §9.3 says 500 ms; 250 ms keeps an element's
emit-to-screen time under half a second — measured in benchmarks/web_latency.py)."""
HIDDEN = {"display": "none"}
SHOWN: dict[str, Any] = {}


@dataclass(frozen=True)
class PageContext:
    """What the page's callbacks share: the runner (and its store) and the access gate."""

    runner: SweepRunner
    gate: Gate


def _reopened(runner: SweepRunner, sweep_id: str | None) -> SweepSettings | None:
    """The settings of the sweep the page opens, if it can be read."""
    if not sweep_id:
        return None
    try:
        settings = sweep_settings(runner.view(sweep_id))
    except (SweepbenchError, ValueError, TypeError):
        return None
    return settings if settings.kind in kinds_offered() else None


def layout(context: PageContext, search: str = "") -> Any:
    """The page, computed when viewed (the model lists reflect the keys set now). Opened on a
    sweep (``?sweep=ID``, from History) the controls hold that sweep's settings."""
    offers = offered_models()
    keyless = not has_provider_key()
    sweep_id = _sweep_from_search(search)
    settings = _reopened(context.runner, sweep_id)
    kind = settings.kind if settings else "excalidraw"
    d = kind_defaults(kind, offers, keyless=keyless)
    if settings:
        d = with_settings(d, settings)
    notices: list[Any] = []
    if keyless:
        notices.append(
            dmc.Alert(
                "This server has no provider keys, so paid models are off on purpose. The "
                "bundled local model and the scripted demo models run here for free; set "
                "ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY (or add them to the "
                "config file) and restart to compare paid models.",
                title="No provider keys",
                color="blue",
                id="keyless-notice",
            )
        )
    else:
        notices.append(dmc.Alert(SPEND_WARNING, color="orange", id="spend-warning"))
    return dmc.Stack(
        gap="md",
        children=[
            *notices,
            layout_controls(d, offers, kind, settings.repeats if settings else 1),
            dmc.Group(
                [
                    dmc.Button("Run sweep", id="run", color="blue"),
                    dmc.Button(
                        "Stop all", id="stop", color="red", variant="outline", disabled=True
                    ),
                ]
            ),
            dmc.Text(id="estimate", size="sm"),
            html.Div(id="refusals"),
            dmc.Text("Ready.", id="status", size="sm", c="gray"),
            html.Div(id="cells"),
            dmc.Stack(
                gap=2,
                children=[dmc.Text(c, size="xs", c="dimmed") for c in [*CAUTIONS, AXIS_HELP]],
            ),
            dcc.Store(id="sweep-id", data=sweep_id),
            dcc.Store(id="running", data=False),
            dcc.Store(id="seen", data={}),
            dcc.Interval(id="tick", interval=TICK_MS, disabled=True),
        ],
    )


def _sweep_from_search(search: str) -> str | None:
    values = parse_qs((search or "").lstrip("?")).get("sweep")
    return values[0] if values else None


def register(app: Dash, context: PageContext) -> None:
    """Add the page's callbacks to ``app``."""
    runner, gate = context.runner, context.gate

    @app.callback(
        Output("axis", "data"),
        Output("axis", "value"),
        Output("vary-effort", "value"),
        Output("vary-budget", "value"),
        Output("vary-model", "value"),
        Output("vary-version", "value"),
        Output("held-model", "value"),
        Output("held-budget", "value"),
        Output("held-budget", "step"),
        Output("held-version", "value"),
        Output("prompt", "value"),
        Output("prompt", "placeholder"),
        Input("kind", "value"),
        State("prompt", "value"),
        prevent_initial_call=True,
    )
    def on_kind(kind: str, prompt: str | None) -> tuple[Any, ...]:
        """Switching the kind resets the axis and lists to that kind's defaults (spec §3.1);
        a kind the page does not offer (sent by no control of it) changes nothing."""
        if known_kind(kind) is None:
            raise PreventUpdate
        prompt = prompt if isinstance(prompt, str) else None
        offers = offered_models()
        d = kind_defaults(kind, offers, keyless=not has_provider_key())
        keep = (prompt or "").strip() and prompt not in default_prompts()
        new_prompt = prompt if keep else d.prompt
        return (
            [{"value": a, "label": AXIS_LABELS[a]} for a in axes_for(kind)],
            d.axis,
            list(d.efforts),
            [str(b) for b in d.budgets],
            list(d.models),
            list(d.versions),
            d.held_model,
            d.held_budget,
            d.step,
            d.held_version,
            new_prompt,
            prompt_placeholder(d.placeholder),
        )

    @app.callback(
        Output("wrap-vary-effort", "style"),
        Output("wrap-vary-budget", "style"),
        Output("wrap-vary-model", "style"),
        Output("wrap-vary-version", "style"),
        Output("wrap-held-model", "style"),
        Output("wrap-held-effort", "style"),
        Output("wrap-held-budget", "style"),
        Output("wrap-held-version", "style"),
        Output("vary-effort", "children"),
        Output("vary-effort", "description"),
        Output("held-effort", "data"),
        Output("held-effort", "value"),
        Output("held-effort", "disabled"),
        Output("held-effort", "description"),
        Output("vary-budget-boxes", "children"),
        Output("vary-version-boxes", "children"),
        Output("held-version", "data"),
        Input("axis", "value"),
        Input("held-model", "value"),
        Input("kind", "value"),
        State("held-effort", "value"),
        State("vary-budget", "value"),
    )
    def on_axis(
        axis: str,
        held_model: str | None,
        kind: str,
        held_effort: str | None,
        budgets: list[str] | None,
    ) -> tuple[Any, ...]:
        """Only the controls the run reads: the varied list, and the held values of the
        other settings (the held control of the varied setting is hidden, spec §3.1). The
        effort controls offer what the held model accepts (a model without effort shows
        "none", locked); the budget chips include small ones where they show the cliff. A kind
        the page does not offer changes nothing."""
        if known_kind(kind) is None:
            raise PreventUpdate
        versions = artifact_kind(kind).versions
        held_model = held_model if isinstance(held_model, str) else None
        axis = axis if isinstance(axis, str) else ""
        several = len(versions) > 1

        def show(flag: bool, style: dict[str, Any] = SHOWN) -> dict[str, Any]:
            return style if flag else HIDDEN

        effort = effort_choice(held_model, axis)
        chosen = [b for v in budgets or [] if (b := coerce_budget(v))]
        chips = budget_chips(kind, held_model, chosen)
        return (
            show(axis == "effort"),
            show(axis == "max_tokens"),
            show(axis == "model"),
            show(axis == "prompt_version"),
            show(axis != "model", HELD_MODEL_STYLE),
            show(axis != "effort"),
            show(axis != "max_tokens"),
            show(axis != "prompt_version" and several),
            dmc.Group(checkboxes(effort_chips(held_model))),
            effort_description(held_model),
            effort.options,
            effort.value(held_effort),
            effort.locked,
            effort.description,
            checkboxes([str(b) for b in chips], {str(b): f"{b:,}" for b in chips}),
            checkboxes(versions),
            [{"value": v, "label": v} for v in versions],
        )

    @app.callback(
        Output("estimate", "children"),
        Output("refusals", "children"),
        Output("run", "disabled"),
        *CONTROL_INPUTS,
        Input("running", "data"),
    )
    def on_change(*values: Any) -> tuple[Any, Any, bool]:
        """The estimate line, computed by the same plan the run would use."""
        *controls, running = values
        plan = plan_from_controls(*controls)
        estimate = estimate_plan(plan, runner.store)
        allowance = runner.ledger.summary().allowance_text()
        line = estimate.line(allowance) if plan.cells else estimate.line()
        blocking = plan.blocking()
        alerts = refusal_alerts(plan.refusals)
        # off loopback the visitor signed in with the token (web/security.py) to see this page
        closed = gate.why_closed(None, spends=not estimate.free and bool(plan.cells))
        if closed:
            alerts.append(dmc.Alert(closed, color="red", id="gate-closed"))
        alerts += [dmc.Text(f"note: {m}", size="xs", c="dimmed") for m in plan.notes]
        return line, alerts, bool(running) or bool(blocking) or bool(closed)

    @app.callback(
        Output("sweep-id", "data"),
        Output("status", "children", allow_duplicate=True),
        Output("status", "c", allow_duplicate=True),
        Input("run", "n_clicks"),
        *CONTROL_STATES,
        prevent_initial_call=True,
    )
    def on_run(clicks: int | None, *controls: Any) -> tuple[Any, str, str]:
        """Plan, gate, admit and start in the background; refusals go to the status line."""
        plan = plan_from_controls(*controls)
        blocking = plan.blocking()
        if blocking:
            return no_update, blocking[0].message, "red"
        estimate = estimate_plan(plan, runner.store)
        closed = gate.why_closed(None, spends=not estimate.free)  # signed in, off loopback
        if closed:
            return no_update, closed, "red"
        # on a shared server one visitor (by address) may run only a few sweeps at once
        visitor = (flask.request.remote_addr or "unknown") if gate.guarded else None
        try:
            live = runner.start(plan, visitor=visitor)
        except SweepbenchError as exc:
            return no_update, f"Refused: {exc}", "red"
        n = len(plan.cells)
        return live.id, f"Running {n} variant{'s' if n != 1 else ''}…", "gray"

    @app.callback(
        Output("status", "children", allow_duplicate=True),
        Output("status", "c", allow_duplicate=True),
        Input("stop", "n_clicks"),
        State("sweep-id", "data"),
        prevent_initial_call=True,
    )
    def on_stop(clicks: int | None, sweep_id: str | None) -> tuple[Any, Any]:
        """Stop every cell of the sweep at once."""
        if not sweep_id:
            return no_update, no_update
        pending = runner.stop(sweep_id)
        return f"Stopping {pending} call(s)…", "yellow"

    @app.callback(
        Output("cells", "children"),
        Output("tick", "disabled"),
        Output("seen", "data"),
        Input("sweep-id", "data"),
    )
    def on_sweep(sweep_id: str | None) -> tuple[Any, bool, dict[str, Any]]:
        """A new (or reopened) sweep: fresh cells, and the ticker on."""
        if not sweep_id:
            return [], True, {}
        try:
            view = runner.view(sweep_id)
        except SweepbenchError:
            return missing_sweep(sweep_id), True, {}
        return cell_grid(view), False, {}

    @app.callback(
        Output({"type": "cell-badges", "index": ALL}, "children"),
        Output({"type": "cell-blend", "index": ALL}, "children"),
        Output({"type": "cell-detail", "index": ALL}, "children"),
        Output({"type": "cell-problem", "index": ALL}, "children"),
        Output({"type": "cell-spread", "index": ALL}, "children"),
        Output({"type": "canvas", "index": ALL}, "elements"),
        Output({"type": "canvas", "index": ALL}, "final"),
        Output({"type": "viewer", "index": ALL}, "src"),
        Output({"type": "cell-progress", "index": ALL}, "children"),
        Output({"type": "cell-text", "index": ALL}, "children"),
        Output("status", "children"),
        Output("status", "c"),
        Output("tick", "disabled", allow_duplicate=True),
        Output("running", "data"),
        Output("stop", "disabled"),
        Output("prompt", "disabled"),
        Output("kind", "disabled"),
        Output("axis", "disabled"),
        Output("seen", "data", allow_duplicate=True),
        Input("tick", "n_intervals"),
        State("sweep-id", "data"),
        State("seen", "data"),
        State({"type": "canvas", "index": ALL}, "id"),
        State({"type": "viewer", "index": ALL}, "id"),
        State({"type": "cell-text", "index": ALL}, "id"),
        State({"type": "cell-badges", "index": ALL}, "id"),
        prevent_initial_call=True,
    )
    def on_tick(
        _n: int | None,
        sweep_id: str | None,
        seen: dict[str, Any] | None,
        canvas_ids: list[dict[str, Any]],
        viewer_ids: list[dict[str, Any]],
        text_ids: list[dict[str, Any]],
        badge_ids: list[dict[str, Any]],
    ) -> tuple[Any, ...]:
        """Every tick: what each cell has so far, the status line, and the locks."""
        return tick_outputs(
            runner, sweep_id, seen or {}, canvas_ids, viewer_ids, text_ids, badge_ids
        )
