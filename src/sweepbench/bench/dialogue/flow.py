"""One dialogue played to its end and evaluated (spec §15.1).

``play`` continues a dialogue from the turns already stored (none for a new one): a guided
lesson is seeded with the exercise, then teacher and student take turns until the teacher says
an end keyword or the step limit is reached (silently; it is still evaluated); a single-turn
scenario is one teacher turn. Each finished turn goes to ``on_turn`` before the next call, so
a crash loses at most the turn in flight. ``evaluate`` asks the evaluator, retrying a reply
that holds no usable evaluation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sweepbench.bench.dialogue import elbench_runtime
from sweepbench.bench.dialogue.ending import ends_lesson
from sweepbench.bench.dialogue.evaluation import (
    Evaluation,
    EvaluationFailed,
    evaluation_messages,
    judged,
    judged_as_elbench,
)
from sweepbench.bench.dialogue.scenario import EVALUATOR_MIN_TOKENS, Scenario, fill, filled
from sweepbench.bench.dialogue.turns import Turn, messages_for, runtime_messages
from sweepbench.models.base import Message

DialogueRole = Literal["teacher", "student", "evaluator"]
EVALUATION_ATTEMPTS = 2
"""Evaluator replies tried before an evaluation is a failure (one retry, as for the judge)."""


@dataclass(frozen=True)
class Reply:
    """What a call answered (reasoning is stored, never sent back)."""

    text: str
    reasoning: str = ""
    usage: dict[str, Any] = field(default_factory=dict)


Call = Callable[[DialogueRole, tuple[Message, ...], int], Awaitable[Reply]]
"""``call(role, messages, max_tokens) -> Reply``; raises to stop the dialogue."""
OnTurn = Callable[[int, Turn], Awaitable[None] | None]
"""Called with each new turn's index and the turn, before the next call."""


Ending = Literal["keyword", "step_limit", "single"]
"""An end keyword, the step limit, or a single-turn scenario's one teacher turn."""


@dataclass
class Dialogue:
    """A dialogue's turns and how it ended."""

    turns: list[Turn]
    ended: Ending | None = None

    @property
    def steps(self) -> int:
        """Teacher turns so far."""
        return sum(1 for t in self.turns if t.speaker == "teacher")


def ending(scenario: Scenario, turns: Sequence[Turn]) -> Ending | None:
    """How the dialogue has ended, or None while it goes on. ELBench's runtime counts its
    superstep budget over teacher and student turns together (replicated: a lesson may end on
    a student turn); otherwise the limit is in teacher turns and a lesson ends on one."""
    if not turns:
        return None
    last = turns[-1]
    if last.speaker == "teacher":
        if scenario.flow == "single":
            return "single"
        if _ends(scenario, last):
            return "keyword"
    if scenario.max_turns is not None and scenario.replicated:
        played = sum(1 for t in turns if t.speaker != "opening")
        return "step_limit" if played >= scenario.max_turns else None
    limit = scenario.teacher_turn_limit()
    steps = sum(1 for t in turns if t.speaker == "teacher")
    if last.speaker == "teacher" and limit is not None and steps >= limit:
        return "step_limit"
    return None


def _ends(scenario: Scenario, turn: Turn) -> bool:
    """The teacher's turn closes the lesson: ELBench's router looks for each keyword, as
    written, in the text lower-cased with ``<think>`` pairs removed."""
    if scenario.runtime == "elbench":
        said = elbench_runtime.without_think_pairs(turn.sent_text).lower()
        return any(keyword in said for keyword in scenario.end_keywords)
    return ends_lesson(turn.content, scenario.end_keywords)


