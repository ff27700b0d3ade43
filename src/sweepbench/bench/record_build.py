"""Building a :class:`~sweepbench.bench.record.RunRecord` from what a benchmark runner holds
when a session ends: the report (scores with their bootstrap ranges, read back from the store),
the plan (benchmark, selection, limits, settings) and the prices its calls used."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from sweepbench.bench.items import base_key
from sweepbench.bench.record import (
    _ROLES,
    FORMAT,
    VERSION,
    AreaCoverage,
    BenchmarkRecord,
    CountsRecord,
    CoverageRecord,
    LimitsRecord,
    OverallCoverage,
    PriceRecord,
    RecordRole,
    RoleRecord,
    RunRecord,
    RunStatus,
    ScoreRecord,
    ScoresRecord,
    ScoringRecord,
    SelectionRecord,
    SettingsRecord,
    TaskCoverage,
    _sums,
    scoring_label,
)
from sweepbench.errors import SweepbenchError

if TYPE_CHECKING:
    from sweepbench.bench.plan import BenchPlan
    from sweepbench.bench.report import RunReport
    from sweepbench.bench.results import Summary
    from sweepbench.money.prices import Price


def _judge_prompt_version(prompt_version: str) -> str | None:
    """The judge part of a run's prompt version (``"1+judge-2"`` → ``"2"``), or None."""
    _, sep, judge = prompt_version.partition("+judge-")
    return judge if sep else None


def _price_record(price: Price | None) -> PriceRecord | None:
    """A price as a record keeps it (None stays None: no price on file)."""
    if price is None:
        return None
    return PriceRecord(
        input_per_million=price.input,
        output_per_million=price.output,
        cache_read_per_million=price.cache_read,
        cache_write_per_million=price.cache_write,
        source=price.source,
        date=price.date or None,
    )


def _look_up_price(model_id: str) -> Price | None:
    """A model's price on file now (None when it has none or is unknown)."""
    from sweepbench.models.registry import model_info
    from sweepbench.money.prices import price_for

    try:
        return price_for(model_info(model_id))
    except SweepbenchError:
        return None


def _score(
    score_100: float, ci: tuple[float, float] | None, n: int, mean: float, rate: float
) -> ScoreRecord:
    """One score record from a result's figures (``ci`` on 0–100, or None)."""
    low, high = ci if ci is not None else (None, None)
    return ScoreRecord(score=score_100, low=low, high=high, n=n, mean_score=mean, pass_rate=rate)


def _scores(summary: Summary) -> ScoresRecord:
    """The summary's scores on 0–100, exactly as the report's table shows them."""
    tasks = {
        t.task: _score(
            t.score * 100.0,
            None if t.ci95 is None else (t.ci95[0] * 100.0, t.ci95[1] * 100.0),
            t.count,
            t.mean_score,
            t.pass_rate,
        )
        for t in summary.tasks
    }
    areas = {
        a.area: _score(a.score_100, a.ci95_100, a.count, a.mean_score, a.pass_rate)
        for a in summary.areas
    }
    overall = None
    if summary.overall_100 is not None and summary.count:
        overall = _score(
            summary.overall_100, summary.overall_ci95, summary.count, summary.mean_score,
            summary.pass_rate,
        )  # fmt: skip
    return ScoresRecord(tasks=tasks, areas=areas, overall=overall)


def _coverage(
    plan: BenchPlan, rows: list[dict[str, Any]], scope: Literal["core", "paper"]
) -> CoverageRecord:
    """Coverage of the in-scope tasks from the plan's selection and the stored answer rows."""
    benchmark = plan.benchmark
    task_of = {i.key: t.id for t in benchmark.tasks for i in t.items}
    # coverage counts items: with --repeats an item is scored when every repeat of it is,
    # failed when one failed, unasked otherwise
    status_of = {r["key"]: r["status"] for r in rows}
    repeats: dict[str, list[str | None]] = {}
    for key in plan.selected_keys:
        if base_key(key) in task_of:
            repeats.setdefault(base_key(key), []).append(status_of.get(key))
    selected: Counter[str] = Counter()
    scored: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    for item, statuses in repeats.items():
        task_id = task_of[item]
        selected[task_id] += 1
        if all(status == "scored" for status in statuses):
            scored[task_id] += 1
        elif any(status is not None and status != "scored" for status in statuses):
            failed[task_id] += 1
    in_scope = {t.id for t in benchmark.in_scope(scope)}
    tasks: dict[str, TaskCoverage] = {}
    areas: dict[str, AreaCoverage] = {}
    for area in benchmark.areas:
        group = [t for t in area.tasks if t.id in in_scope]
        for task in group:
            n = len(task.items)
            tasks[task.id] = TaskCoverage(
                area=area.key, items=n, selected=selected[task.id], scored=scored[task.id],
                failed=failed[task.id],
                unasked=selected[task.id] - scored[task.id] - failed[task.id],
                complete=n > 0 and scored[task.id] == n,
            )  # fmt: skip
        if not group:
            continue
        parts = [tasks[t.id] for t in group]
        areas[area.key] = AreaCoverage(
            label=area.label, tasks=len(parts),
            tasks_selected=sum(1 for p in parts if p.selected),
            tasks_scored=sum(1 for p in parts if p.scored),
            complete=all(p.complete for p in parts), **_sums(parts),
        )  # fmt: skip
    listed = list(areas.values())
    overall = OverallCoverage(
        complete=bool(listed) and all(a.complete for a in listed),
        all_areas_present=bool(listed) and all(a.scored for a in listed),
        **_sums(listed),
    )
    return CoverageRecord(tasks=tasks, areas=areas, overall=overall)


