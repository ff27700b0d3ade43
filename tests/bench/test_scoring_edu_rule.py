"""The highlevel_edu rule scorer (spec §13), on hand-made items (the real file is absent)."""

from __future__ import annotations

import json
from difflib import SequenceMatcher
from typing import Any

import pytest

from sweepbench.bench.items import Item
from sweepbench.bench.scoring.edu_rule import (
    EMPATHY_CUES,
    PERSONALISATION_CUES,
    REASONING_CUES,
    parse_score,
    prompt_keys,
    required_keys,
    score_edu_rule,
    score_match,
    text_similarity,
)

AG_REFERENCE = {
    "Score": "8/10",
    "Scoring Details": "Correct method, one arithmetic slip in step 3.",
    "Personalized Feedback": "Good work; check your arithmetic carefully.",
}


def make_item(scene: str, prompt: str = "Answer in JSON.", reference: Any = None) -> Item:
    """A highlevel_edu item of one scene."""
    return Item(
        key=f"edu::{scene}",
        sample_id=scene,
        task="highlevel_edu",
        dimension=scene,
        prompt=prompt,
        reference=reference,
        metadata={"_scene": scene, "Subject": "Math"},
    )


def answer(**fields: Any) -> str:
    """A JSON answer; keyword names use underscores for spaces."""
    return json.dumps({k.replace("_", " "): v for k, v in fields.items()}, ensure_ascii=False)


def ratio(a: str, b: str) -> float:
    """The expected similarity (lower-cased, whitespace collapsed)."""
    return SequenceMatcher(None, " ".join(a.lower().split()), " ".join(b.lower().split())).ratio()


# --- JSON and structure ----------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "Corrected: 42", '{"Answer": "unterminated', "[1, 2]"])
def test_not_json_scores_zero(text: str) -> None:
    score = score_edu_rule(text, make_item("Q&A"))
    assert (score.score, score.result, score.passed, score.format_valid) == (
        0.0,
        "fail",
        False,
        False,
    )
    assert score.metadata["required_keys"] == ["Answer"]


def test_fenced_json_is_read() -> None:
    text = 'Here you go:\n```json\n{"Answer": "42"}\n```'
    score = score_edu_rule(text, make_item("Q&A"))
    assert (score.score, score.passed) == (1.0, True)


def test_missing_key_fails_even_with_a_high_score() -> None:
    # EC: structure 1/2, scene 1/2 filled → 0.5; a missing key also fails on its own.
    score = score_edu_rule(answer(Corrected_Answer="x = 3"), make_item("EC"))
    assert score.score == 0.5
    assert not score.passed
    assert score.metadata["missing_keys"] == ["Error Explanation"]
    assert "Error Explanation" in score.reason


def test_keys_match_without_case_or_spacing() -> None:
    text = json.dumps({"corrected  answer": "x = 3", "ERROR EXPLANATION": "sign error"})
    score = score_edu_rule(text, make_item("EC"))
    assert (score.score, score.passed, score.metadata["missing_keys"]) == (1.0, True, [])


def test_empty_values_lower_the_scene_score() -> None:
    # EC with both keys, one empty: structure 1, scene 0.5 → 0.75, passes.
    score = score_edu_rule(
        answer(Corrected_Answer="x = 3", Error_Explanation="  "), make_item("EC")
    )
    assert (score.score, score.passed) == (0.75, True)
    assert score.metadata["filled_keys"] == ["Corrected Answer"]


@pytest.mark.parametrize("empty", [None, [], {}, ""])
def test_empty_kinds(empty: Any) -> None:
    score = score_edu_rule(answer(Teaching_Materials=empty), make_item("TMG"))
    assert score.score == 0.5  # structure 1, scene 0


def test_qg_both_keys() -> None:
    text = answer(Question="What is 2+2?", Provided_Reasoning=["tests addition"])
    score = score_edu_rule(text, make_item("QG"))
    assert (score.score, score.passed) == (1.0, True)


# --- AG ------------------------------------------------------------------------------------------


def test_ag_exact_reference_scores_one() -> None:
    item = make_item("AG", reference=AG_REFERENCE)
    score = score_edu_rule(json.dumps(AG_REFERENCE), item)
    assert (score.score, score.passed) == (1.0, True)
    assert score.metadata["score_match"] == 1.0


