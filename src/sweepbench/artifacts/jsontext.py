"""Reading JSON out of a model's whole answer, leniently (artifacts.md §2.6 steps 1–3): code
fences stripped, the first balanced object taken, trailing commas dropped. Shared by every
artifact kind that parses JSON answers."""

from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]*```[^\n]*$", re.MULTILINE)


def strip_fences(text: str) -> str:
    """The text without Markdown code-fence lines."""
    return _FENCE.sub("", text)


def first_object(text: str) -> str:
    """The first balanced ``{…}`` (string- and escape-aware); the rest of the text when it
    never closes, so that the JSON error points at the truncation; the stripped text when
    there is no ``{`` at all."""
    start = text.find("{")
    if start < 0:
        return text.strip()
    depth, in_string, escape = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return text[start:]


def drop_trailing_commas(text: str) -> str:
    """Remove commas that directly precede ``}`` or ``]`` (whitespace between allowed),
    outside strings."""
    out: list[str] = []
    in_string, escape = False, False
    for ch in text:
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "}]":
            k = len(out) - 1
            while k >= 0 and out[k] in " \t\r\n":
                k -= 1
            if k >= 0 and out[k] == ",":
                del out[k]
        out.append(ch)
    return "".join(out)