def build_record(
    report: RunReport,
    plan: BenchPlan,
    *,
    prices: Mapping[str, Price | None] | None = None,
) -> RunRecord:
    """The record of a run at the end of a session.

    ``report``: computed after the session's final ``set_status`` (``session_report``, or
    ``load_report(…, stored=False)``: the run row, its scores with bootstrap ranges exactly as
    ``bench show`` prints them, every answer's outcome, the spend by role from the store).
    ``plan``: the session's plan (its benchmark, selection, limits and config;
    ``selected_keys`` gives the items selected per task). ``prices``: the price used per model
    id (the runner's ``_prices``); a role's model missing from it is looked up now (None when
    it has no price on file).

    ValueError when the report and the plan are of different runs."""
    run, config, summary = report.run, plan.config, report.summary
    if run.config_hash != config.hash:
        raise ValueError(f"run {run.id} has other settings than the plan ({config.hash[:8]})")
    models = _role_models(plan)
    extra = sorted(set(report.spent_by_role) - set(models))
    if extra:
        raise ValueError(f"run {run.id} has spend by roles it does not have: {', '.join(extra)}")
    roles = {
        role: RoleRecord(model=model, spent_usd=report.spent_by_role.get(role, Decimal(0)))
        for role, model in models.items()
    }
    given = dict(prices or {})
    price_records = {
        model: _price_record(given[model] if model in given else _look_up_price(model))
        for model in dict.fromkeys(models.values())
    }
    rows = report.rows
    if rows is None:
        raise ValueError(f"the report of run {run.id} was read as stored: compute it afresh")
    failed_rows = [r for r in rows if r["status"] != "scored"]
    selection = plan.selection
    return RunRecord(
        format=FORMAT,
        version=VERSION,
        run_id=run.id,
        benchmark=BenchmarkRecord(
            id=plan.benchmark.id,
            name=plan.benchmark.name,
            data_version=config.data_version,
            prompt_version=plan.benchmark.prompt_version,
        ),
        created_at=run.created_at,
        updated_at=run.updated_at,
        status=_status(run.status),
        reason=run.reason,
        settings=SettingsRecord(config=config.as_json(), hash=config.hash),
        limits=LimitsRecord(total=plan.limits.total, roles=_role_limits(plan)),
        selection=SelectionRecord(
            preset=selection.preset,
            scope=selection.scope,
            areas=tuple(selection.areas),
            tasks=tuple(selection.tasks),
            dimensions=tuple(selection.dimensions),
            per_task=selection.per_task,
            max_items=selection.max_items,
        ),
        roles=roles,
        spent_usd=sum((r.spent_usd for r in roles.values()), Decimal(0)),
        prices=price_records,
        scoring=ScoringRecord(
            version=scoring_label(config.scoring),
            judge_prompt_version=(
                _judge_prompt_version(config.prompt_version) if config.judge else None
            ),
            decision_judge=config.decision_judge,
            rule_scored=config.rule_scoring,
            overall_method=summary.overall_method,
            bootstrap_resamples=summary.resamples,
            bootstrap_seed=summary.seed,
        ),
        coverage=_coverage(plan, rows, summary.scope),
        scores=_scores(summary),
        counts=CountsRecord(
            scored=len(rows) - len(failed_rows),
            failed=len(failed_rows),
            errors_by_type=dict(sorted(Counter(str(r["error_type"]) for r in failed_rows).items())),
            left_out=summary.left_out,
        ),
    )


def _role_models(plan: BenchPlan) -> dict[RecordRole, str]:
    """Each role's model, in role order: the config's ``models`` map where it has one, else
    its model under test and judge."""
    config = plan.config
    bound: Mapping[str, str] = getattr(config, "models", None) or {
        "target": config.model,
        **({"judge": config.judge} if config.judge is not None else {}),
    }
    unknown = sorted(set(bound) - set(_ROLES))
    if unknown:
        raise ValueError(f"roles a run record cannot hold: {', '.join(unknown)}")
    return {role: bound[role] for role in _ROLES if role in bound}


def _role_limits(plan: BenchPlan) -> dict[RecordRole, Decimal]:
    """The spending limit of each role that has one."""
    limits = {role: plan.limits.for_role(role) for role in _ROLES}
    return {role: usd for role, usd in limits.items() if usd is not None}


def _status(status: str) -> RunStatus:
    """A stored run status, checked."""
    if status not in get_args(RunStatus):
        raise ValueError(f"unknown run status {status!r}")
    return cast(RunStatus, status)


# ---------------------------------------------------------------- reading and writing
