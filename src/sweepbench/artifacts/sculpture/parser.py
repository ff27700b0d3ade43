"""Reading the model's answer. :class:`PartsParser` is the incremental parser of spec
artifacts.md §2.4 keyed on ``"parts"``: fed deltas of any size, it emits each complete part
object as its braces balance, so the page can count parts while the model writes.
:func:`parse_answer` reads a whole answer (§2.6): code fences stripped, the first balanced
object taken, trailing commas removed. JSON nested deeper than
:data:`~sweepbench.nesting.MAX_DEPTH` levels is not usable JSON (never a RecursionError)."""

from __future__ import annotations

import json
import re
from typing import Any

from sweepbench.artifacts.jsontext import drop_trailing_commas, first_object, strip_fences
from sweepbench.nesting import TooDeep, bounded_json_loads

_KEY = re.compile(r'"parts"\s*:\s*\[')


class PartsParser:
    """Persistent state between deltas: a buffer, a scan position, a brace depth, an in-string
    flag and an escape flag. ``offset`` is where, in all the text fed so far, the last emitted
    part ended (used to salvage a truncated answer)."""

    def __init__(self) -> None:
        self.buffer = ""
        self.pos = 0
        self.depth = 0
        self.in_string = False
        self.escape = False
        self.found = False
        self.done = False
        self.start = -1
        self.consumed = 0
        self.offset = -1
        self.parts: list[dict[str, Any]] = []

    def feed(self, text: str) -> list[dict[str, Any]]:
        """Consume one delta; return the part objects it completed."""
        if self.done:
            return []
        self.buffer += text
        if not self.found:
            match = _KEY.search(self.buffer)
            if match is None:
                keep = max(0, len(self.buffer) - 64)  # the key may straddle deltas
                self.consumed += keep
                self.buffer = self.buffer[keep:]
                return []
            self.found = True
            self.consumed += match.end()
            self.buffer = self.buffer[match.end() :]
        out: list[dict[str, Any]] = []
        buf, i = self.buffer, self.pos
        while i < len(buf):
            ch = buf[i]
            if self.in_string:
                if self.escape:
                    self.escape = False
                elif ch == "\\":
                    self.escape = True
                elif ch == '"':
                    self.in_string = False
            elif ch == '"':
                self.in_string = True
            elif ch == "{":
                if self.depth == 0:
                    self.start = i
                self.depth += 1
            elif ch == "}" and self.depth > 0:
                self.depth -= 1
                if self.depth == 0:
                    self._emit(buf[self.start : i + 1], out, self.consumed + i + 1)
                    buf = buf[i + 1 :]
                    self.consumed += i + 1
                    i = -1
            elif ch == "]" and self.depth == 0:
                self.done = True
                break
            i += 1
        self.buffer, self.pos = buf, i
        return out

    def _emit(self, candidate: str, out: list[dict[str, Any]], end: int) -> None:
        try:
            value = bounded_json_loads(candidate)
        except ValueError:  # TooDeep included
            return  # one malformed part never stops the stream
        if isinstance(value, dict):
            out.append(value)
            self.parts.append(value)
            self.offset = end


class AnswerError(ValueError):
    """The answer is not usable JSON; the message gives the parse error position."""


def parse_answer(text: str) -> Any:
    """The JSON value of a whole answer (§2.6 steps 1–3); AnswerError when it is not JSON or
    is nested too deep."""
    candidate = drop_trailing_commas(first_object(strip_fences(text)))
    try:
        return bounded_json_loads(candidate)
    except json.JSONDecodeError as exc:
        raise AnswerError(where_json_failed(exc)) from None
    except TooDeep as exc:
        raise AnswerError(str(exc)) from None


def where_json_failed(exc: json.JSONDecodeError) -> str:
    """The parse error and its place: "Invalid control character at line 1 column 96" (some
    of json's messages end in "at" already; it is not said twice)."""
    return f"{exc.msg.removesuffix(' at')} at line {exc.lineno} column {exc.colno}"


def salvage(text: str) -> tuple[Any, int]:
    """What a cut-off answer still holds: the envelope closed after the last complete part, or
    just the complete parts; with the number of complete parts (0: nothing to build)."""
    parser = PartsParser()
    parser.feed(text)
    if not parser.parts:
        return None, 0
    start = text.find("{")
    if 0 <= start < parser.offset:
        try:
            data = bounded_json_loads(drop_trailing_commas(text[start : parser.offset] + "]}"))
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("parts"), list):
            return data, len(data["parts"])
    return {"parts": parser.parts}, len(parser.parts)
