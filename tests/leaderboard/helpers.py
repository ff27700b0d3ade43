"""Helpers shared by the leaderboard tests."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sweepbench.bench.record import RunRecord, dump_record, load_record
from sweepbench.bench.storage import BenchStore
from sweepbench.bench.storage_rows import AnswerRow, RunRow
from sweepbench.leaderboard.catalogue import elbench_catalogue
from sweepbench.leaderboard.published import PAPER_JUDGE, load_published
from sweepbench.store import Store

GOLDEN = Path(__file__).resolve().parents[1] / "bench/golden/run_record_v1.json"
"""The golden run record (an incomplete run)."""


ELBENCH_MODEL = "openrouter/example/teacher-1"
"""The model of :func:`elbench_record`'s run."""


def elbench_record(task_scores: Mapping[str, float], *, run_id: str = "") -> RunRecord:
    """A complete core-scope ELBench run record on the paper's judge's board (no answers behind
    it): every core task with the published question count and the score given (0–100; 50 for
    a task not given), the areas their count-weighted means, overall the mean of the areas."""
    golden = load_record(GOLDEN.read_text("utf-8"))
    catalogue = elbench_catalogue()
    counts = load_published().models[0].tasks
    tasks = catalogue.in_scope("core")
    task_part: dict[str, dict[str, Any]] = {}
    score_part: dict[str, dict[str, Any]] = {}
    for task_id, task in tasks.items():
        n = counts[task_id].count
        task_part[task_id] = {"items": n, "selected": n, "scored": n, "failed": 0, "unasked": 0,
                              "complete": True, "area": task.area}  # fmt: skip
        score = task_scores.get(task_id, 50.0)
        score_part[task_id] = {"score": score, "low": None, "high": None, "n": n,
                               "mean_score": score / 100, "pass_rate": score / 100}  # fmt: skip
    area_part: dict[str, dict[str, Any]] = {}
    area_scores: dict[str, dict[str, Any]] = {}
    for key, label in catalogue.areas.items():
        mine = [t for t, task in tasks.items() if task.area == key]
        n = sum(task_part[t]["items"] for t in mine)
        area_part[key] = {"items": n, "selected": n, "scored": n, "failed": 0, "unasked": 0,
                          "complete": True, "label": label, "tasks": len(mine),
                          "tasks_selected": len(mine), "tasks_scored": len(mine)}  # fmt: skip
        mean = sum(task_part[t]["items"] * score_part[t]["score"] for t in mine) / n
        area_scores[key] = {"score": mean, "low": None, "high": None, "n": n,
                            "mean_score": mean / 100, "pass_rate": mean / 100}  # fmt: skip
    total = sum(a["items"] for a in area_part.values())
    overall = sum(a["score"] for a in area_scores.values()) / len(area_scores)
    data = golden.model_dump(mode="json")
    price = {"input_per_million": "0.5", "output_per_million": "1.5", "cache_read_per_million":
             None, "cache_write_per_million": None, "source": "test", "date": None}  # fmt: skip
    data.update(
        run_id=run_id or "openrouter_example_teacher-1-20260430-091205-0e1b0e1b",
        benchmark={**data["benchmark"], "id": "elbench", "name": "ELBench"},
        status="completed", reason=None, spent_usd="0.5",
        roles={"target": {"model": ELBENCH_MODEL, "spent_usd": "0.4"},
               "judge": {"model": PAPER_JUDGE, "spent_usd": "0.1"}},
        prices={ELBENCH_MODEL: price, PAPER_JUDGE: price},
        coverage={"tasks": task_part, "areas": area_part,
                  "overall": {"items": total, "selected": total, "scored": total, "failed": 0,
                              "unasked": 0, "complete": True, "all_areas_present": True}},
        scores={"tasks": score_part, "areas": area_scores,
                "overall": {"score": overall, "low": None, "high": None, "n": total,
                            "mean_score": overall / 100, "pass_rate": overall / 100}},
        counts={"scored": total, "failed": 0, "errors_by_type": {}, "left_out": 0},
    )  # fmt: skip
    return load_record(json.dumps(data))


def store_record(record: RunRecord) -> str:
    """Store a record as an ELBench run in the current home's store; its run id."""
    with Store.open() as store:
        bench = BenchStore(store)
        bench.create_run(
            RunRow(
                id=record.run_id, config_hash=record.settings.hash, benchmark="elbench",
                model=record.roles["target"].model,
                judge=record.roles["judge"].model if "judge" in record.roles else None,
                status=record.status, reason=record.reason, created_at=record.created_at,
                updated_at=record.updated_at, items=record.coverage.overall.selected,
            )
        )  # fmt: skip
        bench.set_record(record.run_id, dump_record(record))
    return record.run_id


