"""The sweep plan: which cells run, built by one function that the estimate, the admission, the
run, the CLI and the export all share, so the run can never differ from what was priced.

One axis varies (``model``, ``effort``, ``max_tokens`` or ``prompt_version``); the other three
settings are held. Building a plan never raises on user input: what cannot run is reported as
:class:`Refusal` s, each with a message meant for the user (spec sweeps.md §4, §5, §7).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from sweepbench.artifacts import ArtifactKind, artifact_kind
from sweepbench.errors import UserError
from sweepbench.models.base import GenerateSettings, Message, Request
from sweepbench.models.catalog import EFFORT_LEVELS, ModelInfo
from sweepbench.models.providers import default_models, needs_key
from sweepbench.models.registry import model_info, provider_status
from sweepbench.settings import key_hint, provider_key, utf8_problem

if TYPE_CHECKING:
    from sweepbench.sweeps.judge import SweepJudge

from sweepbench.sweeps.axes import AXES, AXIS_WORDS, Axis

MAX_REPEATS = 5
MAX_BUDGET = 10_000_000
"""The largest output budget a sweep takes, in tokens: far above every model's output limit
(a larger number is a typo, not a budget). A budget outside 1–MAX_BUDGET is refused, naming
it; one inside above the model's own limit is lowered to that limit with a note."""
DEFAULT_LOCAL_MODEL = "local/smollm2-135m"
_THOUSANDS = re.compile(r"^\d{1,3}([.,]\d{3})+$")


def coerce_budget(value: object, default: int | None = None) -> int | None:
    """A token budget from whatever a number box or a flag holds; never raises (spec §5).

    "64.000", "64,000" and " 64 000 " are 64,000; "1e5" is 100,000; "64k" is 64,000; an
    unusable value gives ``default``. Clamping to the model's limits is :func:`clamp_budget`."""
    if value is None or isinstance(value, bool):
        return default
    number: float
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip().replace(" ", "").replace("_", "")
        scale = 1.0
        if text[-1:].lower() == "k":
            text, scale = text[:-1], 1000.0
        text = text.replace(".", "").replace(",", "") if _THOUSANDS.match(text) else text
        text = text.replace(",", "")
        try:
            number = float(text) * scale
        except ValueError:
            return default
    else:
        return default
    if not math.isfinite(number):
        return default
    return int(number)


def budget_in_range(budget: int) -> bool:
    """A budget a sweep can run: 1 to :data:`MAX_BUDGET` tokens."""
    return 1 <= budget <= MAX_BUDGET


def _out_of_range(shown: str) -> str:
    return f"max tokens {shown} out of range: a budget is 1 to {MAX_BUDGET:,} tokens"


def clamp_budget(budget: int, info: ModelInfo) -> tuple[int, str | None]:
    """The budget within the model's limits, and a note when it had to move."""
    limit = info.max_output_tokens
    if budget < 1:
        return 1, f"max tokens {budget:,} raised to 1"
    if limit and budget > limit:
        return limit, f"max tokens {budget:,} lowered to {limit:,}, {info.id}'s limit"
    return budget, None


Severity = Literal["info", "warning", "error"]


@dataclass(frozen=True)
class Refusal:
    """Why a plan cannot run. ``severity`` follows the spec: info, warning or error."""

    code: str
    message: str
    severity: Severity = "error"
    needs_key: bool = False
    """True for refusals that only matter when spending (``--estimate-only`` ignores them)."""


@dataclass(frozen=True)
class Cell:
    """One setting of the sweep: the held values with the axis value put in."""

    index: int
    model: str
    effort_requested: str
    effort_applied: str
    """What is actually sent ("none": nothing)."""
    max_tokens: int
    prompt_version: str
    label: str

    @property
    def effort_ignored(self) -> bool:
        """The model does not accept the requested level, so nothing was sent."""
        return self.effort_requested != "none" and self.effort_applied == "none"


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


def _label(axis: Axis, info: ModelInfo, requested: str, applied: str, budget: int, v: str) -> str:
    effort = f"effort={applied}" + (" (not accepted)" if requested != applied else "")
    if axis == "model":
        return f"{info.label or info.id} · {effort}"
    if axis == "effort":
        return f"{effort} · {budget:,} tok"
    if axis == "max_tokens":
        return f"{budget:,} tok · {effort}"
    return f"prompt {v} · {effort} · {budget:,} tok"


def build_plan(
    prompt: str,
    axis: str,
    values: Sequence[str | int],
    *,
    kind: str = "text",
    task: str | None = None,
    model: str | None = None,
    effort: str | None = None,
    max_tokens: str | int | None = None,
    prompt_version: str | None = None,
    repeats: int = 1,
    max_cells: int | None = None,
    judge: str | None = None,
    rubric: str | None = None,
    reference: str | None = None,
) -> Plan:
    """Build the plan; never raises on user input (problems become refusals). ``kind`` is
    what the cells produce (``task`` is its older name, still accepted). ``judge`` grades
    each sample against ``rubric`` or ``reference`` (exactly one; each the text, or a file
    it names)."""
    if task is not None:
        kind = task
    refusals: list[Refusal] = []
    notes: list[str] = []

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
                refuse("max_tokens", _out_of_range(str(max_tokens).strip()))
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
    _refuse_unrunnable(cells, refuse)
    grader = _judge(judge, rubric, reference, refuse)
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
    )


