"""What a run bundle must show before it is stored or shared (architecture, turn 3: a pulled
bundle's scores are recomputed from its answers; its record is never believed).

:func:`trust_problem` recomputes every score of a bundle's record — per task, per area and
overall, with their bootstrap ranges and counts — from the bundle's own answers and task
catalogue, exactly as the runner computed them (:func:`sweepbench.bench.results.summarise`
with the record's overall method, scope, selected tasks, resamples and seed), and checks what
the answers can check of the rest: the counts of scored and failed answers by error type, the
coverage's scored and failed items (never more than the answers hold), each answer's score
(finite, within its task's scale), the run's status (not ``running``) and its times (none in
the future, the record not written after it was published). The first disagreement is the
reason the bundle is refused, saying what and where.

:func:`content_fingerprint` names a run by what it holds (its settings hash and every
answer's outcome, not its run id, times or texts), so that the same run under a new run id
is one run.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, cast

from sweepbench.bench.items import Area, Benchmark, Task
from sweepbench.bench.record import RunRecord, ScoreRecord
from sweepbench.bench.record_build import _scores as scores_record
from sweepbench.bench.results import DEFAULT_RESAMPLES, ScoredAnswer, summarise

if TYPE_CHECKING:
    from sweepbench.leaderboard.bundle import BundleAnswer, BundleArea, RunBundle

__all__ = ["CLOCK_SKEW", "MAX_RESAMPLES", "RAW_SCORE_TOP", "content_fingerprint", "trust_problem"]

CLOCK_SKEW: Final = timedelta(minutes=5)
"""How far ahead of this machine's clock a bundle's time may be (another machine's clock)."""
MAX_RESAMPLES: Final = DEFAULT_RESAMPLES
"""The most bootstrap resamples a record may claim (the runner's own number)."""
RAW_SCORE_TOP: Final = 100.0
"""The highest raw score an answer of a pass-rate task without a scale may have."""
_TOLERANCE: Final = 1e-9
_FIELDS: Final = ("score", "low", "high", "n", "mean_score", "pass_rate")


def trust_problem(bundle: RunBundle, *, now: datetime) -> str | None:
    """Why ``bundle``'s record cannot be believed, in one phrase saying what and where; None
    when every score it claims is what its answers give."""
    record = bundle.record
    tasks = _catalogue_tasks(bundle.catalogue)
    return (  # each check in turn; the first problem is the reason
        _status_problem(record)
        or _time_problem(bundle, now)
        or _catalogue_problem(record, bundle.catalogue, tasks)
        or _settings_problem(record)
        or _answer_problem(bundle.answers, tasks)
        or _counts_problem(record, bundle.answers)
        or _coverage_problem(record, bundle.answers)
        or _scores_problem(bundle, tasks)
    )


def content_fingerprint(settings_hash: str, outcomes: Iterable[Mapping[str, Any]]) -> str:
    """A run's content as a hash: its settings hash and each answer's key, task, skill,
    status, score, pass and error type (``BenchStore.outcomes`` rows or a bundle's answers as
    dicts), in key order. The run id, times and answer texts are left out."""
    rows = sorted(
        (
            str(o["key"]), str(o["task"]), str(o["dimension"]), str(o["status"]),
            None if o["score"] is None else float(o["score"]),
            None if o["passed"] is None else bool(o["passed"]),
            None if o["error_type"] is None else str(o["error_type"]),
        )
        for o in outcomes
    )  # fmt: skip
    text = json.dumps([settings_hash, rows], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------- the checks


def _status_problem(record: RunRecord) -> str | None:
    if record.status == "running":
        return (
            "its record says the run is still running (a record is shared once a session has ended)"
        )
    return None


def _time_problem(bundle: RunBundle, now: datetime) -> str | None:
    """A time in the future, or a record written after the bundle was published."""
    latest = now + CLOCK_SKEW
    times = (
        ("published_at", bundle.published_at),
        ("record.created_at", bundle.record.created_at),
        ("record.updated_at", bundle.record.updated_at),
    )
    for where, time in times:
        if time > latest:
            return f"{where} ({_time(time)}) is in the future (now {_time(now)})"
    if bundle.record.updated_at > bundle.published_at + CLOCK_SKEW:
        return (
            f"record.updated_at ({_time(bundle.record.updated_at)}) is after published_at "
            f"({_time(bundle.published_at)}): a record is published after it is written"
        )
    return None


def _catalogue_problem(
    record: RunRecord, catalogue: Sequence[BundleArea], tasks: Mapping[str, Task]
) -> str | None:
    """A catalogue that cannot score the record: none, a task listed twice, or coverage of a
    task it lacks or places in another area."""
    if not catalogue:
        return "it holds no task catalogue (catalogue), so its scores cannot be recomputed"
    listed = Counter(t.id for a in catalogue for t in a.tasks)
    twice = sorted(t for t, n in listed.items() if n > 1)
    if twice:
        return f"catalogue: task {twice[0]!r} is listed twice"
    for task_id, coverage in record.coverage.tasks.items():
        task = tasks.get(task_id)
        if task is None:
            return f"record.coverage.tasks.{task_id}: the catalogue has no such task"
        if task.area != coverage.area:
            return (
                f"record.coverage.tasks.{task_id}.area is {coverage.area!r}; the catalogue "
                f"puts the task in {task.area!r}"
            )
    return None


def _settings_problem(record: RunRecord) -> str | None:
    """Settings the scores cannot be recomputed with: selected tasks that are not task ids, a
    scope other than the selection's, more bootstrap resamples than a run makes."""
    selected = record.settings.config.get("tasks", [])
    if not isinstance(selected, list) or not all(isinstance(t, str) for t in selected):
        return "record.settings.config.tasks is not a list of task ids"
    scope = record.settings.config.get("scope", "core")
    if scope != record.selection.scope:
        return (
            f"record.settings.config.scope ({scope!r}) is not record.selection.scope "
            f"({record.selection.scope!r})"
        )
    resamples = record.scoring.bootstrap_resamples
    if resamples > MAX_RESAMPLES:
        return (
            f"record.scoring.bootstrap_resamples ({resamples:,}) is more than the "
            f"{MAX_RESAMPLES:,} a run makes"
        )
    return None


def _answer_problem(answers: Sequence[BundleAnswer], tasks: Mapping[str, Task]) -> str | None:
    """An answer of a task the catalogue lacks, or a scored answer without a possible score."""
    for index, answer in enumerate(answers):
        where = f"answers[{index}] ({answer.key!r})"
        task = tasks.get(answer.task)
        if task is None:
            return f"{where}: task {answer.task!r} is not in the catalogue"
        if answer.status != "scored":
            continue
        if answer.score is None or answer.passed is None:
            return f"{where}: a scored answer needs a score and a pass verdict"
        top = _score_top(task)
        if not (math.isfinite(answer.score) and 0 <= answer.score <= top):
            return (
                f"{where}: score {answer.score!r} is impossible for task {task.id!r} (0 to {top:g})"
            )
    return None


def _counts_problem(record: RunRecord, answers: Sequence[BundleAnswer]) -> str | None:
    """record.counts that are not the answers' own."""
    failed = [a for a in answers if a.status != "scored"]
    counts = record.counts
    given = {
        "scored": len(answers) - len(failed),
        "failed": len(failed),
        "errors_by_type": dict(sorted(Counter(str(a.error_type) for a in failed).items())),
    }
    for name, value in given.items():
        claimed = getattr(counts, name)
        if claimed != value:
            return f"record.counts.{name} says {claimed!r}; its answers give {value!r}"
    return None


def _coverage_problem(record: RunRecord, answers: Sequence[BundleAnswer]) -> str | None:
    """Coverage claiming more scored or failed items of a task than its answers hold."""
    held = {
        status: Counter(a.task for a in answers if a.status == status)
        for status in ("scored", "failed")
    }
    for task_id, coverage in record.coverage.tasks.items():
        for status in ("scored", "failed"):
            claimed = getattr(coverage, status)
            if claimed > held[status][task_id]:
                return (
                    f"record.coverage.tasks.{task_id}.{status} says {claimed:,}; its answers "
                    f"hold {held[status][task_id]:,}"
                )
    return None


def _scores_problem(bundle: RunBundle, tasks: Mapping[str, Task]) -> str | None:
    """The first score of the record that is not what its answers give."""
    record = bundle.record
    config = record.settings.config
    try:
        summary = summarise(
            _benchmark(bundle, tasks),
            [
                ScoredAnswer(a.task, a.dimension, float(cast(float, a.score)), bool(a.passed))
                for a in bundle.answers
                if a.status == "scored"
            ],
            scope=record.selection.scope,
            selected_tasks=config.get("tasks", list(tasks)),
            bootstrap=record.scoring.bootstrap_resamples,
            seed=record.scoring.bootstrap_seed,
        )
    except (TypeError, ValueError) as exc:
        return f"its scores cannot be recomputed from its answers ({exc})"
    if summary.left_out != record.counts.left_out:
        return (
            f"record.counts.left_out says {record.counts.left_out:,}; its answers give "
            f"{summary.left_out:,}"
        )
    given = scores_record(summary)
    claimed = record.scores
    for kind in ("tasks", "areas"):
        problem = _parts_problem(kind, getattr(claimed, kind), getattr(given, kind))
        if problem is not None:
            return problem
    return _score_problem("overall", claimed.overall, given.overall)


def _parts_problem(
    kind: str, claimed: Mapping[str, ScoreRecord], given: Mapping[str, ScoreRecord]
) -> str | None:
    for key in dict.fromkeys([*claimed, *given]):
        problem = _score_problem(f"{kind}.{key}", claimed.get(key), given.get(key))
        if problem is not None:
            return problem
    return None


def _score_problem(
    where: str, claimed: ScoreRecord | None, given: ScoreRecord | None
) -> str | None:
    """The first field of a claimed score that its answers do not give; None when equal."""
    if claimed is None:
        if given is None:
            return None
        return f"record.scores.{where} is missing; its answers give {_shown(given)}"
    if given is None:
        return (
            f"record.scores.{where} says {_shown(claimed)}; its answers give no score there "
            "(no scored answer counts)"
        )
    for name in _FIELDS:
        mine, theirs = getattr(claimed, name), getattr(given, name)
        if not _same(mine, theirs):
            return f"record.scores.{where}.{name} says {mine!r}; its answers give {theirs!r}"
    return None


# ---------------------------------------------------------------- helpers


def _catalogue_tasks(catalogue: Sequence[BundleArea]) -> dict[str, Task]:
    """The catalogue's tasks by id, as the scores need them (score_by, scale, area)."""
    return {
        t.id: Task(
            id=t.id, area=area.key, name=t.name, grading=t.grading, scorer=t.scorer,
            score_by=t.score_by, region_specific=t.region_specific,
            options={"scale": t.scale} if t.scale else {},
        )
        for area in catalogue
        for t in area.tasks
    }  # fmt: skip


def _benchmark(bundle: RunBundle, tasks: Mapping[str, Task]) -> Benchmark:
    """The bundle's benchmark as its catalogue gives it (areas and tasks in order, no items)."""
    areas = tuple(
        Area(a.key, a.label, tuple(tasks[t.id] for t in a.tasks)) for a in bundle.catalogue
    )
    record = bundle.record
    return Benchmark(
        record.benchmark.id, record.benchmark.name, areas, overall=record.scoring.overall_method
    )


def _score_top(task: Task) -> float:
    """The highest raw score an answer of ``task`` may have."""
    scale = task.options.get("scale")
    if scale:
        return float(scale)
    return 1.0 if task.score_by == "mean_score" else RAW_SCORE_TOP


def _same(a: float | int | None, b: float | int | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=_TOLERANCE, abs_tol=_TOLERANCE)


def _shown(score: ScoreRecord) -> str:
    return f"{score.score:.1f} on {score.n:,} answers"


def _time(time: datetime) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC")
