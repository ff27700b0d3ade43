"""Reading JSON out of a model's whole answer, leniently (artifacts.md §2.6 steps 1–3): code
fences stripped, the first balanced object taken, trailing commas dropped. Shared by every
artifact kind that parses JSON answers."""

from __future__ import annotations

import re
from collections.abc import Iterator

_FENCE = re.compile(r"^[ \t]*```[^\n]*$", re.MULTILINE)


def strip_fences(text: str) -> str:
    """The text without Markdown code-fence lines."""
    return _FENCE.sub("", text)


def _structure(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """The characters of ``text`` from ``start`` that are outside JSON strings (escapes
    inside strings honoured), with their indexes; a string shows as its two quotes."""
    in_string, escape = False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
            else:
                continue
            if not in_string:
                yield i, ch  # the closing quote
        else:
            in_string = ch == '"'
            yield i, ch


def first_object(text: str) -> str:
    """The first balanced ``{…}`` (string- and escape-aware); the rest of the text when it
    never closes, so that the JSON error points at the truncation; the stripped text when
    there is no ``{`` at all."""
    start = text.find("{")
    if start < 0:
        return text.strip()
    depth = 0
    for i, ch in _structure(text, start):
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return text[start:]


def drop_trailing_commas(text: str) -> str:
    """Remove commas that directly precede ``}`` or ``]`` (whitespace between allowed),
    outside strings."""
    dropped: set[int] = set()
    last_comma: int | None = None
    for i, ch in _structure(text):
        if ch == ",":
            last_comma = i
        elif ch in "}]" and last_comma is not None:
            dropped.add(last_comma)
            last_comma = None
        elif ch not in " \t\r\n":
            last_comma = None
    return "".join(ch for i, ch in enumerate(text) if i not in dropped)
