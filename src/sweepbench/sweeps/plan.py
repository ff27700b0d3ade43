"""The sweep plan: which cells run, built by one function that the estimate, the admission, the
run, the CLI and the export all share, so the run can never differ from what was priced.

One axis varies (``model``, ``effort``, ``max_tokens`` or ``prompt_version``); the other three
settings are held. Building a plan never raises on user input: what cannot run is reported as
:class:`Refusal` s, each with a message meant for the user (spec sweeps.md §4, §5, §7).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict, Unpack

from sweepbench.artifacts import ArtifactKind, artifact_kind
from sweepbench.errors import UserError
from sweepbench.models.base import GenerateSettings, Message, Request
from sweepbench.models.catalog import ModelInfo
from sweepbench.models.providers import default_models, needs_key
from sweepbench.models.registry import model_info, provider_status, route_problem, routed
from sweepbench.models.routes import DEFAULT_ROUTE, RoutePolicy, parse_policy
from sweepbench.settings import key_hint, provider_key, utf8_problem
from sweepbench.toml_keys import refuse_unknown_settings

if TYPE_CHECKING:
    from sweepbench.sweeps.judge import SweepJudge

from sweepbench.axes import AXES, Axis
from sweepbench.axes.cells import (
    Cell,
    Held,
    Refusal,
    Severity,
    axis_cells,
    budget_in_range,
    coerce_budget,
    out_of_range,
)

MAX_REPEATS = 5
DEFAULT_LOCAL_MODEL = "local/smollm2-135m"


@dataclass(frozen=True)
class PlannedCall:
    """One model call of the plan: a cell's sample ``repeat`` (0-based)."""

    cell: Cell
    repeat: int
    request: Request


