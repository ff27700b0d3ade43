"""Multiple-choice scoring (spec §13, rows mmlu_pro/ceval and highlevel_omni).

Only the last three non-empty lines of a response are read. Each is normalised (full-width
characters to ASCII, markdown characters removed, whitespace collapsed) and tried, last line
first, against: (1) a whole line ``PREFIX[:] [(]LETTER[)][.]``; (2) the loose form ``PREFIX:
LETTER<separator>text`` (``ANSWER: B) Robbery, because…``). If no line matches, (3) a last line
that is only a letter (optionally bracketed) is accepted.

The scoring version (:mod:`.versions`) decides the looseness. Replicated (ELBench's): the loose
form takes a letter of either case and any word after a space (``ANSWER: D because…`` is D, but
``ANSWER: I think it is G`` is I and ``ANSWER: B or C`` is B); full-width letters (``Ｄ``) and a
prefix without its space (``FinalAnswer:``) are not read; omni does not read the ``FINAL ANSWER``
prefix (its format check does). Corrected: a space after the letter must be followed by a
capitalised word or ``because``/``since``/``as``/``is``/``which``; full-width letters,
``FinalAnswer`` and omni's ``FINAL ANSWER`` are read. Both read a lower-case letter with a
bracket or stop after it (``Answer: d) Robbery``), omni's ``答案：a`` and a last line ``a``;
only replicated reads omni's lower-case letters run together (``bad`` is B, A, D).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from sweepbench.bench.items import Item, Task
from sweepbench.bench.scoring.base import Score
from sweepbench.bench.scoring.registry import FormatCheck, scorer
from sweepbench.bench.scoring.versions import ScoringRules, active_rules, using_rules
from sweepbench.errors import DataError

EN_PREFIXES: tuple[str, ...] = ("FINAL ANSWER", "ANSWER")
ZH_PREFIXES: tuple[str, ...] = (*EN_PREFIXES, "最终答案", "答案")

_LINES_READ = 3
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _full_width_table(letters: bool = True) -> dict[int, str]:
    """Map full-width ASCII variants (U+FF01–U+FF5E; without ``letters``, not the letters),
    the ideographic space and CJK brackets and full stops to their ASCII forms."""
    table = {
        code: chr(code - 0xFEE0)
        for code in range(0xFF01, 0xFF5F)
        if letters or not chr(code - 0xFEE0).isalpha()
    }
    table[0x3000] = " "
    for cjk, ascii_char in zip("。、【】「」『』〔〕〈〉《》", ".,[][][][]<><>", strict=True):
        table[ord(cjk)] = ascii_char
    return table


_FULL_WIDTH = _full_width_table()
_FULL_WIDTH_NO_LETTERS = _full_width_table(letters=False)
_MARKDOWN = re.compile(r"[*_`#>\-]+")
_SPACES = re.compile(r"\s+")
_SPACED_DASH = re.compile(r"(?<=\S)\s+[-–—]+\s+(?=\S)")
_OPEN = r"[(\[]"
_CLOSE = r"[)\]]"


def normalise_choice_line(line: str, *, full_width_letters: bool = True) -> str:
    """One line made comparable: full-width → ASCII (letters too unless told not to),
    markdown characters (``* _ ` # > -``) removed, whitespace collapsed and stripped."""
    text = line.translate(_FULL_WIDTH if full_width_letters else _FULL_WIDTH_NO_LETTERS)
    text = _SPACED_DASH.sub(" : ", text)  # "B - robbery": a dash between words separates
    text = _MARKDOWN.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def _letter_class(choices: int) -> str:
    """The regex character class of the valid letters for ``choices`` options."""
    if not 1 <= choices <= len(_ALPHABET):
        raise DataError(f"a choice item needs 1 to {len(_ALPHABET)} options, not {choices}")
    return f"[A-{_ALPHABET[choices - 1]}]"


def _prefix_group(prefixes: Sequence[str], *, spaced: bool = False) -> str:
    """An alternation of the normalised prefixes, longest first (so FINAL ANSWER wins); with
    ``spaced``, a space in a prefix must be there (``FinalAnswer`` is not ``FINAL ANSWER``)."""
    cleaned = {normalise_choice_line(p) for p in prefixes if p.strip()}
    if not cleaned:
        raise ValueError("at least one answer prefix is needed")
    ordered = sorted(cleaned, key=len, reverse=True)
    space = r"\s+" if spaced else r"\s*"
    return "(?i:" + "|".join(re.escape(p).replace(r"\ ", space) for p in ordered) + ")"


_CONNECTORS = "because|since|as|is|which"
"""Words that may follow the letter after a space in the corrected loose form."""


def _loose_separator(rules: ScoringRules) -> str:
    """What may follow the letter in the loose form: a bracket or stop; after a space, any word
    (replicated) or a capitalised word or a connector such as ``because`` (corrected)."""
    if rules.loose_prose_letter:
        return rf"(?:\s*{_CLOSE}|\s*{_OPEN}|[.,:;]|\s+)"
    return rf"(?:\s*{_CLOSE}|\s*{_OPEN}|[.,:;]|\s+(?![a-z])|\s+(?:{_CONNECTORS})\b)"


def _loose_letter(letter: str, rules: ScoringRules) -> str:
    """The loose form's letter: either case (replicated); else upper case, or lower case only
    when a bracket or stop follows (``d) Robbery``, not ``a bit of both``)."""
    if rules.loose_prose_letter:
        return f"((?i:{letter}))"
    return rf"({letter}|(?i:{letter})(?=\s*{_CLOSE}|[.,:;]))"


def _multi_answer(letter: str, rules: ScoringRules) -> str:
    """Several letters: capitals, run together or separated (``AC``, ``A,C``, ``A/C``), or
    lower-case ones that are separated or alone (``a``, ``a,c``; not ``bad``). Under ELBench's
    rules, letters of either case run together too (``bad`` is B, A, D)."""
    if rules.any_case_letter_runs:
        return rf"((?i:{letter}(?:\s*[,/]?\s*{letter})*))"
    upper = rf"{letter}(?:\s*[,/]?\s*{letter})*"
    lower = rf"(?i:{letter}(?:\s*[,/]\s*{letter})*)"
    return f"({upper}|{lower})"


@lru_cache(maxsize=64)
def _patterns(
    choices: int, prefixes: tuple[str, ...], multi: bool, rules: ScoringRules
) -> tuple[re.Pattern[str], re.Pattern[str] | None, re.Pattern[str]]:
    """The strict, loose (single letter only) and bare-letter patterns for one setting."""
    letter = _letter_class(choices)
    # A lone letter may be lower-case ("Answer: b", a last line "a"); so may separated letters
    # ("a, c"); run-together ones must be capitals, so a last line "Bad." is not read as letters
    # (except under ELBench's rules, which read it B, A, D).
    answer = _multi_answer(letter, rules) if multi else f"((?i:{letter}))"
    prefix = _prefix_group(prefixes, spaced=rules.ascii_letters_only)
    tail = rf"\s*{_CLOSE}?\s*[.!?]*"
    strict = re.compile(rf"{prefix}\s*:?\s*{_OPEN}?\s*{answer}{tail}")
    loose = None
    if not multi:
        loose_letter = _loose_letter(letter, rules)
        separator = _loose_separator(rules)
        loose = re.compile(rf"{prefix}\s*:?\s*{_OPEN}?\s*{loose_letter}{separator}.+")
    bare = re.compile(rf"{_OPEN}?\s*{answer}{tail}")
    return strict, loose, bare


def _candidate_lines(text: str, rules: ScoringRules) -> list[str]:
    """The last three non-empty lines, normalised, last line first."""
    lines = [line for line in text.splitlines() if line.strip()][-_LINES_READ:]
    wide = not rules.ascii_letters_only
    return [normalise_choice_line(line, full_width_letters=wide) for line in reversed(lines)]


def _extract(
    text: str,
    choices: int,
    prefixes: Sequence[str],
    multi: bool,
    rules: ScoringRules | None = None,
) -> str | None:
    """The raw letter group found by the three accepted forms, or None."""
    if not text or not text.strip():
        return None
    rules = rules or active_rules()
    strict, loose, bare = _patterns(choices, tuple(prefixes), multi, rules)
    lines = _candidate_lines(text, rules)
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


def omni_prefixes(prefixes: Sequence[str], rules: ScoringRules) -> tuple[str, ...]:
    """The prefixes omni's scorer reads: without ``FINAL ANSWER`` under ELBench's rules."""
    if rules.omni_final_answer_prefix:
        return tuple(prefixes)
    return tuple(p for p in prefixes if p.strip().upper() != "FINAL ANSWER")


def extract_choices(
    text: str,
    choices: int = 4,
    prefixes: Sequence[str] = ZH_PREFIXES,
    rules: ScoringRules | None = None,
) -> str | None:
    """The answer letters of ``text`` (``AC``, ``A,C``, ``A/C`` → ``AC``), de-duplicated in
    order of appearance; None when none can be found."""
    raw = _extract(text, choices, prefixes, multi=True, rules=rules)
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
    read = omni_prefixes(prefixes, active_rules())
    return _choice_score(extract_choices(response, choices, read), expected, choices)


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
    """Whether an answer has an extractable letter (``choice``), by the rules in force when
    the check is built."""
    choices, prefixes, rules = task_choices(task, item), task_prefixes(task, "en"), active_rules()
    return lambda text: _extract(text, choices, prefixes, multi=False, rules=rules) is not None


def choice_multi_format(task: Task, item: Item) -> FormatCheck:
    """Whether an answer has extractable letters (``choice_multi``). Every prefix counts, even
    where the scorer does not read ``FINAL ANSWER`` (as in ELBench)."""
    choices, prefixes, rules = task_choices(task, item), task_prefixes(task, "zh"), active_rules()
    return lambda text: extract_choices(text, choices, prefixes, rules) is not None


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


# --- free-form single choice (the sample benchmark's own reading) ----------------------------

_STATED_LETTER = re.compile(
    r"(?i:\b(?:final\s+answer|answer|choice|option)\b(?:\s+(?:is|would\s+be))?\s*[:：\-]?\s*)"
    r"[(\[]?([A-Z])(?![A-Za-z0-9])(?!\s*(?:[,/]|or\b|and\b)\s*[(\[]?[A-Z]\b)"
)
"""``The answer is B``, ``Answer: B``, ``my choice is (B)``, ``option C``; not a list of
letters (``option: A, B, C or D``, as in an echoed instruction)."""
_LEADING_LETTER = re.compile(r"^[(\[]?([A-Z])(?:[)\].:：]|\s*$|\s+[-–—]\s)")
"""A line that starts with an option's letter: ``B) Mercury``, ``B. Mercury``, ``B: Mercury``,
``(B)``, ``B``, ``B - Mercury``."""
_MARKED_LETTER = re.compile(r"(?<![A-Za-z0-9])[(\[]?([A-Z])[)\]](?![A-Za-z0-9])")
"""A letter with a closing bracket anywhere in a line (``it is B) Mercury``)."""
_WORDS = re.compile(r"[^\w]+")


def option_texts(item: Item, choices: int) -> list[str]:
    """An item's option texts: its ``choices`` metadata when that is a list, else its metadata
    fields named by the letters (``A``, ``B``, …); empty when it has neither."""
    listed = item.metadata.get("choices")
    if isinstance(listed, list | tuple):
        return [str(text) for text in listed]
    texts = [item.metadata.get(letter) for letter in _ALPHABET[:choices]]
    return [str(t) for t in texts] if all(t is not None for t in texts) else []


def _words(text: str) -> str:
    """Lower-cased words joined by single spaces (punctuation and markdown dropped)."""
    return " ".join(_WORDS.sub(" ", text.lower()).split())


def _option_listing(lines: list[str], valid: str) -> set[int]:
    """The indexes of lines that list the options (two or more lines led by different
    letters, as in an echoed question): they name no choice."""
    led = {i: m.group(1) for i, line in enumerate(lines) if (m := _LEADING_LETTER.match(line))}
    led = {i: letter for i, letter in led.items() if letter in valid}
    return set(led) if len(set(led.values())) > 1 else set()


def _letter_from_line(line: str, valid: str) -> str | None:
    """The letter a single line states, leads with or brackets (the last one when several)."""
    for pattern in (_STATED_LETTER, _LEADING_LETTER, _MARKED_LETTER):
        letters = [m.group(1) for m in pattern.finditer(line) if m.group(1) in valid]
        if letters:
            return letters[-1]
    return None


def _letter_from_text(line: str, texts: list[str]) -> str | None:
    """The option whose text the line names, when exactly one does (whole words)."""
    said = f" {_words(line)} "
    named = [i for i, text in enumerate(texts) if _words(text) and f" {_words(text)} " in said]
    return _ALPHABET[named[0]] if len(named) == 1 else None


def extract_free_choice(text: str, choices: int, texts: Sequence[str] = ()) -> str | None:
    """The option a free-form answer picks: an ``ANSWER: X`` line (corrected rules), else,
    from the last line up, a stated letter (``The answer is B``), a line led by a letter
    (``B) Mercury``, ``**B**``), a bracketed letter, or exactly one option's text (``Mercury``).
    Upper-case letters only outside the ``ANSWER:`` line, so the article "a" is never read;
    lines that list the options (an echoed question) are skipped."""
    if not text or not text.strip():
        return None
    with using_rules("corrected"):
        strict = extract_choice(text, choices)
    if strict is not None:
        return strict
    valid = _ALPHABET[:choices]
    lines = [normalise_choice_line(line) for line in text.splitlines() if line.strip()]
    listing = _option_listing(lines, valid)
    for index in range(len(lines) - 1, -1, -1):
        if index in listing:
            continue
        line = lines[index]
        found = _letter_from_line(line, valid) or (
            _letter_from_text(line, list(texts)) if texts else None
        )
        if found:
            return found
    return None


def choice_free_format(task: Task, item: Item) -> FormatCheck:
    """Whether a free-form answer picks an option (``choice_free``)."""
    choices = task_choices_free(task, item)
    texts = option_texts(item, choices)
    return lambda text: extract_free_choice(text, choices, texts) is not None


def task_choices_free(task: Task, item: Item) -> int:
    """The number of options of a ``choice_free`` item: its option texts' count, else
    :func:`task_choices`."""
    listed = item.metadata.get("choices")
    if isinstance(listed, list | tuple):
        return len(listed)
    present = [letter for letter in _ALPHABET if letter in item.metadata]
    return len(present) if present else task_choices(task, item)


@scorer("choice_free", format_check=choice_free_format, needs_reference=True)
def choice_free_task(task: Task, item: Item, response: str) -> Score:
    """One option, read from the formats models write (:func:`extract_free_choice`); the same
    in every scoring version (it is no ELBench reading)."""
    choices = task_choices_free(task, item)
    picked = extract_free_choice(response, choices, option_texts(item, choices))
    return _choice_score(picked, _expected_letter(str(item.reference)), choices)