async def play(
    scenario: Scenario,
    payload: Mapping[str, Any],
    call: Call,
    *,
    budgets: Mapping[DialogueRole, int],
    turns: Sequence[Turn] = (),
    on_turn: OnTurn | None = None,
) -> Dialogue:
    """Play the dialogue on from ``turns`` to its end."""
    dialogue = Dialogue(list(turns))

    async def add(turn: Turn) -> None:
        dialogue.turns.append(turn)
        if on_turn is not None:
            stored = on_turn(len(dialogue.turns) - 1, turn)
            if stored is not None:
                await stored

    elbench = scenario.runtime == "elbench"
    fill_in = _fill_as_elbench if elbench else fill
    if scenario.flow == "guided" and not dialogue.turns and scenario.opening:
        await add(Turn("opening", fill_in(scenario.opening, payload)))
    single = scenario.flow == "single"  # a guided role's history holds its user turns
    if elbench:
        teacher_prompts = _filled_as_elbench(scenario.teacher, payload, ask=single)
        student_prompts = _filled_as_elbench(scenario.student, payload, ask=False)
    else:
        teacher_prompts = filled(scenario.teacher, payload, ask=single)
        student_prompts = filled(scenario.student, payload, ask=False)
    while (ended := ending(scenario, dialogue.turns)) is None:
        speaker: Literal["teacher", "student"] = (
            "student" if dialogue.turns and dialogue.turns[-1].speaker == "teacher" else "teacher"
        )
        prompts = teacher_prompts if speaker == "teacher" else student_prompts
        if elbench:
            messages = runtime_messages(
                speaker, prompts, dialogue.turns, scenario.keep_turns,
                opening_for_student=scenario.opening_is_the_students,
            )  # fmt: skip
        else:
            messages = messages_for(speaker, prompts, dialogue.turns, scenario.keep_turns)
            if speaker == "student":
                messages = _student_view(messages)
        reply = await call(speaker, messages, budgets[speaker])
        await add(Turn.of_reply(speaker, reply.text, reply.reasoning, dict(reply.usage)))
    dialogue.ended = ended
    return dialogue


def _fill_as_elbench(template: str, payload: Mapping[str, Any]) -> str:
    return elbench_runtime.replace_variables(template, payload)


def _filled_as_elbench(
    messages: Sequence[Message], payload: Mapping[str, Any], *, ask: bool
) -> tuple[Message, ...]:
    """A template's prompt list filled as ELBench fills it, every entry sent as written; with
    ``ask`` (a single-turn task, which has no history), one with no user message repeats its
    system text as the user message (a chat API needs one; ELBench's templates all have one)."""
    out = tuple(Message(m.role, _fill_as_elbench(m.content, payload)) for m in messages)
    if ask and out and not any(m.role == "user" for m in out):
        out = (*out, Message("user", "\n\n".join(m.content for m in out if m.role == "system")))
    return out


def _student_view(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """The student's messages: its system prompts, then the history, which must open with a
    user turn (the teacher's) for every chat API; the seeded opening is the student's own."""
    system = tuple(m for m in messages if m.role == "system")
    history = [m for m in messages if m.role != "system"]
    while history and history[0].role == "assistant":
        history.pop(0)
    return system + tuple(history)


async def evaluate(
    scenario: Scenario,
    payload: Mapping[str, Any],
    turns: Sequence[Turn],
    call: Call,
    *,
    budget: int,
    attempts: int = EVALUATION_ATTEMPTS,
) -> Evaluation:
    """Ask the evaluator; a reply without a usable evaluation is asked again, and after
    ``attempts`` of them :class:`EvaluationFailed` (with the last reply) is raised."""
    messages = evaluation_messages(scenario, payload, turns)
    if scenario.runtime == "elbench":
        attempts = scenario.evaluation_attempts
    raw = ""
    for _ in range(max(attempts, 1)):
        reply = await call("evaluator", messages, max(budget, EVALUATOR_MIN_TOKENS))
        raw = reply.text
        result = judged_as_elbench(raw, scenario) if scenario.replicated else judged(raw, scenario)
        if result is not None:
            return result
    if scenario.replicated:  # ELBench records the evaluation as unknown: not a pass
        return Evaluation.unknown(raw)
    raise EvaluationFailed("the evaluator's reply held no usable evaluation", raw)


async def run_dialogue(
    scenario: Scenario,
    payload: Mapping[str, Any],
    call: Call,
    *,
    budgets: Mapping[DialogueRole, int],
    turns: Sequence[Turn] = (),
    on_turn: OnTurn | None = None,
) -> tuple[Dialogue, Evaluation]:
    """Play the dialogue to its end, then evaluate it."""
    dialogue = await play(scenario, payload, call, budgets=budgets, turns=turns, on_turn=on_turn)
    evaluation = await evaluate(
        scenario, payload, dialogue.turns, call, budget=budgets.get("evaluator", 0)
    )
    return dialogue, evaluation
