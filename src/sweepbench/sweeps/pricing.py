"""The price and time of a plan, shown before anything runs (spec sweeps.md §6): per cell a
typical figure and a ceiling, the totals, the cheapest and dearest cell, how long the sweep
takes (``timing.py``), and the estimate line."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from sweepbench.axes import AXIS_WORDS
from sweepbench.axes.cells import Cell
from sweepbench.models.base import Request
from sweepbench.models.catalog import ModelInfo
from sweepbench.models.providers import provider
from sweepbench.models.registry import model_info, routed
from sweepbench.money.estimate import UTILISATION, CallEstimate, estimate_call
from sweepbench.money.prices import format_usd
from sweepbench.settings import KEY_VARIABLES, provider_key
from sweepbench.store import Store
from sweepbench.sweeps.plan import Plan
from sweepbench.sweeps.timing import (
    Pace,
    approximately,
    duration_words,
    exact_seconds,
    expected_tokens,
    observed_pace,
    queue_of,
    schedule,
    slots,
)

MAX_CELL_TIMES = 4
"""Cells whose times the line names one by one; with more it gives the range."""


@dataclass(frozen=True)
class CellEstimate:
    """One cell's estimate: a call's figures times the samples per cell."""

    cell: Cell
    call: CallEstimate
    samples: int
    seconds: float | None = None
    """One call's expected time (None: no timing history for the model yet)."""
    judge: CallEstimate | None = None
    """Grading one sample, when the sweep has a judge (``sweeps/judge.py``)."""

    @property
    def typical(self) -> Decimal | None:
        """Typical cost of all the cell's samples (their grading included)."""
        if self.call.typical is None or (self.judge is not None and self.judge.typical is None):
            return None
        grading = self.judge.typical or Decimal(0) if self.judge is not None else Decimal(0)
        return (self.call.typical + grading) * self.samples

    @property
    def ceiling(self) -> Decimal | None:
        """Worst case of all the cell's samples (every call uses its whole budget), their
        grading at its worst case included."""
        if self.call.ceiling is None or (self.judge is not None and self.judge.ceiling is None):
            return None
        grading = self.judge.ceiling or Decimal(0) if self.judge is not None else Decimal(0)
        return (self.call.ceiling + grading) * self.samples

    @property
    def judge_ceiling(self) -> Decimal | None:
        """The worst case of grading all the cell's samples (None: no judge or no price)."""
        if self.judge is None or self.judge.ceiling is None:
            return None
        return self.judge.ceiling * self.samples


