"""The dialogue estimate calibrated from this store's finished dialogues of the same models.

A dialogue is *finished* when its item's answer row is stored after the dialogue reached its
end (its ``stop_reason`` says how: ``single``, ``keyword`` or ``step_limit``) and the evaluation
finished: the row is scored, or failed because the evaluator's replies held no usable
evaluation. Its models are the run's: the teacher is the model under test, the evaluator the
judge (the model under test when there is none), the student the run's ``student`` (the
evaluator when none is named). Once there are :data:`CALIBRATE_AFTER` finished dialogues of one
flow with the same models, each role's mean calls, input and output tokens per dialogue (every
``calls`` row of the item: retries count) and the mean steps and turns are the calibration.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import sqlalchemy as sa

from sweepbench.bench.dialogue.bench_item import ROLE_OF
from sweepbench.bench.dialogue.flow import DialogueRole
from sweepbench.bench.dialogue.scenario import Flow, is_dialogue, scenario_for
from sweepbench.bench.items import Task
from sweepbench.errors import DataError, UserError
from sweepbench.models.registry import model_info
from sweepbench.money.prices import price_for
from sweepbench.store import Store
from sweepbench.store.schema import bench_answers, bench_runs, bench_turns, calls

CALIBRATE_AFTER = 5
"""Finished dialogues of the same models (and flow) needed before the estimate is calibrated."""
ENDINGS: dict[Flow, tuple[str, ...]] = {"single": ("single",), "guided": ("keyword", "step_limit")}
"""The stored ``stop_reason`` of a dialogue that reached its end, by flow."""
EVALUATED_FAILURE = "judge_unparseable"
"""A failed row whose dialogue ended and whose evaluation was tried to its last attempt."""
MILLION = Decimal(1_000_000)
_DIALOGUE_ROLE: dict[str, DialogueRole] = {role: d for d, role in ROLE_OF.items()}


@dataclass(frozen=True)
class Models:
    """The models a dialogue is played by (``student`` None: a single-turn task has none)."""

    teacher: str
    evaluator: str
    student: str | None = None


@dataclass(frozen=True)
class RoleMeans:
    """One role's means per dialogue."""

    calls: float
    input_tokens: float
    output_tokens: float


@dataclass(frozen=True)
class Calibration:
    """Means per finished dialogue of one flow and one set of models."""

    flow: Flow
    models: Models
    dialogues: int
    steps: float
    """Teacher turns."""
    turns: float
    """Stored turns (a guided lesson's seeded opening included)."""
    roles: Mapping[DialogueRole, RoleMeans]

    def usd_per_dialogue(self) -> Decimal | None:
        """The mean dialogue at today's prices (None when a model has no price)."""
        total = Decimal(0)
        for role, means in self.roles.items():
            model = self.model_of(role)
            try:
                price = price_for(model_info(model))
            except UserError:
                return None
            if price is None:
                return None
            tokens_in = Decimal(str(means.input_tokens))
            tokens_out = Decimal(str(means.output_tokens))
            total += (tokens_in * price.input + tokens_out * price.output) / MILLION
        return total

    def model_of(self, role: DialogueRole) -> str:
        """The model that plays ``role``."""
        if role == "teacher":
            return self.models.teacher
        if role == "student":
            return self.models.student or self.models.evaluator
        return self.models.evaluator


def _student_of(settings: str | None, evaluator: str) -> str:
    """A run's student: ``config.models.student`` of its stored settings, else the evaluator."""
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        models = json.loads(settings or "{}").get("config", {}).get("models") or {}
        return str(models.get("student") or evaluator)
    return evaluator


def _runs(store: Store, flow: Flow, models: Models) -> list[str]:
    """The runs played by ``models`` (the student only matters for a guided lesson)."""
    evaluator = sa.func.coalesce(bench_runs.c.judge, bench_runs.c.model)
    query = sa.select(bench_runs.c.id).where(
        bench_runs.c.model == models.teacher, evaluator == models.evaluator
    )
    if flow == "guided":
        query = query.add_columns(bench_runs.c.settings)
    with store.engine.connect() as conn:
        rows = conn.execute(query).all()
    if flow != "guided":
        return [str(row.id) for row in rows]
    student = models.student or models.evaluator
    return [str(r.id) for r in rows if _student_of(r.settings, models.evaluator) == student]


def finished_dialogues(store: Store, flow: Flow, models: Models) -> list[tuple[str, str]]:
    """The finished dialogues of one flow played by ``models``: (run id, item key) pairs."""
    runs = _runs(store, flow, models)
    if not runs:
        return []
    turns_stored = (
        sa.select(bench_turns.c.turn)
        .where(bench_turns.c.run_id == bench_answers.c.run_id)
        .where(bench_turns.c.key == bench_answers.c.key)
        .exists()
    )
    evaluated = sa.or_(
        bench_answers.c.status == "scored", bench_answers.c.error_type == EVALUATED_FAILURE
    )
    query = (
        sa.select(bench_answers.c.run_id, bench_answers.c.key)
        .where(bench_answers.c.run_id.in_(runs))
        .where(bench_answers.c.stop_reason.in_(ENDINGS[flow]))
        .where(evaluated, turns_stored)
        .order_by(bench_answers.c.run_id, bench_answers.c.key)
    )
    with store.engine.connect() as conn:
        return [(str(r.run_id), str(r.key)) for r in conn.execute(query)]


