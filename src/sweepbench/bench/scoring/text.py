"""Generic scorers for a user's own benchmarks: exact, normalised, regex and numeric."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from sweepbench.bench.items import Item, Task
from sweepbench.bench.scoring.base import Score
from sweepbench.bench.scoring.registry import scorer
from sweepbench.errors import DataError

Reference = str | Sequence[str]

_SPACES = re.compile(r"\s+")
_ANSWER_PREFIX = re.compile(r"^(?:final\s+)?answer\s*[:：]\s*")
_NUMBER = re.compile(
    r"(?P<sign>(?<![\w)])[-+\u2212])?\s?(?P<currency>[$€£¥])?\s?"
    r"(?P<digits>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)"
    r"(?P<exponent>[eE][-+]?\d+)?(?![\d.]*\d)"
    r"(?P<percent>\s?%)?"
)


def _references(reference: object) -> list[str]:
    """The acceptable answers: a string, or each string of a list or tuple."""
    if isinstance(reference, str):
        return [reference]
    if isinstance(reference, Sequence) and reference:
        return [str(r) for r in reference]
    if reference is None:
        raise DataError("the item has no reference answer")
    return [str(reference)]


def _strip_edges(text: str) -> str:
    """``text`` without surrounding whitespace, punctuation or quotes."""
    start, end = 0, len(text)
    while start < end and _is_edge(text[start]):
        start += 1
    while end > start and _is_edge(text[end - 1]):
        end -= 1
    return text[start:end]


def _is_edge(char: str) -> bool:
    """Whether ``char`` is whitespace or punctuation (any Unicode P* category, quotes too)."""
    return char.isspace() or unicodedata.category(char).startswith("P")


def normalise_text(text: str) -> str:
    """Case-folded, NFKC (full-width → ASCII), whitespace-collapsed text without a leading
    "answer:" and without surrounding punctuation or quotes."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = _SPACES.sub(" ", folded).strip()
    folded = _ANSWER_PREFIX.sub("", folded)
    return _strip_edges(folded)


def _match_any(given: str, references: list[str], normalise: bool) -> Score:
    """1/pass when ``given`` equals one of ``references`` (both normalised when asked)."""
    prepare = normalise_text if normalise else str.strip
    answer = prepare(given or "")
    accepted = [prepare(r) for r in references]
    metadata = {"extracted": answer, "reference": accepted if len(accepted) > 1 else accepted[0]}
    if not answer:
        return Score(0.0, "fail", False, "The response is empty.", metadata, False)
    ok = answer in accepted
    reason = "The answer matches the reference." if ok else "The answer differs from the reference."
    return Score.binary(ok, reason, **metadata)


def score_exact(response: str, reference: Reference) -> Score:
    """1/pass when the stripped response equals the (or one of the) stripped reference(s)."""
    return _match_any(response, _references(reference), normalise=False)


def score_normalised(response: str, reference: Reference) -> Score:
    """1/pass when the normalised response equals a normalised reference (see
    :func:`normalise_text`)."""
    return _match_any(response, _references(reference), normalise=True)


@lru_cache(maxsize=256)
def _compile(pattern: str) -> re.Pattern[str]:
    """The compiled pattern; DataError naming it when it is not a valid regex."""
    try:
        return re.compile(pattern)
    except re.error as error:
        raise DataError(f"invalid regex pattern {pattern!r}: {error}") from error


def score_regex(response: str, pattern: str, reference: str | None = None) -> Score:
    """1/pass when ``pattern`` is found in the response. With a group and a reference, the
    first group (normalised) must also equal the normalised reference."""
    compiled = _compile(pattern)
    match = compiled.search(response or "")
    if match is None:
        return Score(0.0, "fail", False, "The pattern was not found.", {"pattern": pattern}, False)
    found = match.group(1) if compiled.groups else match.group(0)
    metadata = {"pattern": pattern, "extracted": found}
    if reference is None or not compiled.groups:
        return Score.binary(True, "The pattern was found.", **metadata)
    ok = normalise_text(found or "") == normalise_text(reference)
    reason = "The captured answer matches." if ok else "The captured answer differs."
    return Score.binary(ok, reason, **metadata, reference=reference)


@dataclass(frozen=True)
class ParsedNumber:
    """A number as written: its value and whether it carried a percent sign."""

    value: float
    percent: bool


