"""The Sweep page's controls, built and read: the kind, axis, varied lists and held settings
(only those the run will read), a reopened sweep's settings put back into them, and
:func:`plan_from_controls` — what they say as the ``build_plan`` plan the run would use."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import dash_mantine_components as dmc
from dash import Input, State, html

from sweepbench.artifacts import artifact_kind
from sweepbench.axes.cells import coerce_budget
from sweepbench.errors import SweepbenchError
from sweepbench.models.catalog import EFFORT_LEVELS, ModelInfo
from sweepbench.models.registry import model_info
from sweepbench.sweeps.history import SweepSettings
from sweepbench.sweeps.plan import Plan, build_plan
from sweepbench.web.defaults import AXIS_LABELS, KindDefaults, axes_for, kinds_offered
from sweepbench.web.offer import Offer, situation

HELD_MODEL_STYLE: dict[str, Any] = {"flex": "1 1 380px", "minWidth": 0, "maxWidth": "100%"}
"""Room for a model's full name ("SmolLM2 135M Instruct (bundled) · local/smollm2-135m")."""
DEFAULT_EFFORT = "default"
"""The held Effort option that sends each model's own default level (the plan's empty effort)."""


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


def effort_description(model: str | None) -> str:
    info = _info(model)
    if info is not None and info.effort_capable:
        return ""
    return (
        f"{_short_name(model)} takes no effort setting, so every level would run the same: "
        "vary max tokens, or pick another model."
    )


def checkboxes(values: list[str], labels: dict[str, str] | None = None) -> list[Any]:
    return [dmc.Checkbox(value=v, label=(labels or {}).get(v, v)) for v in values]


def prompt_placeholder(example: str) -> str:
    """The prompt box's placeholder: visibly an example, not a prompt already written."""
    return f"Write your prompt here, e.g. “{example}”" if example else "Write your prompt here."


def layout_controls(d: KindDefaults, offers: list[Offer], kind: str, samples: int = 1) -> Any:
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
                    description=effort_description(d.held_model),
                    children=dmc.Group(checkboxes(effort_chips(d.held_model))),
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
                            # a pasted "64.000" is 64,000 tokens, as the CLI reads it: no
                            # character is a decimal point here, so "." and "," are stripped
                            decimalSeparator="\u2396",
                            allowedDecimalSeparators=[],
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
                placeholder=prompt_placeholder(d.placeholder),
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
