"""The Sweep page: controls (only those the run will read), the live estimate, Run and Stop all,
and up to six cells that fill in while the models write (spec sweeps.md §3, §9–§13).

The page never prices or plans on its own: every estimate and every run goes through
``build_plan`` — the same plan the CLI and the runner use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

import dash_mantine_components as dmc
import flask
from dash import ALL, Dash, Input, Output, State, dcc, html, no_update

from sweepbench.artifacts import artifact_kind
from sweepbench.errors import SweepbenchError
from sweepbench.models.catalog import EFFORT_LEVELS
from sweepbench.models.registry import model_info
from sweepbench.sweeps.estimate import estimate_plan
from sweepbench.sweeps.live import SweepRunner
from sweepbench.sweeps.plan import Plan, build_plan
from sweepbench.web.cell_cards import cell_grid, tick_outputs
from sweepbench.web.defaults import (
    AXIS_LABELS,
    KINDS,
    KindDefaults,
    axes_for,
    default_prompts,
    kind_defaults,
)
from sweepbench.web.gate import Gate
from sweepbench.web.offer import Offer, has_provider_key, offered_models, situation

TICK_MS = 250
"""One ticker for the whole sweep (spec §9.3 says 500 ms; 250 ms keeps an element's
emit-to-screen time under half a second — measured in benchmarks/web_latency.py)."""
HIDDEN = {"display": "none"}
SHOWN: dict[str, str] = {}

CAUTIONS = [
    "Element and part counts are crude proxies for quality: a busier drawing or sculpture is "
    "not a better one. Look at the viewers.",
    "These are single samples. Output varies from run to run; repeat (samples per cell) before "
    "trusting a small difference.",
    "Costs are local estimates, not a bill. They ignore cache-write premiums and discounts.",
]
AXIS_HELP = (
    "Effort is thinking depth, largely a cost and latency control. Max tokens bounds thinking "
    "and answer together: a quality dial with a cliff. Model is the only cross-provider axis, "
    "compared at matched budget and effort. Prompt version changes only the product's own "
    "instructions, so a difference is the prompt's."
)
SPEND_WARNING = (
    "Each variant is a separate paid model call. The estimate updates as you change the matrix "
    "— check it before running. This host also enforces a call limit and a spend ceiling."
)


@dataclass(frozen=True)
class PageContext:
    """What the page's callbacks share: the runner (and its store) and the access gate."""

    runner: SweepRunner
    gate: Gate


def _efforts_for(model: str | None, axis: str) -> list[str]:
    if axis == "model":
        return list(dict.fromkeys(["none", *EFFORT_LEVELS]))
    try:
        return model_info(model or "").supported_efforts()
    except SweepbenchError:
        return ["none"]


def _checkboxes(values: list[str], labels: dict[str, str] | None = None) -> list[Any]:
    return [dmc.Checkbox(value=v, label=(labels or {}).get(v, v)) for v in values]


def _layout_controls(d: KindDefaults, offers: list[Offer], kind: str) -> Any:
    options = [o.option() for o in offers]
    return dmc.Stack(
        gap="sm",
        children=[
            dmc.Group(
                [
                    dmc.SegmentedControl(
                        id="kind",
                        value=kind,
                        data=[{"value": k, "label": v} for k, v in KINDS.items()],
                    ),
                    dmc.SegmentedControl(
                        id="axis",
                        value=d.axis,
                        data=[{"value": a, "label": AXIS_LABELS[a]} for a in axes_for(kind)],
                    ),
                ]
            ),
            html.Div(
                id="wrap-vary-effort",
                children=dmc.CheckboxGroup(
                    id="vary-effort",
                    label="Efforts to compare",
                    value=list(d.efforts),
                    children=dmc.Group(_checkboxes(_efforts_for(d.held_model, "effort"))),
                ),
            ),
            html.Div(
                id="wrap-vary-budget",
                children=dmc.CheckboxGroup(
                    id="vary-budget",
                    label="Budgets to compare (max tokens)",
                    value=[str(b) for b in d.budgets],
                    children=dmc.Group(id="vary-budget-boxes"),
                ),
            ),
            html.Div(
                id="wrap-vary-model",
                children=dmc.TagsInput(
                    id="vary-model",
                    label="Models to compare",
                    description="Pick from the list or type any provider/model id.",
                    data=options,
                    value=list(d.models),
                    clearable=True,
                    acceptValueOnBlur=True,
                ),
            ),
            html.Div(
                id="wrap-vary-version",
                children=dmc.CheckboxGroup(
                    id="vary-version",
                    label="Prompt versions to compare",
                    value=list(d.versions),
                    children=dmc.Group(id="vary-version-boxes"),
                ),
            ),
            dmc.Group(
                align="flex-end",
                children=[
                    html.Div(
                        id="wrap-held-model",
                        style={"minWidth": "320px"},
                        children=dmc.Select(
                            id="held-model",
                            label="Model",
                            data=options,
                            value=d.held_model,
                            searchable=True,
                        ),
                    ),
                    html.Div(
                        id="wrap-held-effort",
                        children=dmc.Select(
                            id="held-effort",
                            label="Effort",
                            data=_efforts_for(d.held_model, d.axis),
                            value=d.held_effort,
                        ),
                    ),
                    html.Div(
                        id="wrap-held-budget",
                        children=dmc.NumberInput(
                            id="held-budget",
                            label="Max tokens",
                            value=d.held_budget,
                            step=d.step,
                            min=1,
                            thousandSeparator=",",
                            allowDecimal=False,
                        ),
                    ),
                    html.Div(
                        id="wrap-held-version",
                        children=dmc.Select(
                            id="held-version",
                            label="Prompt version",
                            data=artifact_kind(kind).versions,
                            value=d.held_version,
                        ),
                    ),
                    dmc.NumberInput(
                        id="samples", label="Samples per cell", value=1, min=1, max=5, w=130
                    ),
                ],
            ),
            dmc.Text(situation(offers), id="situation", size="xs", c="dimmed"),
            dmc.Textarea(
                id="prompt",
                label="Prompt",
                value=d.prompt,
                placeholder=d.placeholder,
                autosize=True,
                minRows=2,
                maxRows=8,
            ),
        ],
    )


