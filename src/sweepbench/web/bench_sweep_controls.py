"""The Benchmark sweep page's controls and what they mean: the Sweep page's axis controls over
a benchmark selection, read into a :class:`~sweepbench.bench.request.BenchRequest`, an axis and
its values — what ``sweepbench bench sweep`` builds from its options. Planning, pricing and
the start rule stay in ``bench.sweeps.plan``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dash_mantine_components as dmc
from dash import Input, State, html

from sweepbench.axes import AXES, AXIS_WORDS
from sweepbench.bench.catalog import PRESETS
from sweepbench.bench.defaults import DEFAULT_ANSWER_TOKENS, DEFAULT_CONCURRENCY, MAX_REPEATS
from sweepbench.bench.request import MAX_CONCURRENCY, BenchRequest
from sweepbench.bench.scoring.versions import DEFAULT_SCORING_VERSION, SCORING_VERSIONS
from sweepbench.bench.sources.registry import names as benchmark_names
from sweepbench.bench.sweeps.plan import BenchSweepPlan, plan_bench_sweep
from sweepbench.errors import UserError
from sweepbench.models.catalog import EFFORT_LEVELS
from sweepbench.settings import scrub
from sweepbench.store import Store
from sweepbench.sweeps.plan import default_model
from sweepbench.web.defaults import AXIS_LABELS
from sweepbench.web.offer import BenchmarkOffer, offered_models
from sweepbench.web.request_form import (
    FormField,
    as_typed,
    budget,
    checked,
    fill_form,
    joined,
    labels,
    read_form,
    text,
    text_or_none,
)

DEFAULT_BENCHMARK = "sample"
DEFAULT_EFFORT = "default"
"""The held Effort option that sends each model's own default."""
BUDGET_SUGGESTIONS = ("256", "1024", "4096", "16384")
HIDDEN = {"display": "none"}
SHOWN: dict[str, Any] = {}
CONTROLS = (
    ("bs-benchmark", "value"),
    ("bs-data", "value"),
    ("bs-preset", "value"),
    ("bs-paper", "checked"),
    ("bs-tasks", "value"),
    ("bs-per-task", "value"),
    ("bs-max-items", "value"),
    ("bs-judge", "value"),
    ("bs-axis", "value"),
    ("bs-values", "value"),
    ("bs-model", "value"),
    ("bs-effort", "value"),
    ("bs-max-tokens", "value"),
    ("bs-prompt-version", "value"),
    ("bs-limit", "value"),
    ("bs-accept-unpriced", "checked"),
    ("bs-confirm", "checked"),
    ("bs-values", "searchValue"),
    ("bs-repeats", "value"),
    ("bs-temperature", "value"),
    ("bs-concurrency", "value"),
    ("bs-rpm", "value"),
    ("bs-tpm", "value"),
    ("bs-student", "value"),
    ("bs-decision", "checked"),
    ("bs-edu-rule", "checked"),
    ("bs-scoring", "value"),
)
CONTROL_STATES = [State(i, p) for i, p in CONTROLS]
CONTROL_INPUTS = [Input(i, p) for i, p in CONTROLS]


@dataclass(frozen=True)
class Controls:
    """What the controls say (in :data:`CONTROLS` order)."""

    benchmark: str | None = DEFAULT_BENCHMARK
    data: str | None = None
    preset: str | None = "full"
    paper: bool | None = False
    tasks: str | None = None
    per_task: object = None
    max_items: object = None
    judge: str | None = None
    axis: str | None = "model"
    values: list[str] | None = None
    model: str | None = None
    effort: str | None = DEFAULT_EFFORT
    max_tokens: object = None
    prompt_version: str | None = None
    limit: str | None = None
    accept_unpriced: bool | None = False
    confirmed: bool | None = False
    typed: str | None = None
    """A value still being typed in the values box (it counts, as on the Sweep page)."""
    repeats: object = 1
    temperature: object = None
    """As typed: the library says what is wrong with it (``BenchRequest``, the plan)."""
    concurrency: object = DEFAULT_CONCURRENCY
    rpm: object = None
    tpm: object = None
    student: str | None = None
    """The simulated student of teaching dialogues (empty: the judge)."""
    decision_judge: bool | None = False
    edu_rule: bool | None = False
    """``--edu-scoring rule``: judged tasks that have a fixed-rule scorer are scored by it."""
    scoring: str | None = DEFAULT_SCORING_VERSION

    @property
    def axis_name(self) -> str:
        """The axis (``model`` unless a known one is chosen)."""
        return self.axis if self.axis in AXES else "model"

    def axis_values(self) -> list[str]:
        """The varied values, the one still being typed included."""
        values = [str(v).strip() for v in self.values or [] if str(v).strip()]
        typed = (self.typed or "").strip()
        if typed and typed not in values:
            values.append(typed)
        return values