@dataclass(frozen=True)
class SweepEstimate:
    """The estimate of a whole plan."""

    plan: Plan
    cells: tuple[CellEstimate, ...]

    @property
    def unpriced(self) -> list[str]:
        """Models with no price on file (no dollar figure can be given), the judge's too."""
        models = [c.cell.model for c in self.cells if not c.call.priced]
        models += [c.judge.model for c in self.cells if c.judge is not None and not c.judge.priced]
        return list(dict.fromkeys(models))

    @property
    def typical(self) -> Decimal | None:
        """Σ typical, or None when any cell is unpriced."""
        if self.unpriced:
            return None
        return sum((c.typical or Decimal(0) for c in self.cells), Decimal(0))

    @property
    def ceiling(self) -> Decimal | None:
        """Σ ceiling (what the ledger reserves), or None when any cell is unpriced."""
        if self.unpriced:
            return None
        return sum((c.ceiling or Decimal(0) for c in self.cells), Decimal(0))

    @property
    def free(self) -> bool:
        """Every cell runs on a free (local or scripted) model."""
        return bool(self.cells) and all(
            c.call.free and (c.judge is None or c.judge.free) for c in self.cells
        )

    @property
    def waits_for_keys(self) -> bool:
        """Nothing will be spent because nothing can run: a call of the plan needs a provider
        key and this host holds none. Decided by the plan, not by the keys alone: a priced call
        that needs no key (an endpoint the operator priced) runs, and costs, without one."""
        blocked = any(r.needs_key for r in self.plan.refusals)
        return blocked and not any(provider_key(p) for p in KEY_VARIABLES)

    @property
    def judge_ceiling(self) -> Decimal | None:
        """The worst case of all the grading (None: no judge, or unpriced)."""
        if self.plan.judge is None or self.unpriced:
            return None
        return sum((c.judge_ceiling or Decimal(0) for c in self.cells), Decimal(0))

    def judge_text(self) -> str:
        """The estimate line's sentence on grading: who grades, and at most what it costs."""
        judge = self.plan.judge
        if judge is None:
            return ""
        worst = self.judge_ceiling
        if worst is None or self.free:
            return f"Graded by {judge.model}."
        return f"Graded by {judge.model}: at most {format_usd(worst)} of that for grading."

    @property
    def calibrated_from(self) -> int:
        """Recorded calls behind the utilisation figures (0: the default table)."""
        return sum(c.call.calibrated_from for c in self.cells)

    @property
    def untimed(self) -> list[str]:
        """Models with no timing history yet (no time can be given for their cells)."""
        return list(dict.fromkeys(c.cell.model for c in self.cells if c.seconds is None))

    def _queued_calls(self, cells: list[CellEstimate]) -> list[tuple[str, int, float]]:
        """Every timed call of ``cells`` in run order, with the queue it waits in."""
        width = self.plan.kind.defaults.max_variants
        return [
            (queue_of(c.cell.model), slots(c.cell.model, width), c.seconds)
            for c in cells
            if c.seconds is not None
            for _ in range(c.samples)
        ]

    def cell_seconds(self, cell: CellEstimate) -> float | None:
        """How long one cell's samples take on their own (local samples add up)."""
        return None if cell.seconds is None else schedule(self._queued_calls([cell]))

    @property
    def seconds(self) -> float | None:
        """How long the sweep takes, queueing included (None when any model is untimed)."""
        if self.untimed or not self.cells:
            return None
        return schedule(self._queued_calls(list(self.cells)))

    def time_text(self) -> str:
        """The estimate line's sentence on time: "Runs in about 40 s.", with each cell's time
        where they differ, a note when local calls queue, and which models have no timing
        history yet."""
        timed = [c for c in self.cells if c.seconds is not None]
        untimed = ", ".join(self.untimed)
        if not timed:
            return f"No timing history for {untimed} yet." if untimed else ""
        total = approximately(schedule(self._queued_calls(timed)))
        said = f"{total}{self._cell_times(timed)}{self._queue_note(timed)}"
        if not untimed:
            return f"Runs in {said}."
        rest = f"{self._cell_names(timed)[0]} takes" if len(timed) == 1 else "the others take"
        return f"No timing history for {untimed} yet; {rest} {said}."

    def _cell_times(self, cells: list[CellEstimate]) -> str:
        """ ": 8,000 tok ~50 s, 24,000 tok ~1 min 10 s" when the cells' times differ."""
        words = [duration_words(self.cell_seconds(c) or 0.0) for c in cells]
        if len(set(words)) < 2:
            return ""
        if len(cells) > MAX_CELL_TIMES:
            times = sorted(self.cell_seconds(c) or 0.0 for c in cells)
            return f": cells {approximately(times[0], '~')} to {approximately(times[-1], '~')}"
        names = self._cell_names(cells)
        marked = [approximately(self.cell_seconds(c) or 0.0, "~") for c in cells]
        return ": " + ", ".join(f"{n} {w}" for n, w in zip(names, marked, strict=True))

    def _cell_names(self, cells: list[CellEstimate]) -> list[str]:
        """Short names of cells by the axis value (model ids where labels coincide)."""
        axis = self.plan.axis
        if axis == "model":
            labels = [model_info(c.cell.model).label or c.cell.model for c in cells]
            return labels if len(set(labels)) == len(labels) else [c.cell.model for c in cells]
        if axis == "effort":
            return [f"effort {c.cell.effort_applied}" for c in cells]
        if axis == "max_tokens":
            return [f"{c.cell.max_tokens:,} tok" for c in cells]
        return [f"prompt {c.cell.prompt_version}" for c in cells]

    def _queue_note(self, cells: list[CellEstimate]) -> str:
        """ " (local calls run one at a time)" when such a queue holds more than one call."""
        width = self.plan.kind.defaults.max_variants
        counts: dict[str, int] = {}
        for c in cells:
            if slots(c.cell.model, width) == 1:
                queue = queue_of(c.cell.model)
                counts[queue] = counts.get(queue, 0) + c.samples
        serial = [provider(q).label for q, n in counts.items() if n > 1]
        return f" ({' and '.join(serial)} calls run one at a time)" if serial else ""

    def cheapest_and_dearest(self) -> tuple[CellEstimate, CellEstimate] | None:
        """The cells with the lowest and highest typical cost (None when unpriced or < 2)."""
        if len(self.cells) < 2 or self.unpriced:
            return None
        ordered = sorted(self.cells, key=lambda c: c.typical or Decimal(0))
        return ordered[0], ordered[-1]

    def line(self, allowance: str | None = None) -> str:
        """The estimate line (spec §6.3), first matching case wins."""
        plan = self.plan
        n = len(self.cells)
        if not self.cells:
            return "Select at least one variant."
        variants = f"{n} variant{'s' if n != 1 else ''}"
        samples = f" × {plan.repeats} samples" if plan.repeats > 1 else ""
        if self.unpriced:
            return f"{variants} · no price on file for {', '.join(self.unpriced)}."
        typical, ceiling = self.typical, self.ceiling
        if self.free:
            axis_words = AXIS_WORDS[plan.axis]
            text = f"{variants}{samples} varying {axis_words} · free models: nothing is spent."
        elif ceiling == 0:  # $0, but sent with a key the operator holds: not free to anyone
            text = (
                f"{variants}{samples} varying {AXIS_WORDS[plan.axis]} · $0 models: nothing is "
                "spent, but they are called with this server's key, so a shared server asks "
                "for its token."
            )
        elif self.waits_for_keys:
            grading = self.judge_text()
            return (
                "No provider keys here — nothing will be spent. With keys, this sweep would "
                f"cost about {format_usd(typical)}, at most {format_usd(ceiling)}."
                + (f" {grading}" if grading else "")
            )
        else:
            text = (
                f"{variants}{samples} varying {AXIS_WORDS[plan.axis]} · about "
                f"{format_usd(typical)} for the sweep, at most {format_usd(ceiling)} if every "
                "one runs its budget out."
            )
        extremes = self.cheapest_and_dearest()
        if extremes and plan.axis != "effort" and not self.free:
            low, high = extremes
            if plan.axis == "model":
                low_name = model_info(low.cell.model).label or low.cell.model
                high_name = model_info(high.cell.model).label or high.cell.model
                text += (
                    f" Cheapest {low_name} ~{format_usd(low.typical)}, "
                    f"dearest {high_name} ~{format_usd(high.typical)}."
                )
            else:
                text += (
                    f" Cheapest cell ~{format_usd(low.typical)}, "
                    f"dearest ~{format_usd(high.typical)}."
                )
        if plan.axis == "effort" and not self.free:
            if self.calibrated_from:
                text += f" (calibrated from {self.calibrated_from} runs)"
            else:
                shares = ", ".join(
                    f"{level} uses {round(UTILISATION[level] * 100)}%"
                    for level in (c.cell.effort_applied for c in self.cells)
                )
                text += f" (assumes {shares} of the budget)"
        grading = self.judge_text()
        if grading:
            text += f" {grading}"
        timing = self.time_text()
        if timing:
            text += f" {timing}"
        if plan.dropped:
            text += f" Only the first {n} are run."
        if allowance:
            text += f" {allowance}"
        return text


