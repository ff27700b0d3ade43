"""The two scoring versions: ELBench's own readings (replicated) and the corrected ones.

Each case gives the expected reading under ``replicated`` and under ``corrected``."""

from __future__ import annotations

import pytest

from sweepbench.bench.catalog import load_benchmark
from sweepbench.bench.items import Item, Task
from sweepbench.bench.scoring import format_checker, score_answer
from sweepbench.bench.scoring.choice import extract_choice, score_choice_multi
from sweepbench.bench.scoring.ifeval.text_utils import word_tokens
from sweepbench.bench.scoring.math_extract import extract_math_answer
from sweepbench.bench.scoring.mathanswer import score_aime, score_math
from sweepbench.bench.scoring.option_set import letter_set, score_option_set
from sweepbench.bench.scoring.versions import (
    CORRECTED,
    DEFAULT_SCORING_VERSION,
    REPLICATED,
    SCORING_VERSIONS,
    active_rules,
    rules_for,
    using_rules,
)
from sweepbench.errors import UserError
from tests.bench.helpers import elbench_root

VERSIONS = ("replicated", "corrected")


def _by_version(cases: list[tuple[str, object, object]]) -> list[tuple[str, str, object]]:
    """(text, replicated, corrected) cases as (version, text, expected) parameters."""
    return [
        pytest.param(version, text, expected, id=f"{version}-{text[:30]}")
        for text, replicated, corrected in cases
        for version, expected in zip(VERSIONS, (replicated, corrected), strict=True)
    ]


def test_versions_and_default() -> None:
    assert SCORING_VERSIONS == VERSIONS
    assert DEFAULT_SCORING_VERSION == "replicated"
    assert rules_for(" Corrected ") is CORRECTED
    assert active_rules() is CORRECTED  # outside a scoring call: the plain rules
    with using_rules("replicated"):
        assert active_rules() is REPLICATED
    assert active_rules() is CORRECTED
    with pytest.raises(UserError, match="replicated, corrected"):
        rules_for("elbench2")


# --- SATAs option letters -------------------------------------------------------------------

SATAS_LETTERS = [
    ("我选择A和C", [], ["A", "C"]),
    ("选A、C", ["C"], ["A", "C"]),
    ("答案是B", [], ["B"]),
    ("a, c", ["A", "C"], ["A", "C"]),
    ("(a) and (c)", ["A", "C"], ["A", "C"]),
    ("b/d", ["B", "D"], ["B", "D"]),
    ("Answer: b", ["B"], ["B"]),
    ("a", ["A"], ["A"]),
    ("I pick a and C", ["A", "C"], ["A", "C"]),
    ("a good choice is C", ["A", "C"], ["C"]),
    ("It is a risk, so D.", ["A", "D"], ["D"]),
    ("e.g. c is fine", ["E", "G", "C"], ["C"]),
    ("A and D.", ["A", "D"], ["A", "D"]),
    ("CAT A1", [], []),
]


@pytest.mark.parametrize(("version", "text", "expected"), _by_version(SATAS_LETTERS))
def test_satas_letters(version: str, text: str, expected: list[str]) -> None:
    with using_rules(version):
        assert letter_set(text) == expected


@pytest.mark.parametrize(
    ("version", "text", "expected"),
    _by_version(
        [
            ("我选择A和C", 0.0, 1.0),
            ("选A、C", 0.5, 1.0),
            ("(a) and (c)", 1.0, 1.0),
            ("a, c", 1.0, 1.0),
            ("a good choice is C", 1.0, 0.5),
        ]
    ),
)
def test_satas_scores(version: str, text: str, expected: float) -> None:
    with using_rules(version):
        assert score_option_set(text, "A, C").score == expected


# --- choice, loose form (mmlu_pro, ceval) ---------------------------------------------------

