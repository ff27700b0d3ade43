"""Rescoring a stored run by another scoring version, offline (``sweepbench bench rescore``).

The stored answers are read again by the rule scorers under the chosen version
(:mod:`.versions`); nothing asks a model. Judged answers keep their judge's verdict, failed ones
stay failed. The result is a new run, ``<run id>-rescored-<version>``, whose settings differ
only in their scoring version (so its hash differs and it is never ranked with the original);
the original run and its scores are left as they were. Its spend is nil: the answers were paid
for by the original run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from typing import Any

from sweepbench.bench.items import Benchmark, Item, Task
from sweepbench.bench.plan import build_plan
from sweepbench.bench.record import dump_record, load_record, rules_version_of
from sweepbench.bench.record_build import build_record
from sweepbench.bench.report import RunReport, load_report
from sweepbench.bench.request import request_from_run
from sweepbench.bench.run_liveness import run_is_live
from sweepbench.bench.scoring import score_answer
from sweepbench.bench.scoring.base import Score
from sweepbench.bench.scoring.versions import DEFAULT_SCORING_VERSION, rules_for
from sweepbench.bench.selection import rule_scored
from sweepbench.bench.storage import ANSWER_BATCH, BenchStore
from sweepbench.bench.storage_rows import AnswerRow, RunRow
from sweepbench.errors import SweepbenchError, UserError
from sweepbench.store import Store

_ANSWER_FIELDS = tuple(f.name for f in fields(AnswerRow))
BEFORE_VERSIONS = "before scoring versions"
"""The scoring of a run recorded before scoring versions existed (its rules were close to
``corrected``, its hash is a ``replicated`` one): it may be rescored by either version."""


@dataclass(frozen=True)
class Flip:
    """One answer whose grade changed: its key, task and score before and after."""

    key: str
    task: str
    old_score: float
    new_score: float
    old_result: str
    new_result: str
    seen: str | None = None
    """What the new reading extracted (a letter, letters, a math answer), when it says."""

    def as_json(self) -> dict[str, Any]:
        """The flip for scripts."""
        return {
            "key": self.key, "task": self.task, "old_score": self.old_score,
            "new_score": self.new_score, "old_result": self.old_result,
            "new_result": self.new_result, "seen": self.seen,
        }  # fmt: skip


@dataclass(frozen=True)
class Rescored:
    """What a rescoring did."""

    source_id: str
    run_id: str
    """The new run holding the rescored answers."""
    version: str
    old_version: str
    rescored: int
    """Answers graded again by a rule."""
    kept: int
    """Answers copied as they were (judged verdicts, failures, tasks without a rule)."""
    flips: tuple[Flip, ...]
    record: bool
    """Whether the new run has a stored record (its scores with ranges)."""

    def as_json(self) -> dict[str, Any]:
        """The outcome for scripts (``--json``)."""
        return {
            "source_run": self.source_id, "run_id": self.run_id, "scoring": self.version,
            "source_scoring": self.old_version, "rescored": self.rescored, "kept": self.kept,
            "flips": [f.as_json() for f in self.flips], "record": self.record,
        }  # fmt: skip


def settings_hash(config: Mapping[str, Any]) -> str:
    """The settings hash of a stored config (as ``RunConfig.hash`` makes it)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def config_with_scoring(config: Mapping[str, Any], version: str) -> dict[str, Any]:
    """A stored config with its scoring version set (left out when it is the default, as
    ``RunConfig.as_json`` does)."""
    changed = {k: v for k, v in config.items() if k != "scoring"}
    if version != DEFAULT_SCORING_VERSION:
        changed["scoring"] = version
    return changed


def _ruled_tasks(benchmark: Benchmark, config: Mapping[str, Any]) -> dict[str, Task]:
    """The benchmark's tasks by id, as the run scored them (rule-scored when it was)."""
    tasks = {t.id: t for t in benchmark.tasks}
    if config.get("rule_scoring"):
        tasks = {k: rule_scored(t) for k, t in tasks.items()}
    return tasks


def _seen(score: Score) -> str | None:
    """What a scorer extracted, from its metadata."""
    for name in ("predicted", "extracted"):
        value = score.metadata.get(name)
        if value is not None:
            return "".join(value) if isinstance(value, list) else str(value)
    return None


def _as_answer_row(row: Mapping[str, Any]) -> AnswerRow:
    """A stored answer row as an :class:`AnswerRow` (to copy into another run)."""
    return AnswerRow(**{name: row[name] for name in _ANSWER_FIELDS if name in row})


def _rescored_row(row: AnswerRow, score: Score) -> AnswerRow:
    """``row`` with the grade of ``score``."""
    meta = dict(score.metadata)
    if not score.format_valid:
        meta["format_valid"] = False
    return replace(
        row, score=float(score.score), passed=bool(score.passed), result=score.result,
        reason=score.reason, score_metadata=meta or None,
    )  # fmt: skip


