"""The price of a plan, shown before anything runs (spec sweeps.md §6): per cell a typical
figure and a ceiling, the totals, the cheapest and dearest cell, and the estimate line."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from sweepbench.models.registry import model_info
from sweepbench.money.estimate import UTILISATION, CallEstimate, estimate_call
from sweepbench.money.prices import format_usd
from sweepbench.settings import KEY_VARIABLES, provider_key
from sweepbench.store import Store
from sweepbench.sweeps.plan import AXIS_WORDS, Cell, Plan


@dataclass(frozen=True)
class CellEstimate:
    """One cell's estimate: a call's figures times the samples per cell."""

    cell: Cell
    call: CallEstimate
    samples: int

    @property
    def typical(self) -> Decimal | None:
        """Typical cost of all the cell's samples."""
        return None if self.call.typical is None else self.call.typical * self.samples

    @property
    def ceiling(self) -> Decimal | None:
        """Worst case of all the cell's samples (every call uses its whole budget)."""
        return None if self.call.ceiling is None else self.call.ceiling * self.samples


@dataclass(frozen=True)
class SweepEstimate:
    """The estimate of a whole plan."""

    plan: Plan
    cells: tuple[CellEstimate, ...]

    @property
    def unpriced(self) -> list[str]:
        """Models with no price on file (no dollar figure can be given)."""
        return list(dict.fromkeys(c.cell.model for c in self.cells if not c.call.priced))

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
        return bool(self.cells) and all(c.call.free for c in self.cells)

    @property
    def calibrated_from(self) -> int:
        """Recorded calls behind the utilisation figures (0: the default table)."""
        return sum(c.call.calibrated_from for c in self.cells)

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
        elif not any(provider_key(p) for p in KEY_VARIABLES):
            return (
                "No provider keys here — nothing will be spent. With keys, this sweep would "
                f"cost about {format_usd(typical)}, at most {format_usd(ceiling)}."
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
        if plan.dropped:
            text += f" Only the first {n} are run."
        if allowance:
            text += f" {allowance}"
        return text


def estimate_plan(plan: Plan, store: Store | None = None) -> SweepEstimate:
    """Price every call of the plan (the same list the run uses)."""
    cells: dict[int, CellEstimate] = {}
    for planned in plan.calls():
        cell = planned.cell
        if cell.index in cells:
            continue
        call = estimate_call(
            model_info(cell.model),
            planned.request,
            effort=cell.effort_applied,
            max_tokens=cell.max_tokens,
            store=store,
        )
        cells[cell.index] = CellEstimate(cell, call, plan.repeats)
    return SweepEstimate(plan, tuple(cells.values()))
