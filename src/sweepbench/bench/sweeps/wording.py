"""The words of a benchmark sweep's estimate, shared by the CLI and the Python API's text."""

from __future__ import annotations

from decimal import Decimal

from sweepbench.axes import AXIS_WORDS
from sweepbench.bench.results import format_money
from sweepbench.bench.sweeps.plan import BenchSweepPlan
from sweepbench.roles import role_word


def _money_range(low: Decimal | None, high: Decimal | None) -> str:
    if low is None or high is None:
        return "no estimate (a model has no listed price)"
    return f"{format_money(low)} to {format_money(high)}"


def sweep_estimate_lines(plan: BenchSweepPlan) -> list[str]:
    """The sweep's estimate: what varies and what is held, each setting's questions and cost,
    the totals per role, the limits, and what a continued sweep already did. Problems come
    alone, after "This sweep can't start yet:"."""
    if plan.errors:
        return ["This sweep can't start yet:", *(f"• {e}" for e in plan.errors)]
    held = ", ".join(f"{k} {v}" for k, v in plan.held.items())
    words = AXIS_WORDS.get(plan.axis, plan.axis)
    lines = [
        f"Sweep of {plan.benchmark.name}: {len(plan.settings)} settings varying {words}; "
        f"held: {held}."
    ]
    for setting in plan.settings:
        p = setting.prepared.plan
        done = f", {p.already_done:,} already answered" if p.already_done else ""
        limit = (
            ""
            if p.limits.total is None
            else f" · share of the limit {format_money(p.limits.total)}"
        )
        lines.append(
            f"  {setting.label}: {len(p.items):,} questions{done} · "
            f"{_money_range(p.low, p.high)}{limit}"
        )
    for total in plan.roles:
        lines.append(
            f"{role_word(total.role)}: {total.calls:,} calls over every setting, "
            f"{_money_range(total.low, total.high)}"
        )
    lines.append(
        f"Estimated cost of the whole sweep: {_money_range(plan.low, plan.high)}. The low end "
        "counts the questions only; the high end every answer at its length limit."
    )
    limits = plan.request.limits
    if limits.any:
        parts = [] if limits.total is None else [f"{format_money(limits.total)} in all"]
        parts += [f"{role_word(r).lower()} {format_money(v)}" for r, v in limits.roles.items()]
        lines.append(
            f"Limits for the whole sweep: {', '.join(parts)}. Each setting is held to its share "
            "(its low estimate plus a part of the rest in proportion to its high one), so "
            "together they never spend more."
        )
    lines.extend(plan.limit_problems)
    lines.extend(plan.notes)
    if plan.blocked:  # priced all the same: what is missing is only needed to run it
        lines.append("It can't run here yet:")
        lines.extend(f"• {b}" for b in plan.blocked)
    if plan.previous is not None and plan.pending == 0:
        lines.append(
            f"Sweep {plan.previous.id} has answered every question of every setting: nothing is "
            "left to run."
        )
    elif plan.previous is not None:
        spent = plan.spent
        lines.append(
            f"Continues sweep {plan.previous.id}"
            + (f", which has spent {format_money(spent)}" if spent else "")
            + ": every setting picks up where it left off."
        )
    return lines
