"""The 25 IFEval instruction checks and their registry.

Each instruction id maps to an :class:`InstructionSpec`: the kwargs it takes and a builder that
turns validated kwargs into a check ``str -> bool``. The semantics follow Google's reference
implementation (``instruction_following_eval``): relations are "less than" (count < n) and
"at least" (count >= n), keywords match case-insensitively as substrings, forbidden words as
whole words, paragraphs are split on ``***`` (or blank lines for ``nth_paragraph_first_word``),
and a failed language detection counts as followed."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sweepbench.bench.scoring.ifeval.kwargs import RELATIONS, KwargSpec
from sweepbench.bench.scoring.ifeval.text_utils import (
    count_sentences,
    count_words,
    detect_language,
    language_matches,
    word_tokens,
)
from sweepbench.errors import DataError

Check = Callable[[str], bool]
"""A built instruction: True when the response follows it."""

CONSTRAINED_RESPONSE_OPTIONS = ("My answer is yes.", "My answer is no.", "My answer is maybe.")
TWO_RESPONSES_SEPARATOR = "******"
_FIRST_WORD_STOP_CHARACTERS = frozenset(".,?!'\"")
_JSON_FENCE_PREFIXES = ("```json", "```Json", "```JSON", "```")


@dataclass(frozen=True)
class InstructionSpec:
    """One supported instruction: its id, the kwargs it takes and how to build its check."""

    instruction_id: str
    kwargs: tuple[KwargSpec, ...]
    build: Callable[[Mapping[str, Any]], Check]


def compare(count: int, threshold: int, relation: str) -> bool:
    """Apply an IFEval relation: "less than" is ``count < threshold``, "at least" ``>=``."""
    if relation == RELATIONS[0]:
        return count < threshold
    return count >= threshold


# --- keywords -------------------------------------------------------------------------------


def _build_keywords_existence(args: Mapping[str, Any]) -> Check:
    """Every keyword must occur (case-insensitive substring match)."""
    patterns = [re.compile(re.escape(word), re.IGNORECASE) for word in args["keywords"]]
    return lambda response: all(pattern.search(response) for pattern in patterns)


def _build_keywords_frequency(args: Mapping[str, Any]) -> Check:
    """The keyword's case-insensitive substring occurrences compared with ``frequency``."""
    pattern = re.compile(re.escape(args["keyword"].strip()), re.IGNORECASE)
    return lambda response: compare(
        len(pattern.findall(response)), args["frequency"], args["relation"]
    )


def _build_forbidden_words(args: Mapping[str, Any]) -> Check:
    """No forbidden word may occur as a whole word (case-insensitive)."""
    patterns = [
        re.compile(r"\b" + re.escape(word) + r"\b", re.IGNORECASE)
        for word in sorted(set(args["forbidden_words"]))
    ]
    return lambda response: not any(pattern.search(response) for pattern in patterns)


def _build_letter_frequency(args: Mapping[str, Any]) -> Check:
    """The letter's case-insensitive count compared with ``let_frequency``."""
    letter = args["letter"].lower()
    return lambda response: compare(
        Counter(response.lower())[letter], args["let_frequency"], args["let_relation"]
    )


# --- language and case ----------------------------------------------------------------------


def _build_response_language(args: Mapping[str, Any]) -> Check:
    """The whole response must be detected as ``language`` (undecidable text passes)."""
    language = args["language"].strip()

    def check(response: str) -> bool:
        detected = detect_language(response)
        return detected is None or language_matches(detected, language)

    return check


def _is_english(response: str) -> bool:
    """Whether langdetect calls the text English (undecidable text counts as English)."""
    detected = detect_language(response)
    return detected is None or detected == "en"


def _build_english_capital(args: Mapping[str, Any]) -> Check:
    """The response must be all capitals and English."""
    return lambda response: response.isupper() and _is_english(response)


def _build_english_lowercase(args: Mapping[str, Any]) -> Check:
    """The response must be all lowercase and English."""
    return lambda response: response.islower() and _is_english(response)


