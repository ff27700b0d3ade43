"""JSON from files and answers we did not write, read within a nesting bound.

``json.loads`` recurses once per level: text holding 200,000 ``[`` ends in a RecursionError
(or, just under the interpreter's limit, in a value that every later walk of it cannot
handle). :func:`bounded_json_loads` first measures the nesting of the text, counting brackets
outside strings, and refuses text nested deeper than :data:`MAX_DEPTH` with :class:`TooDeep`,
a ``ValueError`` that says where. The measure is cheap: text with fewer brackets than the
bound (almost every row and answer) is not scanned at all.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

__all__ = ["MAX_DEPTH", "TooDeep", "bounded_json_loads", "json_depth_problem"]

MAX_DEPTH = 100
"""The deepest nesting of lists and objects accepted in a data row, declaration or answer."""

_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)'
_STRINGS = re.compile(_STRING, re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_TOKENS = re.compile(_STRING + r"|[\[\]{}]", re.DOTALL)
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class TooDeep(ValueError):
    """Text nested deeper than the bound: ``reason`` says so, ``line`` and ``column``
    (1-based) say where the nesting first goes past it; the message gives all three."""

    def __init__(self, limit: int, line: int, column: int) -> None:
        self.reason = f"nested deeper than {limit} levels"
        super().__init__(f"{self.reason} at line {line} column {column}")
        self.limit = limit
        self.line = line
        self.column = column


def bounded_json_loads(text: str | bytes, *, limit: int = MAX_DEPTH, **options: Any) -> Any:
    """``json.loads(text, **options)``, refusing text nested deeper than ``limit`` with
    :class:`TooDeep` (never a RecursionError). Other errors are ``json.loads``'s own."""
    if isinstance(text, bytes | bytearray):
        text = text.decode("utf-8")
    problem = json_depth_problem(text, limit)
    if problem is not None:
        raise problem
    try:
        return json.loads(text, **options)
    except RecursionError:  # a hook in ``options`` that recursed: still no traceback
        raise TooDeep(limit, 1, 1) from None


def json_depth_problem(text: str, limit: int = MAX_DEPTH) -> TooDeep | None:
    """A :class:`TooDeep` when the JSON text nests lists and objects deeper than ``limit``
    (brackets inside strings do not count); None otherwise."""
    if text.count("[") + text.count("{") <= limit:
        return None
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    if max(accumulate(map(_STEP.__getitem__, brackets)), default=0) <= limit:
        return None
    return _where_too_deep(text, limit)


def _where_too_deep(text: str, limit: int) -> TooDeep:
    """The place where the nesting first goes past ``limit`` (the text is known to)."""
    depth, offset = 0, 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in _STEP:
            depth += _STEP[token]
            if depth > limit:
                offset = match.start()
                break
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return TooDeep(limit, line, column)
