"""The Sweep page: controls (only those the run will read), the live estimate, Run and Stop all,
and up to six cells that fill in while the models write (spec sweeps.md §3, §9–§13).

The page never prices or plans on its own: every estimate and every run goes through
``build_plan`` — the same plan the CLI and the runner use."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import parse_qs

import dash_mantine_components as dmc
import flask
from dash import ALL, Dash, Input, Output, State, dcc, html, no_update
from dash.exceptions import PreventUpdate

from sweepbench.artifacts import artifact_kind
from sweepbench.axes.cells import Refusal, coerce_budget
from sweepbench.errors import SweepbenchError
from sweepbench.models.catalog import EFFORT_LEVELS, ModelInfo
from sweepbench.models.registry import model_info
from sweepbench.sweeps.history import SweepSettings, sweep_settings
from sweepbench.sweeps.live import SweepRunner
from sweepbench.sweeps.plan import Plan, build_plan
from sweepbench.sweeps.pricing import estimate_plan
from sweepbench.web.cell_cards import cell_grid, tick_outputs
from sweepbench.web.defaults import (
    AXIS_LABELS,
    KindDefaults,
    axes_for,
    budget_chips,
    default_prompts,
    kind_defaults,
    kinds_offered,
)
from sweepbench.web.gate import Gate
from sweepbench.web.offer import Offer, has_provider_key, offered_models, situation

TICK_MS = 250
"""One ticker for the whole sweep (spec §9.3 says 500 ms; 250 ms keeps an element's
emit-to-screen time under half a second — measured in benchmarks/web_latency.py)."""
HIDDEN = {"display": "none"}
SHOWN: dict[str, Any] = {}
HELD_MODEL_STYLE: dict[str, Any] = {"flex": "1 1 380px", "minWidth": 0, "maxWidth": "100%"}
"""Room for a model's full name ("SmolLM2 135M Instruct (bundled) · local/smollm2-135m")."""
DEFAULT_EFFORT = "default"
"""The held Effort option that sends each model's own default level (the plan's empty effort)."""

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


def _info(model: str | None) -> ModelInfo | None:
    try:
        return model_info(model or "")
    except SweepbenchError:
        return None


def _short_name(model: str | None) -> str:
    info = _info(model)
    return (info.label or info.id) if info else (model or "this model")


@dataclass(frozen=True)
class EffortChoice:
    """What the held Effort select offers for a model: its options, and whether it is locked
    (a model that takes no effort setting shows "none", disabled, and says why)."""

    options: list[dict[str, str]]
    locked: bool = False
    description: str = ""

    def value(self, current: str | None) -> str:
        """``current`` if it is still offered, else ``low``, else the first option."""
        values = [o["value"] for o in self.options]
        for candidate in (current, "low"):
            if candidate in values:
                return str(candidate)
        return values[0]


def effort_choice(model: str | None, axis: str) -> EffortChoice:
    """The held Effort options: every level across models when comparing models, else the
    levels the held model accepts (and its default)."""
    if axis == "model":
        levels = list(dict.fromkeys(["none", *EFFORT_LEVELS]))
        default = {"value": DEFAULT_EFFORT, "label": "each model's default"}
        return EffortChoice([default, *({"value": e, "label": e} for e in levels)])
    info = _info(model)
    if info is None or not info.effort_capable:
        return EffortChoice(
            [{"value": "none", "label": "none"}],
            locked=True,
            description="This model takes no effort setting.",
        )
    own = f"default ({info.default_effort})" if info.default_effort else "default"
    options = [{"value": DEFAULT_EFFORT, "label": own}]
    return EffortChoice(options + [{"value": e, "label": e} for e in info.supported_efforts()])


def effort_chips(model: str | None) -> list[str]:
    """The "Vary effort" chips: the levels the held model accepts; all of them (refused as a
    whole by the plan) for a model that takes none."""
    info = _info(model)
    if info is not None and info.effort_capable:
        return [e for e in info.supported_efforts() if e != "none"]
    return [e for e in EFFORT_LEVELS if e != "none"]


def _effort_description(model: str | None) -> str:
    info = _info(model)
    if info is not None and info.effort_capable:
        return ""
    return (
        f"{_short_name(model)} takes no effort setting, so every level would run the same: "
        "vary max tokens, or pick another model."
    )


def _checkboxes(values: list[str], labels: dict[str, str] | None = None) -> list[Any]:
    return [dmc.Checkbox(value=v, label=(labels or {}).get(v, v)) for v in values]


def _placeholder(example: str) -> str:
    """The prompt box's placeholder: visibly an example, not a prompt already written."""
    return f"Write your prompt here, e.g. “{example}”" if example else "Write your prompt here."