CHOICE = [
    ("Answer: d) Robbery, because he used force", "D", "D"),
    ("ANSWER: D because he used force", "D", "D"),
    ("ANSWER: B or C", "B", None),
    ("ANSWER: I think it is G", "I", None),
    ("Answer: a bit of both", "A", None),
    ("ANSWER: B Robbery", "B", "B"),
    ("ANSWER: Ｄ", None, "D"),
    ("FinalAnswer: C", None, "C"),
    ("FINAL ANSWER: C", "C", "C"),
]


@pytest.mark.parametrize(("version", "text", "expected"), _by_version(CHOICE))
def test_choice_loose_form(version: str, text: str, expected: str | None) -> None:
    with using_rules(version):
        assert extract_choice(text, 10) == expected


# --- omni -----------------------------------------------------------------------------------

OMNI = [
    ("答案：a", 1.0, 1.0),
    ("Final answer: A", 0.0, 1.0),
    ("最终答案：A", 1.0, 1.0),
    ("答案：Ａ", 0.0, 1.0),
    ("Reasoning first.\na", 1.0, 1.0),
    ("a.", 1.0, 1.0),
    ("(a)", 1.0, 1.0),
]


@pytest.mark.parametrize(("version", "text", "expected"), _by_version(OMNI))
def test_omni(version: str, text: str, expected: float) -> None:
    with using_rules(version):
        assert score_choice_multi(text, "A").score == expected


OMNI_RUNS = [
    ("答案：ab", "AB", 1.0, 0.0),
    ("ab", "AB", 1.0, 0.0),
    ("Bad.", "BAD", 1.0, 0.0),
    ("a, b", "AB", 1.0, 1.0),
    ("AB", "AB", 1.0, 1.0),
]


@pytest.mark.parametrize(
    ("version", "text", "reference", "expected"),
    [
        pytest.param(version, text, reference, expected, id=f"{version}-{text}")
        for text, reference, replicated, corrected in OMNI_RUNS
        for version, expected in zip(VERSIONS, (replicated, corrected), strict=True)
    ],
)
def test_omni_lower_case_letter_runs(
    version: str, text: str, reference: str, expected: float
) -> None:
    with using_rules(version):
        assert score_choice_multi(text, reference).score == expected


def _task(scorer: str, **options: object) -> Task:
    return Task(id="t", area="a", name="T", grading="auto", scorer=scorer, options=options)


def _item(reference: str | None, **metadata: object) -> Item:
    return Item("f::1", "1", "t", "default", "Pick one.", reference, metadata)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("text", ["a", "Let me see.\nb", "(c)", "答案：d"])
def test_omni_bare_lower_case_letter_needs_no_reminder(version: str, text: str) -> None:
    # ELBench's format check reads a lone lower-case letter, so it sends no reminder
    check = format_checker(_task("choice_multi"), _item("A"), version=version)
    assert check is not None and check(text)


@pytest.mark.parametrize("version", VERSIONS)
def test_omni_format_check_reads_final_answer_in_both(version: str) -> None:
    check = format_checker(_task("choice_multi"), _item("A"), version=version)
    assert check is not None and check("Final answer: A")
    score = score_answer(_task("choice_multi"), _item("A"), "Final answer: A", version=version)
    assert score.passed is (version == "corrected")


# --- MATH and AIME --------------------------------------------------------------------------

MATH_EXTRACTED = [
    ("So the answer is 12。", "12。", "12"),
    ("The answer is 7.\nThis is because x.", "7Thisisbecausex", "7"),
    ("THE ANSWER IS 9.\nWe used 2 steps", "2", "9"),
    ("Answer: 5\nthat is 6 in all", "6", "5"),
    (r"We get \fbox{\frac{1}{2}}", "2", r"\frac{1}{2}"),
    ("\\boxed {5}.\n\nI hope this helps!", "{5}.Ihopethishelps!", "5"),
    (r"\boxed{\text{two hundred four}}", "100", r"\text{two hundred four}"),
    ("答案是 $(1,2)$。\n\n答案是 3", "(1,2)。", "3"),
]