def _to_number(match: re.Match[str]) -> ParsedNumber:
    """The value of one :data:`_NUMBER` match."""
    digits = match["digits"].replace(",", "") + (match["exponent"] or "")
    value = float(digits)
    if match["sign"] in ("-", "\u2212"):
        value = -value
    return ParsedNumber(value, bool(match["percent"]))


def last_number(text: str) -> ParsedNumber | None:
    """The last number written in ``text`` (``1,234.5``, ``-3``, ``1e3``, ``50%``, ``$12``)."""
    matches = list(_NUMBER.finditer(unicodedata.normalize("NFKC", text or "")))
    return _to_number(matches[-1]) if matches else None


def reference_number(reference: object) -> ParsedNumber:
    """The reference as a number; DataError when it is not one (loaders call this too, so a
    reference the scorer cannot read is a bad row at load time, not an error at run time)."""
    if isinstance(reference, bool):
        raise DataError(f"numeric reference {reference!r} is not a number")
    if isinstance(reference, int | float):
        if not math.isfinite(reference):
            raise DataError(f"numeric reference {reference!r} is not a finite number")
        return ParsedNumber(float(reference), False)
    text = unicodedata.normalize("NFKC", str(reference)).strip()
    match = _NUMBER.fullmatch(text)
    if match is None:
        raise DataError(f"numeric reference {reference!r} is not a number")
    return _to_number(match)


def _close(a: float, b: float, tolerance: float, relative: bool) -> bool:
    """Whether ``a`` and ``b`` agree within the tolerance (absolute or relative)."""
    if relative:
        return math.isclose(a, b, rel_tol=tolerance, abs_tol=0.0)
    return abs(a - b) <= tolerance


def _candidates(given: ParsedNumber, expected: ParsedNumber) -> list[float]:
    """The response values to try: as written; also /100 when only the response had a percent
    sign ("50%" matches 0.5), or x100 when only the reference had one (0.5 matches "50%")."""
    values = [given.value]
    if given.percent and not expected.percent:
        values.append(given.value / 100)
    if expected.percent and not given.percent:
        values.append(given.value * 100)
    return values


def score_numeric(
    response: str,
    reference: str | float | int,
    *,
    tolerance: float = 1e-6,
    relative: bool = False,
) -> Score:
    """1/pass when the last number in the response equals the reference within
    ``tolerance`` (absolute, or relative when ``relative``). A percent sign on one side only
    also allows the value /100 (``50%`` matches ``0.5``)."""
    expected = reference_number(reference)
    given = last_number(response)
    metadata: dict[str, object] = {"reference": expected.value, "extracted": None}
    if given is None:
        return Score(0.0, "fail", False, "No number in the response.", metadata, False)
    metadata["extracted"] = given.value
    ok = any(_close(v, expected.value, tolerance, relative) for v in _candidates(given, expected))
    reason = "The number matches." if ok else f"{given.value:g} differs from {expected.value:g}."
    return Score.binary(ok, reason, **metadata)


# --- the registered scorers ------------------------------------------------------------------


@scorer("exact", needs_reference=True)
def exact_task(task: Task, item: Item, response: str) -> Score:
    """By :func:`score_exact`."""
    return score_exact(response, item.reference)


@scorer("normalised", needs_reference=True)
def normalised_task(task: Task, item: Item, response: str) -> Score:
    """By :func:`score_normalised`."""
    return score_normalised(response, item.reference)


@scorer("regex", options=("pattern",))
def regex_task(task: Task, item: Item, response: str) -> Score:
    """By :func:`score_regex`, with the task's (else the item's) ``pattern``; the reference is
    optional."""
    pattern = task.options.get("pattern") or item.metadata.get("pattern")
    if not pattern:
        raise DataError(f"task {task.id}: the regex scorer needs a pattern")
    ref = item.reference
    return score_regex(response, str(pattern), None if ref is None else str(ref))


@scorer("numeric", needs_reference=True, options=("tolerance", "relative"))
def numeric_task(task: Task, item: Item, response: str) -> Score:
    """By :func:`score_numeric`, with the task's ``tolerance`` and ``relative`` options."""
    return score_numeric(
        response,
        item.reference,
        tolerance=float(task.options.get("tolerance", 1e-6)),
        relative=bool(task.options.get("relative", False)),
    )
