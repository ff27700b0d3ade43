"""Reading elements out of a model's answer: incrementally while it streams (spec
artifacts.md §2.4), or from the whole answer at once (§2.6).

Both paths normalise every element (§2.5) and never raise on bad input: a malformed element
is dropped, a malformed answer is an ``error`` string, a cut-off answer keeps the elements
that completed before the cut. Both drop, with a note, elements that would draw nothing new
(blank texts, repeats of an earlier element: :meth:`Normaliser.admit`).
"""

from __future__ import annotations

import copy
import json
import math
import random
import re
from dataclasses import dataclass, field
from typing import Any

from sweepbench.artifacts.excalidraw.normalise import Normaliser
from sweepbench.artifacts.jsontext import drop_trailing_commas, first_object, strip_fences

_ARRAY_START = re.compile(r'"elements"\s*:\s*\[')
_ARRAY_PREFIX = re.compile(r'"elements"\s*(?::\s*)?\Z')
"""A tail of the buffer that may still become the start of the array."""
_KEY_PREFIX_LEN = len('"elements')
"""Longest tail kept when nothing matches: ``"elements`` may be split across deltas."""
_STRING_STOP = re.compile(r'["\\]')
"""Inside a string only a quote or a backslash matters."""
_STRUCTURE = re.compile(r'["{}\]]')
"""Outside strings: a string opening, braces, and the array's end."""

ENVELOPE_DEFAULTS: dict[str, Any] = {
    "type": "excalidraw",
    "version": 2,
    "source": "sweepbench",
    "elements": [],
    "appState": {"viewBackgroundColor": "#ffffff", "gridSize": None},
    "files": {},
}
"""The scene envelope the prompt asks for (§2.2 item 1); missing fields are filled from it."""


