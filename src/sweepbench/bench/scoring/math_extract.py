"""The final answer of a MATH-500 or AIME response, read the ``corrected`` way (under
``replicated``, ELBench's reading, :func:`.elbench_math.extract_answer`): a Minerva "final answer
is $…$. I hope", else the last ``\\boxed{}``, else the text after an "answer is" phrase, else
the last number; and an AIME reference's ``\\boxed{}`` content.
"""

from __future__ import annotations

import re

from sweepbench.bench.scoring import elbench_math
from sweepbench.bench.scoring.versions import active_rules

_MINERVA = re.compile(r"final answer is \$(.+?)\$\.?\s*I hope", re.IGNORECASE | re.DOTALL)
_BOX_START = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_ANSWER_MARKER = re.compile(r"he answer is|final answer is|答案是|answer\s*:", re.IGNORECASE)
_THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:/\d+)?|-?\.\d+")
_WRAPPERS = (("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"), ("**", "**"))


def balanced_group(text: str, open_at: int) -> str | None:
    """The content of the brace group opening at ``text[open_at]``, or None if unclosed."""
    depth = 0
    for index in range(open_at, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1 : index]
    return None


def _boxed_content(text: str, after: int) -> str | None:
    """What follows a ``\\boxed`` ending at ``after``: a balanced ``{…}`` group, or the token
    of ``\\boxed 5``; None when neither is there."""
    rest = text[after:]
    stripped = rest.lstrip(" ")
    if stripped.startswith("{"):
        return balanced_group(text, after + len(rest) - len(stripped))
    if rest.startswith(" ") and stripped:
        return re.split(r"[\s$]", stripped, maxsplit=1)[0]
    return None


def last_boxed(text: str) -> str | None:
    """The content of the last well-formed ``\\boxed{…}`` (or ``\\fbox{…}``) in ``text``."""
    for match in reversed(list(_BOX_START.finditer(text))):
        content = _boxed_content(text, match.end())
        if content is not None:
            return content
    return None


_EMPHASIS = re.compile(r"\*\*(.+?)\*\*|^\s*[*_]([^*_].*?)[*_](?=\s*[.。!]?\s*$)")
"""Markdown bold anywhere in the line, or italics around the whole line (a ``*`` inside an
expression such as ``2*3`` is multiplication and stays)."""


def _after_marker(text: str) -> str | None:
    """The first non-empty line after the last "answer is"/"答案是"/"ANSWER:" phrase (any
    case)."""
    markers = list(_ANSWER_MARKER.finditer(text))
    if not markers:
        return None
    rest = text[markers[-1].end() :].lstrip(" :：\t")
    first = rest.split("\n", 1)[0]
    if first.startswith("**") and first.count("**") % 2 == 1:  # "**Answer:** 42": its close
        rest = rest[2:].lstrip(" :：\t")
    for line in rest.splitlines():
        if line.strip():
            return _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), line)  # "**42**." → "42."
    return None


def _last_number(text: str) -> str | None:
    """The last plain number in ``text`` (thousands commas removed)."""
    numbers = _PLAIN_NUMBER.findall(_THOUSANDS_COMMA.sub("", text))
    return numbers[-1] if numbers else None


def _clean_extracted(answer: str) -> str:
    """An extracted answer without surrounding ``$``, ``\\(…\\)``, ``**`` or a final full stop."""
    stops = (".", "/", "。")
    answer = answer.strip()
    changed = True
    while changed and answer:
        changed = False
        for start, end in _WRAPPERS:
            wrapped = answer.startswith(start) and answer.endswith(end)
            if wrapped and len(answer) > len(start) + len(end):
                answer = answer[len(start) : -len(end)].strip()
                changed = True
        if answer.endswith(stops) and not answer.endswith("\\."):
            answer = answer[:-1].rstrip()
            changed = True
    return answer


def extract_math_answer(text: str) -> str | None:
    """The final answer of a solution: a Minerva "final answer is $…$. I hope"; else the last
    brace-balanced ``\\boxed{…}``; else the text after "he answer is", "final answer is",
    "答案是" or "ANSWER:"; else the last number. None when there is nothing. Under ELBench's
    rules, :func:`.elbench_math.extract_answer`."""
    if not text or not text.strip():
        return None
    if active_rules().elbench_math:
        return elbench_math.extract_answer(text) or None
    minerva = list(_MINERVA.finditer(text))
    if minerva:
        found: str | None = minerva[-1].group(1)
    else:
        found = last_boxed(text)
        if found is None:
            found = _after_marker(text)
            boxed = last_boxed(found) if found else None
            found = boxed if boxed is not None else found
        if found is None:
            found = _last_number(text)
    cleaned = _clean_extracted(found) if found is not None else ""
    return cleaned or None


def aime_reference(target: str) -> str:
    """An AIME reference: the content of its ``\\boxed{}`` if present, else the stripped
    target (no last-number fallback)."""
    boxed = last_boxed(target)
    return (boxed if boxed is not None else target).strip()