def _build_capital_word_frequency(args: Mapping[str, Any]) -> Check:
    """The number of all-capital tokens compared with ``capital_frequency``."""

    def check(response: str) -> bool:
        capital_words = sum(1 for token in word_tokens(response) if token.isupper())
        return compare(capital_words, args["capital_frequency"], args["capital_relation"])

    return check


# --- length ---------------------------------------------------------------------------------


def _build_number_sentences(args: Mapping[str, Any]) -> Check:
    """The sentence count compared with ``num_sentences``."""
    return lambda response: compare(
        count_sentences(response), args["num_sentences"], args["relation"]
    )


def _build_number_words(args: Mapping[str, Any]) -> Check:
    """The ``\\w+`` word count compared with ``num_words``."""
    return lambda response: compare(count_words(response), args["num_words"], args["relation"])


def count_star_paragraphs(response: str) -> int | None:
    """Count paragraphs separated by the markdown divider ``***``.

    Empty pieces at the start or end are ignored; an empty piece in the middle (two dividers in
    a row) makes the layout invalid and returns None."""
    pieces = re.split(r"\s?\*\*\*\s?", response)
    count = len(pieces)
    for index, piece in enumerate(pieces):
        if not piece.strip():
            if index not in (0, len(pieces) - 1):
                return None
            count -= 1
    return count


def _build_number_paragraphs(args: Mapping[str, Any]) -> Check:
    """Exactly ``num_paragraphs`` paragraphs separated by ``***``."""
    return lambda response: count_star_paragraphs(response) == args["num_paragraphs"]


def paragraph_first_word(paragraph: str) -> str:
    """The lower-cased first word of a paragraph, up to its first ``. , ? ! ' "``."""
    word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    letters: list[str] = []
    for character in word:
        if character in _FIRST_WORD_STOP_CHARACTERS:
            break
        letters.append(character.lower())
    return "".join(letters)


def _check_nth_paragraph_first_word(
    response: str, num_paragraphs: int, nth_paragraph: int, first_word: str
) -> bool:
    """Paragraphs split on blank lines: the count must match and paragraph n start with a word."""
    paragraphs = response.split("\n\n")
    non_empty = sum(1 for paragraph in paragraphs if paragraph.strip())
    if nth_paragraph > non_empty:
        return False
    paragraph = paragraphs[nth_paragraph - 1].strip()
    if not paragraph:
        return False
    return non_empty == num_paragraphs and paragraph_first_word(paragraph) == first_word


def _build_nth_paragraph_first_word(args: Mapping[str, Any]) -> Check:
    """Paragraph ``nth_paragraph`` of exactly ``num_paragraphs`` starts with ``first_word``."""
    if args["nth_paragraph"] > args["num_paragraphs"]:
        raise DataError(
            "IFEval kwarg 'nth_paragraph' of 'length_constraints:nth_paragraph_first_word' "
            f"({args['nth_paragraph']}) exceeds num_paragraphs ({args['num_paragraphs']})"
        )
    first_word = args["first_word"].strip().lower()
    return lambda response: _check_nth_paragraph_first_word(
        response, args["num_paragraphs"], args["nth_paragraph"], first_word
    )


# --- detectable content and format ----------------------------------------------------------


def _build_number_placeholders(args: Mapping[str, Any]) -> Check:
    """At least ``num_placeholders`` square-bracket placeholders such as ``[address]``."""
    return lambda response: len(re.findall(r"\[.*?\]", response)) >= args["num_placeholders"]


def postscript_pattern(marker: str) -> re.Pattern[str]:
    """The (lower-case) pattern that finds a postscript starting with ``marker``."""
    if marker == "P.P.S":
        return re.compile(r"\s*p\.\s?p\.\s?s.*$", re.MULTILINE)
    if marker == "P.S.":
        return re.compile(r"\s*p\.\s?s\..*$", re.MULTILINE)
    return re.compile(r"\s*" + re.escape(marker.lower()) + r".*$", re.MULTILINE)


def _build_postscript(args: Mapping[str, Any]) -> Check:
    """The response contains a postscript marker (P.S., P.P.S or a custom one), any case."""
    pattern = postscript_pattern(args["postscript_marker"].strip())
    return lambda response: pattern.search(response.lower()) is not None


