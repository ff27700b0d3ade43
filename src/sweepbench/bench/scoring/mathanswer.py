"""MATH-500 and AIME answer scoring (spec §13, rows math_500 and aime24/25/26).

The final answer is extracted (Minerva phrase, last ``\\boxed{}``, an "answer is" phrase, or the
last number), normalised in the Qwen-Math style, and compared with the reference: string
equality, then numbers, then element-wise for tuples and matrices, then symbolic equivalence
with ``math_verify``. Extraction is :mod:`.math_extract`; the symbolic check, bounded in time
in any thread, :mod:`.math_symbolic`.

That is the ``corrected`` scoring version (:mod:`.versions`). Under ``replicated``, answers are
read by ELBench's own rules instead, which :mod:`.elbench_math` restates step by step (Qwen2.5-Math
for MATH-500, PRM800K's grader for AIME), misreadings included.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from sweepbench.bench.items import Item, Task
from sweepbench.bench.scoring import elbench_math, elbench_prm
from sweepbench.bench.scoring.base import Score
from sweepbench.bench.scoring.math_extract import (
    aime_reference,
    balanced_group,
    extract_math_answer,
)
from sweepbench.bench.scoring.math_symbolic import elbench_symbolic, symbolic_equal
from sweepbench.bench.scoring.registry import scorer
from sweepbench.bench.scoring.versions import active_rules

# --- normalisation --------------------------------------------------------------------------

_DROP = re.compile(
    r"\\(?:left|right|displaystyle|q?quad)(?![A-Za-z])|\\[!,;:]|\^\s*\{\s*\\circ\s*\}"
    r"|\^\s*\\circ|°|\\degree|\\?%|\\?\$"
)
_FRAC_VARIANT = re.compile(r"\\[dt]frac(?![A-Za-z])")
_TRAILING_UNIT = re.compile(
    r"(?<=[\d}])\s*\\(?:text|mbox|mathrm)\{\s*[A-Za-z][A-Za-z\s.]*\}(?:\^\{?\d\}?)?\s*$"
)
_TEXT_WRAPPER = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mbox|mathbf)\{([^{}]*)\}")
_NUMBER_THEN_WORDS = re.compile(r"([-+]?[\d.,]*\d)\s+(?:[A-Za-z]{2,}\.?\s*)+")
_ASSIGNMENT = re.compile(r"(?:[A-Za-z]|\\[A-Za-z]+)(?:_\{?\w+\}?)?\s*=\s*([^=]+)")
_COMMAND_SPACE = re.compile(r"(\\[A-Za-z]+)\s+(?=[A-Za-z])")
_SPACES = re.compile(r"\s+")
_SQRT_SHORT = re.compile(r"\\sqrt(\w)")
_FRAC_TWO_SHORT = re.compile(r"\\frac(\w)(\w)")
_FRAC_FIRST_SHORT = re.compile(r"\\frac(\w)(?=\{)")
_FRAC_SECOND_SHORT = re.compile(r"(\\frac\{[^{}]*\})(\w)")
_A_SLASH_B = re.compile(r"(-?)(\d+)/(\d+)")
_BARE_DECIMAL = re.compile(r"(?<![\d}])\.(?=\d)")
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_INT_LIST = re.compile(r"-?\d+(?:,-?\d+)+")
_CHOICE = re.compile(r"\(?([A-Z])\)?")
_UNITS = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    word: 10 * (index + 2)
    for index, word in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())
}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000}


def _number_word_value(text: str) -> int | None:
    """The integer an English number phrase names ("forty-two", "one hundred and five",
    "two thousand"), or None when ``text`` is not only such words."""
    words = [w for w in re.split(r"[\s-]+", text.strip().lower()) if w and w != "and"]
    if not words:
        return None
    total, current = 0, 0
    for word in words:
        if word in _UNITS or word in _TENS:
            current += _UNITS.get(word, 0) + _TENS.get(word, 0)
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total += max(current, 1) * _SCALES[word]
            current = 0
        else:
            return None
    return total + current


def _number_words(text: str) -> str:
    """``text`` as digits when it is only a number phrase, else ``text``."""
    value = _number_word_value(text)
    return text if value is None else str(value)


def _unwrap_braces(text: str) -> str:
    """``{x}`` → ``x`` while the whole string is one balanced brace group."""
    while text.startswith("{") and balanced_group(text, 0) == text[1:-1]:
        text = text[1:-1]
    return text


def _drop_unit_words(text: str) -> str:
    """``10\\text{ inches}`` → ``10``, ``5 cm`` → ``5``; other text is kept."""
    text = _TRAILING_UNIT.sub("", text)
    words = _NUMBER_THEN_WORDS.fullmatch(text.strip())
    return words.group(1) if words else text


def _fix_fractions(text: str) -> str:
    """``\\frac12``, ``\\frac1{2}``, ``\\frac{1}2``, ``\\sqrt2`` and ``1/2`` in braces form."""
    text = _SQRT_SHORT.sub(r"\\sqrt{\1}", text)
    text = _FRAC_TWO_SHORT.sub(r"\\frac{\1}{\2}", text)
    text = _FRAC_FIRST_SHORT.sub(r"\\frac{\1}", text)
    text = _FRAC_SECOND_SHORT.sub(r"\1{\2}", text)
    slash = _A_SLASH_B.fullmatch(text)
    if slash:
        text = f"{slash.group(1)}\\frac{{{slash.group(2)}}}{{{slash.group(3)}}}"
    return text


def _remove_spaces(text: str) -> str:
    """All whitespace removed, except one space that ends a LaTeX command before a letter
    (``\\pi r`` must not become ``\\pir``)."""
    text = _COMMAND_SPACE.sub("\\1\x00", text)
    return _SPACES.sub("", text).replace("\x00", " ")


def normalise_math_answer(answer: str) -> str:
    """A canonical string for comparison: LaTeX spacing, ``\\left``/``\\right``, degrees,
    percent and dollar signs, units and ``\\text{}`` removed; ``\\dfrac`` → ``\\frac``; a
    leading ``x=`` dropped; number words → digits; thousands separators removed; short
    fractions and roots braced; ``(B)`` → ``B``; integer lists sorted."""
    text = answer.strip().replace("\n", " ").replace("{,}", ",")
    text = _FRAC_VARIANT.sub(r"\\frac", _DROP.sub("", text))
    text = _TEXT_WRAPPER.sub(r"\1", _drop_unit_words(text)).strip()
    text = _number_words(text)
    assignment = _ASSIGNMENT.fullmatch(text)
    if assignment:
        text = assignment.group(1)
    text = _unwrap_braces(_remove_spaces(text)).rstrip(".")
    text = _BARE_DECIMAL.sub("0.", _fix_fractions(text))
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    if _INT_LIST.fullmatch(text):
        text = ",".join(str(n) for n in sorted(int(part) for part in text.split(",")))
    choice = _CHOICE.fullmatch(text)
    return choice.group(1) if choice else text


# --- numbers and structure ------------------------------------------------------------------

_FRAC_NUMBER = re.compile(r"(-?)\\frac\{(-?\d+(?:\.\d+)?)\}\{(-?\d+(?:\.\d+)?)\}")
_INTEGER = re.compile(r"[-+]?\d+")


def _to_float(text: str) -> float | None:
    """The value of a normalised plain number or ``\\frac{a}{b}``; None for anything else."""
    try:
        value = float(text)
    except ValueError:
        frac = _FRAC_NUMBER.fullmatch(text)
        if not frac or float(frac.group(3)) == 0:
            return None
        value = float(frac.group(2)) / float(frac.group(3))
        return -value if frac.group(1) else value
    return value if math.isfinite(value) else None


def _numbers_equal(prediction: float, reference: float) -> bool:
    """Equal within a relative 1e-4, also against the reference x100 and /100 (Qwen-Math's
    percentage leniency, kept for comparability)."""
    return any(
        math.isclose(prediction, target, rel_tol=1e-4, abs_tol=1e-12)
        for target in (reference, reference * 100, reference / 100)
    )


def _split_top_level(text: str, separator: str = ",") -> list[str]:
    """``text`` split at separators that are not inside brackets or braces."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def _bracketed(text: str) -> tuple[str, list[str]] | None:
    """(outer brackets, top-level parts) for ``(a,b)``/``[a,b)``-style text, else None."""
    if len(text) < 2 or text[0] not in "([" or text[-1] not in ")]":
        return None
    inner = text[1:-1]
    depth = 0
    for char in inner:  # "(a)+(b)" is not one bracketed tuple
        depth += 1 if char in "([{" else -1 if char in ")]}" else 0
        if depth < 0:
            return None
    return text[0] + text[-1], _split_top_level(inner)