def _regrade(
    row: AnswerRow, task: Task | None, item: Item | None, version: str
) -> tuple[AnswerRow, Flip | None] | None:
    """The row graded again under ``version`` and its flip (None when unchanged); None when
    the row is not graded by a rule (judged, failed, unknown task or item)."""
    if row.status != "scored" or task is None or item is None or task.needs_judge:
        return None
    try:
        score = score_answer(task, item, row.answer or "", version=version)
    except SweepbenchError:
        return None
    new = _rescored_row(row, score)
    if new.score == row.score and new.result == row.result:
        return new, None
    flip = Flip(
        row.key, row.task, float(row.score or 0.0), float(score.score), str(row.result),
        score.result, _seen(score),
    )  # fmt: skip
    return new, flip


def _new_run_id(runs: BenchStore, source: RunRow, version: str) -> str:
    """``<source>-rescored-<version>``, with the time added when that id is taken."""
    run_id = f"{source.id}-rescored-{version}"
    if runs.exists(run_id):
        run_id = f"{run_id}-{datetime.now(UTC):%Y%m%d-%H%M%S}"
    return run_id


def source_scoring(run: RunRow) -> str:
    """The scoring version a stored run was graded by: its record's, else its settings'
    (:data:`BEFORE_VERSIONS` for a record written before scoring versions)."""
    if run.record:
        try:
            label = load_record(run.record).scoring.version
        except SweepbenchError:
            label = None
        if label is not None:
            return rules_version_of(label) or BEFORE_VERSIONS
    return str(run.settings.get("config", {}).get("scoring", DEFAULT_SCORING_VERSION))


def _source_report(store: Store, run_id: str, version: str) -> RunReport:
    """The run to rescore, refused (UserError) while it runs, when its data cannot be
    reloaded, or when it is already scored by ``version``."""
    report = load_report(store, run_id, resamples=0, stored=False)
    run = report.run
    if run_is_live(run):
        raise UserError(f"run {run.id} is still running; rescore it once it has stopped")
    if report.note is not None:
        raise UserError(f"run {run.id} cannot be rescored: {report.note}")
    if source_scoring(run) == version:
        raise UserError(f"run {run.id} is already scored by the {version} scoring version")
    return report


def rescore_run(store: Store, run_id: str, version: str) -> Rescored:
    """Grade the answers of run ``run_id`` again under scoring ``version`` into a new run."""
    version = rules_for(version).version
    report = _source_report(store, run_id, version)
    source, runs = report.run, BenchStore(store)
    config = dict(source.settings.get("config", {}))
    new_config = config_with_scoring(config, version)
    tasks = _ruled_tasks(report.benchmark, config)
    items = {i.key: i for t in report.benchmark.tasks for i in t.items}
    new_id = _new_run_id(runs, source, version)
    final = _store_copy(runs, source, new_id, new_config)
    batch: list[AnswerRow] = []
    flips: list[Flip] = []
    rescored = total = 0
    for stored in runs.answers(source.id):  # streamed, and written, in bounded batches
        row = _as_answer_row(stored)
        regraded = _regrade(row, tasks.get(row.task), items.get(row.key), version)
        if regraded is not None:
            rescored += 1
            row = regraded[0]
            if regraded[1] is not None:
                flips.append(regraded[1])
        batch.append(row)
        total += 1
        if len(batch) >= ANSWER_BATCH:
            runs.write(new_id, batch, [])
            batch = []
    runs.write(new_id, batch, [])
    runs.set_status(new_id, *final)  # every answer is in: the copy is complete
    record = _write_record(store, runs, new_id, report.benchmark, new_config)
    old = source_scoring(source)
    return Rescored(
        source.id, new_id, version, old, rescored, total - rescored, tuple(flips), record
    )


def _store_copy(
    runs: BenchStore, source: RunRow, run_id: str, config: dict[str, Any]
) -> tuple[str, str]:
    """Record the rescored run (the source's row with the new config, hash and a label),
    marked interrupted until its answers are all written; returns the status and reason it
    takes then."""
    now = datetime.now(UTC)
    settings = {k: v for k, v in source.settings.items() if k != "worker"}
    settings |= {"config": config, "rescored_from": source.id}
    status = "interrupted" if source.status == "running" else source.status
    reason = f"rescored from run {source.id} by the {config.get('scoring', 'replicated')} rules"
    runs.create_run(
        RunRow(
            id=run_id, config_hash=settings_hash(config), benchmark=source.benchmark,
            model=source.model, judge=source.judge, status="interrupted",
            reason=f"{reason}: not finished", created_at=now, updated_at=now,
            items=source.items, settings=settings,
        )
    )  # fmt: skip
    return status, reason


def _write_record(
    store: Store, runs: BenchStore, run_id: str, benchmark: Benchmark, config: dict[str, Any]
) -> bool:
    """Store the new run's record, built from a plan with the same settings; False (and no
    record) when no such plan can be made offline."""
    run = runs.run(run_id)
    assert run is not None
    scoring = str(config.get("scoring", DEFAULT_SCORING_VERSION))
    try:
        request = request_from_run(run.settings, run.benchmark)
        plan = build_plan(benchmark, request.model_copy(update={"scoring": scoring}))
        if plan.errors or plan.config.hash != run.config_hash:
            return False
        record = build_record(load_report(store, run_id, benchmark=benchmark, stored=False), plan)
    except (SweepbenchError, ValueError):
        return False
    runs.set_record(run_id, dump_record(record))
    return True
