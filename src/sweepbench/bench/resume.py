"""Which run a session continues: the request's choice plus the stored run with the same
settings hash (spec §9), looked up before the run is priced, so it is planned once. Scored
items are skipped, failed ones retried; ``retry_failed`` plans only the failures; a run still
alive in another process is never continued twice."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sweepbench.bench.dialogue.calibration import FlowCalibration
from sweepbench.bench.items import Benchmark
from sweepbench.bench.plan import BenchPlan, build_plan, choose
from sweepbench.bench.run_liveness import run_is_live
from sweepbench.bench.storage import BenchStore
from sweepbench.bench.storage_rows import RunRow
from sweepbench.store import Store

if TYPE_CHECKING:
    from sweepbench.bench.request import BenchRequest

JUDGE_ERRORS = ("judge_unparseable", "judge_error", "judge_not_run")
"""Failures whose answer is kept: retrying them re-grades without asking the model again."""


@dataclass(frozen=True)
class PreparedRun:
    """A plan together with the stored run it continues, if any."""

    plan: BenchPlan
    previous: RunRow | None
    """The newest run with the same settings: this one continues it (when it completed,
    nothing is left to run; ``--no-resume`` starts a new run)."""
    retry_failed: bool = False
    regrade: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Failed rows whose stored answer only needs grading again, by key."""
    dialogue_calibration: tuple[FlowCalibration, ...] = ()
    """The pending teaching dialogues' calibration from the store, one entry per flow (empty:
    no dialogue to run, or no store)."""
    request: BenchRequest | None = None
    """The request the plan was made from (stored with the run, so it can be asked again)."""


def plan_run(
    benchmark: Benchmark, request: BenchRequest, store: Store | None, *, join: bool = False
) -> PreparedRun:
    """Plan ``request`` on ``benchmark``, continuing the newest run with the same settings when
    ``request.resume`` (its scored items are skipped, its failed ones retried). With
    ``retry_failed`` only the failed items of that run are planned. ``join``: a run that is
    live but shared between workers (``--workers``) is joined rather than refused."""
    choice = choose(benchmark, request)

    def prepared(plan: BenchPlan, previous: RunRow | None = None, **more: Any) -> PreparedRun:
        return PreparedRun(plan, previous, request=request, **more)

    def refused(problem: str, previous: RunRow | None) -> PreparedRun:
        plan = build_plan(benchmark, request, choice=choice)
        return prepared(replace(plan, items=(), errors=(*plan.errors, problem)), previous)

    if store is None or not (request.resume or request.retry_failed) or choice.errors:
        return prepared(build_plan(benchmark, request, choice=choice))
    runs = BenchStore(store)
    previous = runs.resumable(choice.config.hash, include_completed=True)
    if previous is None:
        if request.retry_failed:
            return refused(_nothing_to_retry(None), None)
        return prepared(build_plan(benchmark, request, choice=choice))
    if run_is_live(previous) and not (join and previous.settings.get("claims")):
        worker = previous.settings.get("worker", {})
        busy = (
            f"run {previous.id} with these settings is still running (process "
            f"{worker.get('pid')} on {worker.get('host')}); wait for it or stop it "
            "(Ctrl-C there), or start a separate run with --no-resume"
        )
        return refused(busy, previous)
    statuses = runs.statuses(previous.id)
    failed = {k for k, s in statuses.items() if s == "failed"}
    if request.retry_failed and not failed:
        return refused(_nothing_to_retry(previous), previous)
    scored = {k for k, s in statuses.items() if s == "scored"}
    selected = {i.key for i in choice.items}
    done = selected - failed if request.retry_failed else scored
    regrade = {
        key: row
        for key, row in runs.failed_answers(previous.id).items()
        if row["error_type"] in JUDGE_ERRORS and row["answer"] is not None
    }
    spent = runs.spent(previous.id)
    plan = build_plan(benchmark, request, done=done, spent=spent, judge_only=regrade, choice=choice)
    if request.retry_failed:  # the items left out were not all answered: say what really was
        plan = replace(plan, already_done=len(scored & selected))
    return prepared(plan, previous, retry_failed=request.retry_failed, regrade=regrade)


def _nothing_to_retry(previous: RunRow | None) -> str:
    if previous is not None:
        return f"run {previous.id} with these settings has no errors: nothing to retry"
    return "no earlier run with these settings: nothing to retry (run it first)"
