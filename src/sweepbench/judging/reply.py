"""Reading the JSON object a model's reply holds: a judge's verdict, or the answer a rule
scorer grades (``bench.scoring.edu_rule``). A leading ``<think>…</think>`` trace is dropped
first; the object is looked for in fenced blocks, then in the whole text, and read as JSON or
as a Python-style literal (never evaluated).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

_MAX_LITERAL_CHARS = 200_000
"""Longer candidates are not given to the literal parser (it is slow on huge inputs)."""

_THINK_CLOSE = re.compile(r"</think\s*>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"^\s*<think\s*>", re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[^\n]*\n?(.*?)```", re.DOTALL)
_BARE_LITERALS = {"true": "True", "false": "False", "null": "None"}


def strip_thinking(text: str) -> str | None:
    """``text`` without a leading ``<think>…</think>`` trace; None when the trace never closes
    (the reply was cut off while thinking)."""
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        return text[closes[-1].end() :]
    if _THINK_OPEN.match(text):
        return None
    return text


def extract_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object a model's reply holds, or None.

    Looks in the first fenced block that holds an object (a ``json`` fence first), else in the
    whole text; takes the outermost ``{…}``, else each top-level balanced object in turn. Each
    candidate is parsed as JSON, then as a Python-style literal (single quotes, True/False/None,
    and bare true/false/null)."""
    for region in _search_regions(text):
        for candidate in _object_candidates(region):
            parsed = parse_object(candidate)
            if parsed is not None:
                return parsed
    return None


def parse_object(candidate: str) -> dict[str, Any] | None:
    """``candidate`` parsed as a JSON object, else as a Python literal dict; None otherwise."""
    try:
        value = json.loads(candidate, strict=False)  # raw line breaks inside reasons
    except (ValueError, RecursionError):
        value = _literal(candidate)
    return value if isinstance(value, dict) else None


def _literal(candidate: str) -> Any:
    """``candidate`` read by ``ast.literal_eval`` (never ``eval``), with JSON's bare words
    ``true``/``false``/``null`` outside strings turned into Python's; None when it is not a
    literal."""
    if len(candidate) > _MAX_LITERAL_CHARS:
        return None
    for source in (candidate, _pythonise_bare_words(candidate)):
        try:
            return ast.literal_eval(source)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None


def _pythonise_bare_words(text: str) -> str:
    """``text`` with ``true``/``false``/``null`` outside quoted strings written the Python way."""
    pieces: list[str] = []
    position = 0
    for start, end in _string_spans(text):
        pieces.append(_replace_bare_words(text[position:start]))
        pieces.append(text[start:end])
        position = end
    pieces.append(_replace_bare_words(text[position:]))
    return "".join(pieces)


def _replace_bare_words(code: str) -> str:
    """``true``/``false``/``null`` in code (no strings) replaced by ``True``/``False``/``None``."""
    return re.sub(r"\b(true|false|null)\b", lambda m: _BARE_LITERALS[m.group(1)], code)


def _string_spans(text: str) -> Iterator[tuple[int, int]]:
    """The (start, end) of each quoted string (single or double quotes, backslash escapes)."""
    index = 0
    while index < len(text):
        char = text[index]
        if char in "\"'":
            end = _string_end(text, index)
            yield index, end
            index = end
        else:
            index += 1


def _string_end(text: str, start: int) -> int:
    """The index just past the string that opens at ``start`` (the text's end if unclosed)."""
    quote = text[start]
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == quote:
            return index + 1
        index += 1
    return len(text)


def _search_regions(text: str) -> list[str]:
    """Where to look for the object: the fenced blocks holding one (``json`` fences first),
    then the whole text."""
    fenced = [(lang.lower(), body) for lang, body in _FENCE.findall(text) if "{" in body]
    ordered = [body for lang, body in fenced if lang == "json"]
    ordered += [body for lang, body in fenced if lang != "json"]
    return [*ordered, text]


def _object_candidates(region: str) -> Iterator[str]:
    """The outermost ``{…}`` span (first ``{`` to last ``}``), then each top-level balanced
    ``{…}`` in order."""
    first, last = region.find("{"), region.rfind("}")
    if first == -1 or last < first:
        return
    outermost = region[first : last + 1]
    yield outermost
    for span in _balanced_objects(region, first):
        if span != outermost:
            yield span


def _balanced_objects(text: str, start: int) -> Iterator[str]:
    """Each top-level balanced ``{…}`` from ``start`` on (braces inside quoted strings do not
    count); stops at the first object that never closes."""
    index = start
    while index != -1 and index < len(text):
        end = _object_end(text, index)
        if end is None:
            return
        yield text[index:end]
        index = text.find("{", end)


def _object_end(text: str, start: int) -> int | None:
    """The index just past the ``}`` closing the ``{`` at ``start``; None when it never closes."""
    depth = 0
    index = start
    while index < len(text):
        char = text[index]
        if char in "\"'":
            index = _string_end(text, index)
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return None
