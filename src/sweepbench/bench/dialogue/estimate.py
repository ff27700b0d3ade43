"""What teaching dialogues may cost, per role (the plan's low and high, spec §6.1).

- **low**: the opening turn of each role (its prompts and the exercise) plus the evaluation of
  that much dialogue — prompts only, as every low estimate;
- **high**: every step taken (20 for a guided lesson, 1 for a single-turn task), each turn at
  its role's token limit with a full memory window of turns at that limit, plus the evaluation
  of the whole dialogue at the evaluator's budget, every evaluation attempt.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sweepbench.bench.dialogue.bench_item import ROLE_OF
from sweepbench.bench.dialogue.evaluation import evaluation_messages
from sweepbench.bench.dialogue.flow import EVALUATION_ATTEMPTS, DialogueRole
from sweepbench.bench.dialogue.scenario import (
    EVALUATOR_MIN_TOKENS,
    Scenario,
    fill,
    filled,
    is_dialogue,
    payload_of,
    scenario_for,
)
from sweepbench.bench.dialogue.turns import Turn, window_size
from sweepbench.bench.items import Item, Task
from sweepbench.errors import DataError
from sweepbench.roles import Role


@dataclass
class RoleEstimate:
    """One dialogue role's share: calls (at most), prompt characters of the low case, and the
    extra input and output tokens of the high case."""

    calls: int = 0
    low_chars: int = 0
    high_input_tokens: int = 0
    high_output_tokens: int = 0


def _chars(messages: Iterable[object]) -> int:
    return sum(len(getattr(m, "content", "")) for m in messages)


def estimate(
    scenario: Scenario, items: Iterable[Item], *, limit: int, evaluator_limit: int
) -> dict[DialogueRole, RoleEstimate]:
    """The dialogue roles' estimates over ``items`` of one task (``limit``: the teacher's and
    the student's token limit)."""
    out: dict[DialogueRole, RoleEstimate] = {
        "teacher": RoleEstimate(), "student": RoleEstimate(), "evaluator": RoleEstimate(),
    }  # fmt: skip
    guided = scenario.flow == "guided"
    steps = scenario.max_steps if guided else 1
    window = window_size(scenario.keep_turns)
    evaluator_out = max(evaluator_limit, EVALUATOR_MIN_TOKENS) * EVALUATION_ATTEMPTS
    for item in items:
        payload = payload_of(item)
        opening = fill(scenario.opening, payload) if guided and scenario.opening else ""
        teacher = out["teacher"]
        teacher.calls += steps
        teacher.low_chars += _chars(filled(scenario.teacher, payload, ask=not guided))
        teacher.low_chars += len(opening)
        teacher.high_input_tokens += steps * window * limit
        teacher.high_output_tokens += steps * limit
        if guided:
            student = out["student"]
            student.calls += steps - 1
            student.low_chars += _chars(filled(scenario.student, payload, ask=False))
            student.high_input_tokens += (steps - 1) * window * limit
            student.high_output_tokens += (steps - 1) * limit
        evaluator = out["evaluator"]
        evaluator.calls += EVALUATION_ATTEMPTS
        low_turns = [Turn("opening", opening)] if opening else []
        evaluator.low_chars += _chars(evaluation_messages(scenario, payload, low_turns))
        turns_in_all = steps + (steps - 1 if guided else 0)
        evaluator.high_input_tokens += EVALUATION_ATTEMPTS * turns_in_all * limit
        evaluator.high_output_tokens += evaluator_out
    if not guided:
        del out["student"]
    return out


@dataclass
class DialoguePlan:
    """The dialogue part of a benchmark plan: which pending items are dialogues, whether a
    student is needed, and each benchmark role's share of the estimate."""

    tasks: frozenset[str]
    """Selected tasks the teaching runtime plays."""
    keys: frozenset[str]
    """Pending items the teaching runtime plays."""
    needs_student: bool
    """A guided lesson is selected (done ones included: the run's settings name its student)."""
    shares: dict[Role, RoleEstimate]

    def share(self, role: Role) -> RoleEstimate:
        """One benchmark role's share (nothing when it has none)."""
        return self.shares.get(role, RoleEstimate())


def plan_dialogues(
    tasks: Sequence[Task],
    selected: Sequence[Item],
    pending: Sequence[Item],
    *,
    limit: int,
    evaluator_limit: int,
) -> DialoguePlan:
    """The dialogue share of a plan (tasks without a scenario are left to the plan's notes)."""
    scenarios: dict[str, Scenario] = {}
    for task in tasks:
        if is_dialogue(task):
            with contextlib.suppress(DataError):
                scenarios[task.id] = scenario_for(task)
    shares: dict[Role, RoleEstimate] = {}
    for task_id, scenario in scenarios.items():
        items = [i for i in pending if i.task == task_id]
        if not items:
            continue
        for role, share in estimate(
            scenario, items, limit=limit, evaluator_limit=evaluator_limit
        ).items():
            total = shares.setdefault(ROLE_OF[role], RoleEstimate())
            total.calls += share.calls
            total.low_chars += share.low_chars
            total.high_input_tokens += share.high_input_tokens
            total.high_output_tokens += share.high_output_tokens
    guided = {t for t, s in scenarios.items() if s.flow == "guided"}
    return DialoguePlan(
        tasks=frozenset(scenarios),
        keys=frozenset(i.key for i in pending if i.task in scenarios),
        needs_student=any(i.task in guided for i in selected),
        shares=shares,
    )
