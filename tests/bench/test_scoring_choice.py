"""Multiple-choice extraction (mmlu_pro, ceval, highlevel_omni) and SATAs option sets."""

from __future__ import annotations

import json

import pytest

from sweepbench.bench.scoring.choice import (
    EN_PREFIXES,
    ZH_PREFIXES,
    extract_choice,
    extract_choices,
    normalise_choice_line,
    score_choice,
    score_choice_multi,
)
from sweepbench.bench.scoring.option_set import letter_set, score_option_set
from sweepbench.errors import DataError
from tests.bench.helpers import elbench_root

DATA = elbench_root()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Reasoning…\n**ANSWER: B**", "B"),
        ("Answer：（C）", "C"),
        ("ANSWER: B) Robbery, because he used force in leaving with the purse.", "B"),
        ("ANSWER: B. Robbery", "B"),
        ("ANSWER: B Robbery", "B"),
        ("Let me think.\nC", "C"),
        ("Thinking\n(D).", "D"),
        ("ＡＮＳＷＥＲ：Ｂ", "B"),
        ("FINAL ANSWER: [e]", "E"),
        ("final answer - j", "J"),
        ("> ## Answer: `H`!", "H"),
        ("ANSWER: A\nI am confident.\nThat is all.", "A"),
    ],
)
def test_extract_choice_accepts_the_documented_forms(text: str, expected: str) -> None:
    assert extract_choice(text, 10) == expected


@pytest.mark.parametrize(
    "text",
    [
        "ANSWER: K",  # outside the ten valid letters
        "ANSWER: B\nline two\nline three\nline four",  # only in the 4th-last line
        "The answer is B",  # no accepted prefix form
        "ANSWER: I think it is B",  # a lower-case word after the letter is prose, not a form
        "",
        "   \n  ",
        "I pick B because it is right",
    ],
)
def test_extract_choice_rejects(text: str) -> None:
    assert extract_choice(text, 10) is None


def test_valid_letters_follow_the_number_of_choices() -> None:
    assert extract_choice("ANSWER: E", 4) is None
    assert extract_choice("ANSWER: E", 5) == "E"
    assert extract_choice("E", 4) is None


def test_impossible_number_of_choices_is_a_data_error() -> None:
    with pytest.raises(DataError, match="0"):
        extract_choice("ANSWER: A", 0)


def test_chinese_prefixes_only_when_asked() -> None:
    text = "分析略。\n最终答案：D。"
    assert extract_choice(text, 4, EN_PREFIXES) is None
    assert extract_choice(text, 4, ZH_PREFIXES) == "D"
    assert extract_choice("答案：【B】", 4, ZH_PREFIXES) == "B"


def test_last_matching_line_wins() -> None:
    assert extract_choice("ANSWER: A\nWait, no.\nANSWER: C", 4) == "C"


def test_normalise_choice_line() -> None:
    assert normalise_choice_line("  **ＡＮＳＷＥＲ：（Ｂ）。**  ") == "ANSWER:(B)."
    assert normalise_choice_line("a\t-  b") == "a : b"  # a dash between words separates
    assert normalise_choice_line("- a -b") == "a b"  # a bullet or a hyphen is markdown


def test_score_choice_pass_fail_and_format() -> None:
    passed = score_choice("So...\nANSWER: B", "b) something", choices=4)
    assert (passed.score, passed.result, passed.passed) == (1.0, "pass", True)
    assert passed.metadata["predicted"] == "B"
    assert passed.metadata["expected"] == "B"
    assert passed.format_valid

    failed = score_choice("ANSWER: C", "B", choices=4)
    assert (failed.score, failed.result, failed.passed, failed.format_valid) == (
        0.0,
        "fail",
        False,
        True,
    )

    missing = score_choice("no idea", "B", choices=4)
    assert missing.score == 0.0 and not missing.passed
    assert missing.format_valid is False
    assert missing.metadata["predicted"] is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("答案：AC", "AC"),
        ("答案：A,C", "AC"),
        ("答案：A/C", "AC"),
        ("答案：A、C", "AC"),
        ("答案：C, A, C", "CA"),
        ("答案：B", "B"),
        ("ANSWER: (D)", "D"),
        ("分析……\nB", "B"),
        ("分析……\nA C", "AC"),
    ],
)
def test_extract_choices_multi(text: str, expected: str) -> None:
    assert extract_choices(text) == expected


def test_extract_choices_rejects_words_and_invalid_letters() -> None:
    assert extract_choices("Bad.") is None
    assert extract_choices("答案：E") is None
    assert extract_choices("答案：A\n一\n二\n三") is None


def test_score_choice_multi_needs_exact_letters() -> None:
    assert score_choice_multi("答案：B", "B").passed
    assert not score_choice_multi("答案：AB", "B").passed
    assert score_choice_multi("答案：A,C", "AC").passed
    assert not score_choice_multi("答案：C,A", "AC").passed
    empty = score_choice_multi("", "A")
    assert not empty.passed and empty.format_valid is False


def test_omni_items_score_their_own_answers() -> None:
    path = DATA / "高阶育人" / "omni" / "高阶育人-omni.jsonl"
    if not path.exists():
        pytest.skip("ELBench data not present")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    assert len(rows) == 500
    for row in rows:
        answer = row["answer"]
        assert score_choice_multi(f"分析略。\n答案：{answer}", answer).passed
        wrong = "A" if answer != "A" else "B"
        assert not score_choice_multi(f"答案：{wrong}", answer).passed


# --- SATAs option sets --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "letters"),
    [
        ("A, C", ["A", "C"]),
        ("B,D", ["B", "D"]),
        ("A", ["A"]),
        ("I choose (C) and (A), then C again.", ["C", "A"]),
        ("选A和E", ["A", "E"]),
        ("CAT B2 H G", ["G"]),
        ("A good teacher picks B.", ["A", "B"]),  # the documented article quirk (§20 #11)
        ("", []),
    ],
)
def test_letter_set(text: str, letters: list[str]) -> None:
    assert letter_set(text) == letters


def test_option_set_scores() -> None:
    exact = score_option_set("The answer is B and D", "B,D")
    assert (exact.score, exact.result, exact.passed) == (1.0, "pass", True)

    subset = score_option_set("Only C.", "A, C, E")
    assert (subset.score, subset.result, subset.passed) == (0.5, "fail", False)
    assert subset.metadata == {"predicted": ["C"], "expected": ["A", "C", "E"]}

    wrong = score_option_set("C and D", "A, C")
    assert (wrong.score, wrong.passed) == (0.0, False)

    article = score_option_set("A careful reply: B", "B")
    assert article.score == 0.0
    assert article.metadata["predicted"] == ["A", "B"]

    nothing = score_option_set("no letters here", "A")
    assert nothing.score == 0.0 and nothing.format_valid is False


@pytest.mark.parametrize(
    ("text", "prefixes", "expected"),
    [
        ("ANSWER: B - robbery", EN_PREFIXES, "B"),
        ("ANSWER: **B** - robbery", EN_PREFIXES, "B"),
        ("答案：B（抢劫罪）", ZH_PREFIXES, "B"),
        ("ANSWER: B; robbery", EN_PREFIXES, "B"),
        ("ANSWER: A-ish", EN_PREFIXES, None),
    ],
)
def test_loose_form_separators(text: str, prefixes: tuple[str, ...], expected: str | None) -> None:
    assert extract_choice(text, 10, prefixes) == expected
