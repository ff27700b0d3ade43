"""Repairs for elements that would draw nothing, or nothing new, and the test of whether an
element draws anything at all.

Small models write Excalidraw that looks complete but shows a blank canvas: opacity on a 0-1
scale (Excalidraw's is 0-100, so 0.3 is all but invisible), text elements with no text, and
the same element again and again at one spot. Each repair is written down as a note, like the
normaliser's (:mod:`sweepbench.artifacts.excalidraw.normalise`). The local model's grammar
(:data:`~sweepbench.artifacts.excalidraw.schema.LOCAL_SCENE_SCHEMA`) has it write a shape's
text as the shape's ``label``; :func:`label_text` makes that the bound text element
Excalidraw expects.
"""

from __future__ import annotations

import json
import math
from typing import Any

from sweepbench.artifacts.excalidraw import svgutil as sv
from sweepbench.artifacts.excalidraw.prompt import INK

BOOKKEEPING = frozenset({"id", "seed", "version", "versionNonce", "updated"})
"""Fields that differ between two copies of an element without changing what is drawn."""
SHAPES = frozenset({"rectangle", "ellipse", "diamond"})
BOXES = SHAPES | {"image", "embeddable", "iframe", "frame", "magicframe"}
LINEAR = frozenset({"arrow", "line"})
DRAWN_TYPES = BOXES | LINEAR | {"freedraw", "text"}
"""The element types the renderer draws (others are skipped)."""


LABEL_SIZE = 20
"""Font size of a text made from a shape's label."""
STACK_GAP = 40
"""Space left between a labelled shape moved off another and that other."""

Place = tuple[float, float, float, float]
"""A shape's x, y, width and height."""


def shape_label(element: dict[str, Any]) -> str | None:
    """The ``label`` a shape carries (the local grammar's way of writing its text), if any."""
    label = element.get("label")
    if _kind(element) in SHAPES and isinstance(label, str) and label.strip():
        return label
    return None


def move_off(shape: dict[str, Any], taken: list[Place], where: str, notes: list[str]) -> None:
    """A labelled shape written over an earlier one (their labels would print over each
    other) moves down below it, and on until it overlaps none. ``taken`` holds the places of
    the labelled shapes so far."""
    numbers = [sv.num(shape.get(key), math.nan) for key in ("x", "y", "width", "height")]
    if not all(math.isfinite(n) for n in numbers):
        return
    x, y, width, height = numbers
    start = y
    while under := [p for p in taken if _overlap((x, y, width, height), p)]:
        y = max(p[1] + abs(p[3]) for p in under) + STACK_GAP
    taken.append((x, y, width, height))
    if y != start:
        shape["y"] = y
        notes.append(f"{where}: over an earlier labelled shape; moved down to y {y:g}")


def _overlap(a: Place, b: Place) -> bool:
    """Whether two places (x, y, width, height; sizes may be negative) share any area."""
    (al, at, ar, ab), (bl, bt, br, bb) = (_edges(a), _edges(b))
    return al < br and bl < ar and at < bb and bt < ab


def _edges(place: Place) -> tuple[float, float, float, float]:
    x, y, width, height = place
    return min(x, x + width), min(y, y + height), max(x, x + width), max(y, y + height)


def label_text(shape: dict[str, Any], label: str, text_id: str) -> dict[str, Any]:
    """The text element, bound to ``shape``, that shows ``label`` centred inside it."""
    left, top, right, bottom = sv.box(shape)
    height = LABEL_SIZE * 1.25
    return {
        "id": text_id,
        "type": "text",
        "x": left + 5,
        "y": (top + bottom - height) / 2,
        "width": max(right - left - 10, 0),
        "height": height,
        "angle": 0,
        "strokeColor": INK,
        "backgroundColor": "transparent",
        "text": label,
        "originalText": label,
        "fontSize": LABEL_SIZE,
        "fontFamily": 5,
        "textAlign": "center",
        "verticalAlign": "middle",
        "containerId": shape.get("id"),
        "lineHeight": 1.25,
        "autoResize": True,
    }


def rescale_opacity(element: dict[str, Any], where: str, notes: list[str]) -> None:
    """Opacity written on a 0-1 scale (0 < opacity <= 1) becomes Excalidraw's 0-100."""
    value = element.get("opacity")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return
    if 0 < value <= 1:
        scaled = round(value * 100)
        element["opacity"] = scaled
        notes.append(f"{where}: opacity {value!r} read on a 0-1 scale as {scaled} (of 100)")


def is_blank_text(element: dict[str, Any]) -> bool:
    """A text element with no text to show."""
    if element.get("type") != "text":
        return False
    text = element.get("text")
    return text is None or not str(text).strip()


def restore_text(element: dict[str, Any], where: str, notes: list[str]) -> dict[str, Any]:
    """A text element whose ``text`` is blank but whose ``originalText`` is not gets that
    text back (a copy; the input is not modified)."""
    original = element.get("originalText")
    if not is_blank_text(element) or not isinstance(original, str) or not original.strip():
        return element
    notes.append(f"{where}: empty text filled from originalText {original[:40]!r}")
    return {**element, "text": original}


class Pruner:
    """Decides which of a scene's elements are dropped: blank texts, and any element that
    repeats an earlier one in everything but its id and other bookkeeping."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def reason(self, element: dict[str, Any], index: int) -> str | None:
        """Why element ``index`` (1-based, as the model wrote it) is dropped, or None."""
        if is_blank_text(element):
            return "a text element with no text; dropped"
        if _kind(element) not in DRAWN_TYPES:
            return None
        key = _content_key(element)
        first = self._seen.setdefault(key, index)
        if first != index:
            return f"the same as element {first} (only its id differs); dropped"
        return None


def _kind(element: dict[str, Any]) -> str:
    kind = element.get("type")
    return kind if isinstance(kind, str) else ""


def _content_key(element: dict[str, Any]) -> str:
    content = {k: v for k, v in element.items() if k not in BOOKKEEPING}
    return json.dumps(content, sort_keys=True, default=repr)


def draws_something(element: dict[str, Any]) -> bool:
    """Whether the element puts anything visible on the canvas, as the renderer draws it."""
    kind = _kind(element)
    if element.get("isDeleted") is True or kind not in DRAWN_TYPES:
        return False
    if sv.num(element.get("opacity"), 100.0) <= 0:
        return False
    if kind == "text":
        return not is_blank_text(element)
    if kind in LINEAR:
        return len(set(sv.points(element))) >= 2
    if kind == "freedraw":
        return bool(sv.points(element))
    left, top, right, bottom = sv.box(element)
    if right - left <= 0 or bottom - top <= 0:  # a box with no area draws nothing in SVG
        return False
    return kind not in SHAPES or _painted(element)


def _painted(element: dict[str, Any]) -> bool:
    """A shape has a visible stroke or fill."""
    stroke = sv.colour(element.get("strokeColor"), INK)
    stroked = stroke != "transparent" and sv.num(element.get("strokeWidth"), 1.0) > 0
    return stroked or sv.colour(element.get("backgroundColor"), "transparent") != "transparent"