_MATRIX = re.compile(r"\\begin\{[pbv]?matrix\}(.*)\\end\{[pbv]?matrix\}", re.DOTALL)


def _matrix_cells(text: str) -> list[list[str]] | None:
    """The cells of a ``pmatrix``/``bmatrix``, row by row, or None."""
    found = _MATRIX.fullmatch(text)
    if not found:
        return None
    rows = [row for row in found.group(1).split("\\\\") if row.strip()]
    return [row.split("&") for row in rows]


Equal = Callable[[str, str], bool]


def _all_pairs_equal(predicted: list[str], expected: list[str], equal: Equal) -> bool:
    """Same length and every pair equal, in order."""
    return len(predicted) == len(expected) and all(
        equal(p, r) for p, r in zip(predicted, expected, strict=True)
    )


def _unordered_equal(predicted: list[str], expected: list[str], equal: Equal) -> bool:
    """Same length and each predicted element equals a distinct expected one."""
    if len(predicted) != len(expected):
        return False
    remaining = list(expected)
    for item in predicted:
        hit = next((i for i, ref in enumerate(remaining) if equal(item, ref)), None)
        if hit is None:
            return False
        remaining.pop(hit)
    return True


def _structure_equal(prediction: str, reference: str, equal: Equal) -> bool | None:
    """Element-wise comparison of matrices, bracketed tuples/intervals and bare lists; None
    when neither side has such a structure."""
    pred_cells, ref_cells = _matrix_cells(prediction), _matrix_cells(reference)
    if pred_cells is not None and ref_cells is not None:
        return len(pred_cells) == len(ref_cells) and all(
            _all_pairs_equal(p, r, equal) for p, r in zip(pred_cells, ref_cells, strict=True)
        )
    pred_tuple, ref_tuple = _bracketed(prediction), _bracketed(reference)
    if pred_tuple and ref_tuple and (len(pred_tuple[1]) > 1 or len(ref_tuple[1]) > 1):
        return pred_tuple[0] == ref_tuple[0] and _all_pairs_equal(
            pred_tuple[1], ref_tuple[1], equal
        )
    pred_list, ref_list = _split_top_level(prediction), _split_top_level(reference)
    if len(ref_list) > 1 and not ref_tuple and not pred_tuple:
        return _unordered_equal(pred_list, ref_list, equal)
    return None