def layout(context: PageContext, search: str = "") -> Any:
    """The page, computed when viewed (the model lists reflect the keys set now)."""
    offers = offered_models()
    keyless = not has_provider_key()
    kind = "excalidraw"
    d = kind_defaults(kind, offers, keyless=keyless)
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
            _layout_controls(d, offers, kind),
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
            dcc.Store(id="sweep-id", data=_sweep_from_search(search)),
            dcc.Store(id="running", data=False),
            dcc.Store(id="seen", data={}),
            dcc.Interval(id="tick", interval=TICK_MS, disabled=True),
        ],
    )


def _sweep_from_search(search: str) -> str | None:
    values = parse_qs((search or "").lstrip("?")).get("sweep")
    return values[0] if values else None


def plan_from_controls(
    kind: str,
    axis: str,
    efforts: list[str] | None,
    budgets: list[str] | None,
    models: list[str] | None,
    versions: list[str] | None,
    held_model: str | None,
    held_effort: str | None,
    held_budget: object,
    held_version: str | None,
    samples: object,
    prompt: str | None,
) -> Plan:
    """The plan for what the controls say: only the active axis's list is read."""
    values: list[str] = {
        "effort": efforts,
        "max_tokens": budgets,
        "model": models,
        "prompt_version": versions,
    }.get(axis) or []
    try:
        repeats = int(samples)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        repeats = 1
    return build_plan(
        prompt or "",
        axis,
        values,
        kind=kind,
        model=held_model or None,
        effort=held_effort or None,
        max_tokens=held_budget if held_budget not in (None, "") else None,  # type: ignore[arg-type]
        prompt_version=held_version or None,
        repeats=repeats,
    )


CONTROL_STATES = [
    State("kind", "value"),
    State("axis", "value"),
    State("vary-effort", "value"),
    State("vary-budget", "value"),
    State("vary-model", "value"),
    State("vary-version", "value"),
    State("held-model", "value"),
    State("held-effort", "value"),
    State("held-budget", "value"),
    State("held-version", "value"),
    State("samples", "value"),
    State("prompt", "value"),
]
CONTROL_INPUTS = [Input(s.component_id, s.component_property) for s in CONTROL_STATES]


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
        Output("held-effort", "value"),
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
        """Switching the kind resets the axis and lists to that kind's defaults (spec §3.1)."""
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
            d.held_effort,
            d.held_budget,
            d.step,
            d.held_version,
            new_prompt,
            d.placeholder,
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
        Output("held-effort", "data"),
        Output("vary-budget-boxes", "children"),
        Output("vary-version-boxes", "children"),
        Output("held-version", "data"),
        Input("axis", "value"),
        Input("held-model", "value"),
        Input("kind", "value"),
    )
    def on_axis(axis: str, held_model: str | None, kind: str) -> tuple[Any, ...]:
        """Only the controls the run reads: the varied list, and the held values of the
        other settings (the held control of the varied setting is hidden, spec §3.1)."""
        versions = artifact_kind(kind).versions
        several = len(versions) > 1

        def show(flag: bool) -> dict[str, str]:
            return SHOWN if flag else HIDDEN

        efforts = _efforts_for(held_model, axis)
        chips = artifact_kind(kind).defaults.budget_chips
        return (
            show(axis == "effort"),
            show(axis == "max_tokens"),
            show(axis == "model"),
            show(axis == "prompt_version"),
            show(axis != "model"),
            show(axis != "effort"),
            show(axis != "max_tokens"),
            show(axis != "prompt_version" and several),
            dmc.Group(_checkboxes([e for e in efforts if e != "none"] or ["none"])),
            [{"value": e, "label": e} for e in efforts],
            _checkboxes([str(b) for b in chips], {str(b): f"{b:,}" for b in chips}),
            _checkboxes(versions),
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
        alerts: list[Any] = [
            dmc.Alert(r.message, color=_severity_colour(r.severity), id=f"refusal-{r.code}")
            for r in plan.refusals
        ]
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
        except SweepbenchError as exc:
            return dmc.Alert(str(exc), color="red"), True, {}
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


def _severity_colour(severity: str) -> str:
    return {"info": "blue", "warning": "yellow"}.get(severity, "red")