def estimate_plan(plan: Plan, store: Store | None = None) -> SweepEstimate:
    """Price and time every call of the plan (the same list the run uses)."""
    cells: dict[int, CellEstimate] = {}
    paces: dict[str, Pace | None] = {}
    observed: dict[tuple[str, str], tuple[float, int] | None] = {}  # the store read once a model
    for planned in plan.calls():
        cell = planned.cell
        if cell.index in cells:
            continue
        info = routed(model_info(cell.model), plan.route)
        call = estimate_call(
            info,
            planned.request,
            effort=cell.effort_applied,
            max_tokens=cell.max_tokens,
            store=store,
            observed=observed,
        )
        seconds = _call_seconds(info, planned.request, cell, call, store, paces)
        judge = None
        if plan.judge is not None:
            from sweepbench.sweeps.judge import estimate_judge

            judge = estimate_judge(
                plan.judge, plan.kind_name, plan.prompt, cell, call.fraction, route=plan.route
            )
        cells[cell.index] = CellEstimate(cell, call, plan.repeats, seconds, judge)
    return SweepEstimate(plan, tuple(cells.values()))


def _call_seconds(
    info: ModelInfo,
    request: Request,
    cell: Cell,
    call: CallEstimate,
    store: Store | None,
    paces: dict[str, Pace | None],
) -> float | None:
    """One call's expected time: exact for scripted models, else from the model's recorded
    pace (looked up once per model in ``paces``); None without history."""
    exact = exact_seconds(info, request, cell.effort_applied)
    if exact is not None or store is None:
        return exact
    if cell.model not in paces:
        paces[cell.model] = observed_pace(store, cell.model)
    pace = paces[cell.model]
    if pace is None:
        return None
    return pace.seconds(expected_tokens(info, cell.max_tokens, call.fraction, call.input_tokens))