def _judge(
    judge: str | None, rubric: str | None, reference: str | None, refuse: Callable[..., None]
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
    info = model_info(grader.model)
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


@dataclass(frozen=True)
class Held:
    """The settings a sweep holds while its axis varies (effort "": each model's default)."""

    model: str
    effort: str
    budget: int
    version: str


def axis_cells(
    the_axis: Axis,
    values: Sequence[str | int],
    held: Held,
    *,
    versions: Sequence[str],
    what: str,
    cap: int,
    refusals: list[Refusal],
    notes: list[str],
) -> tuple[list[Cell], int]:
    """The cells of one varying axis and how many values beyond ``cap`` were dropped: the
    values read (efforts in the catalogue's order, budgets sorted, duplicates collapsed after
    coercion), each cell's effort resolved against its model, and the refusals every sweep
    shares (an unknown value, two values landing on the same settings, one model on the model
    axis, effort on a model that ignores it), appended to ``refusals``. ``versions`` are the
    prompt versions ``what`` (the kind, or the benchmark) has. Shared by single-prompt sweeps
    and benchmark sweeps, so both refuse the same things in the same words."""

    def refuse(
        code: str, message: str, severity: Severity = "error", needs_key: bool = False
    ) -> None:
        refusals.append(Refusal(code, message, severity, needs_key))

    # The varying list, in the spec's order, duplicates collapsed after coercion.
    raw = [str(v).strip() for v in values if str(v).strip()]
    varying: list[str | int] = []
    if the_axis == "effort":
        bad = [v for v in raw if v.lower() not in EFFORT_LEVELS]
        if bad:
            refuse("values", f"unknown effort {', '.join(bad)}; levels: {', '.join(EFFORT_LEVELS)}")
        varying = [level for level in EFFORT_LEVELS if level in {v.lower() for v in raw}]
    elif the_axis == "max_tokens":
        budgets = {v: coerce_budget(v) for v in raw}
        unreadable = [v for v, b in budgets.items() if b is None]
        if unreadable:
            refuse("values", f"cannot read max tokens {', '.join(unreadable)} as numbers")
        outside = [v for v, b in budgets.items() if b is not None and not budget_in_range(b)]
        if outside:
            refuse("values", _out_of_range(", ".join(outside)))
        varying = sorted({b for b in budgets.values() if b is not None and budget_in_range(b)})
    elif the_axis == "model":
        varying = list(dict.fromkeys(raw))
    else:
        bad = [v for v in raw if v not in versions]
        if bad:
            refuse(
                "values",
                f"{what} has no prompt version {', '.join(bad)}; versions: {', '.join(versions)}",
            )
        varying = [v for v in versions if v in raw]

    dropped = max(len(varying) - cap, 0)
    varying = varying[:cap]

    cells: list[Cell] = []
    seen: dict[tuple[str, str, int, str], tuple[str, str]] = {}
    """The applied settings (after clamping and effort resolution) → the first cell's label
    and the value it was given as: two values that land on the same settings are refused."""
    for value in varying:
        cell_model = str(value) if the_axis == "model" else held.model
        try:
            info = model_info(cell_model)
        except UserError as exc:
            refuse("model", str(exc))
            continue
        requested = str(value) if the_axis == "effort" else held.effort
        if not requested:
            requested = info.default_effort or "none"
        budget = int(value) if the_axis == "max_tokens" else held.budget
        budget, note = clamp_budget(budget, info)
        if note:
            notes.append(note)
        version = str(value) if the_axis == "prompt_version" else held.version
        try:
            applied = info.resolve_effort(requested, strict=False) or "none"
        except UserError as exc:
            refuse("effort", str(exc))
            continue
        label = _label(the_axis, info, requested, applied, budget, version)
        key = (cell_model, applied, budget, version)
        shown = f"{value:,}" if isinstance(value, int) else str(value)
        if the_axis == "effort" and info.effort_capable and requested != applied:
            twin = f", repeating '{seen[key][0]}'" if key in seen else ""
            refuse(
                "duplicate",
                f"{info.id} does not accept effort {requested!r}: that cell would run with no "
                f"effort at all{twin}. Pick from {', '.join(info.supported_efforts())}.",
            )
        elif key in seen and (the_axis != "effort" or info.effort_capable):
            # (an effort axis on a model without effort is refused as a whole below)
            refuse(
                "duplicate",
                f"{AXIS_WORDS[the_axis]} {seen[key][1]} and {shown} would run with the same "
                f"settings ('{label}'{f': {note}' if note else ''}); keep one of them.",
            )
        seen.setdefault(key, (label, shown))
        cells.append(Cell(len(cells), cell_model, requested, applied, budget, version, label))

    if dropped:
        notes.append(f"Only the first {len(cells)} are run.")
    if not cells and not refusals:
        refuse("cells", "Select at least one variant to compare.", "warning")
    if the_axis == "model" and 0 < len(cells) < 2:
        refuse(
            "cells", "Pick at least two models to compare — one is just a single run.", "warning"
        )
    if the_axis == "effort" and len(cells) >= 2:
        info = model_info(held.model)
        if not info.effort_capable:
            refuse(
                "effort",
                f"{info.id} does not accept the effort parameter, so every variant would be "
                "identical. Vary max tokens instead, or pick another model.",
            )
    return cells, dropped


def _refuse_unrunnable(cells: Sequence[Cell], refuse: Callable[..., None]) -> None:
    """Missing keys (only when spending) and missing prices (always: a ceiling cannot protect
    an unpriced call)."""
    from sweepbench.money.prices import price_for

    missing_key: dict[str, list[str]] = {}
    unpriced: list[str] = []
    for cell in cells:
        info = model_info(cell.model)
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
