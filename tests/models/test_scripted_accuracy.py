"""``scripted/guess?accuracy=P``: right with probability P where a test marks the reference."""

from __future__ import annotations

import pytest

from sweepbench import Request, UserError
from sweepbench.models import collect, resolve
from sweepbench.models.scripted import accurate_guess, wrong_answer

LETTERS = "ABCD"


def choice_prompt(i: int, reference: str) -> str:
    return (
        f"Question {i}: which option is right?\nA) one\nB) two\nC) three\nD) four\n"
        f"Reply with ANSWER: [LETTER]. [scripted-reference: {reference}]"
    )


def number_prompt(i: int, reference: int) -> str:
    return (
        f"What is {i} + {reference - i}? Put it in \\boxed{{}}. [scripted-reference: {reference}]"
    )


def answer(model_id: str, prompt: str) -> str:
    model = resolve(model_id)
    return "".join(str(e.text) for e in model.script(Request.simple(model_id, prompt), None))


@pytest.mark.parametrize("accuracy", [0.0, 0.3, 0.85, 1.0])
def test_realised_choice_accuracy_is_close_to_the_setting(accuracy: float) -> None:
    request_id = f"scripted/guess?accuracy={accuracy}"
    right = 0
    for i in range(2_000):
        reference = LETTERS[i % 4]
        text = answer(request_id, choice_prompt(i, reference))
        assert text.startswith("ANSWER: ") and text[-1] in LETTERS
        right += text == f"ANSWER: {reference}"
    assert abs(right / 2_000 - accuracy) <= 0.03


def test_realised_number_accuracy_and_format() -> None:
    right = 0
    for i in range(2_000):
        reference = 1_000 + i
        text = answer("scripted/guess?accuracy=0.6&seed=5", number_prompt(i, reference))
        assert text.startswith("The answer is \\boxed{") and text.endswith("}.")
        right += text == f"The answer is \\boxed{{{reference}}}."
    assert abs(right / 2_000 - 0.6) <= 0.03


def test_the_same_prompt_always_gets_the_same_answer() -> None:
    prompts = [choice_prompt(i, LETTERS[i % 4]) for i in range(50)]
    first = [answer("scripted/guess?accuracy=0.5", p) for p in prompts]
    again = [answer("scripted/guess?accuracy=0.5", p) for p in prompts]
    assert first == again


def test_seeds_draw_independently_and_lower_accuracy_is_a_subset() -> None:
    prompts = [choice_prompt(i, LETTERS[i % 4]) for i in range(400)]

    def correct(model_id: str) -> set[int]:
        return {
            i for i, p in enumerate(prompts) if answer(model_id, p) == f"ANSWER: {LETTERS[i % 4]}"
        }

    low, high = correct("scripted/guess?accuracy=0.5"), correct("scripted/guess?accuracy=0.8")
    assert low <= high
    assert correct("scripted/guess?accuracy=0.5&seed=1") != low


def test_without_a_marker_accuracy_changes_nothing() -> None:
    prompt = "Which?\nA) x\nB) y\nC) z"
    assert answer("scripted/guess?accuracy=1", prompt) == answer("scripted/guess", prompt)


def test_wrong_answers_keep_the_form() -> None:
    prompt = choice_prompt(1, "C")
    assert wrong_answer("C", prompt) in {"A", "B", "D"}
    assert wrong_answer("42", "q") != "42" and wrong_answer("42", "q").isdigit()
    assert wrong_answer("2.5", "q") != "2.5"
    assert wrong_answer("Paris", "q") == "not Paris"
    request = Request.simple(
        "scripted/guess", "Say the final number on the last line. [scripted-reference: 7]"
    )
    assert accurate_guess(request, 1.0, 0) == "A guess.\n7"


async def test_streams_through_collect() -> None:
    model_id = "scripted/guess?accuracy=1"
    result = await collect(resolve(model_id), Request.simple(model_id, choice_prompt(3, "B")))
    assert result.text == "ANSWER: B"


@pytest.mark.parametrize("option", ["accuracy=1.5", "accuracy=-0.1", "accuracy=x", "seed=-1"])
def test_out_of_range_options_are_refused(option: str) -> None:
    with pytest.raises(UserError):
        resolve(f"scripted/guess?{option}")
