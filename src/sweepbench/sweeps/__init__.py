"""Sweeps: one prompt under several settings at once, priced before, capped, streamed, stoppable.

From Python (a notebook, a script)::

    import sweepbench
    result = sweepbench.sweep("Name three primes.", axis="max_tokens", values=[16, 64])
    for sample in result.samples:
        print(sample.cell.label, sample.status, sample.result.text)

Inside a running event loop (Jupyter) use ``await sweepbench.asweep(...)``.

A judge model grades each sample into a score from 0 to 1, against a rubric or a reference
answer (the text, or a file it names)::

    result = sweepbench.sweep("Name three primes.", axis="max_tokens", values=[16, 64],
                              judge="scripted/guess", rubric="Names three prime numbers.")
    for sample in result.samples:
        print(sample.cell.label, sample.grade.score, sample.grade.reason)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Unpack

from sweepbench.errors import UserError
from sweepbench.lazy import lazy_exports

if TYPE_CHECKING:
    from sweepbench.axes.cells import Cell, coerce_budget
    from sweepbench.sweeps.plan import Plan, SweepSettings, build_plan
    from sweepbench.sweeps.pricing import SweepEstimate, estimate_plan
    from sweepbench.sweeps.results import Sample, SweepEvent, SweepResult
    from sweepbench.sweeps.run import Sweep

_EXPORTS: dict[str, str] = {
    "SweepEstimate": "sweepbench.sweeps.pricing",
    "estimate_plan": "sweepbench.sweeps.pricing",
    "Cell": "sweepbench.axes.cells",
    "Plan": "sweepbench.sweeps.plan",
    "build_plan": "sweepbench.sweeps.plan",
    "SweepSettings": "sweepbench.sweeps.plan",
    "coerce_budget": "sweepbench.axes.cells",
    "Sample": "sweepbench.sweeps.results",
    "SweepEvent": "sweepbench.sweeps.results",
    "SweepResult": "sweepbench.sweeps.results",
    "Sweep": "sweepbench.sweeps.run",
}
"""Imported on first use (PEP 562): importing a small module of this package does not load the
planner, the store and the engine."""

__all__ = [
    "Cell",
    "Plan",
    "Sample",
    "Sweep",
    "SweepEstimate",
    "SweepEvent",
    "SweepResult",
    "SweepSettings",
    "asweep",
    "build_plan",
    "coerce_budget",
    "estimate",
    "estimate_plan",
    "sweep",
]


def estimate(
    prompt: str, axis: str, values: Sequence[str | int], **settings: Unpack[SweepSettings]
) -> SweepEstimate:
    """Price a sweep without running it (needs no key). ``settings``: :class:`SweepSettings`
    (``judge=`` with ``rubric=`` or ``reference=`` prices the grading too)."""
    from sweepbench.store import Store
    from sweepbench.sweeps.plan import build_plan
    from sweepbench.sweeps.pricing import estimate_plan

    plan = build_plan(prompt, axis, values, **settings)
    plan.ensure_runnable(spending=False)
    with Store.open() as store:
        return estimate_plan(plan, store)


async def asweep(
    prompt: str,
    axis: str,
    values: Sequence[str | int],
    *,
    on_event: Callable[[SweepEvent], None] | None = None,
    run_limit_usd: Decimal | None = None,
    judge_limit_usd: Decimal | None = None,
    **settings: Unpack[SweepSettings],
) -> SweepResult:
    """Plan, admit against the spend ceilings, run and store a sweep; return its result.
    ``settings``: :class:`SweepSettings`, typed.

    ``judge`` (a model id) grades each sample against ``rubric`` or ``reference`` (exactly
    one; the text, or a file it names) into ``sample.grade``; its calls are priced and
    admitted with the sweep, and held to ``judge_limit_usd`` when given.

    Raises UserError for a refused plan and BudgetExceeded when it does not fit the ceilings."""
    from sweepbench.money.ledger import Ledger
    from sweepbench.store import Store
    from sweepbench.sweeps.plan import build_plan
    from sweepbench.sweeps.run import Sweep

    plan = build_plan(prompt, axis, values, **settings)
    plan.ensure_runnable()
    with Store.open() as store:
        sweep_ = Sweep(
            plan, store=store, ledger=Ledger(store), on_event=on_event,
            run_limit_usd=run_limit_usd, judge_limit_usd=judge_limit_usd,
        )  # fmt: skip
        return await sweep_.run()


def sweep(
    prompt: str,
    axis: str,
    values: Sequence[str | int],
    *,
    on_event: Callable[[SweepEvent], None] | None = None,
    run_limit_usd: Decimal | None = None,
    judge_limit_usd: Decimal | None = None,
    **settings: Unpack[SweepSettings],
) -> SweepResult:
    """:func:`asweep` for code without a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(
            asweep(
                prompt,
                axis,
                values,
                on_event=on_event,
                run_limit_usd=run_limit_usd,
                judge_limit_usd=judge_limit_usd,
                **settings,
            )
        )
    raise UserError("an event loop is running here (Jupyter?): use `await sweepbench.asweep(...)`")


if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
