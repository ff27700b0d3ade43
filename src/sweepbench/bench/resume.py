"""Which run a session continues: a plan plus the stored run with the same settings hash
(spec §9). Scored items are skipped, failed ones retried; ``retry_failed`` plans only the
failures; a run still alive in another process is never continued twice."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from sweepbench.bench.dialogue.calibration import FlowCalibration
from sweepbench.bench.items import Benchmark
from sweepbench.bench.plan import BenchPlan, Limits, Selection, build_plan
from sweepbench.bench.scoring.versions import DEFAULT_SCORING_VERSION
from sweepbench.bench.storage import BenchStore, RunRow, run_is_live
from sweepbench.store import Store

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


def prepare(
    benchmark: Benchmark,
    store: Store | None,
    *,
    model: str,
    judge: str | None = None,
    decision_judge: bool = False,
    selection: Selection | None = None,
    limits: Limits | None = None,
    max_tokens: int | None = None,
    resume: bool = True,
    retry_failed: bool = False,
    rule_scoring: bool = False,
    student: str | None = None,
    scoring: str = DEFAULT_SCORING_VERSION,
    effort: str | None = None,
    temperature: float | None = None,
    repeats: int = 1,
    prompt_version: str | None = None,
    join: bool = False,
) -> PreparedRun:
    """Plan a run, continuing the newest unfinished run with the same settings when
    ``resume`` (its scored items are skipped, its failed ones retried). With
    ``retry_failed`` only the failed items of that run are planned. ``join``: a run that is
    live but shared between workers (``--workers``) is joined rather than refused."""
    kwargs: dict[str, Any] = dict(
        model=model, judge=judge, decision_judge=decision_judge, selection=selection,
        limits=limits, max_tokens=max_tokens, rule_scoring=rule_scoring, student=student,
        scoring=scoring, effort=effort, temperature=temperature, repeats=repeats,
        prompt_version=prompt_version,
    )  # fmt: skip
    plan = build_plan(benchmark, **kwargs)
    if store is None or not (resume or retry_failed) or plan.errors:
        return PreparedRun(plan, None)
    runs = BenchStore(store)
    previous = runs.resumable(plan.config.hash, include_completed=True)
    if previous is None:
        if retry_failed:
            plan = replace(plan, items=(), errors=(*plan.errors, _nothing_to_retry(None)))
        return PreparedRun(plan, None)
    if run_is_live(previous) and not (join and previous.settings.get("claims")):
        worker = previous.settings.get("worker", {})
        busy = (
            f"run {previous.id} with these settings is still running (process "
            f"{worker.get('pid')} on {worker.get('host')}); wait for it or stop it "
            "(Ctrl-C there), or start a separate run with --no-resume"
        )
        return PreparedRun(replace(plan, items=(), errors=(*plan.errors, busy)), previous)
    statuses = runs.statuses(previous.id)
    failed = {k for k, s in statuses.items() if s == "failed"}
    if retry_failed and not failed:
        plan = replace(plan, items=(), errors=(*plan.errors, _nothing_to_retry(previous)))
        return PreparedRun(plan, previous)
    scored = {k for k, s in statuses.items() if s == "scored"}
    done = set(plan.selected_keys) - failed if retry_failed else scored
    regrade = {
        key: row
        for key, row in runs.failed_answers(previous.id).items()
        if row["error_type"] in JUDGE_ERRORS and row["answer"] is not None
    }
    spent = runs.spent(previous.id)
    plan = build_plan(benchmark, done=done, spent=spent, judge_only=regrade, **kwargs)
    if retry_failed:  # the items left out were not all answered: say what really was
        plan = replace(plan, already_done=len(scored & set(plan.selected_keys)))
    return PreparedRun(plan, previous, retry_failed, regrade)


def _nothing_to_retry(previous: RunRow | None) -> str:
    if previous is not None:
        return f"run {previous.id} with these settings has no errors: nothing to retry"
    return "no earlier run with these settings: nothing to retry (run it first)"
