"""Generic scorers: exact, normalised, regex and numeric."""

from __future__ import annotations

import pytest

from sweepbench.bench.scoring.text import (
    last_number,
    normalise_text,
    score_exact,
    score_normalised,
    score_numeric,
    score_regex,
)
from sweepbench.errors import DataError


def test_exact_strips_only() -> None:
    assert score_exact("  Paris \n", "Paris").passed
    assert not score_exact("paris", "Paris").passed
    assert not score_exact("Paris.", "Paris").passed


def test_exact_accepts_any_of_a_list() -> None:
    result = score_exact("Lyon", ["Paris", "Lyon"])
    assert result.passed and result.metadata["reference"] == ["Paris", "Lyon"]
    assert not score_exact("Nice", ("Paris", "Lyon")).passed


def test_exact_empty_response_is_a_format_failure() -> None:
    result = score_exact("   ", "Paris")
    assert not result.passed and result.format_valid is False


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ('  Answer: "Paris".  ', "paris"),
        ("ＰＡＲＩＳ！", "paris"),
        ("Final answer:   New\n\tYork", "new york"),
        ("«Straße»", "strasse"),
        ("(a)", "a"),
        ("answers are many", "answers are many"),
    ],
)
def test_normalise_text(raw: str, normalised: str) -> None:
    assert normalise_text(raw) == normalised


def test_normalised_scorer() -> None:
    assert score_normalised("ANSWER: new  YORK!", "New York").passed
    assert score_normalised("“東京”", ["Tokyo", "東京"]).passed
    assert not score_normalised("New Jersey", "New York").passed


def test_regex_found_and_group_compared() -> None:
    assert score_regex("the code is 4711", r"\d{4}").passed
    missing = score_regex("no digits", r"\d{4}")
    assert not missing.passed and missing.format_valid is False

    grouped = score_regex("Result = Blue!", r"Result\s*=\s*(\w+)", "blue")
    assert grouped.passed and grouped.metadata["extracted"] == "Blue"
    assert not score_regex("Result = Red", r"Result\s*=\s*(\w+)", "blue").passed


def test_regex_invalid_pattern_names_it() -> None:
    with pytest.raises(DataError, match=r"\(unclosed"):
        score_regex("x", "(unclosed")


@pytest.mark.parametrize(
    ("text", "value", "percent"),
    [
        ("The total is 1,234.5 units", 1234.5, False),
        ("it falls to -3", -3.0, False),
        ("about 1e3 people", 1000.0, False),
        ("roughly 50%", 50.0, True),
        ("costs $12.", 12.0, False),
        ("a loss of -$7", -7.0, False),
        ("between 3-5", 5.0, False),
        ("x = .25", 0.25, False),
        ("first 10 then 20", 20.0, False),
        ("ｎ＝４２", 42.0, False),
    ],
)
def test_last_number(text: str, value: float, percent: bool) -> None:
    found = last_number(text)
    assert found is not None
    assert found.value == pytest.approx(value)
    assert found.percent is percent


def test_numeric_tolerance_absolute_and_relative() -> None:
    assert score_numeric("It is 3.1415926", "3.14159265", tolerance=1e-6).passed
    assert not score_numeric("It is 3.14", "3.14159265").passed
    assert score_numeric("1,000,500", 1_000_000, tolerance=1e-3, relative=True).passed
    assert not score_numeric("1,002,000", 1_000_000, tolerance=1e-3, relative=True).passed
    assert score_numeric("The answer: 42", 42).passed


def test_numeric_percent_and_currency() -> None:
    assert score_numeric("That is 50%", "0.5").passed
    assert score_numeric("That is 0.5", "50%").passed
    assert score_numeric("That is 50%", "50%").passed
    assert score_numeric("Total: $12", "12").passed


def test_numeric_no_number_is_a_format_failure() -> None:
    result = score_numeric("I do not know", "7")
    assert not result.passed and result.format_valid is False
    assert result.metadata["extracted"] is None


@pytest.mark.parametrize("reference", ["seven", "", "12 apples", True])
def test_numeric_unparsable_reference_is_a_data_error(reference: object) -> None:
    with pytest.raises(DataError):
        score_numeric("7", reference)  # type: ignore[arg-type]