def test_ag_weights() -> None:
    details = "The method is right but step 3 has an arithmetic slip."
    feedback = "Nice job overall. Double-check arithmetic."
    item = make_item("AG", reference=AG_REFERENCE)
    text = answer(Score="6/10", Scoring_Details=details, Personalized_Feedback=feedback)
    score = score_edu_rule(text, item)
    d = ratio(details, AG_REFERENCE["Scoring Details"])
    f = ratio(feedback, AG_REFERENCE["Personalized Feedback"])
    scene = round(0.5 * 0.8 + 0.25 * d + 0.25 * f, 4)
    assert score.metadata["score_match"] == pytest.approx(0.8)
    assert score.score == round((1.0 + scene) / 2, 4)
    assert score.passed == (score.score >= 0.6)


def test_ag_whitespace_and_case_do_not_change_similarity() -> None:
    item = make_item("AG", reference=AG_REFERENCE)
    shouted = {
        "Score": 8,
        "Scoring Details": "  CORRECT   method, one arithmetic slip\nin step 3. ",
        "Personalized Feedback": "good WORK; check your arithmetic carefully.",
    }
    score = score_edu_rule(json.dumps(shouted), item)
    assert score.metadata["details_similarity"] == 1.0
    assert score.metadata["feedback_similarity"] == 1.0
    assert score.metadata["score_match"] == 1.0  # bare 8 read on the reference's /10 scale


def test_ag_missing_predicted_score() -> None:
    item = make_item("AG", reference=AG_REFERENCE)
    text = answer(
        Scoring_Details=AG_REFERENCE["Scoring Details"],
        Personalized_Feedback=AG_REFERENCE["Personalized Feedback"],
    )
    score = score_edu_rule(text, item)
    # structure 2/3; scene 0.5 × 0 + 0.25 + 0.25 = 0.5
    assert score.score == round((2 / 3 + 0.5) / 2, 4)
    assert not score.passed


def test_ag_reference_given_as_json_text() -> None:
    item = make_item("AG", reference=json.dumps(AG_REFERENCE))
    assert score_edu_rule(json.dumps(AG_REFERENCE), item).score == 1.0


def test_ag_without_reference() -> None:
    score = score_edu_rule(json.dumps(AG_REFERENCE), make_item("AG", reference=None))
    # no reference score → match 0; no reference texts → similarity 0
    assert score.score == 0.5


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("8/10", (8.0, 10.0)),
        ("8 / 10 分", (8.0, 10.0)),
        ("4.5 out of 5", (4.5, 5.0)),
        ("85%", (85.0, 100.0)),
        ("得分：7", (7.0, None)),
        (9, (9.0, None)),
        ("3/0", None),
        ("none", None),
        (None, None),
        (True, None),
    ],
)
def test_parse_score(value: Any, parsed: tuple[float, float | None] | None) -> None:
    assert parse_score(value) == parsed


@pytest.mark.parametrize(
    ("predicted", "reference", "match"),
    [
        ("8/10", "8/10", 1.0),
        ("4/5", "8/10", 1.0),
        ("6/10", "8/10", 0.8),
        ("0/10", "10/10", 0.0),
        (8, "7/10", 0.9),
        ("85", "90", 0.95),
        (0.7, 0.9, 0.8),
        (None, None, 1.0),
        (None, "8/10", 0.0),
        ("12/10", "8/10", 0.6),
    ],
)
def test_score_match(predicted: Any, reference: Any, match: float) -> None:
    assert score_match(predicted, reference) == pytest.approx(match)


def test_text_similarity_edges() -> None:
    assert text_similarity(None, "") == 1.0
    assert text_similarity("abc", None) == 0.0
    assert text_similarity("Hello  World", "hello world") == 1.0
    assert 0.0 < text_similarity("abcd", "abxy") < 1.0


# --- cue scenes ----------------------------------------------------------------------------------


def test_es_with_empathy_cue() -> None:
    text = json.dumps(
        {"Emotional State Analysis": "学生很焦虑", "Comfort & Advice": "我理解你的感受"}
    )
    score = score_edu_rule(text, make_item("ES"))
    assert score.metadata["empathy_cue"] is True
    assert score.score == 1.0  # min(1, 1 + 0.2)


