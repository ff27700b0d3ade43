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

from sweepbench.bench.dialogue.ending import ends_lesson
from sweepbench.bench.dialogue.evaluation import (
    Evaluation,
    EvaluationFailed,
    evaluation_messages,
    judged,
)
from sweepbench.bench.dialogue.scenario import EVALUATOR_MIN_TOKENS, Scenario, fill, filled
from sweepbench.bench.dialogue.turns import Turn, messages_for
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
    """How the dialogue has ended, or None while it goes on."""
    if not turns or turns[-1].speaker != "teacher":
        return None
    if scenario.flow == "single":
        return "single"
    if ends_lesson(turns[-1].content, scenario.end_keywords):
        return "keyword"
    steps = sum(1 for t in turns if t.speaker == "teacher")
    return "step_limit" if steps >= scenario.max_steps else None


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

    if scenario.flow == "guided" and not dialogue.turns and scenario.opening:
        await add(Turn("opening", fill(scenario.opening, payload)))
    single = scenario.flow == "single"  # a guided role's history holds its user turns
    teacher_prompts = filled(scenario.teacher, payload, ask=single)
    student_prompts = filled(scenario.student, payload, ask=False)
    while (ended := ending(scenario, dialogue.turns)) is None:
        speaker: Literal["teacher", "student"] = (
            "student" if dialogue.turns and dialogue.turns[-1].speaker == "teacher" else "teacher"
        )
        prompts = teacher_prompts if speaker == "teacher" else student_prompts
        messages = messages_for(speaker, prompts, dialogue.turns, scenario.keep_turns)
        if speaker == "student":
            messages = _student_view(messages)
        reply = await call(speaker, messages, budgets[speaker])
        await add(Turn(speaker, reply.text, reply.reasoning, dict(reply.usage)))
    dialogue.ended = ended
    return dialogue


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
    raw = ""
    for _ in range(max(attempts, 1)):
        reply = await call("evaluator", messages, max(budget, EVALUATOR_MIN_TOKENS))
        raw = reply.text
        result = judged(raw, scenario)
        if result is not None:
            return result
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
