"""Plans for tests, from keyword settings (``model=``, ``judge=``, ``selection=``,
``limits=``, …) on a benchmark built in code: each is turned into the one description of a
run's settings, a :class:`~sweepbench.bench.request.BenchRequest`, and planned the way every
surface plans it (``bench.plan.build_plan``; ``bench.resume.plan_run`` to continue a stored
run)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from decimal import Decimal
from typing import Any

from sweepbench.bench import plan as plans
from sweepbench.bench.items import Benchmark
from sweepbench.bench.plan import BenchPlan
from sweepbench.bench.request import BenchRequest
from sweepbench.bench.resume import PreparedRun, plan_run
from sweepbench.bench.run_config import Limits, Selection
from sweepbench.store import Store


def request_for(
    benchmark: Benchmark,
    *,
    model: str,
    judge: str | None = None,
    student: str | None = None,
    selection: Selection | None = None,
    limits: Limits | None = None,
    rule_scoring: bool = False,
    **settings: Any,
) -> BenchRequest:
    """The request of a run of ``model`` (and ``judge``, ``student``) on ``benchmark``."""
    models = {"target": model, "judge": judge, "student": student}
    chosen = selection or Selection()
    limits = limits or Limits()
    values: dict[str, Any] = {
        "benchmark": benchmark.id,
        "models": {role: m for role, m in models.items() if m},
        "preset": chosen.preset, "scope": chosen.scope, "areas": chosen.areas,
        "tasks": chosen.tasks, "skills": chosen.dimensions, "per_task": chosen.per_task,
        "max_items": chosen.max_items, "limit": limits.total, "role_limits": dict(limits.roles),
        "edu_scoring": "rule" if rule_scoring else "judge",
    }  # fmt: skip
    values.update(settings)
    return BenchRequest.model_validate(values)


def build_plan(
    benchmark: Benchmark,
    *,
    done: Collection[str] = (),
    spent: Mapping[str, Decimal] | None = None,
    judge_only: Collection[str] = (),
    **settings: Any,
) -> BenchPlan:
    """The plan of ``settings`` (:func:`request_for`'s) on ``benchmark``."""
    request = request_for(benchmark, **settings)
    return plans.build_plan(benchmark, request, done=done, spent=spent, judge_only=judge_only)


def prepare(
    benchmark: Benchmark, store: Store | None, *, join: bool = False, **settings: Any
) -> PreparedRun:
    """The prepared run of ``settings`` on ``benchmark``, continuing a stored one."""
    return plan_run(benchmark, request_for(benchmark, **settings), store, join=join)
