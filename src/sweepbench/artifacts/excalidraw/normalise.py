"""Normalisation of each element a model wrote (spec artifacts.md §2.5).

Models write almost-Excalidraw: numbers as strings, ``"null"`` for null, ids missing or
repeated, opacity on a 0-1 scale. Each element is repaired field by field, and every
conversion or rename is written down as a note. Missing bookkeeping fields get Excalidraw's
defaults silently (they are not the model's claims, just the file format's). Calling the
normaliser never drops an element; :meth:`Normaliser.admit` also drops, with a note, the
elements that would draw nothing new (blank texts, repeats: :mod:`.repair`), and turns a
shape's ``label`` into the text element bound to it.

Randomness (replacement ids, missing seeds) comes from an injectable :class:`random.Random`.
The default is seeded with a constant, so the same answer always gives the same scene, and
the live stream and the final build of one answer agree on every id.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from sweepbench.artifacts.excalidraw.repair import (
    Place,
    Pruner,
    label_text,
    move_off,
    rescale_opacity,
    restore_text,
    shape_label,
)

DEFAULT_SEED = 0x5EED
"""Seed of the default generator: the same answer always normalises to the same scene."""

INT_FIELDS = ("seed", "version", "versionNonce", "updated")
"""Integer fields a model sometimes writes as strings."""
NUMBER_FIELDS = (
    "x",
    "y",
    "width",
    "height",
    "angle",
    "strokeWidth",
    "opacity",
    "fontSize",
    "roughness",
)
"""Number fields a model sometimes writes as strings."""

_TEXT_FIELDS = frozenset({"text", "originalText"})
"""Free text is kept verbatim: a label may well read "None" or "true"."""
_NULL_WORDS = frozenset({"null", "None"})
_BOOL_WORDS = {"true": True, "false": False, "True": True, "False": False}
_MAX_INT = 2**31 - 1


def new_rng(seed: int = DEFAULT_SEED) -> random.Random:
    """A generator for replacement ids and seeds (seeded: scenes are reproducible)."""
    return random.Random(seed)


class Normaliser:
    """Repairs the elements of one scene in order; remembers ids so duplicates are caught.

    ``notes`` collects what was changed, ``renamed`` counts missing or duplicate ids,
    ``dropped`` the elements :meth:`admit` left out.
    """

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng if rng is not None else new_rng()
        self.seen: set[str] = set()
        self.notes: list[str] = []
        self.renamed = 0
        self.count = 0
        self.dropped = 0
        self._pruner = Pruner()
        self._labelled: list[Place] = []

    def __call__(self, raw: dict[str, Any]) -> dict[str, Any]:
        """The repaired copy of one element (the input is not modified)."""
        self.count += 1
        return self._repair(raw, _label(self.count, raw))

    def admit(self, raw: dict[str, Any]) -> list[dict[str, Any]]:
        """The repaired copy of the next element of a scene; none (with a note) when it would
        draw nothing new (a blank text, a repeat of an earlier element); a shape with a
        ``label`` comes with the text element that shows it."""
        self.count += 1
        where = _label(self.count, raw)
        raw = restore_text(raw, where, self.notes)
        reason = self._pruner.reason(raw, self.count)
        if reason is not None:
            self.notes.append(f"{where}: {reason}")
            self.dropped += 1
            return []
        label = shape_label(raw)
        if label is None:
            return [self._repair(raw, where)]
        shape = self._repair({k: v for k, v in raw.items() if k != "label"}, where)
        move_off(shape, self._labelled, where, self.notes)
        return [shape, self._label_text(shape, label, where)]

    def _label_text(self, shape: dict[str, Any], label: str, where: str) -> dict[str, Any]:
        """The text element of a shape's label, bound both ways, with a note."""
        text_id = f"{shape['id']}-label"
        if text_id in self.seen:
            text_id = self.new_id()
        text = self._repair(label_text(shape, label, text_id), where)
        bound = shape.get("boundElements")
        shape["boundElements"] = [
            *(bound if isinstance(bound, list) else []),
            {"id": text["id"], "type": "text"},
        ]
        self.notes.append(f"{where}: label {label[:40]!r} drawn as its text {text['id']!r}")
        return text

    def _repair(self, raw: dict[str, Any], where: str) -> dict[str, Any]:
        element = dict(raw)
        for key, value in list(element.items()):
            if not isinstance(value, str) or key in _TEXT_FIELDS:
                continue
            if value in _NULL_WORDS:
                element[key] = None
                self.notes.append(f"{where}: {key} {value!r} read as null")
            elif value in _BOOL_WORDS:
                element[key] = _BOOL_WORDS[value]
                self.notes.append(f"{where}: {key} {value!r} read as {value.lower()}")
        for key in INT_FIELDS:
            self._convert(element, key, _to_int, where)
        for key in NUMBER_FIELDS:
            self._convert(element, key, _to_float, where)
        rescale_opacity(element, where, self.notes)
        self._fix_id(element, where)
        self._fill_defaults(element)
        return element

    def _convert(
        self,
        element: dict[str, Any],
        key: str,
        convert: Callable[[str], float | None],
        where: str,
    ) -> None:
        value = element.get(key)
        if not isinstance(value, str):
            return
        converted = convert(value)
        if converted is None:
            self.notes.append(f"{where}: {key} {value!r} is not a number; left as it is")
        else:
            element[key] = converted
            self.notes.append(f"{where}: {key} {value!r} converted to {converted!r}")

    def _fix_id(self, element: dict[str, Any], where: str) -> None:
        value = element.get("id")
        if isinstance(value, int | float) and not isinstance(value, bool):
            text = str(value)
            self.notes.append(f"{where}: id {value!r} converted to {text!r}")
            value = element["id"] = text
        if not isinstance(value, str) or not value:
            new = self.new_id()
            self.notes.append(f"{where}: no id; named {new}")
        elif value in self.seen:
            new = self.new_id()
            self.notes.append(
                f"{where}: duplicate id {value!r} renamed {new} (a repeated id would replace "
                "the earlier element on the canvas)"
            )
        else:
            self.seen.add(value)
            return
        element["id"] = new
        self.seen.add(new)
        self.renamed += 1

    def new_id(self) -> str:
        """``el-`` and 12 random hex digits, unused in this scene."""
        while True:
            candidate = f"el-{self.rng.getrandbits(48):012x}"
            if candidate not in self.seen:
                return candidate

    def _positive(self) -> int:
        return self.rng.randint(1, _MAX_INT)

    def _fill_defaults(self, element: dict[str, Any]) -> None:
        # None counts as missing where Excalidraw cannot take null; boundElements may be null.
        for key, default in (
            ("isDeleted", False),
            ("updated", 1),
            ("version", 1),
            ("locked", False),
            ("opacity", 100),
        ):
            if element.get(key) is None:
                element[key] = default
        for key in ("seed", "versionNonce"):
            if element.get(key) is None:
                element[key] = self._positive()
        if element.get("groupIds") is None:
            element["groupIds"] = []
        if "boundElements" not in element:
            element["boundElements"] = []
        for key in ("frameId", "link"):
            element.setdefault(key, None)
        if element.get("type") == "text":
            element.setdefault("roundness", None)


def _label(index: int, element: dict[str, Any]) -> str:
    kind = element.get("type")
    ident = element.get("id")
    label = f"element {index}"
    if isinstance(kind, str) and kind:
        label += f" ({kind[:20]}"
        label += f" {ident[:40]!r})" if isinstance(ident, str) and ident else ")"
    return label


def _to_float(text: str) -> float | None:
    """A finite float from a string, or None (``"nan"`` and ``"inf"`` are not numbers here)."""
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _to_int(text: str) -> int | None:
    """An int from ``"42"`` or ``"42.0"``, or None."""
    try:
        return int(text.strip())
    except ValueError:
        value = _to_float(text)
        return int(value) if value is not None and value.is_integer() else None