class ElementStream:
    """Feeds on text deltas of any size and returns each element as its braces balance.

    The state persists across deltas: the buffer (the array's opening while it is being
    looked for, then the text of the element in progress), the brace depth, and whether the
    scan is inside a string or just after a backslash. Each delta is scanned once, from
    where the last one ended. Any chunking of one answer, down to one character at a time,
    gives the same elements.
    """

    def __init__(self, rng: random.Random | None = None) -> None:
        self.normalise = Normaliser(rng)
        self.found = False
        """The ``"elements": [`` opening has been seen."""
        self.closed = False
        """The array's closing ``]`` has been seen; later input is ignored."""
        self.elements: list[dict[str, Any]] = []
        """Every element emitted so far, normalised."""
        self.dropped = 0
        """Balanced candidates that were not a JSON object (dropped silently)."""
        self._head = ""
        self._parts: list[str] = []
        self._depth = 0
        self._in_string = False
        self._escape = False

    @property
    def notes(self) -> list[str]:
        """Every conversion and rename applied to the emitted elements."""
        return self.normalise.notes

    @property
    def renamed(self) -> int:
        """Missing or duplicate ids replaced."""
        return self.normalise.renamed

    @property
    def pending(self) -> bool:
        """An element has started but not closed (it is discarded if the stream ends now)."""
        return self._depth > 0

    def feed(self, text: str) -> list[dict[str, Any]]:
        """Consume a delta; return the elements it completed, normalised, in order."""
        if self.closed or not text:
            return []
        if not self.found:
            self._head += text
            match = _ARRAY_START.search(self._head)
            if match is None:
                tail = _ARRAY_PREFIX.search(self._head)
                keep = tail.start() if tail else len(self._head) - _KEY_PREFIX_LEN
                self._head = self._head[max(keep, 0) :]
                return []
            self.found = True
            text, self._head = self._head[match.end() :], ""
        return self._scan(text)

    def _scan(self, text: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        start = 0  # where the element in progress begins in this delta
        i, n = 0, len(text)
        if self._escape and n:
            self._escape, i = False, 1  # the escaped character ends the last delta's escape
        while i < n:
            if self._in_string:
                match = _STRING_STOP.search(text, i)
                if match is None:
                    break
                j = match.start()
                if text[j] == "\\":
                    if j + 1 == n:
                        self._escape = True
                    i = j + 2
                else:
                    self._in_string, i = False, j + 1
                continue
            match = _STRUCTURE.search(text, i)
            if match is None:
                break
            j = match.start()
            ch, i = text[j], j + 1
            if ch == '"':
                self._in_string = True
            elif ch == "{":
                if self._depth == 0:
                    start = j
                self._depth += 1
            elif ch == "}" and self._depth > 0:
                self._depth -= 1
                if self._depth == 0:
                    self._parts.append(text[start : j + 1])
                    self._emit("".join(self._parts), out)
                    self._parts = []
            elif ch == "]" and self._depth == 0:
                self.closed = True
                self._parts = []
                return out
        if self._depth > 0:
            self._parts.append(text[start:])
        return out

    def _emit(self, candidate: str, out: list[dict[str, Any]]) -> None:
        value = loads(candidate)
        if not isinstance(value, dict):
            self.dropped += 1
            return
        admitted = self.normalise.admit(value)
        self.elements.extend(admitted)
        out.extend(admitted)


@dataclass
class ParsedScene:
    """The outcome of parsing a whole answer (§2.6)."""

    scene: dict[str, Any] | None
    """The scene with its envelope filled in, or None when no JSON object could be read."""
    notes: list[str] = field(default_factory=list)
    renamed: int = 0
    error: str = ""
    """Why nothing could be read (empty on success)."""

    @property
    def elements(self) -> list[dict[str, Any]]:
        """The scene's normalised elements (empty when there is no scene)."""
        return list(self.scene["elements"]) if self.scene is not None else []


def parse_response(text: str, rng: random.Random | None = None) -> ParsedScene:
    """Parse a whole answer: strip fences, take the first balanced object, drop trailing
    commas, parse, normalise every element and fill the envelope (§2.6)."""
    raw, error = load_scene_object(text)
    if raw is None:
        return ParsedScene(None, error=error)
    notes: list[str] = []
    elements = raw.get("elements")
    if elements is None:
        elements = []
        notes.append("the scene has no elements array")
    elif not isinstance(elements, list):
        notes.append(f"elements is a {type(elements).__name__}, not an array; ignored")
        elements = []
    normalise = Normaliser(rng)
    kept: list[dict[str, Any]] = []
    for index, item in enumerate(elements, start=1):
        if isinstance(item, dict):
            kept.extend(normalise.admit(item))
        else:
            notes.append(f"item {index} of elements is not an object; dropped")
    scene = fill_envelope(raw, kept, notes)
    return ParsedScene(scene, notes + normalise.notes, normalise.renamed)


def fill_envelope(
    raw: dict[str, Any] | None, elements: list[dict[str, Any]], notes: list[str]
) -> dict[str, Any]:
    """A full scene around ``elements``: the answer's envelope fields where it gave usable
    ones, the §2.2 defaults for the rest."""
    raw = raw or {}
    scene: dict[str, Any] = {}
    for key, default in ENVELOPE_DEFAULTS.items():
        value = raw.get(key)
        scene[key] = value if value is not None else copy.deepcopy(default)
    scene["elements"] = elements
    if scene["type"] != "excalidraw":
        notes.append(f"scene type {scene['type']!r} replaced with 'excalidraw'")
        scene["type"] = "excalidraw"
    app_state = scene["appState"]
    if not isinstance(app_state, dict):
        notes.append("appState is not an object; defaults used")
        app_state = {}
    # Excalidraw expects a Map for collaborators; a JSON array there breaks loading.
    if app_state.pop("collaborators", None) is not None:
        notes.append("appState.collaborators dropped")
    scene["appState"] = {**ENVELOPE_DEFAULTS["appState"], **app_state}
    if not isinstance(scene["files"], dict):
        notes.append("files is not an object; emptied")
        scene["files"] = {}
    return scene


def load_scene_object(text: str) -> tuple[dict[str, Any] | None, str]:
    """The answer's first JSON object, leniently read (§2.6 steps 1–3), or None and why."""
    body = strip_fences(text)
    if "{" not in body:
        return None, "no JSON object in the answer"
    candidate = first_object(body)
    try:
        value = json.loads(
            drop_trailing_commas(candidate),
            parse_constant=_reject_constant,
            parse_float=_finite_float,
        )
    except (ValueError, RecursionError) as exc:
        return None, f"not JSON: {exc}"
    if not isinstance(value, dict):
        return None, "the answer is not a JSON object"
    return value, ""


def loads(candidate: str) -> Any:
    """Strict JSON, or None: no NaN or Infinity, which no browser can read back."""
    try:
        return json.loads(candidate, parse_constant=_reject_constant, parse_float=_finite_float)
    except (ValueError, RecursionError):
        return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range")
    return value