# --- MATH-500 -------------------------------------------------------------------------------


def math_equal(prediction: str, reference: str) -> bool:
    """Whether two answers are the same: normalised strings; numbers (relative 1e-4, also
    reference x100 and /100); element-wise structures; equations; else symbolic."""
    pred, ref = normalise_math_answer(prediction), normalise_math_answer(reference)
    if pred == ref or pred.casefold() == ref.casefold():
        return True
    pred_value, ref_value = _to_float(pred), _to_float(ref)
    if pred_value is not None and ref_value is not None:
        return _numbers_equal(pred_value, ref_value)
    structured = _structure_equal(pred, ref, math_equal)
    if structured is not None:
        return structured or symbolic_equal(ref, pred, numeric=True)
    return symbolic_equal(ref, pred, numeric=True)


def _math_score(extracted: str | None, reference: str, equal: Equal) -> Score:
    """The Score of one extracted answer under ``equal``."""
    metadata = {"extracted": extracted, "reference": reference}
    if extracted is None:
        return Score(0.0, "fail", False, "No final answer could be extracted.", metadata, False)
    ok = equal(extracted, reference)
    reason = (
        "The final answer matches the reference."
        if ok
        else "The final answer does not match the reference."
    )
    return Score.binary(ok, reason, **metadata)


def _replicated_math_equal(prediction: str, reference: str) -> bool:
    """ELBench's MATH-500 equality (:func:`.elbench_math.qwen_equal`)."""
    return elbench_math.qwen_equal(prediction, reference, elbench_symbolic)


