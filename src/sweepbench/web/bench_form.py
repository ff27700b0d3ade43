"""The Run a benchmark page's controls as a :class:`~sweepbench.bench.request.BenchRequest`,
both ways: the controls that set one field each (:data:`FORM`, through :mod:`.request_form`),
the ones composed into the benchmark, the models and the limits per role, and a stored run's
controls (its request, shown), so pressing Run continues it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sweepbench.bench.request import BenchRequest, request_from_run
from sweepbench.bench.sources.registry import find
from sweepbench.errors import SweepbenchError, UserError
from sweepbench.roles import BENCH_ROLES, label
from sweepbench.web.bench_sweep_controls import DEFAULT_EFFORT
from sweepbench.web.context import WebContext
from sweepbench.web.offer import needs_data
from sweepbench.web.request_form import (
    FormField,
    as_checked,
    budget,
    checked,
    fill_form,
    joined,
    labels,
    names,
    properties,
    read_form,
    shown,
    text,
    usd,
    whole,
)


def _effort(value: Any, _label: str = "") -> str | None:
    """The effort chosen (None: "the model's default", none sent)."""
    chosen = text(value)
    return None if chosen in ("", DEFAULT_EFFORT) else chosen


FORM = (
    FormField("bp-preset", "preset", "Preset"),
    FormField(
        "bp-scope", "scope", "Scope", read=lambda on, _: "paper" if on else "core",
        show=lambda scope: scope == "paper", prop="checked",
    ),
    FormField("bp-limit", "limit", "Spending limit", read=usd),
    FormField(
        "bp-decision", "decision_judge", "Decision judge", read=checked, show=as_checked,
        prop="checked",
    ),
    FormField("bp-areas", "areas", "Areas", read=names, show=joined),
    FormField("bp-tasks", "tasks", "Tasks", read=names, show=joined),
    FormField("bp-skills", "skills", "Only these skills", read=names, show=joined),
    FormField("bp-per-task", "per_task", "Questions per task", read=whole),
    FormField("bp-max-items", "max_items", "Stop after this many questions", read=whole),
    FormField(  # 0 or empty: the default
        "bp-concurrency", "concurrency", "Requests at once", read=lambda v, n: whole(v, n) or None
    ),
    FormField("bp-resume", "resume", "Continue", read=checked, show=as_checked, prop="checked"),
    FormField(
        "bp-unpriced", "accept_unpriced", "Run without a price", read=checked, show=as_checked,
        prop="checked",
    ),
    FormField("bp-max-tokens", "max_tokens", "Answer length limit", read=budget),
    FormField("bp-effort", "effort", "Effort", read=_effort, show=lambda v: v or DEFAULT_EFFORT),
    FormField("bp-temperature", "temperature", "Temperature"),  # as typed: the plan checks it
    FormField("bp-repeats", "repeats", "Repeats", read=whole, show=lambda v: str(v or 1)),
)  # fmt: skip
"""The controls that set one request field each, both ways (:mod:`.request_form`)."""
COMPOSED = [
    "bp-benchmark", "bp-declaration", "bp-data", "bp-model", "bp-judge",
    "bp-separate-student", "bp-student", "bp-limit-target", "bp-limit-judge", "bp-limit-student",
]  # fmt: skip
"""The controls that make up the benchmark, the models and the limits per role."""
FIELDS = [*COMPOSED, *(f.control for f in FORM)]
"""Every setting of the request, in the order the page's callbacks read them. The key is
not one of them: only the Run callback reads it."""
PROPERTY = {"bp-separate-student": "checked", **properties(FORM)}


# -- the request -------------------------------------------------------------------------------


_text = text


def benchmark_name(choice: Any, declaration: Any) -> str:
    """The ``BenchRequest.benchmark`` of the benchmark choice, as the visitor gave it (what
    it may name is :class:`~sweepbench.web.offer.BenchmarkOffer`'s rule)."""
    chosen = _text(choice) or "sample"
    if chosen == "declaration":
        path = _text(declaration)
        if not path:
            raise UserError(
                "Give the name of a benchmark declaration (.yaml) in this server's benchmark "
                "folders."
            )
        return path
    return chosen


def request_values(values: dict[str, Any], *, confirmed: bool = False) -> dict[str, Any]:
    """The fields of a ``BenchRequest`` from the page's settings (``values``: id → value);
    a UserError names the field that is wrong."""
    models = {"target": _text(values["bp-model"])}
    if not models["target"]:
        raise UserError("Choose the model you want to test.")
    if _text(values["bp-judge"]):
        models["judge"] = _text(values["bp-judge"])
    if values["bp-separate-student"]:
        if not _text(values["bp-student"]):
            raise UserError("Choose the simulated student under Advanced settings.")
        models["student"] = _text(values["bp-student"])
    roles = {
        role: usd(values[f"bp-limit-{role}"], f"Limit for the {label(role)}")
        for role in BENCH_ROLES
    }
    data = _text(values["bp-data"])
    return {
        "benchmark": benchmark_name(values["bp-benchmark"], values["bp-declaration"]),
        "data": Path(data) if data and needs_data(str(values["bp-benchmark"])) else None,
        "models": models,
        "role_limits": {r: v for r, v in roles.items() if v is not None},
        "confirmed": confirmed,
        **read_form(FORM, values),
    }


NAMES = labels(
    FORM, benchmark="Benchmark", data="Data folder", models="Models", role_limits="Limits per role"
)


def build_request(values: dict[str, Any], *, confirmed: bool = False) -> BenchRequest:
    """The request the page's settings make (UserError, scrubbed, when they are wrong)."""
    return BenchRequest.from_values(request_values(values, confirmed=confirmed), names=NAMES)


def _benchmark_choice(request: BenchRequest) -> dict[str, Any]:
    """The benchmark controls of a stored run's request: a benchmark known by name (with its
    data folder, when the user gives it), or the declaration it was loaded from."""
    known = find(request.benchmark)
    if known is None:
        return {"bp-benchmark": "declaration", "bp-declaration": request.benchmark}
    if known.needs_data:
        return {"bp-benchmark": known.name, "bp-data": shown(request.data)}
    return {"bp-benchmark": known.name}


def controls_from_run(settings: dict[str, Any]) -> dict[str, Any]:
    """The page's controls (id → value or checked) from a run's stored settings — the request
    it was made from (:func:`~sweepbench.bench.request.request_from_run`), shown through
    :data:`FORM` — so pressing Run continues it; never a key (none is stored)."""
    config = settings.get("config") or {}
    try:
        request = request_from_run(settings, str(config.get("benchmark", "")))
    except (ValueError, UserError):  # settings this version cannot read
        return {}
    filled = _benchmark_choice(request)
    student = request.models.get("student", "")
    filled.update({
        "bp-model": request.models["target"], "bp-judge": request.models.get("judge", ""),
        "bp-separate-student": bool(student), "bp-student": student, **fill_form(FORM, request),
    })  # fmt: skip
    for role in BENCH_ROLES:
        filled[f"bp-limit-{role}"] = shown(request.role_limits.get(role))
    return filled


def stored_controls(context: WebContext, run_id: str | None) -> dict[str, Any]:
    """The controls of a stored run (empty: no such run, or none asked for)."""
    if not run_id:
        return {}
    from sweepbench.bench.storage import BenchStore

    try:
        run = BenchStore(context.store).run(run_id)
    except SweepbenchError:
        run = None
    return controls_from_run(dict(run.settings)) if run is not None else {}