def _layout_controls(d: KindDefaults, offers: list[Offer], kind: str, samples: int = 1) -> Any:
    options = [o.option() for o in offers]
    if d.held_model not in {o.id for o in offers}:  # a reopened sweep's typed model id
        options.append({"value": d.held_model, "label": d.held_model})
    effort = effort_choice(d.held_model, d.axis)
    return dmc.Stack(
        gap="sm",
        children=[
            dmc.Group(
                preventGrowOverflow=False,
                children=[
                    dmc.SegmentedControl(
                        id="kind",
                        value=kind,
                        data=[{"value": k, "label": v} for k, v in kinds_offered().items()],
                    ),
                    dmc.SegmentedControl(
                        id="axis",
                        value=d.axis,
                        data=[{"value": a, "label": AXIS_LABELS[a]} for a in axes_for(kind)],
                        styles={"control": {"flex": "1 1 auto"}, "label": {"whiteSpace": "normal"}},
                        maw="100%",
                    ),
                ],
            ),
            html.Div(
                id="wrap-vary-effort",
                children=dmc.CheckboxGroup(
                    id="vary-effort",
                    label="Efforts to compare",
                    value=list(d.efforts),
                    description=_effort_description(d.held_model),
                    children=dmc.Group(_checkboxes(effort_chips(d.held_model))),
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
                preventGrowOverflow=False,  # the model's full name fits (its own share only)
                children=[
                    html.Div(
                        id="wrap-held-model",
                        style=HELD_MODEL_STYLE,
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
                            data=effort.options,
                            value=effort.value(d.held_effort),
                            disabled=effort.locked,
                            description=effort.description,
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
                        id="samples", label="Samples per cell", value=samples, min=1, max=5, w=130
                    ),
                ],
            ),
            dmc.Text(situation(offers), id="situation", size="xs", c="dimmed"),
            dmc.Textarea(
                id="prompt",
                label="Prompt",
                value=d.prompt,
                placeholder=_placeholder(d.placeholder),
                autosize=True,
                minRows=2,
                maxRows=8,
            ),
        ],
    )


def with_settings(d: KindDefaults, settings: SweepSettings) -> KindDefaults:
    """``d`` with a sweep's own settings put back: its axis and values, held settings and
    prompt (a reopened sweep can be tweaked and run again)."""
    if settings.axis not in axes_for(settings.kind):
        return replace(d, prompt=settings.prompt)
    values = settings.values
    field = {
        "effort": "efforts",
        "max_tokens": "budgets",
        "model": "models",
        "prompt_version": "versions",
    }[settings.axis]
    varied: dict[str, Any] = {field: values}
    if settings.axis == "max_tokens":
        varied[field] = tuple(b for v in values if (b := coerce_budget(v)))
    held = settings.held
    kept: dict[str, Any] = {
        "held_model": str(held.get("model", d.held_model)),
        "held_effort": str(held.get("effort", d.held_effort)),
        "held_budget": coerce_budget(held.get("max_tokens"), d.held_budget),
        "held_version": str(held.get("prompt_version", d.held_version)),
    }
    return replace(d, axis=settings.axis, prompt=settings.prompt, **varied, **kept)


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
            _layout_controls(d, offers, kind, settings.repeats if settings else 1),
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


def known_kind(kind: object) -> str | None:
    """``kind`` when it names an artifact kind, else None (no control of the page sends it:
    a stale tab or a hostile request)."""
    if not isinstance(kind, str):
        return None
    try:
        artifact_kind(kind)
    except SweepbenchError:
        return None
    return kind


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
    typed_model: str | None = None,
) -> Plan:
    """The plan for what the controls say: only the active axis's list is read, as shown — the
    effort chips the held model offers, and a model id still being typed (it becomes a chip
    when the box loses focus, as when Run is clicked)."""
    kind = kind if isinstance(kind, str) else ""  # not a text: no control sent it; refused
    axis = axis if isinstance(axis, str) else ""
    held_model = held_model if isinstance(held_model, str) else None
    shown_efforts = effort_chips(held_model)
    typed = [typed_model.strip()] if isinstance(typed_model, str) and typed_model.strip() else []
    values: list[str] = {
        "effort": [e for e in efforts or [] if e in shown_efforts],
        "max_tokens": budgets,
        "model": [*(models or []), *typed],
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
        effort=None if held_effort in (None, "", DEFAULT_EFFORT) else held_effort,
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
    State("vary-model", "searchValue"),
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
            _placeholder(d.placeholder),
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
            dmc.Group(_checkboxes(effort_chips(held_model))),
            _effort_description(held_model),
            effort.options,
            effort.value(held_effort),
            effort.locked,
            effort.description,
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
            return _missing_sweep(sweep_id), True, {}
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


SEVERITY_ORDER = ("info", "warning", "error")


def refusal_alerts(refusals: tuple[Refusal, ...] | list[Refusal]) -> list[Any]:
    """One alert per kind of refusal (``refusal-CODE``): two models without a key, or two
    unknown ids, are one alert with a line each, not the same alert twice."""
    grouped: dict[str, list[Refusal]] = {}
    for refusal in refusals:
        grouped.setdefault(refusal.code, []).append(refusal)
    alerts: list[Any] = []
    for code, group in grouped.items():
        worst = max((r.severity for r in group), key=_severity_rank)
        messages = list(dict.fromkeys(r.message for r in group))
        body: Any = messages[0] if len(messages) == 1 else [dmc.Text(m) for m in messages]
        alerts.append(dmc.Alert(body, color=_severity_colour(worst), id=f"refusal-{code}"))
    return alerts


def _severity_rank(severity: str) -> int:
    return SEVERITY_ORDER.index(severity) if severity in SEVERITY_ORDER else len(SEVERITY_ORDER)


def _missing_sweep(sweep_id: str) -> Any:
    """The page's answer to a link naming no sweep here (the web's words, not a command)."""
    return dmc.Alert(
        [
            dmc.Text(
                f"There is no sweep {sweep_id!r} on this server: it may have been deleted, or "
                "the link is cut short."
            ),
            dcc.Link("Pick one from History", href="/history", id="missing-sweep-history"),
        ],
        title="Sweep not found",
        color="yellow",
        id="missing-sweep",
    )