def _number(value: object, _label: str = "") -> int | None:
    """A number control's whole number (None: empty or not one; the page shows no error)."""
    if value in (None, ""):
        return None
    try:
        return int(value)  # type: ignore[call-overload,no-any-return]
    except (TypeError, ValueError):
        return None


def _text(value: object) -> str | None:
    return text_or_none(value)


def same(value: object) -> object:
    """A request's value as the control holds it."""
    return value


FORM = (
    FormField(
        "benchmark", "benchmark", "Benchmark", read=lambda v, _: text(v) or DEFAULT_BENCHMARK,
        show=lambda v: str(v) if v else DEFAULT_BENCHMARK,
    ),
    FormField("data", "data", "Data folder", show=lambda v: None if v in (None, "") else str(v)),
    FormField(
        "preset", "preset", "Preset", read=lambda v, _: v or "full", show=lambda v: v or "full"
    ),
    FormField(
        "paper", "scope", "Scope", read=lambda on, _: "paper" if on else "core",
        show=lambda scope: scope == "paper",
    ),
    FormField("tasks", "tasks", "Tasks", read=lambda v, _: v or "", show=joined),
    FormField("per_task", "per_task", "Per task", read=_number, show=same),
    FormField("max_items", "max_items", "Max items", read=_number, show=same),
    FormField("limit", "limit", "Limit", show=lambda v: None if v in (None, "") else str(v)),
    FormField("accept_unpriced", "accept_unpriced", "Accept unpriced", read=checked, show=bool),
    FormField("repeats", "repeats", "Repeats", read=as_typed, show=lambda v: v or 1),
    FormField("temperature", "temperature", "Temperature", read=as_typed, show=same),
    FormField(
        "concurrency", "concurrency", "Requests at once", read=as_typed,
        show=lambda v: v or DEFAULT_CONCURRENCY,
    ),
    FormField("rpm", "rpm", "Requests a minute", read=as_typed, show=same),
    FormField("tpm", "tpm", "Tokens a minute", read=as_typed, show=same),
    FormField("decision_judge", "decision_judge", "Decision judge", read=checked, show=bool),
    FormField(
        "edu_rule", "edu_scoring", "Rule scoring", read=lambda on, _: "rule" if on else "judge",
        show=lambda v: v == "rule",
    ),
    FormField(
        "scoring", "scoring", "Scoring version", read=lambda v, _: v or DEFAULT_SCORING_VERSION,
        show=lambda v: v or DEFAULT_SCORING_VERSION,
    ),
)  # fmt: skip
"""The :class:`Controls` that set one request field each, both ways (:mod:`.request_form`):
a control here is a :class:`Controls` field."""
NAMES = labels(
    FORM, models="Model", max_tokens="Answer length limit", effort="Effort",
    prompt_version="Prompt version",
)  # fmt: skip
"""How the page names a request's fields in its problems."""


def request_for(c: Controls) -> BenchRequest:
    """The held request (UserError naming every problem at once): the selection, the judge,
    the held settings (the varied one left to the axis) and the whole sweep's limit."""
    axis = c.axis_name
    values = c.axis_values()
    target = _text(c.model)
    if axis == "model" or target is None:
        target = (values[0] if axis == "model" and values else None) or target or default_model()
    models: dict[str, str | None] = {
        "target": target, "judge": _text(c.judge), "student": _text(c.student),
    }  # fmt: skip
    fields: dict[str, Any] = {
        "models": models, "confirmed": bool(c.confirmed), **read_form(FORM, vars(c)),
    }  # fmt: skip
    if axis != "effort" and c.effort not in (None, "", DEFAULT_EFFORT):
        fields["effort"] = c.effort
    if axis != "max_tokens" and text(c.max_tokens):  # the one budget parser, the CLI's
        fields["max_tokens"] = budget(c.max_tokens, NAMES["max_tokens"])
    if axis != "prompt_version" and _text(c.prompt_version):
        fields["prompt_version"] = _text(c.prompt_version)
    return BenchRequest.from_values(fields, names=NAMES)


@dataclass(frozen=True)
class Planned:
    """The request and the sweep's plan, or why neither could be made."""

    request: BenchRequest | None
    plan: BenchSweepPlan | None
    problem: str | None = None


def plan_for(c: Controls, store: Store | None, offer: BenchmarkOffer) -> Planned:
    """Plan what the controls say, the benchmark as the web may run it (``offer``: the
    built-ins and the operator's folders); never raises on the user's input."""
    try:
        request, benchmark = offer.load(request_for(c))
        plan = plan_bench_sweep(request, c.axis_name, c.axis_values(), store, benchmark=benchmark)
    except UserError as exc:
        return Planned(None, None, scrub(str(exc)))
    return Planned(request, plan)


