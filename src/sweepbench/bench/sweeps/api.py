"""Benchmark sweeps from Python (a notebook, a script)::

    import sweepbench
    result = sweepbench.bench_sweep(
        "sample", axis="effort", values=["low", "high"], model="scripted/guess",
        preset="auto-checked",
    )
    print(result.lines())
    frame = result.to_pandas()  # needs pandas

Inside a running event loop (Jupyter) use ``await sweepbench.abench_sweep(...)``. Calling it
is the confirmation the CLI asks for; everything the CLI refuses (an axis problem, a limit or
ceiling below the lowest estimate, an unpriced model without ``accept_unpriced=True``) raises
a UserError naming every reason, before any call. Running the same sweep again continues it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from sweepbench.bench.request import BenchRequest
from sweepbench.bench.sweeps.plan import plan_bench_sweep, sweep_start_check
from sweepbench.bench.sweeps.result import BenchSweepResult, load_sweep
from sweepbench.bench.sweeps.run import BenchSweepRunner
from sweepbench.engine.ratelimit import RateLimits
from sweepbench.errors import UserError
from sweepbench.store import Store


def _request(
    benchmark: str, model: str | None, judge: str | None, settings: dict[str, Any]
) -> BenchRequest:
    models: dict[str, str] = {"target": model or "local/smollm2-135m"}
    if judge:
        models["judge"] = judge
    student = settings.pop("student", None)
    if student:
        models["student"] = student
    limit = settings.pop("limit", None)
    values: dict[str, Any] = {"benchmark": benchmark, "models": models, "confirmed": True}
    if isinstance(limit, dict):  # {"total": 5, "judge": 1} or {"judge": 1}
        limit = dict(limit)
        values["limit"] = limit.pop("total", None)
        values["role_limits"] = limit
    elif limit is not None:
        values["limit"] = limit
    values.update(settings)
    return BenchRequest.from_values(values)


async def abench_sweep(
    benchmark: str,
    axis: str,
    values: Sequence[str | int],
    *,
    model: str | None = None,
    judge: str | None = None,
    **settings: Any,
) -> BenchSweepResult:
    """Plan, check, run (every setting at once) and compare a benchmark sweep; return its
    result. UserError, before any call, when it cannot start."""
    request = _request(benchmark, model, judge, dict(settings))
    with Store.open() as store:
        plan = plan_bench_sweep(request, axis, [str(v) for v in values], store)
        decision = sweep_start_check(plan, request)
        if decision.refused:
            raise UserError("This sweep can't start: " + "; ".join(decision.reasons))
        if decision.nothing_left:
            assert plan.previous is not None
            return load_sweep(store, plan.previous.id)
        runner = BenchSweepRunner(
            plan, store, concurrency=request.concurrency,
            accept_unpriced=request.accept_unpriced,
            rate_limits=RateLimits(rpm=request.rpm, tpm=request.tpm),
        )  # fmt: skip
        outcome = await runner.run()
        return load_sweep(store, outcome.sweep_id)


def bench_sweep(
    benchmark: str,
    axis: str,
    values: Sequence[str | int],
    *,
    model: str | None = None,
    judge: str | None = None,
    **settings: Any,
) -> BenchSweepResult:
    """:func:`abench_sweep` for code without a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(
            abench_sweep(benchmark, axis, values, model=model, judge=judge, **settings)
        )
    raise UserError(
        "an event loop is running here (Jupyter?): use `await sweepbench.abench_sweep(...)`"
    )