def store_golden_run(*, as_elbench: bool = False) -> str:
    """Store the golden record as an ELBench run (the board lists ELBench runs) in the current
    home's store; ``as_elbench`` also relabels the record's own benchmark id. Its run id."""
    record = load_record(GOLDEN.read_text("utf-8"))
    if as_elbench:
        elbench = record.benchmark.model_copy(update={"id": "elbench"})
        record = load_record(dump_record(record.model_copy(update={"benchmark": elbench})))
    with Store.open() as store:
        bench = BenchStore(store)
        bench.create_run(
            RunRow(
                id=record.run_id, config_hash=record.settings.hash, benchmark="elbench",
                model=record.roles["target"].model, judge=None, status=record.status,
                reason=record.reason, created_at=record.created_at,
                updated_at=record.updated_at, items=record.coverage.overall.selected,
            )
        )  # fmt: skip
        bench.set_record(record.run_id, dump_record(record))
    return record.run_id


GOLDEN_OUTCOMES = {
    "arithmetic": (11, 1, ()),
    "multiple_choice": (7, 3, ()),
    "instructions": (8, 2, ()),
    "explain": (4, 2, ("judge_unparseable", "provider_error")),
}
"""Per task of the golden record: passed and failed scored answers, and the error types of
the items whose attempt failed — the answers its scores were computed from."""


def golden_answers(*, complete: bool = False) -> list[AnswerRow]:
    """The 40 answers behind the golden record (pass/fail scores 1/0); ``complete``: the two
    items whose attempt failed scored as passes instead."""
    outcomes = dict(GOLDEN_OUTCOMES)
    if complete:
        outcomes["explain"] = (6, 2, ())
    rows: list[AnswerRow] = []
    for task, (passed, failed, errors) in outcomes.items():
        for i in range(passed + failed):
            ok = i < passed
            rows.append(
                AnswerRow(key=f"{task}-{i:02d}", task=task, dimension="", status="scored",
                          answer=f"answer {i}", score=1.0 if ok else 0.0, passed=ok)
            )  # fmt: skip
        for j, error in enumerate(errors):
            rows.append(
                AnswerRow(key=f"{task}-failed-{j}", task=task, dimension="", status="failed",
                          error_type=error)
            )  # fmt: skip
    return rows


def _completed(record: RunRecord, answers: list[AnswerRow]) -> RunRecord:
    """The golden record of a run whose every item was scored (``answers``), under another run
    id: its coverage, counts and scores made from the answers as the runner makes them."""
    from sweepbench.bench.catalog import load_benchmark
    from sweepbench.bench.record_build import _scores
    from sweepbench.bench.results import ScoredAnswer, summarise

    summary = summarise(
        load_benchmark("sample"),
        [ScoredAnswer(a.task, a.dimension, float(a.score or 0), bool(a.passed)) for a in answers],
        scope="core",
        selected_tasks=record.settings.config["tasks"],
    )
    cov = record.coverage
    done = {"failed": 0, "complete": True}
    tasks = {k: t.model_copy(update={"scored": t.selected, **done}) for k, t in cov.tasks.items()}
    areas = {k: a.model_copy(update={"scored": a.selected, **done}) for k, a in cov.areas.items()}
    overall = cov.overall.model_copy(update={"scored": cov.overall.selected, **done})
    coverage = cov.model_copy(update={"tasks": tasks, "areas": areas, "overall": overall})
    counts = record.counts.model_copy(
        update={"scored": len(answers), "failed": 0, "errors_by_type": {}}
    )
    update = {"run_id": record.run_id[:-4] + "beef", "status": "completed", "reason": None,
              "coverage": coverage, "counts": counts, "scores": _scores(summary)}  # fmt: skip
    return load_record(dump_record(record.model_copy(update=update)))


def store_answered_golden_run(*, as_elbench: bool = False, complete: bool = False) -> str:
    """The golden run stored with the answers behind its record and the sample benchmark's
    catalogue, as the runner leaves a run: a run whose bundle a pull recomputes and accepts.
    ``as_elbench`` relabels it an ELBench run; ``complete``: every item scored (another run
    id; a run the board places). Its run id."""
    from sweepbench.bench.catalog import load_benchmark
    from sweepbench.bench.report import catalogue_json

    record = load_record(GOLDEN.read_text("utf-8"))
    answers = golden_answers(complete=complete)
    if complete:
        record = _completed(record, answers)
    if as_elbench:
        elbench = record.benchmark.model_copy(update={"id": "elbench"})
        record = load_record(dump_record(record.model_copy(update={"benchmark": elbench})))
    settings = {
        "config": record.settings.config,
        "benchmark_name": record.benchmark.name,
        "catalogue": catalogue_json(load_benchmark("sample")),
    }
    judge = record.roles.get("judge")
    with Store.open() as store:
        bench = BenchStore(store)
        bench.create_run(
            RunRow(
                id=record.run_id, config_hash=record.settings.hash,
                benchmark=record.benchmark.id, model=record.roles["target"].model,
                judge=None if judge is None else judge.model, status=record.status,
                reason=record.reason, created_at=record.created_at,
                updated_at=record.updated_at, items=record.coverage.overall.selected,
                settings=settings,
            )
        )  # fmt: skip
        bench.write(record.run_id, answers, [])
        bench.set_record(record.run_id, dump_record(record))
    return record.run_id
