"""Multiple-choice scoring (spec §13, rows mmlu_pro/ceval and highlevel_omni).

Only the last three non-empty lines of a response are read. Each is normalised (full-width
characters to ASCII, markdown characters removed, whitespace collapsed) and tried, last line
first, against: (1) a whole line ``PREFIX[:] [(]LETTER[)][.]``; (2) the loose form ``PREFIX:
LETTER<separator>text`` (``ANSWER: B) Robbery, because…``). If no line matches, (3) a last line
that is only a letter (optionally bracketed) is accepted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from sweepbench.bench.items import Item, Task
from sweepbench.bench.scoring.base import Score
from sweepbench.bench.scoring.registry import FormatCheck, scorer
from sweepbench.errors import DataError

EN_PREFIXES: tuple[str, ...] = ("FINAL ANSWER", "ANSWER")
ZH_PREFIXES: tuple[str, ...] = (*EN_PREFIXES, "最终答案", "答案")

_LINES_READ = 3
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _full_width_table() -> dict[int, str]:
    """Map full-width ASCII variants (U+FF01–U+FF5E), the ideographic space and CJK brackets
    and full stops to their ASCII forms."""
    table = {code: chr(code - 0xFEE0) for code in range(0xFF01, 0xFF5F)}
    table[0x3000] = " "
    for cjk, ascii_char in zip("。、【】「」『』〔〕〈〉《》", ".,[][][][]<><>", strict=True):
        table[ord(cjk)] = ascii_char
    return table


_FULL_WIDTH = _full_width_table()
_MARKDOWN = re.compile(r"[*_`#>\-]+")
_SPACES = re.compile(r"\s+")
_SPACED_DASH = re.compile(r"(?<=\S)\s+[-–—]+\s+(?=\S)")
_OPEN = r"[(\[]"
_CLOSE = r"[)\]]"


def normalise_choice_line(line: str) -> str:
    """One line made comparable: full-width → ASCII, markdown characters (``* _ ` # > -``)
    removed, whitespace collapsed and stripped."""
    text = line.translate(_FULL_WIDTH)
    text = _SPACED_DASH.sub(" : ", text)  # "B - robbery": a dash between words separates
    text = _MARKDOWN.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def _letter_class(choices: int) -> str:
    """The regex character class of the valid letters for ``choices`` options."""
    if not 1 <= choices <= len(_ALPHABET):
        raise DataError(f"a choice item needs 1 to {len(_ALPHABET)} options, not {choices}")
    return f"[A-{_ALPHABET[choices - 1]}]"


def _prefix_group(prefixes: Sequence[str]) -> str:
    """An alternation of the normalised prefixes, longest first (so FINAL ANSWER wins)."""
    cleaned = {normalise_choice_line(p) for p in prefixes if p.strip()}
    if not cleaned:
        raise ValueError("at least one answer prefix is needed")
    ordered = sorted(cleaned, key=len, reverse=True)
    return "(?i:" + "|".join(re.escape(p).replace(r"\ ", r"\s*") for p in ordered) + ")"


@lru_cache(maxsize=64)
def _patterns(
    choices: int, prefixes: tuple[str, ...], multi: bool
) -> tuple[re.Pattern[str], re.Pattern[str] | None, re.Pattern[str]]:
    """The strict, loose (single letter only) and bare-letter patterns for one setting."""
    letter = _letter_class(choices)
    # A lone letter may be lower-case ("Answer: b"). Letter runs (multi) and the loose form
    # need upper case, so "Answer: a bit of both" or a last line "Bad." is not read as letters.
    answer = rf"({letter}(?:\s*[,/]?\s*{letter})*)" if multi else f"((?i:{letter}))"
    prefix = _prefix_group(prefixes)
    tail = rf"\s*{_CLOSE}?\s*[.!?]*"
    strict = re.compile(rf"{prefix}\s*:?\s*{_OPEN}?\s*{answer}{tail}")
    loose = None
    if not multi:
        # A space separator must not be followed by a lower-case word ("ANSWER: I think…").
        separator = rf"(?:\s*{_CLOSE}|\s*{_OPEN}|[.,:;]|\s+(?![a-z]))"
        loose = re.compile(rf"{prefix}\s*:?\s*{_OPEN}?\s*({letter}){separator}.+")
    bare = re.compile(rf"{_OPEN}?\s*{answer}{tail}")
    return strict, loose, bare


def _candidate_lines(text: str) -> list[str]:
    """The last three non-empty lines, normalised, last line first."""
    lines = [line for line in text.splitlines() if line.strip()][-_LINES_READ:]
    return [normalise_choice_line(line) for line in reversed(lines)]


def _extract(text: str, choices: int, prefixes: Sequence[str], multi: bool) -> str | None:
    """The raw letter group found by the three accepted forms, or None."""
    if not text or not text.strip():
        return None
    strict, loose, bare = _patterns(choices, tuple(prefixes), multi)
    lines = _candidate_lines(text)
    for line in lines:
        match = strict.fullmatch(line) or (loose.fullmatch(line) if loose else None)
        if match:
            return match.group(1)
    last = bare.fullmatch(lines[0]) if lines else None
    return last.group(1) if last else None


def _dedupe_letters(raw: str) -> str:
    """The upper-cased letters of ``raw`` in order of first appearance, without repeats."""
    seen: list[str] = []
    for char in raw.upper():
        if char.isalpha() and char not in seen:
            seen.append(char)
    return "".join(seen)


def extract_choice(text: str, choices: int, prefixes: Sequence[str] = EN_PREFIXES) -> str | None:
    """The single answer letter of ``text`` (upper-case), or None when none can be found among
    the first ``choices`` letters."""
    raw = _extract(text, choices, prefixes, multi=False)
    return raw.upper() if raw else None


def extract_choices(
    text: str, choices: int = 4, prefixes: Sequence[str] = ZH_PREFIXES
) -> str | None:
    """The answer letters of ``text`` (``AC``, ``A,C``, ``A/C`` → ``AC``), de-duplicated in
    order of appearance; None when none can be found."""
    raw = _extract(text, choices, prefixes, multi=True)
    return _dedupe_letters(raw) if raw else None


def _expected_letter(reference: str) -> str:
    """The first character of the reference, upper-cased ("" for an empty reference)."""
    stripped = reference.strip()
    return stripped[0].upper() if stripped else ""


def _choice_score(predicted: str | None, expected: str, choices: int) -> Score:
    """The Score of one extracted answer against the expected one."""
    valid = _ALPHABET[:choices]
    metadata = {"predicted": predicted, "expected": expected, "valid_letters": valid}
    if predicted is None:
        return Score(0.0, "fail", False, "No answer letter could be extracted.", metadata, False)
    ok = predicted == expected
    reason = (
        f"Answer {predicted} matches the reference."
        if ok
        else f"Answer {predicted} does not match the reference {expected}."
    )
    return Score.binary(ok, reason, **metadata)


def score_choice(
    response: str, reference: str, *, choices: int, prefixes: Sequence[str] = EN_PREFIXES
) -> Score:
    """1/pass when the extracted letter equals the first character of ``reference``."""
    return _choice_score(
        extract_choice(response, choices, prefixes), _expected_letter(reference), choices
    )


def score_choice_multi(
    response: str, reference: str, *, choices: int = 4, prefixes: Sequence[str] = ZH_PREFIXES
) -> Score:
    """1/pass when the extracted letters (de-duplicated, in order) equal the reference
    string exactly (the reference is de-duplicated the same way)."""
    expected = _dedupe_letters(reference.strip())
    return _choice_score(extract_choices(response, choices, prefixes), expected, choices)


# --- the registered scorers ------------------------------------------------------------------


def task_prefixes(task: Task, default: str) -> tuple[str, ...]:
    """The answer prefixes a task accepts: its ``prefixes`` option (``en`` or ``zh``), else
    ``default``."""
    language = str(task.options.get("prefixes", default)).lower()
    return ZH_PREFIXES if language == "zh" else EN_PREFIXES


def task_choices(task: Task, item: Item) -> int:
    """The number of options: an item's own ``choices`` (a count, or the list of option
    texts), else the task's, else 4."""
    given = item.metadata.get("choices") or task.options.get("choices") or 4
    return len(given) if isinstance(given, list | tuple) else int(given)


def choice_format(task: Task, item: Item) -> FormatCheck:
    """Whether an answer has an extractable letter (``choice``)."""
    choices, prefixes = task_choices(task, item), task_prefixes(task, "en")
    return lambda text: extract_choice(text, choices, prefixes) is not None


def choice_multi_format(task: Task, item: Item) -> FormatCheck:
    """Whether an answer has extractable letters (``choice_multi``)."""
    choices, prefixes = task_choices(task, item), task_prefixes(task, "zh")
    return lambda text: extract_choices(text, choices, prefixes) is not None


@scorer("choice", format_check=choice_format, needs_reference=True, options=("choices", "prefixes"))
def choice_task(task: Task, item: Item, response: str) -> Score:
    """One letter, by :func:`score_choice` (English prefixes unless the task says ``zh``)."""
    return score_choice(
        response,
        str(item.reference),
        choices=task_choices(task, item),
        prefixes=task_prefixes(task, "en"),
    )


@scorer(
    "choice_multi",
    format_check=choice_multi_format,
    needs_reference=True,
    options=("choices", "prefixes"),
)
def choice_multi_task(task: Task, item: Item, response: str) -> Score:
    """Several letters, by :func:`score_choice_multi` (Chinese and English prefixes unless the
    task says ``en``)."""
    return score_choice_multi(
        response,
        str(item.reference),
        choices=task_choices(task, item),
        prefixes=task_prefixes(task, "zh"),
    )