def count_bullets(response: str) -> int:
    """Count markdown bullet lines: ``* item`` (not ``**``) and ``- item``."""
    stars = re.findall(r"^\s*\*[^\*].*$", response, flags=re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", response, flags=re.MULTILINE)
    return len(stars) + len(dashes)


def _build_number_bullet_lists(args: Mapping[str, Any]) -> Check:
    """Exactly ``num_bullets`` bullet points."""
    return lambda response: count_bullets(response) == args["num_bullets"]


def _build_constrained_response(args: Mapping[str, Any]) -> Check:
    """The response contains one of "My answer is yes./no./maybe."."""
    return lambda response: any(
        option in response.strip() for option in CONSTRAINED_RESPONSE_OPTIONS
    )


def count_highlights(response: str) -> int:
    """Count non-empty ``*highlighted*`` plus ``**highlighted**`` spans within one line."""
    singles = re.findall(r"\*[^\n\*]*\*", response)
    doubles = re.findall(r"\*\*[^\n\*]*\*\*", response)
    single_count = sum(1 for span in singles if span.strip("*").strip())
    double_count = sum(1 for span in doubles if span[2:-2].strip())
    return single_count + double_count


def _build_number_highlighted_sections(args: Mapping[str, Any]) -> Check:
    """At least ``num_highlights`` highlighted sections."""
    return lambda response: count_highlights(response) >= args["num_highlights"]


def count_sections(response: str, splitter: str) -> int:
    """Count sections introduced by ``<splitter> <number>`` (e.g. "SECTION 1")."""
    pattern = r"\s?" + re.escape(splitter) + r"\s?\d+\s?"
    return len(re.split(pattern, response)) - 1


def _build_multiple_sections(args: Mapping[str, Any]) -> Check:
    """At least ``num_sections`` sections marked with ``section_spliter``."""
    splitter = args["section_spliter"].strip()
    return lambda response: count_sections(response, splitter) >= args["num_sections"]


def is_json_response(response: str) -> bool:
    """Whether the response, minus an optional markdown code fence, parses as JSON."""
    text = response.strip()
    for prefix in _JSON_FENCE_PREFIXES:
        text = text.removeprefix(prefix)
    text = text.removesuffix("```").strip()
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _build_json_format(args: Mapping[str, Any]) -> Check:
    """The entire response is JSON (a code fence is allowed)."""
    return is_json_response


def has_title(response: str) -> bool:
    """Whether the response has a non-empty ``<<title>>`` on one line."""
    titles = re.findall(r"<<[^\n]+>>", response)
    return any(title.lstrip("<").rstrip(">").strip() for title in titles)


def _build_title(args: Mapping[str, Any]) -> Check:
    """The response contains a title in double angular brackets."""
    return has_title


# --- combination, start/end, punctuation ----------------------------------------------------


def has_two_responses(response: str) -> bool:
    """Exactly two different non-empty answers separated by ``******``.

    Empty pieces are allowed only at the start or end."""
    answers: list[str] = []
    pieces = response.split(TWO_RESPONSES_SEPARATOR)
    for index, piece in enumerate(pieces):
        if piece.strip():
            answers.append(piece.strip())
        elif index not in (0, len(pieces) - 1):
            return False
    return len(answers) == 2 and answers[0] != answers[1]


def _build_two_responses(args: Mapping[str, Any]) -> Check:
    """Two different responses separated by six asterisks."""
    return has_two_responses


def _build_repeat_prompt(args: Mapping[str, Any]) -> Check:
    """The response starts by repeating ``prompt_to_repeat`` (case-insensitive)."""
    prompt = args["prompt_to_repeat"].strip().lower()
    return lambda response: response.strip().lower().startswith(prompt)


def _build_end_checker(args: Mapping[str, Any]) -> Check:
    """The response (outer whitespace and double quotes removed) ends with ``end_phrase``."""
    phrase = args["end_phrase"].strip().lower()
    return lambda response: response.strip().strip('"').lower().endswith(phrase)


def _build_quotation(args: Mapping[str, Any]) -> Check:
    """The stripped response is wrapped in double quotation marks."""

    def check(response: str) -> bool:
        text = response.strip()
        return len(text) > 1 and text[0] == '"' and text[-1] == '"'

    return check


def _build_no_comma(args: Mapping[str, Any]) -> Check:
    """The response contains no comma."""
    return lambda response: "," not in response


# --- registry -------------------------------------------------------------------------------

_RELATION = KwargSpec("relation", "relation")

_SPECS: tuple[InstructionSpec, ...] = (
    InstructionSpec(
        "keywords:existence", (KwargSpec("keywords", "str_list"),), _build_keywords_existence
    ),
    InstructionSpec(
        "keywords:frequency",
        (KwargSpec("keyword", "str"), KwargSpec("frequency", "int"), _RELATION),
        _build_keywords_frequency,
    ),
    InstructionSpec(
        "keywords:forbidden_words",
        (KwargSpec("forbidden_words", "str_list"),),
        _build_forbidden_words,
    ),
    InstructionSpec(
        "keywords:letter_frequency",
        (
            KwargSpec("letter", "char"),
            KwargSpec("let_frequency", "int"),
            KwargSpec("let_relation", "relation"),
        ),
        _build_letter_frequency,
    ),
    InstructionSpec(
        "language:response_language", (KwargSpec("language", "str"),), _build_response_language
    ),
    InstructionSpec(
        "length_constraints:number_sentences",
        (KwargSpec("num_sentences", "int"), _RELATION),
        _build_number_sentences,
    ),
    InstructionSpec(
        "length_constraints:number_paragraphs",
        (KwargSpec("num_paragraphs", "int"),),
        _build_number_paragraphs,
    ),
    InstructionSpec(
        "length_constraints:number_words",
        (KwargSpec("num_words", "int"), _RELATION),
        _build_number_words,
    ),
    InstructionSpec(
        "length_constraints:nth_paragraph_first_word",
        (
            KwargSpec("num_paragraphs", "positive_int"),
            KwargSpec("nth_paragraph", "positive_int"),
            KwargSpec("first_word", "str"),
        ),
        _build_nth_paragraph_first_word,
    ),
    InstructionSpec(
        "detectable_content:number_placeholders",
        (KwargSpec("num_placeholders", "int"),),
        _build_number_placeholders,
    ),
    InstructionSpec(
        "detectable_content:postscript",
        (KwargSpec("postscript_marker", "str"),),
        _build_postscript,
    ),
    InstructionSpec(
        "detectable_format:number_bullet_lists",
        (KwargSpec("num_bullets", "int"),),
        _build_number_bullet_lists,
    ),
    InstructionSpec("detectable_format:constrained_response", (), _build_constrained_response),
    InstructionSpec(
        "detectable_format:number_highlighted_sections",
        (KwargSpec("num_highlights", "int"),),
        _build_number_highlighted_sections,
    ),
    InstructionSpec(
        "detectable_format:multiple_sections",
        (KwargSpec("section_spliter", "str"), KwargSpec("num_sections", "int")),
        _build_multiple_sections,
    ),
    InstructionSpec("detectable_format:json_format", (), _build_json_format),
    InstructionSpec("detectable_format:title", (), _build_title),
    InstructionSpec("combination:two_responses", (), _build_two_responses),
    InstructionSpec(
        "combination:repeat_prompt",
        (KwargSpec("prompt_to_repeat", "str", required=False),),
        _build_repeat_prompt,
    ),
    InstructionSpec("startend:end_checker", (KwargSpec("end_phrase", "str"),), _build_end_checker),
    InstructionSpec("startend:quotation", (), _build_quotation),
    InstructionSpec(
        "change_case:capital_word_frequency",
        (KwargSpec("capital_frequency", "int"), KwargSpec("capital_relation", "relation")),
        _build_capital_word_frequency,
    ),
    InstructionSpec("change_case:english_capital", (), _build_english_capital),
    InstructionSpec("change_case:english_lowercase", (), _build_english_lowercase),
    InstructionSpec("punctuation:no_comma", (), _build_no_comma),
)

INSTRUCTIONS: Mapping[str, InstructionSpec] = {spec.instruction_id: spec for spec in _SPECS}
"""Every supported instruction, by id."""

INSTRUCTION_IDS: frozenset[str] = frozenset(INSTRUCTIONS)
"""The 25 instruction ids of IFEval."""