def test_es_cue_lifts_a_half_empty_answer() -> None:
    text = json.dumps({"Emotional State Analysis": "You feel anxious.", "Comfort & Advice": ""})
    score = score_edu_rule(text, make_item("ES"))
    assert score.metadata["empathy_cue"] is True
    assert score.score == round((1.0 + 0.7) / 2, 4)


def test_es_without_cue() -> None:
    text = json.dumps({"Emotional State Analysis": "Anxious.", "Comfort & Advice": ""})
    score = score_edu_rule(text, make_item("ES"))
    assert score.metadata["empathy_cue"] is False
    assert score.score == 0.75


def test_ip_reasoning_cue_is_a_whole_word() -> None:
    with_cue = score_edu_rule(
        answer(Reasoning_Provided="It floats because it is light."), make_item("IP")
    )
    # "strengthen" contains "then" but is not the cue word
    without = score_edu_rule(answer(Reasoning_Provided="We strengthen it."), make_item("IP"))
    assert with_cue.metadata["reasoning_cue"] is True
    assert without.metadata["reasoning_cue"] is False
    assert with_cue.score == without.score == 1.0  # both already full; the cue is capped


def test_pcc_personalisation_cue() -> None:
    plan = {"Learning Path Planning": "先复习基础", "Personalized Recommendations": ""}
    score = score_edu_rule(json.dumps(plan, ensure_ascii=False), make_item("PCC"))
    assert score.metadata["personalisation_cue"] is True
    assert score.score == round((1.0 + 0.7) / 2, 4)
    plain = {"Learning Path Planning": "Week 1: fractions", "Personalized Recommendations": ""}
    assert score_edu_rule(json.dumps(plain), make_item("PCC")).score == 0.75


def test_pls_uses_prompt_keys_and_any_content() -> None:
    prompt = 'Reply as JSON: {"Learning Tasks": [...], "Study Tips": "..."}'
    item = make_item("PLS", prompt)
    assert required_keys("PLS", prompt) == ("Learning Tasks", "Study Tips")
    full = score_edu_rule(answer(Learning_Tasks=["read"], Study_Tips="short sessions"), item)
    assert (full.score, full.passed, full.metadata["personalisation_cue"]) == (1.0, True, False)
    half = score_edu_rule(answer(Learning_Tasks=["read"]), item)
    assert half.score == 0.75 and not half.passed


def test_pls_cue_found_anywhere_in_the_json() -> None:
    prompt = 'Reply as JSON with "Plan".'
    score = score_edu_rule(
        json.dumps({"Plan": {"goal": "pass the exam"}}), make_item("PLS", prompt)
    )
    assert score.metadata["personalisation_cue"] is True


def test_cue_lists_are_bilingual() -> None:
    for cues in (EMPATHY_CUES, REASONING_CUES, PERSONALISATION_CUES):
        assert any(c.isascii() for c in cues)
        assert any(not c.isascii() for c in cues)


# --- other scenes ----------------------------------------------------------------------------


def test_unknown_scene_takes_quoted_prompt_keys() -> None:
    prompt = '请以JSON格式输出，包含 "Summary" 和 "Key Points" 两个字段。'
    item = make_item("XYZ", prompt)
    assert required_keys("XYZ", prompt) == ("Summary", "Key Points")
    score = score_edu_rule(answer(Summary="s", Key_Points=["a"], Extra=""), item)
    # structure 1; scene = filled fraction of the answer's own keys (2 of 3)
    assert score.score == round((1.0 + 2 / 3) / 2, 4)
    assert score.passed


def test_prompt_keys_prefer_json_key_shapes() -> None:
    prompt = 'The student said "I give up". Output {"Answer": "...", "Reasoning": "..."}'
    assert prompt_keys(prompt) == ("Answer", "Reasoning")


def test_scene_without_any_keys() -> None:
    score = score_edu_rule('{"a": 1}', make_item("XYZ", "no quotes here"))
    assert score.metadata["required_keys"] == []
    assert score.score == 0.5  # structure 0 (nothing to check), scene 1
    assert not score.passed


def test_thinking_prefix_is_ignored() -> None:
    text = '<think>{"Answer": ""}</think>{"Answer": "42"}'
    assert score_edu_rule(text, make_item("Q&A")).score == 1.0
