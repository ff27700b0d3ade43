"""The teaching runtime on its own (spec §15): flow, memory window, end keywords, the
evaluator's prompt and parser, the veto and the score — over a fake ``call``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from sweepbench.bench.dialogue.ending import ends_lesson, without_thinking
from sweepbench.bench.dialogue.evaluation import (
    END,
    START,
    EvaluationFailed,
    evaluation_messages,
    judged,
    numeric_leaves,
    parse_evaluation,
)
from sweepbench.bench.dialogue.flow import DialogueRole, Reply, evaluate, play, run_dialogue
from sweepbench.bench.dialogue.scenario import Scenario, scenario_from_options
from sweepbench.bench.dialogue.turns import Turn, messages_for, transcript
from sweepbench.models.base import Message

GUIDED = {
    "flow": "guided",
    "scale": 5,
    "fields": ["role_consistency", "guidance", "accuracy"],
    "rubric": "Rate the tutor.",
}
BUDGETS: dict[DialogueRole, int] = {"teacher": 100, "student": 50, "evaluator": 10}


def guided(**more: Any) -> Scenario:
    return scenario_from_options("guided", {**GUIDED, **more})


def marked(values: dict[str, Any]) -> str:
    return f"Thoughts first.\n{START}\n{json.dumps(values)}\n{END}"


class Fake:
    """A call that answers per role from a function and records what each role was sent."""

    def __init__(self, teacher: Callable[[int], str], evaluator: str = "") -> None:
        self.teacher = teacher
        self.evaluator = evaluator or marked({"role_consistency": 4, "guidance": 4})
        self.sent: list[tuple[DialogueRole, tuple[Message, ...], int]] = []

    async def __call__(
        self, role: DialogueRole, messages: tuple[Message, ...], max_tokens: int
    ) -> Reply:
        self.sent.append((role, messages, max_tokens))
        if role == "teacher":
            n = sum(1 for r, _, _ in self.sent if r == "teacher")
            return Reply(self.teacher(n), reasoning=f"thinking {n}")
        if role == "student":
            return Reply("<think>hmm</think>I am not sure, is it 3?")
        return Reply(self.evaluator)

    def count(self, role: DialogueRole) -> int:
        return sum(1 for r, _, _ in self.sent if r == role)


def test_guided_opening_then_turns_until_an_end_keyword() -> None:
    fake = Fake(lambda n: "Well done, 下课!" if n == 3 else f"Question {n}?")
    stored: list[tuple[int, Turn]] = []
    dialogue = asyncio.run(
        play(guided(), {"question": "1+2", "profile": "shy"}, fake, budgets=BUDGETS,
             on_turn=lambda i, t: stored.append((i, t)))
    )  # fmt: skip
    speakers = [t.speaker for t in dialogue.turns]
    assert speakers == ["opening", "teacher", "student", "teacher", "student", "teacher"]
    assert dialogue.turns[0].content == "这是本次一对一辅导所要讲的习题: 1+2"
    assert dialogue.ended == "keyword" and dialogue.steps == 3
    assert [i for i, _ in stored] == list(range(6))
    # the teacher opens with its system prompt and the exercise as the user turn
    role, first, budget = fake.sent[0]
    assert role == "teacher" and budget == 100
    assert [m.role for m in first] == ["system", "user"]
    assert "shy" in first[0].content and first[1].content.endswith("1+2")


def test_end_keyword_lower_cased_without_thinking() -> None:
    assert ends_lesson("That is all. <END>")
    assert ends_lesson("好的，下课")
    assert not ends_lesson("<think>I will say 下课 later</think>What is 2+2?")
    assert without_thinking("<think>a</think>b<think>unclosed") == "b"


def test_step_limit_ends_silently_and_is_still_evaluated() -> None:
    fake = Fake(lambda n: f"Next question {n}?")
    dialogue, evaluation = asyncio.run(
        run_dialogue(guided(), {"question": "q"}, fake, budgets=BUDGETS)
    )
    assert dialogue.ended == "step_limit" and dialogue.steps == 20
    assert fake.count("teacher") == 20 and fake.count("student") == 19
    assert fake.count("evaluator") == 1 and evaluation.score == 4.0 and evaluation.passed
    assert fake.sent[-1][2] == 1024  # the evaluator is given at least 1,024 tokens


def test_memory_window_roles_and_no_reasoning_sent_back() -> None:
    fake = Fake(lambda n: f"T{n}")
    asyncio.run(play(guided(max_steps=6), {"question": "q"}, fake, budgets=BUDGETS))
    teacher_last = [m for r, m, _ in fake.sent if r == "teacher"][-1]
    history = [m for m in teacher_last if m.role != "system"]
    assert len(history) == 7  # keep_turns 3 → 7
    assert [m.role for m in history] == ["user", "assistant"] * 3 + ["user"]
    assert history[1].content == "T3" and history[-1].content == "I am not sure, is it 3?"
    everything = " ".join(m.content for _, ms, _ in fake.sent for m in ms)
    assert "thinking" not in everything and "<think>" not in everything
    student_first = next(m for r, m, _ in fake.sent if r == "student")
    assert [m.role for m in student_first] == ["system", "user"]  # the teacher is its user


def test_messages_for_drops_empty_turns() -> None:
    turns = [Turn("opening", "q"), Turn("teacher", "<think>x</think>"), Turn("student", "hi")]
    messages = messages_for("teacher", (Message("system", "be kind"),), turns, 3)
    assert [(m.role, m.content) for m in messages] == [
        ("system", "be kind"), ("user", "q"), ("user", "hi"),
    ]  # fmt: skip


def test_resume_continues_from_stored_turns() -> None:
    fake = Fake(lambda n: "下课")
    before = [Turn("opening", "q"), Turn("teacher", "go on?"), Turn("student", "ok")]
    dialogue = asyncio.run(play(guided(), {"question": "q"}, fake, budgets=BUDGETS, turns=before))
    assert fake.count("teacher") == 1 and fake.count("student") == 0
    assert dialogue.turns[:3] == before and dialogue.ended == "keyword"
    finished = asyncio.run(
        play(guided(), {"question": "q"}, fake, budgets=BUDGETS, turns=dialogue.turns)
    )
    assert fake.count("teacher") == 1 and finished.ended == "keyword"  # nothing asked again


def test_single_turn_scenario_is_one_teacher_turn() -> None:
    scenario = scenario_from_options(
        "knowledge",
        {"teacher": "Explain {query} to {image}.", "scale": 10, "fields": ["fit", "care"],
         "rubric": [{"role": "system", "content": "Rate it."}]},
    )  # fmt: skip
    assert scenario.threshold == 6.0
    fake = Fake(lambda n: "An explanation.", evaluator=marked({"fit": 7, "care": 5}))
    dialogue, evaluation = asyncio.run(
        run_dialogue(scenario, {"query": "fractions", "image": "a pupil"}, fake, budgets=BUDGETS)
    )
    assert [t.speaker for t in dialogue.turns] == ["teacher"] and dialogue.ended == "single"
    teacher = fake.sent[0][1]
    assert [m.role for m in teacher] == ["system", "user"]  # system text repeated as the ask
    assert teacher[1].content == "Explain fractions to a pupil."
    assert evaluation.score == 6.0 and evaluation.passed  # 6.0 passes on 1–10


def test_evaluation_prompt_has_rubric_fields_dialogue_and_format() -> None:
    turns = [Turn("opening", "ex"), Turn("teacher", "<think>x</think>Hi!"), Turn("student", "Yo")]
    messages = evaluation_messages(guided(), {"question": "ex", "profile": "bold"}, turns)
    assert [m.role for m in messages] == ["system", "user"]
    text = messages[-1].content
    assert text.startswith("Rate the tutor.")
    assert "question: ex" in text and "profile: bold" in text
    assert "teacher: Hi!\nstudent: Yo" in text
    assert START in text and END in text and '"role_consistency": 3' in text
    assert transcript(turns) == "opening: ex\nteacher: Hi!\nstudent: Yo"


@pytest.mark.parametrize(
    "reply",
    [
        f'{START}{{"a": 1}}{END} then {START}\n```json\n{{"a": 4, "b": 2}}\n```\n{END}',
        '\\<START OF EVAL OUTPUT\\> json {"a": 4, "b": 2} \\<END OF EVAL OUTPUT\\>',
        f'{START}\n{{"a": 4, "b": 2}}',
    ],
)
def test_parser_last_block_unescaped_fences_and_json_stripped(reply: str) -> None:
    assert parse_evaluation(reply) == {"a": 4, "b": 2}


@pytest.mark.parametrize("reply", ["no markers {\"a\": 1}", f"{START}not json{END}",
                                   f"{START}[1, 2]{END}"])  # fmt: skip
def test_parser_refuses(reply: str) -> None:
    assert parse_evaluation(reply) is None


def test_score_is_mean_of_numeric_leaves_booleans_count() -> None:
    values = {"a": 4, "b": {"score": 2, "why": "text"}, "c": [True, False], "d": "5"}
    assert numeric_leaves(values) == [4.0, 2.0, 1.0, 0.0]
    result = judged(marked(values), guided(veto_field=None))
    assert result is not None and result.score == 1.75 and not result.passed


def test_guided_veto_forces_every_dimension_to_one() -> None:
    values = {"role_consistency": 1, "guidance": 5, "accuracy": {"score": 5}}
    result = judged(marked(values), guided())
    assert result is not None and result.vetoed
    assert result.values == {"role_consistency": 1, "guidance": 1, "accuracy": {"score": 1}}
    assert result.score == 1.0 and result.result == "fail"
    fine = judged(marked({**values, "role_consistency": 2}), guided())
    assert fine is not None and not fine.vetoed and fine.score == 4.0


def test_unparseable_evaluation_retried_then_a_failure_not_a_zero() -> None:
    fake = Fake(lambda n: "x", evaluator="I liked it. Score: great.")
    with pytest.raises(EvaluationFailed) as failed:
        asyncio.run(evaluate(guided(), {}, [Turn("teacher", "x")], fake, budget=0))
    assert fake.count("evaluator") == 2 and failed.value.raw == "I liked it. Score: great."
    no_number = Fake(lambda n: "x", evaluator=marked({"a": "good"}))
    with pytest.raises(EvaluationFailed):
        asyncio.run(evaluate(guided(), {}, [Turn("teacher", "x")], no_number, budget=0))


def test_estimate_low_is_the_opening_turns_high_is_twenty_steps_at_the_limits() -> None:
    from sweepbench.bench.dialogue.estimate import estimate
    from sweepbench.bench.items import Item

    item = Item("k", "s", "t", "d", "3 + 4 = ?", metadata={"payload": {"question": "3 + 4"}})
    shares = estimate(guided(), [item], limit=100, evaluator_limit=10)
    teacher, student, evaluator = shares["teacher"], shares["student"], shares["evaluator"]
    assert (teacher.calls, student.calls, evaluator.calls) == (20, 19, 2)
    assert teacher.high_output_tokens == 20 * 100 and student.high_output_tokens == 19 * 100
    assert teacher.high_input_tokens == 20 * 7 * 100  # a full memory window at the limit
    assert evaluator.high_output_tokens == 2 * 1024  # at least 1,024, every attempt
    assert teacher.low_chars > len("这是本次一对一辅导所要讲的习题: 3 + 4") and student.low_chars
    single = estimate(
        scenario_from_options("x", {"fields": ["a"], "rubric": "R"}), [item], limit=100,
        evaluator_limit=10,
    )  # fmt: skip
    assert set(single) == {"teacher", "evaluator"} and single["teacher"].calls == 1


def test_function_mode_sends_a_schema_and_reads_a_bare_object() -> None:
    from sweepbench.bench.dialogue.evaluation import evaluation_schema

    scenario = guided(format_mode="function", fields=[{"field": "a", "type": "int"},
                                                      {"field": "b", "type": "float"}])  # fmt: skip
    assert evaluation_schema(scenario.fields)["properties"] == {
        "a": {"type": "integer"}, "b": {"type": "number"},
    }  # fmt: skip
    assert judged('{"a": 4, "b": 3}', scenario) is not None
    assert judged('{"a": 4, "b": 3}', guided()) is None  # prompt mode needs the markers
    with pytest.raises(Exception, match="format_mode"):
        guided(format_mode="xml")