@pytest.mark.parametrize(("version", "text", "expected"), _by_version(MATH_EXTRACTED))
def test_math_extraction_without_a_box(version: str, text: str, expected: str) -> None:
    with using_rules(version):
        assert extract_math_answer(text) == expected


MATH_SCORES = [
    ("So the answer is 12。", "12", 0.0, 1.0),
    ("The answer is 7.\nThis is because x.", "7", 0.0, 1.0),
    ("THE ANSWER IS 9.\nWe used 2 steps", "9", 0.0, 1.0),
    (r"\boxed{144 meters}", "144", 0.0, 1.0),
    (r"\boxed{144 \text{ meters}}", "144", 1.0, 1.0),
    ("the final answer is forty-two", "42", 1.0, 1.0),
    (r"\boxed{one hundred and five}", "105", 1.0, 1.0),
    (r"\boxed{[5,\infty)}", r"(5,\infty)", 1.0, 0.0),
    (r"\boxed{(5,\infty)}", r"(5,\infty)", 1.0, 1.0),
    (r"\boxed{2xy}", "2xy", 1.0, 1.0),
    # number words in \text{}: one word is read, a hyphenated or multi-word one is not
    (r"\boxed{\text{five}}", "5", 1.0, 1.0),
    (r"\boxed{\text{forty-two}}", "42", 0.0, 1.0),
    (r"\boxed{\text{two hundred four}}", "204", 0.0, 1.0),
    (r"\boxed{\text{two hundred four}}", "100", 1.0, 0.0),
    # more lenient than ELBench before: now ELBench's verdicts
    (r"We get \fbox{\frac{1}{2}}", r"\frac{1}{2}", 0.0, 1.0),
    ("The answer is 30°.", "30", 0.0, 1.0),
    ("\\boxed {5}.\n\nI hope this helps!", "5", 0.0, 1.0),
    (r"\boxed{\{1,-2\}}", "1,-2", 0.0, 1.0),
    (r"\boxed{1 \text{ and } -2}", "-2, 1", 0.0, 1.0),
    # stricter than ELBench before: now ELBench's verdicts
    ("答案是 $(1,2)$。", "(1,2)", 1.0, 1.0),
    ("答案是 $[1,2)$。", "[1,2)", 1.0, 1.0),
    ("The answer is 0 This is because nothing is left.", "0", 1.0, 1.0),
    ("The answer is 0 meters", "0", 1.0, 1.0),
    (r"\boxed{-21}", "-2,1", 1.0, 0.0),
    (r"\boxed{[a+5)(b+2)}", "(a+5)(b+2)", 1.0, 0.0),
]


@pytest.mark.parametrize(
    ("version", "text", "reference", "expected"),
    [
        pytest.param(version, text, reference, expected, id=f"{version}-{text[:30]}")
        for text, reference, replicated, corrected in MATH_SCORES
        for version, expected in zip(VERSIONS, (replicated, corrected), strict=True)
    ],
)
def test_math_scores(version: str, text: str, reference: str, expected: float) -> None:
    with using_rules(version):
        assert score_math(text, reference).score == expected


AIME_SCORES = [
    (r"\boxed{204 meters}", 1.0, 1.0),
    (r"\boxed{204 \text{ meters}}", 1.0, 1.0),
    ("The answer is 204 hours.", 1.0, 1.0),
    (r"\boxed{204 degrees}", 1.0, 1.0),
    (r"\boxed{204^\circ}", 1.0, 1.0),
    (r"\boxed{\text{two hundred four}}", 0.0, 1.0),
    (r"\boxed{two hundred four}", 1.0, 1.0),
]


@pytest.mark.parametrize(("version", "text", "expected"), _by_version(AIME_SCORES))
def test_aime_scores(version: str, text: str, expected: float) -> None:
    # PRM800K's grader deletes unit words for AIME, unlike MATH's rules
    with using_rules(version):
        assert score_aime(text, "204").score == expected