def value_choices(
    axis: str, benchmark: str | None, data: str | None, offer: BenchmarkOffer
) -> list[str]:
    """The suggestions of the values box for an axis (any value may be typed); a benchmark's
    prompt versions only when the web may load it (``offer``)."""
    if axis == "model":
        return list(dict.fromkeys(o.id for o in offered_models()))
    if axis == "effort":
        return [e for e in EFFORT_LEVELS if e != "none"]
    if axis == "max_tokens":
        return list(BUDGET_SUGGESTIONS)
    try:
        request = BenchRequest.from_values(
            {"benchmark": _text(benchmark) or DEFAULT_BENCHMARK, "data": _text(data),
             "models": {"target": default_model()}}
        )  # fmt: skip
        return list(offer.load(request)[1].versions)
    except UserError:
        return []


def values_label(axis: str) -> str:
    """The values box's label."""
    return f"{AXIS_WORDS.get(axis, axis).capitalize()} to compare"


def controls_layout(c: Controls, offer: BenchmarkOffer) -> Any:
    """The controls, holding ``c`` (a reopened sweep's settings, or the defaults); the
    benchmark field suggests what ``offer`` lets a visitor run."""
    axis = c.axis_name
    models = list(dict.fromkeys(o.id for o in offered_models()))
    efforts = [{"value": DEFAULT_EFFORT, "label": "each model's default"}] + [
        {"value": e, "label": e} for e in EFFORT_LEVELS
    ]
    presets = [{"value": p.name, "label": p.title} for p in PRESETS.values()]
    return dmc.Stack(
        gap="sm",
        children=[
            dmc.Group(
                align="flex-end",
                children=[
                    dmc.Autocomplete(
                        id="bs-benchmark",
                        label="Benchmark",
                        value=c.benchmark or "",
                        data=[*benchmark_names(), *offer.declarations()],
                        description="sample, elbench, or a declaration (.yaml) in this "
                        "server's benchmark folders",
                        limit=50,
                        w=320,
                    ),
                    dmc.TextInput(
                        id="bs-data",
                        label="Data folder",
                        value=c.data or "",
                        description="ELBench's data, in this server's benchmark folders",
                        w=280,
                    ),
                    dmc.Select(
                        id="bs-preset",
                        label="Preset",
                        data=presets,
                        value=c.preset or "full",
                        w=230,
                    ),
                ],
            ),
            dmc.Checkbox(
                id="bs-paper",
                checked=bool(c.paper),
                label="Include the region-specific sets (off by default, as in ELBench's own "
                "core scope)",
            ),
            dmc.Group(
                align="flex-end",
                children=[
                    dmc.TextInput(
                        id="bs-tasks",
                        label="Tasks",
                        value=c.tasks or "",
                        description="comma-separated task ids (empty: all)",
                        w=280,
                    ),
                    dmc.NumberInput(
                        id="bs-per-task",
                        label="Per task",
                        value=c.per_task or "",
                        min=1,
                        allowDecimal=False,
                        w=120,
                    ),
                    dmc.NumberInput(
                        id="bs-max-items",
                        label="Max items",
                        value=c.max_items or "",
                        min=1,
                        allowDecimal=False,
                        w=120,
                    ),
                    dmc.Autocomplete(
                        id="bs-judge",
                        label="Judge",
                        data=models,
                        value=c.judge or "",
                        w=320,
                        description="for judged tasks (empty: none)",
                    ),
                ],
            ),
            dmc.SegmentedControl(
                id="bs-axis",
                value=axis,
                data=[{"value": a, "label": AXIS_LABELS[a]} for a in AXES],
            ),
            dmc.TagsInput(
                id="bs-values",
                label=values_label(axis),
                description="Pick from the list or type a value, then Enter.",
                data=value_choices(axis, c.benchmark, c.data, offer),
                value=list(c.values or []),
                clearable=True,
                acceptValueOnBlur=True,
            ),
            dmc.Group(
                align="flex-end",
                children=[
                    html.Div(
                        dmc.Autocomplete(
                            id="bs-model", label="Model", data=models, value=c.model or "", w=380
                        ),
                        id="bs-wrap-model",
                        style=HIDDEN if axis == "model" else SHOWN,
                    ),
                    html.Div(
                        dmc.Select(
                            id="bs-effort",
                            label="Effort",
                            data=efforts,
                            value=c.effort or DEFAULT_EFFORT,
                            w=200,
                        ),
                        id="bs-wrap-effort",
                        style=HIDDEN if axis == "effort" else SHOWN,
                    ),
                    html.Div(
                        dmc.TextInput(
                            id="bs-prompt-version",
                            label="Prompt version",
                            value=c.prompt_version or "",
                            w=160,
                        ),
                        id="bs-wrap-prompt-version",
                        style=HIDDEN if axis == "prompt_version" else SHOWN,
                    ),
                    dmc.TextInput(
                        id="bs-limit",
                        label="Limit (USD, the whole sweep)",
                        value=c.limit or "",
                        w=200,
                        description="empty: no limit beyond the host's ceilings",
                    ),
                ],
            ),
            dmc.Group(
                [
                    dmc.Checkbox(
                        id="bs-accept-unpriced",
                        checked=bool(c.accept_unpriced),
                        label="Run a model that has no listed price",
                    ),
                    dmc.Checkbox(
                        id="bs-confirm",
                        checked=False,
                        label="I agree to spend up to the high estimate",
                    ),
                ]
            ),
            advanced_layout(c, models),
        ],
    )