def score_math(response: str, reference: str) -> Score:
    """1/pass when the response's final answer equals the MATH reference (:func:`math_equal`;
    under ELBench's rules, its reading of both)."""
    if active_rules().elbench_math:
        expected = elbench_math.strip_answer(reference)
        extracted = elbench_math.extract_answer(response or "") or None
        return _math_score(extracted, expected, _replicated_math_equal)
    return _math_score(extract_math_answer(response), reference.strip(), math_equal)


# --- AIME (PRM800K-style grading) -----------------------------------------------------------


def _is_fraction(text: str) -> bool:
    """Whether a normalised answer is written as a fraction of integers."""
    return bool(re.fullmatch(r"-?\\frac\{-?\d+\}\{\d+\}", text))


def _as_integer(text: str) -> int | None:
    """The integer a normalised answer writes (``033`` → 33, ``33.0`` → 33), else None."""
    if _INTEGER.fullmatch(text):
        return int(text)
    value = _to_float(text)
    if value is not None and not _is_fraction(text) and value == int(value):
        return int(value)
    return None


def _aime_element_equal(prediction: str, reference: str) -> bool:
    """One element: fractions must be written identically (unreduced ones never match);
    if either side is an integer both must be the same integer; else symbolic."""
    pred, ref = normalise_math_answer(prediction), normalise_math_answer(reference)
    if pred == ref:
        return True
    if _is_fraction(pred) and _is_fraction(ref):
        return False
    pred_int, ref_int = _as_integer(pred), _as_integer(ref)
    if pred_int is not None or ref_int is not None:
        return pred_int == ref_int
    return symbolic_equal(ref, pred)


def aime_equal(prediction: str, reference: str) -> bool:
    """PRM800K-style equality: normalised strings (also case-folded); else tuple-wise with
    integer strictness
    (same brackets, same length, every element equal by :func:`_aime_element_equal`)."""
    pred, ref = normalise_math_answer(prediction), normalise_math_answer(reference)
    if pred == ref or pred.casefold() == ref.casefold():
        return True
    pred_tuple, ref_tuple = _bracketed(pred), _bracketed(ref)
    if pred_tuple and ref_tuple:
        return pred_tuple[0] == ref_tuple[0] and _all_pairs_equal(
            pred_tuple[1], ref_tuple[1], _aime_element_equal
        )
    pred_parts, ref_parts = _split_top_level(pred), _split_top_level(ref)
    return _all_pairs_equal(pred_parts, ref_parts, _aime_element_equal)


def _replicated_aime_equal(prediction: str, reference: str) -> bool:
    """ELBench's AIME equality (PRM800K's grader, :func:`.elbench_prm.prm_equal`)."""
    return elbench_prm.prm_equal(prediction, reference, elbench_symbolic)


def _replicated_aime_reference(target: str) -> str:
    """ELBench's AIME key: the target read with no last-number fallback, else cleaned."""
    read = elbench_math.extract_answer(target, use_last_number=False)
    return read or elbench_math.strip_answer(target)


def score_aime(response: str, reference: str) -> Score:
    """1/pass when the response's final answer equals the AIME reference (the target's
    ``\\boxed{}`` content, see :func:`aime_reference`) by :func:`aime_equal`; under ELBench's
    rules, by PRM800K's grader on ELBench's reading of both."""
    if active_rules().elbench_math:
        expected = _replicated_aime_reference(reference)
        extracted = elbench_math.extract_answer(response or "") or None
        return _math_score(extracted, expected, _replicated_aime_equal)
    return _math_score(extract_math_answer(response), aime_reference(reference), aime_equal)


# --- the registered scorers ------------------------------------------------------------------


@scorer("math", retry_when_cut=True, needs_reference=True)
def math_task(task: Task, item: Item, response: str) -> Score:
    """A MATH-500 answer, by :func:`score_math`."""
    return score_math(response, str(item.reference))


@scorer("aime", retry_when_cut=True, needs_reference=True)
def aime_task(task: Task, item: Item, response: str) -> Score:
    """An AIME answer, by :func:`score_aime`."""
    return score_aime(response, str(item.reference))
