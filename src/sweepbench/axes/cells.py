"""One varying axis of a sweep read into its cells — shared by single-prompt sweeps and
benchmark sweeps (both import it from here, below either), so both read values, clamp budgets
and refuse the same things in the same words."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from sweepbench.axes import AXIS_WORDS, Axis
from sweepbench.errors import UserError
from sweepbench.models.catalog import EFFORT_LEVELS, ModelInfo
from sweepbench.models.registry import model_info

MAX_BUDGET = 10_000_000
"""The largest output budget a sweep takes, in tokens: far above every model's output limit
(a larger number is a typo, not a budget). A budget outside 1–MAX_BUDGET is refused, naming
it; one inside above the model's own limit is lowered to that limit with a note."""
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


SHORT_BUDGET = 1_000
"""Below this many tokens most answers are cut short: the surfaces warn (the run still goes)."""


def read_budget(raw: object) -> int:
    """A typed output budget (``--max-tokens``, a page's answer length limit) — the one parser
    every surface reads a budget with: "64000", "64,000", "64.000" and "64k" are 64,000
    (:func:`coerce_budget`); a value that is no number, or one outside 1 to
    :data:`MAX_BUDGET` tokens, is a UserError naming the value."""
    shown = str(raw).strip()
    budget = coerce_budget(raw)
    if budget is None:
        raise UserError(f"cannot read max tokens {shown!r} as a number (64000 or 64k)")
    if not budget_in_range(budget):
        raise UserError(out_of_range(shown))
    return budget


def out_of_range(shown: str) -> str:
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


def _label(axis: Axis, info: ModelInfo, requested: str, applied: str, budget: int, v: str) -> str:
    effort = f"effort={applied}" + (" (not accepted)" if requested != applied else "")
    if axis == "model":
        return f"{info.label or info.id} · {effort}"
    if axis == "effort":
        return f"{effort} · {budget:,} tok"
    if axis == "max_tokens":
        return f"{budget:,} tok · {effort}"
    return f"prompt {v} · {effort} · {budget:,} tok"


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
            refuse("values", out_of_range(", ".join(outside)))
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