def calibrate(store: Store, flow: Flow, models: Models) -> Calibration | None:
    """The means over the finished dialogues of ``flow`` played by ``models``, or None while
    there are fewer than :data:`CALIBRATE_AFTER`."""
    return _calibrated(store, flow, models, finished_dialogues(store, flow, models))


def _calibrated(
    store: Store, flow: Flow, models: Models, found: list[tuple[str, str]]
) -> Calibration | None:
    if len(found) < CALIBRATE_AFTER:
        return None
    wanted = set(found)
    runs = sorted({run for run, _ in found})
    call_query = (
        sa.select(
            calls.c.run_id, calls.c.item_key, calls.c.role, sa.func.count().label("n"),
            sa.func.sum(calls.c.input_tokens).label("tokens_in"),
            sa.func.sum(calls.c.output_tokens).label("tokens_out"),
        )
        .where(calls.c.run_id.in_(runs), calls.c.role.in_(list(_DIALOGUE_ROLE)))
        .group_by(calls.c.run_id, calls.c.item_key, calls.c.role)
    )  # fmt: skip
    teacher_turns = sa.func.sum(sa.case((bench_turns.c.speaker == "teacher", 1), else_=0))
    turn_query = (
        sa.select(
            bench_turns.c.run_id, bench_turns.c.key, sa.func.count().label("turns"),
            teacher_turns.label("steps"),
        )
        .where(bench_turns.c.run_id.in_(runs))
        .group_by(bench_turns.c.run_id, bench_turns.c.key)
    )  # fmt: skip
    totals: dict[DialogueRole, Counter[str]] = {}
    steps = turns = 0
    with store.engine.connect() as conn:
        for row in conn.execute(call_query):
            if (row.run_id, row.item_key) not in wanted:
                continue
            total = totals.setdefault(_DIALOGUE_ROLE[row.role], Counter())
            total["calls"] += int(row.n)
            total["in"] += int(row.tokens_in or 0)
            total["out"] += int(row.tokens_out or 0)
        for row in conn.execute(turn_query):
            if (row.run_id, row.key) in wanted:
                turns += int(row.turns)
                steps += int(row.steps or 0)
    count = len(found)
    order: tuple[DialogueRole, ...] = ("teacher", "student", "evaluator")
    roles = {
        role: RoleMeans(
            totals[role]["calls"] / count, totals[role]["in"] / count, totals[role]["out"] / count
        )
        for role in order
        if role in totals
    }
    return Calibration(flow, models, count, steps / count, turns / count, roles)


@dataclass(frozen=True)
class FlowCalibration:
    """A plan's dialogues of one flow: how many are to run, how many of the same models are
    finished in the store, and the calibration once there are enough."""

    flow: Flow
    models: Models
    pending: int
    finished: int
    calibration: Calibration | None

    def as_json(self) -> dict[str, Any]:
        """``--json``: the counts and, once calibrated, the means and the cost per dialogue."""
        data: dict[str, Any] = {
            "flow": self.flow, "pending": self.pending, "finished": self.finished,
            "calibrate_after": CALIBRATE_AFTER, "calibrated": self.calibration is not None,
        }  # fmt: skip
        found = self.calibration
        if found is None:
            return data
        usd = found.usd_per_dialogue()
        data.update(
            steps=found.steps, turns=found.turns,
            roles={
                ROLE_OF[role]: {
                    "model": found.model_of(role), "calls": means.calls,
                    "input_tokens": means.input_tokens, "output_tokens": means.output_tokens,
                }
                for role, means in found.roles.items()
            },
            usd_per_dialogue=None if usd is None else str(usd),
        )  # fmt: skip
        return data


def plan_calibration(
    store: Store,
    tasks: Collection[Task],
    pending_tasks: Collection[str],
    models: Mapping[str, str],
) -> tuple[FlowCalibration, ...]:
    """The calibration of a plan's pending dialogues, one entry per flow they have (none when
    the plan has no dialogue to run). ``pending_tasks``: the task id of every pending item;
    ``models``: the plan's models by benchmark role."""
    flows: dict[str, Flow] = {}
    for task in tasks:
        if is_dialogue(task):
            with contextlib.suppress(DataError):
                flows[task.id] = scenario_for(task).flow
    counts = Counter(flows[t] for t in pending_tasks if t in flows)
    if not counts or "target" not in models:
        return ()
    teacher = models["target"]
    evaluator = models.get("judge") or teacher
    out: list[FlowCalibration] = []
    for flow in ("guided", "single"):
        if not counts[flow]:
            continue
        student = (models.get("student") or evaluator) if flow == "guided" else None
        played = Models(teacher, evaluator, student)
        found = finished_dialogues(store, flow, played)
        calibration = _calibrated(store, flow, played, found)
        out.append(FlowCalibration(flow, played, counts[flow], len(found), calibration))
    return tuple(out)
