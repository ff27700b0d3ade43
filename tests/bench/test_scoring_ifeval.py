"""Tests for the offline IFEval checker (sweepbench.bench.scoring.ifeval)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from sweepbench.bench.scoring.ifeval import (
    INSTRUCTION_IDS,
    IFEvalResult,
    build_checks,
    check_instructions,
    loose_variants,
    score_ifeval,
)
from sweepbench.bench.scoring.ifeval.text_utils import (
    count_sentences,
    count_words,
    detect_language,
    word_tokens,
)
from sweepbench.errors import DataError
from tests.bench.helpers import elbench_root

ELBENCH_ROOT = elbench_root()
IFEVAL_FILE = ELBENCH_ROOT / "通用" / "ifeval_sampled.jsonl"

ENGLISH_LOWER = "the weather is lovely today and we are going to walk in the park together."
ENGLISH_UPPER = "THE WEATHER IS LOVELY TODAY AND WE ARE GOING TO WALK IN THE PARK TOGETHER."
GERMAN = "Das Wetter ist heute sehr schön und wir gehen zusammen im Park spazieren."
CHINESE = "今天天气很好，我们一起去公园散步吧。"


def strict(response: str, instruction_id: str, kwargs: dict[str, Any] | None = None) -> bool:
    """Strict verdict of one instruction on a response."""
    return check_instructions(response, [instruction_id], [kwargs or {}]).strict[0]


# --- one passing and one failing case per instruction class ---------------------------------

# (instruction id, kwargs, a response that follows it, a response that does not)
CASES: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "keywords:existence",
        {"keywords": ["Python", "java"]},
        "I like PYTHON and JavaScript.",  # case-insensitive substring: "Java" in "JavaScript"
        "I like Python and Rust.",
    ),
    (
        "keywords:frequency",
        {"keyword": "peace", "frequency": 3, "relation": "at least"},
        "Peace now. PEACE later. peaceful forever.",  # substring: "peaceful" counts
        "Peace now. Peace later.",
    ),
    (
        "keywords:frequency",
        {"keyword": "sarah", "frequency": 2, "relation": "less than"},
        "Sarah went home.",
        "Sarah met sarah.",
    ),
    (
        "keywords:forbidden_words",
        {"forbidden_words": ["can", "ride"]},
        "Canada is riding high.",  # whole words only
        "You CAN do it.",
    ),
    (
        "keywords:letter_frequency",
        {"letter": "o", "let_frequency": 3, "let_relation": "at least"},
        "Oh no, Oscar.",
        "Oh no.",
    ),
    (
        "keywords:letter_frequency",
        {"letter": "e", "let_frequency": 1, "let_relation": "less than"},
        "A black cat.",
        "A black cat ate.",
    ),
    ("language:response_language", {"language": "de"}, GERMAN, ENGLISH_LOWER),
    (
        "length_constraints:number_sentences",
        {"num_sentences": 3, "relation": "less than"},
        "One sentence. Two sentences.",
        "One. Two. Three.",
    ),
    (
        "length_constraints:number_sentences",
        {"num_sentences": 2, "relation": "at least"},
        "Dr. Smith came. He left.",
        "Dr. Smith met Mr. Jones at 5 p.m. on Monday.",
    ),
    (
        "length_constraints:number_paragraphs",
        {"num_paragraphs": 3},
        "First part.\n***\nSecond part.\n***\nThird part.\n***\n",  # trailing divider ignored
        "First part.\n***\n***\nSecond part.\n***\nThird part.",  # empty middle paragraph
    ),
    (
        "length_constraints:number_words",
        {"num_words": 5, "relation": "at least"},
        "one two three four five",
        "one two three, four",
    ),
    (
        "length_constraints:number_words",
        {"num_words": 5, "relation": "less than"},
        "one two-three four",  # \w+ splits on the hyphen: 4 words
        "one two-three four five",
    ),
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 3, "nth_paragraph": 2, "first_word": "President"},
        "Intro.\n\n\"President's day is here.\n\nEnd.",
        "Intro.\n\nThe president spoke.\n\nEnd.",
    ),
    (
        "detectable_content:number_placeholders",
        {"num_placeholders": 2},
        "Dear [name], see you at [address].",
        "Dear [name], see you soon.",
    ),
    (
        "detectable_content:postscript",
        {"postscript_marker": "P.S."},
        "Thanks.\n\np.s. see you soon",
        "Thanks. PS see you soon",
    ),
    (
        "detectable_content:postscript",
        {"postscript_marker": "P.P.S"},
        "Thanks.\nP.S. one\nP. P. S two",
        "Thanks.\nP.S. one",
    ),
    (
        "detectable_format:number_bullet_lists",
        {"num_bullets": 2},
        "List:\n* first\n- second\n**Bold line** is not a bullet",
        "List:\n* first\n* second\n* third",
    ),
    (
        "detectable_format:constrained_response",
        {},
        "Well... My answer is maybe.",
        "My answer is: yes",
    ),
    (
        "detectable_format:number_highlighted_sections",
        {"num_highlights": 2},
        "*first* and **second** highlighted",
        "*first* and ** ** and *\nbroken*",
    ),
    (
        "detectable_format:multiple_sections",
        {"section_spliter": "SECTION", "num_sections": 2},
        "SECTION 1\nIntro.\nSECTION 2\nBody.",
        "SECTION 1\nIntro.\nSection 2\nBody.",  # case-sensitive splitter
    ),
    (
        "detectable_format:json_format",
        {},
        '```json\n{"a": [1, 2]}\n```',
        'Here is the JSON: {"a": 1}',
    ),
    ("detectable_format:title", {}, "<<Poem of Joy>>\nLa la la.", "<< >>\nPoem of Joy"),
    (
        "combination:two_responses",
        {},
        "First answer.\n******\nSecond answer.",
        "Same answer.\n******\nSame answer.",
    ),
    (
        "combination:repeat_prompt",
        {"prompt_to_repeat": "Write a haiku about moms."},
        "write a HAIKU about moms. Mother is kind...",
        "Sure! Write a haiku about moms.",
    ),
    (
        "startend:end_checker",
        {"end_phrase": "Peace!"},
        '"We are done. peace!"\n',
        "Peace! We are done.",
    ),
    ("startend:quotation", {}, '  "Wrapped text."  ', '"Not wrapped.'),
    (
        "change_case:capital_word_frequency",
        {"capital_frequency": 3, "capital_relation": "at least"},
        "I DON'T like THIS.",  # I, DO, N'T, THIS
        "I do not LIKE this.",
    ),
    (
        "change_case:capital_word_frequency",
        {"capital_frequency": 2, "capital_relation": "less than"},
        "The U.S. is big.",
        "The U.S. and UK.",
    ),
    ("change_case:english_capital", {}, ENGLISH_UPPER, ENGLISH_UPPER[:-3] + "r."),
    ("change_case:english_lowercase", {}, ENGLISH_LOWER, "The" + ENGLISH_LOWER[3:]),
    ("punctuation:no_comma", {}, "No commas here; none at all.", "One, two."),
]


@pytest.mark.parametrize(("instruction_id", "kwargs", "good", "bad"), CASES)
def test_instruction_pass_and_fail(
    instruction_id: str, kwargs: dict[str, Any], good: str, bad: str
) -> None:
    assert strict(good, instruction_id, kwargs) is True
    assert strict(bad, instruction_id, kwargs) is False


def test_every_instruction_class_has_cases() -> None:
    assert len(INSTRUCTION_IDS) == 25
    assert {case[0] for case in CASES} == INSTRUCTION_IDS


def test_language_checks_fail_non_english_text() -> None:
    assert strict(GERMAN.lower(), "change_case:english_lowercase") is False
    assert strict(GERMAN.upper(), "change_case:english_capital") is False
    assert strict("12345 67890", "language:response_language", {"language": "fr"}) is True


# --- strict versus loose ----------------------------------------------------------------------


def test_end_checker_loose_only_because_of_trailing_bold_marker() -> None:
    response = "Here is my plan.\nIs there anything else I can help with?\n**"
    result = check_instructions(
        response,
        ["startend:end_checker"],
        ['{"end_phrase": "Is there anything else I can help with?"}'],
    )
    assert result == IFEvalResult([False], [True], False, True)


def test_lowercase_loose_only_because_of_first_line() -> None:
    response = "Sure! Here it is:\n" + ENGLISH_LOWER + "\nwe will be back before dinner time."
    result = check_instructions(response, ["change_case:english_lowercase"], ["{}"])
    assert result.strict == [False]
    assert result.loose == [True]
    assert (result.prompt_strict, result.prompt_loose) == (False, True)


def test_loose_cannot_rescue_a_missing_quotation() -> None:
    response = "*Title*: <<My poem>>\nRoses are red"
    result = check_instructions(
        response,
        ["detectable_format:title", "startend:quotation"],
        [None, None],
    )
    assert result.strict == [True, False]
    assert result.loose == [True, False]
    assert result.prompt_strict is False
    assert result.prompt_loose is False


def test_loose_strips_stars_for_json() -> None:
    response = 'Sure, here is the JSON:\n{"name": "**bold**"}'
    result = check_instructions(response, ["detectable_format:json_format"], ["{}"])
    assert result == IFEvalResult([False], [True], False, True)


def test_loose_variants_are_the_eight_texts() -> None:
    variants = loose_variants("first *\nmiddle\nlast *")
    assert variants == [
        "first *\nmiddle\nlast *",
        "middle\nlast *",
        "first *\nmiddle",
        "middle",
        "first \nmiddle\nlast ",
        "middle\nlast ",
        "first \nmiddle",
        "middle",
    ]


@pytest.mark.parametrize("response", ["", "   \n\t "])
def test_blank_response_fails_everything(response: str) -> None:
    result = check_instructions(
        response,
        ["punctuation:no_comma", "keywords:forbidden_words"],
        ["{}", '{"forbidden_words": ["x"]}'],
    )
    assert result == IFEvalResult([False, False], [False, False], False, False)


def test_prompt_level_needs_every_instruction() -> None:
    result = check_instructions(
        "all lowercase, with a comma, in english for the whole of this little text here.",
        ["change_case:english_lowercase", "punctuation:no_comma"],
        ["{}", "{}"],
    )
    assert result.strict == [True, False]
    assert result.prompt_strict is False


# --- kwargs handling and errors ---------------------------------------------------------------


def test_json_string_kwargs_with_nulls_are_dropped() -> None:
    kwargs = '{"num_words": 3, "relation": "at least", "keyword": null, "language": null}'
    assert check_instructions("a b c", ["length_constraints:number_words"], [kwargs]).strict == [
        True
    ]


def test_repeat_prompt_falls_back_to_prompt() -> None:
    result = check_instructions(
        "Tell me a joke. Why did the chicken cross the road?",
        ["combination:repeat_prompt"],
        ["{}"],
        prompt="Tell me a joke.",
    )
    assert result.strict == [True]


@pytest.mark.parametrize(
    ("instruction_ids", "kwargs", "message"),
    [
        (["keywords:nonsense"], ["{}"], "keywords:nonsense"),
        (["punctuation:no_comma"], ['{"num_words": 3}'], "num_words"),
        (["length_constraints:number_words"], ['{"relation": "at least"}'], "num_words"),
        (
            ["length_constraints:number_words"],
            ['{"num_words": 3, "relation": "at most"}'],
            "relation",
        ),
        (["keywords:letter_frequency"], [{"letter": "ab", "let_frequency": 1}], "letter"),
        (["keywords:existence"], [{"keywords": "cat"}], "keywords"),
        (["detectable_format:number_bullet_lists"], [{"num_bullets": True}], "num_bullets"),
        (["detectable_format:number_bullet_lists"], [{"num_bullets": -1}], "num_bullets"),
        (["punctuation:no_comma"], ["{not json"], "punctuation:no_comma"),
        (["punctuation:no_comma"], ["[1, 2]"], "punctuation:no_comma"),
        (["punctuation:no_comma", "startend:quotation"], ["{}"], "2 instruction ids"),
        (["combination:repeat_prompt"], ["{}"], "prompt_to_repeat"),
        (
            ["length_constraints:nth_paragraph_first_word"],
            [{"num_paragraphs": 2, "nth_paragraph": 3, "first_word": "a"}],
            "nth_paragraph",
        ),
    ],
)
def test_bad_items_raise_data_error(
    instruction_ids: list[str], kwargs: list[Any], message: str
) -> None:
    with pytest.raises(DataError, match=message):
        check_instructions("some response", instruction_ids, kwargs)


# --- score ------------------------------------------------------------------------------------


def test_score_pass_and_metadata() -> None:
    score = score_ifeval(
        "no commas here at all",
        ["punctuation:no_comma", "length_constraints:number_words"],
        ["{}", '{"num_words": 3, "relation": "at least"}'],
    )
    assert (score.score, score.result, score.passed) == (1.0, "pass", True)
    assert dict(score.metadata) == {
        "instruction_strict": [True, True],
        "instruction_loose": [True, True],
        "prompt_loose": True,
        "instruction_ids": ["punctuation:no_comma", "length_constraints:number_words"],
    }


def test_score_fail_keeps_loose_pass() -> None:
    score = score_ifeval(
        "Here you go:\n" + ENGLISH_LOWER,
        ["change_case:english_lowercase"],
        ["{}"],
    )
    assert (score.score, score.result, score.passed) == (0.0, "fail", False)
    assert score.metadata["instruction_strict"] == [False]
    assert score.metadata["instruction_loose"] == [True]
    assert score.metadata["prompt_loose"] is True
    assert "change_case:english_lowercase" in score.reason


# --- text helpers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "language"),
    [(ENGLISH_LOWER, "en"), (GERMAN, "de"), (CHINESE, "zh-cn")],
)
def test_detect_language_short_texts(text: str, language: str) -> None:
    assert detect_language(text) == language


def test_detect_language_is_deterministic_and_chinese_matches_zh() -> None:
    results = {detect_language("Bonjour tout le monde, comment allez-vous ?") for _ in range(5)}
    assert results == {"fr"}
    assert strict(CHINESE, "language:response_language", {"language": "zh"}) is True
    assert detect_language("1234 !!!") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Dr. Smith went to Washington. He arrived at 5 p.m. on Monday.", 2),
        # Punkt's English model does not know "e.g." before a lower-case word: it splits there,
        # and IFEval's counts (nltk's punkt) do too
        ("The U.S. economy grew by 2.5% in 2023. Mr. and Mrs. Jones agreed, e.g. on taxes.", 3),
        ("Is it done? Yes! It is done.", 3),
        ("Title without a stop\n\n* bullet one\n* bullet two", 1),
        ("", 0),
    ],
)
def test_count_sentences(text: str, expected: int) -> None:
    assert count_sentences(text) == expected


def test_count_words_and_tokens() -> None:
    # Hello, world, It, s, a, well, known, fact_1
    assert count_words("Hello, world! It's a well-known fact_1.") == 8
    assert word_tokens("I DON'T know (NASA's) U.S. well-KNOWN HELLO,WORLD") == [
        "I",
        "DO",
        "N'T",
        "know",
        "NASA",
        "'s",
        "U.S.",
        "well-KNOWN",
        "HELLO",
        "WORLD",
    ]


def test_module_never_imports_nltk() -> None:
    code = (
        "import sys\n"
        "from sweepbench.bench.scoring.ifeval import check_instructions\n"
        "r = check_instructions('hello there. you are nice.', "
        "['language:response_language', 'length_constraints:number_sentences', "
        "'change_case:capital_word_frequency'], "
        "[{'language': 'en'}, {'num_sentences': 2, 'relation': 'at least'}, "
        "{'capital_frequency': 1, 'capital_relation': 'less than'}])\n"
        "assert r.prompt_strict, r\n"
        "print('nltk' in sys.modules)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert completed.stdout.strip() == "False"


# --- ELBench data -----------------------------------------------------------------------------


def load_ifeval_items() -> list[dict[str, Any]]:
    """The ELBench IFEval items, or skip when the reference data is absent."""
    if not IFEVAL_FILE.is_file():
        pytest.skip(f"ELBench data not found at {IFEVAL_FILE}")
    lines = IFEVAL_FILE.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_elbench_items_build() -> None:
    items = load_ifeval_items()
    assert len(items) == 200
    used: set[str] = set()
    for item in items:
        metadata = item["metadata"]
        assert isinstance(metadata["prompt"], str)
        assert all(isinstance(entry, str) for entry in metadata["kwargs"])
        checks = build_checks(
            metadata["instruction_id_list"], metadata["kwargs"], metadata["prompt"]
        )
        assert len(checks) == len(metadata["instruction_id_list"])
        used.update(metadata["instruction_id_list"])
    assert len(used) == 24
    assert used < INSTRUCTION_IDS


def test_elbench_items_score_the_prompt_as_response() -> None:
    items = load_ifeval_items()
    for item in items[:40]:
        metadata = item["metadata"]
        score = score_ifeval(
            metadata["prompt"],
            metadata["instruction_id_list"],
            metadata["kwargs"],
            metadata["prompt"],
        )
        assert score.result in {"pass", "fail"}
        assert len(score.metadata["instruction_strict"]) == len(metadata["instruction_id_list"])


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Wow!!! Amazing.", 2),  # Punkt splits after "!!!" followed by a capital
        ("Dr. Smith went home. He was tired.", 2),
        ("The U.S. is big. OK.", 2),
        ("I like it... Do you?", 1),
    ],
)
def test_sentences_are_split_as_nltk_punkt_does(text: str, count: int) -> None:
    assert count_sentences(text) == count