def _shown(value: object) -> object:
    return "" if value is None else value


def advanced_layout(c: Controls, models: list[str]) -> Any:
    """Advanced settings, defaults as ``bench sweep``'s: repeats, temperature, the answer
    length limit (held; hidden when it is the varied setting), requests at once and rate
    limits, the student, the scoring version, the decision judge and rule scoring."""
    axis = c.axis_name

    def number(id_: str, label: str, value: object, note: str, w: int = 170) -> Any:
        # no clamping: an out-of-range number reaches the library, which says what is wrong
        return dmc.NumberInput(
            id=id_, label=label, value=_shown(value), allowDecimal=False,
            clampBehavior="none", description=note, w=w,
        )  # fmt: skip

    max_tokens = html.Div(  # text, read as the CLI reads it ("64.000" is 64,000, "64k" too)
        dmc.TextInput(
            id="bs-max-tokens", label="Answer length limit", value=str(_shown(c.max_tokens)),
            description=f"max tokens (empty: {DEFAULT_ANSWER_TOKENS:,}, capped at the model's)",
            w=230,
        ),
        id="bs-wrap-max-tokens",
        style=HIDDEN if axis == "max_tokens" else SHOWN,
    )  # fmt: skip
    temperature = dmc.TextInput(
        id="bs-temperature", label="Temperature", value=str(_shown(c.temperature)),
        description="the model under test's (empty: its default)", w=220,
    )  # fmt: skip
    sampling = dmc.Group(
        [number("bs-repeats", "Repeats", c.repeats,
                f"times each item is asked (1–{MAX_REPEATS}); pass@k too", w=230),
         temperature, max_tokens],
        align="flex-start",
    )  # fmt: skip
    pace = dmc.Group(
        [number("bs-concurrency", "Requests at once", c.concurrency,
                f"per provider (1–{MAX_CONCURRENCY})"),
         number("bs-rpm", "Requests a minute", c.rpm, "per model (empty: no cap)"),
         number("bs-tpm", "Tokens a minute", c.tpm, "per model (empty: no cap)")],
        align="flex-start",
    )  # fmt: skip
    student = dmc.Autocomplete(
        id="bs-student", label="Simulated student", data=models, value=c.student or "",
        description="of teaching dialogues (empty: the judge)", w=320,
    )  # fmt: skip
    scoring = dmc.Select(
        id="bs-scoring", label="Scoring version", data=list(SCORING_VERSIONS),
        value=c.scoring or DEFAULT_SCORING_VERSION, w=320,
        description="replicated: answers read as ELBench reads them; corrected: its "
        "misreadings fixed",
    )  # fmt: skip
    checks = [
        dmc.Checkbox(id="bs-decision", checked=bool(c.decision_judge),
                     label="Decision judge: verdicts only (cheaper, no reasons)"),
        dmc.Checkbox(id="bs-edu-rule", checked=bool(c.edu_rule),
                     label="Rule scoring: judged tasks that have a fixed-rule scorer are scored "
                     "by it instead (offline; such runs are labelled rule-scored)"),
    ]  # fmt: skip
    panel = dmc.Stack(
        [sampling, pace, dmc.Group([student, scoring], align="flex-start"), *checks], gap="sm"
    )
    return dmc.Accordion(
        dmc.AccordionItem(
            [
                dmc.AccordionControl(html.Span("Advanced settings", id="bs-advanced")),
                dmc.AccordionPanel(panel),
            ],
            value="advanced",
        )
    )


def controls_from_request(request: dict[str, Any], axis: str, values: list[str]) -> Controls:
    """A stored sweep's held request (its JSON) and values as the controls show them."""
    models = request.get("models") or {}
    return Controls(
        **fill_form(FORM, request),
        judge=models.get("judge"),
        axis=axis,
        values=values,
        model=models.get("target") if axis != "model" else None,
        effort=_text(request.get("effort")) or DEFAULT_EFFORT,
        max_tokens=request.get("max_tokens") if axis != "max_tokens" else None,
        prompt_version=_text(request.get("prompt_version")) if axis != "prompt_version" else None,
        student=models.get("student"),
    )
