"""Small, safe conversions for the SVG renderer: numbers that never raise, colours from a
whitelist, text XML can hold, element boxes and points."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any
from xml.sax.saxutils import escape

_COLOUR = re.compile(r"#[0-9a-fA-F]{3,8}|[a-zA-Z]{3,20}|(?:rgb|rgba|hsl|hsla)\([0-9.,%\s]{1,40}\)")
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

Box = tuple[float, float, float, float]
"""left, top, right, bottom"""


def box(el: dict[str, Any]) -> Box:
    """An element's box from x, y, width, height (negative sizes flipped, bad values 0)."""
    x, y = num(el.get("x")), num(el.get("y"))
    w, h = num(el.get("width")), num(el.get("height"))
    return (min(x, x + w), min(y, y + h), max(x, x + w), max(y, y + h))


def points(el: dict[str, Any]) -> list[tuple[float, float]]:
    """Absolute points of a linear or freedraw element (unusable entries skipped)."""
    raw = el.get("points")
    if not isinstance(raw, list):
        return []
    x, y = num(el.get("x")), num(el.get("y"))
    out: list[tuple[float, float]] = []
    for point in raw:
        if isinstance(point, Sequence) and not isinstance(point, str) and len(point) >= 2:
            px, py = num(point[0], math.nan), num(point[1], math.nan)
            ax, ay = x + px, y + py
            if math.isfinite(ax) and math.isfinite(ay):
                out.append((ax, ay))
    return out


def num(value: Any, default: float = 0.0) -> float:
    """A finite float, or ``default`` for anything else (strings, None, bools, 1e400)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    try:
        number = float(value)
    except OverflowError:
        return default
    return number if math.isfinite(number) else default


def fmt(value: float) -> str:
    """A number for an attribute: at most two decimals, no trailing zeros, no ``-0``."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def xywh(left: float, top: float, width: float, height: float) -> str:
    """The position and size attributes of a ``<rect>``."""
    return f'x="{fmt(left)}" y="{fmt(top)}" width="{fmt(width)}" height="{fmt(height)}"'


def colour(value: Any, default: str) -> str:
    """A CSS colour from a whitelist of forms (hex, a name, rgb()/hsl()), else ``default``."""
    if isinstance(value, str) and _COLOUR.fullmatch(value.strip()):
        return value.strip()
    return default


def fill_colour(colour: str) -> str:
    """An SVG paint for a colour: Excalidraw's ``transparent`` is ``none``."""
    return "none" if colour == "transparent" else colour


def text_content(value: Any) -> str:
    """Text safe inside an element: characters XML cannot hold removed, markup escaped."""
    return escape(_XML_INVALID.sub("", str(value)))
