"""What teaching dialogues may cost, per role (the plan's low and high, spec §6.1).

- **low**: the opening turn of each role (its prompts and the exercise) plus the evaluation of
  that much dialogue — prompts only, as every low estimate;
- **high**: every turn a dialogue may take (:func:`turn_counts`: ELBench's 20 supersteps, 10
  teacher and 10 student turns, for its guided lesson; 1 teacher turn for a single-turn task),
  each turn at its role's token limit with a full memory window of turns at that limit, plus
  the evaluation of the whole dialogue at the evaluator's budget, every evaluation attempt
  (ELBench: the template's ``retry.attempt``, 15 for the guided lesson).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sweepbench.bench.dialogue.bench_item import ROLE_OF, call_settings
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
    steps, student_steps = turn_counts(scenario)
    window = window_size(scenario.keep_turns)
    attempts = evaluation_attempts(scenario)
    evaluator_out = evaluator_budget(scenario, evaluator_limit) * attempts
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
            student.calls += student_steps
            student.low_chars += _chars(filled(scenario.student, payload, ask=False))
            student.high_input_tokens += student_steps * window * limit
            student.high_output_tokens += student_steps * limit
        evaluator = out["evaluator"]
        evaluator.calls += attempts
        low_turns = [Turn("opening", opening)] if opening else []
        with contextlib.suppress(DataError):  # a rubric naming a missing field fails per item
            evaluator.low_chars += _chars(evaluation_messages(scenario, payload, low_turns))
        turns_in_all = steps + student_steps
        evaluator.high_input_tokens += attempts * turns_in_all * limit
        evaluator.high_output_tokens += evaluator_out
    if not guided:
        del out["student"]
    return out


def turn_counts(scenario: Scenario) -> tuple[int, int]:
    """The most teacher and student turns a dialogue of ``scenario`` takes: one teacher turn
    for a single-turn task; for a guided lesson ELBench's superstep budget (replicated: 10 and
    10 of 20; corrected: 10 and 9) or sweepbench's step limit (20 and 19)."""
    if scenario.flow != "guided":
        return 1, 0
    if scenario.max_turns is not None and scenario.replicated:
        return (scenario.max_turns + 1) // 2, scenario.max_turns // 2
    steps = scenario.teacher_turn_limit() or scenario.max_steps
    return steps, steps - 1


def evaluation_attempts(scenario: Scenario) -> int:
    """Evaluator calls a dialogue may take (every reply unreadable)."""
    return scenario.evaluation_attempts if scenario.runtime == "elbench" else EVALUATION_ATTEMPTS


def evaluator_budget(scenario: Scenario, evaluator_limit: int) -> int:
    """The evaluator's output budget: ELBench's 1,024 tokens in its runtime, else at least
    that."""
    return (
        call_settings(scenario, "evaluator", max(evaluator_limit, EVALUATOR_MIN_TOKENS)).max_tokens
        or EVALUATOR_MIN_TOKENS
    )


def dialogue_settings(
    scenario: Scenario, task: str, limit: int, evaluator_limit: int
) -> dict[str, object]:
    """How a task's dialogues are played and scored, for the estimate's technical details."""
    teacher, student = turn_counts(scenario)
    evaluator = call_settings(scenario, "evaluator", evaluator_budget(scenario, evaluator_limit))
    return {
        "task": task,
        "runtime": scenario.runtime,
        "scoring": scenario.version,
        "flow": scenario.flow,
        "max_teacher_turns": teacher,
        "max_student_turns": student,
        "superstep_limit": scenario.max_turns,
        "teacher": {"max_tokens": limit, "temperature": "the run's (--temperature)"},
        "student": {
            "max_tokens": limit,
            "temperature": call_settings(scenario, "student", limit).temperature,
        }
        if scenario.flow == "guided"
        else None,
        "evaluator": {
            "max_tokens": evaluator.max_tokens,
            "temperature": evaluator.temperature,
            "thinking": "off where the model can turn it off (effort none; "
            "chat_template_kwargs.enable_thinking false on a compatible server)",
            "attempts": evaluation_attempts(scenario),
        },
        "pass_threshold": scenario.threshold,
        "veto_field": scenario.veto_field,
        "opening_sent_to_student": scenario.opening_is_the_students,
    }


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
    settings: tuple[dict[str, object], ...] = ()
    """Per dialogue task, how it is played and scored (:func:`dialogue_settings`)."""

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
    settings = tuple(
        dialogue_settings(s, task_id, limit, evaluator_limit)
        for task_id, s in scenarios.items()
        if any(i.task == task_id for i in selected)
    )
    return DialoguePlan(
        settings=settings,
        tasks=frozenset(scenarios),
        keys=frozenset(i.key for i in pending if i.task in scenarios),
        needs_student=any(i.task in guided for i in selected),
        shares=shares,
    )