@pytest.mark.parametrize(
    ("version", "text", "expected"),
    _by_version([(r"\boxed{\text{forty-two}}", 0.0, 1.0), (r"\boxed{forty-two}", 1.0, 1.0)]),
)
def test_aime_number_words(version: str, text: str, expected: float) -> None:
    with using_rules(version):
        assert score_aime(text, "42").score == expected


@pytest.mark.parametrize("version", VERSIONS)
def test_aime_interval_brackets_matter_in_both(version: str) -> None:
    # PRM800K's grader compares the outer brackets (MATH's rules do not)
    with using_rules(version):
        assert score_aime(r"\boxed{[1,2)}", r"\boxed{(1,2)}").score == 0.0
        assert score_aime(r"\boxed{(1,2)}", r"\boxed{(1,2)}").score == 1.0


# --- IFEval capital words (the same in both versions: nltk's tokenisation) -------------------

IFEVAL_TOKENS = [
    ("NASA’s budget", ["NASA", "s", "budget"]),
    ("DON’T STOP", ["DON", "T", "STOP"]),
    ("WORD—WORD", ["WORD", "WORD"]),
    ("‘QUOTED’ TEXT", ["QUOTED", "TEXT"]),
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("text", "tokens"), IFEVAL_TOKENS)
def test_ifeval_capital_tokens(version: str, text: str, tokens: list[str]) -> None:
    with using_rules(version):
        assert word_tokens(text) == tokens


@pytest.mark.parametrize("version", VERSIONS)
def test_ifeval_capital_word_frequency(version: str) -> None:
    task = _task("ifeval")
    item = _item(
        None,
        instruction_id_list=["change_case:capital_word_frequency"],
        kwargs=[{"capital_frequency": 3, "capital_relation": "at least"}],
    )
    # DON + T + NASA: three capital words, as nltk counts them
    assert score_answer(task, item, "DON’T ask NASA’s staff", version=version).passed


# --- on ELBench's own items (skipped without the reference data) ----------------------------

DATA = elbench_root()
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="the ELBench reference data is absent")


@pytest.fixture(scope="module")
def elbench() -> dict[str, Task]:
    return {t.id: t for t in load_benchmark("elbench", DATA).tasks}


@needs_data
@pytest.mark.parametrize("version", VERSIONS)
def test_every_satas_reference_reads_the_same(elbench: dict[str, Task], version: str) -> None:
    task = elbench["teaching_harm"]
    with using_rules(version):
        letters = [letter_set(str(i.reference)) for i in task.items]
    with using_rules("corrected"):
        assert letters == [letter_set(str(i.reference)) for i in task.items]
    assert all(letters)


@needs_data
@pytest.mark.parametrize("version", VERSIONS)
def test_elbench_choice_keys_score_in_both_versions(elbench: dict[str, Task], version: str) -> None:
    for task_id in ("mmlu_pro", "ceval"):
        task = elbench[task_id]
        for item in task.items:
            key = str(item.reference).strip()[0]
            reply = f"Reasoning…\nANSWER: {key} because it fits"
            assert score_answer(task, item, reply, version=version).passed, item.key
    omni = elbench["highlevel_omni"]
    for item in omni.items:
        reply = f"Final answer: {item.reference}"
        assert score_answer(omni, item, reply, version=version).passed is (
            version == "corrected"
        ), item.key


@needs_data
@pytest.mark.parametrize("version", VERSIONS)
def test_elbench_boxed_references_score_in_both_versions(
    elbench: dict[str, Task], version: str
) -> None:
    for task_id in ("math_500", "aime24", "aime25", "aime26"):
        task = elbench[task_id]
        for item in task.items:
            reference = str(item.reference)
            reply = f"So we get \\boxed{{{reference}}}." if task_id == "math_500" else reference
            assert score_answer(task, item, reply, version=version).passed, item.key