@dataclass(frozen=True)
class Plan:
    """The cells of a sweep and everything needed to run or price them."""

    prompt: str
    kind_name: str
    """What the cells produce: ``text``, ``excalidraw`` or ``sculpture`` (an artifact kind)."""
    axis: Axis
    held: dict[str, str | int]
    cells: tuple[Cell, ...]
    repeats: int = 1
    dropped: int = 0
    """Cells beyond the cap, not run ("only the first N are run")."""
    notes: tuple[str, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    judge: SweepJudge | None = None
    """Who grades each sample's output (``sweeps/judge.py``); None: no grading."""
    route: RoutePolicy = DEFAULT_ROUTE
    """How OpenRouter models' calls are routed among their hosts."""

    @property
    def kind(self) -> ArtifactKind:
        """The artifact kind the cells produce."""
        return artifact_kind(self.kind_name)

    def calls(self) -> list[PlannedCall]:
        """Every model call, cell by cell, sample by sample: the one list that is priced,
        admitted and run."""
        kind = self.kind
        out: list[PlannedCall] = []
        for cell in self.cells:
            system = kind.system_prompt(cell.prompt_version)
            messages = ((Message("system", system),) if system else ()) + (
                Message("user", self.prompt),
            )
            settings = GenerateSettings(
                max_tokens=cell.max_tokens,
                effort=cell.effort_applied,
                response_format=kind.schema(cell.prompt_version, cell.model.split("/", 1)[0]),
                prompt_version=cell.prompt_version,
            )
            request = Request(cell.model, messages, settings)
            out.extend(PlannedCall(cell, repeat, request) for repeat in range(self.repeats))
        return out

    def blocking(self, *, spending: bool = True) -> list[Refusal]:
        """The refusals that stop this plan (``spending=False``: those that stop an estimate)."""
        return [r for r in self.refusals if spending or not r.needs_key]

    def ensure_runnable(self, *, spending: bool = True) -> None:
        """Raise the first blocking refusal as a UserError."""
        blocking = self.blocking(spending=spending)
        if blocking:
            raise UserError(blocking[0].message)


def default_model() -> str:
    """The held model when none is given: the default model of the first provider in the
    table whose key is set (Claude Opus 5, then GPT-5.6 Luna), else the bundled local model
    (the spec's "first local model" fallback)."""
    for provider, model in default_models():
        if provider_key(provider):
            return model
    return DEFAULT_LOCAL_MODEL


class SweepSettings(TypedDict, total=False):
    """The settings of a single-prompt sweep besides its prompt and axis, declared once: every
    surface passes them whole (``build_plan(prompt, axis, values, **settings)``, and so
    ``sweepbench.sweep``, ``asweep`` and ``estimate``), each one typed."""

    kind: str
    """What the cells produce: ``text`` (the default), ``excalidraw``, ``sculpture``."""
    task: str | None
    """``kind``'s older name, still accepted."""
    model: str | None
    """The held model (None: :func:`default_model`)."""
    effort: str | None
    """The held effort (None or empty: each model's default)."""
    max_tokens: str | int | None
    """The held output budget (``64000`` or ``64k``; None: the kind's)."""
    prompt_version: str | None
    repeats: int
    """Samples per cell (1–5)."""
    max_cells: int | None
    judge: str | None
    """A model that grades each sample against ``rubric`` or ``reference`` (exactly one;
    each the text, or a file it names)."""
    rubric: str | None
    reference: str | None
    route: str | None
    """How OpenRouter models' calls are routed among their hosts (``precision``, ``cheapest``,
    ``none``; None: ``precision``, as ELBench-live: :mod:`sweepbench.models.routes`)."""


def build_plan(
    prompt: str, axis: str, values: Sequence[str | int], **settings: Unpack[SweepSettings]
) -> Plan:
    """Build the plan; never raises on user input (problems become refusals), except a
    setting that is not one (a UserError naming it and the nearest)."""
    refuse_unknown_settings(settings, SweepSettings, "a sweep")
    kind = settings.get("task") or settings.get("kind") or "text"
    model, effort = settings.get("model"), settings.get("effort")
    max_tokens, prompt_version = settings.get("max_tokens"), settings.get("prompt_version")
    repeats, max_cells = settings.get("repeats", 1), settings.get("max_cells")
    judge, rubric, reference = (
        settings.get("judge"), settings.get("rubric"), settings.get("reference"),
    )  # fmt: skip
    refusals: list[Refusal] = []
    notes: list[str] = []
    try:
        route = parse_policy(settings.get("route") or DEFAULT_ROUTE)
    except ValueError as exc:
        return Plan(prompt, "text", "model", {}, (), refusals=(Refusal("route", str(exc)),))

    def refuse(
        code: str, message: str, severity: Severity = "error", needs_key: bool = False
    ) -> None:
        refusals.append(Refusal(code, message, severity, needs_key))

    try:
        artifact = artifact_kind(kind)
    except UserError as exc:
        return Plan(prompt, "text", "model", {}, (), refusals=(Refusal("kind", str(exc)),))
    if axis not in AXES:
        message = f"unknown axis {axis!r}; axes: {', '.join(AXES)}"
        return Plan(prompt, kind, "model", {}, (), refusals=(Refusal("axis", message),))
    the_axis: Axis = axis
    defaults = artifact.defaults
    not_utf8 = utf8_problem(prompt)
    if not_utf8 is not None:
        refuse("prompt", f"The prompt is not valid UTF-8 text ({not_utf8}).")
    elif not prompt.strip():
        refuse("prompt", "Write a prompt first.", "warning")
    elif len(prompt) > defaults.prompt_cap:
        refuse(
            "prompt",
            f"The prompt is {len(prompt):,} characters; {kind} sweeps take at most "
            f"{defaults.prompt_cap:,}.",
            "warning",
        )
    repeats_ok = max(1, min(int(repeats), MAX_REPEATS))
    if repeats_ok != repeats:
        notes.append(f"repeats {repeats} clamped to {repeats_ok} (1–{MAX_REPEATS})")

    held_model = model or default_model()
    held_effort = (effort or "").strip().lower()  # empty: each model's default effort
    held_budget = defaults.held_max_tokens
    held_version = prompt_version or artifact.default_version
    if max_tokens is not None:
        given = coerce_budget(max_tokens)
        if given is None:
            notes.append(f"max tokens {max_tokens!r} is not a number; using {held_budget:,}")
        elif not budget_in_range(given):
            if the_axis != "max_tokens":  # otherwise the held budget is not used
                refuse("max_tokens", out_of_range(str(max_tokens).strip()))
        else:
            held_budget = given

    if max_cells is not None and max_cells < 1:
        refuse("max_cells", f"max cells {max_cells} out of range: the cap is at least 1 cell")
    cap = max_cells if max_cells is not None and max_cells >= 1 else defaults.max_variants
    held_setting = Held(held_model, held_effort, held_budget, held_version)
    cells, dropped = axis_cells(
        the_axis, values, held_setting, versions=artifact.versions, what=kind, cap=cap,
        refusals=refusals, notes=notes,
    )  # fmt: skip
    _refuse_unrunnable(cells, refuse, route, notes)
    grader = _judge(judge, rubric, reference, refuse, route, notes)
    held: dict[str, str | int] = {
        "model": held_model,
        "effort": held_effort or "default",
        "max_tokens": held_budget,
        "prompt_version": held_version,
    }
    held.pop(the_axis, None)
    return Plan(
        prompt=prompt,
        kind_name=kind,
        axis=the_axis,
        held=held,
        cells=tuple(cells),
        repeats=repeats_ok,
        dropped=dropped,
        notes=tuple(dict.fromkeys(notes)),
        refusals=tuple(refusals),
        judge=grader,
        route=route,
    )


def _routed(
    model: str, route: RoutePolicy, refuse: Callable[..., None], notes: list[str]
) -> ModelInfo:
    """A model's facts on its route; the route said in the notes (once per model), and a
    route that could not be chosen refused for running (an estimate still prices it)."""
    info = routed(model_info(model), route)
    if info.route is not None:
        line = f"Hosts of {model}: {info.route.describe()}."
        if line not in notes:
            notes.append(line)
        problem = route_problem(info)
        if problem is not None:
            refuse("route", problem, "warning", True)
    return info


def _judge(
    judge: str | None,
    rubric: str | None,
    reference: str | None,
    refuse: Callable[..., None],
    route: RoutePolicy,
    notes: list[str],
) -> SweepJudge | None:
    """The sweep's judge, its problems refused like the cells' (a judge model with no key
    or no price stops the run as a cell's would)."""
    if judge is None and rubric is None and reference is None:
        return None
    from sweepbench.money.prices import price_for
    from sweepbench.sweeps.judge import resolve_judge

    try:
        grader = resolve_judge(judge, rubric, reference)
    except UserError as exc:
        refuse("judge", str(exc))
        return None
    if grader is None:
        return None
    info = _routed(grader.model, route, refuse, notes)
    if not provider_status(info.provider).available:
        hint = key_hint(info.provider) if needs_key(info.provider) else ""
        reason = hint or provider_status(info.provider).reason
        refuse("key", f"No key for the judge {grader.model}: {reason}.", "warning", True)
    if price_for(info) is None:
        refuse(
            "price",
            f"No price on file for the judge {grader.model}, so the spend ceiling cannot "
            "protect this run.",
        )
    return grader


def _refuse_unrunnable(
    cells: Sequence[Cell], refuse: Callable[..., None], route: RoutePolicy, notes: list[str]
) -> None:
    """Missing keys (only when spending) and missing prices (always: a ceiling cannot protect
    an unpriced call); each OpenRouter model's route (:func:`_routed`)."""
    from sweepbench.money.prices import price_for

    missing_key: dict[str, list[str]] = {}
    unpriced: list[str] = []
    for cell in cells:
        info = _routed(cell.model, route, refuse, notes)
        status = provider_status(info.provider)
        if not status.available:
            missing_key.setdefault(info.provider, []).append(cell.model)
        if price_for(info) is None and cell.model not in unpriced:
            unpriced.append(cell.model)
    for provider, models in missing_key.items():
        hint = key_hint(provider) if needs_key(provider) else ""
        reason = hint or provider_status(provider).reason
        refuse(
            "key",
            f"No key for {', '.join(dict.fromkeys(models))}: {reason}.",
            "warning",
            True,
        )
    if unpriced:
        refuse(
            "price",
            f"No price on file for {', '.join(unpriced)}, so the spend ceiling cannot protect "
            "this run.",
        )
