"""A scene as a self-contained SVG, without a browser (spec sweeps.md §18.3: drawings are
inline SVG in the offline HTML export; ``--out`` writes ``.svg`` per cell).

Clean vector shapes, not Excalidraw's hand-drawn strokes: rectangles, ellipses, diamonds,
lines and arrows with their heads, text (free or inside a shape), freedraw, frames, and a
placeholder box for images and embeds. The output is deterministic for a given scene and
references nothing outside itself: no fonts, no images, no links; colours are whitelisted,
so a model-written value can never smuggle in a ``url(...)``. Any value that is not a
usable number falls back to a default rather than raising.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

from sweepbench.artifacts.excalidraw import svgutil as sv
from sweepbench.artifacts.excalidraw.prompt import INK
from sweepbench.artifacts.excalidraw.svgutil import Box

SVG_NS = "http://www.w3.org/2000/svg"
PADDING = 20.0
"""Margin around the drawing's bounds."""
EMPTY_CANVAS = (0.0, 0.0, 1200.0, 800.0)
"""The bounds of a scene with nothing drawable: the canvas the prompt lays out on."""

_FONTS = {
    1: "Virgil, 'Comic Sans MS', 'Segoe Print', cursive",
    2: "Helvetica, Arial, sans-serif",
    3: "'Cascadia Code', Menlo, Consolas, monospace",
    5: "Excalifont, 'Comic Sans MS', cursive",
    6: "Nunito, 'Segoe UI', sans-serif",
    7: "'Lilita One', Impact, sans-serif",
    8: "'Comic Shanns', Menlo, monospace",
}
_SHAPES = frozenset({"rectangle", "ellipse", "diamond"})
_LINEAR = frozenset({"arrow", "line"})
_PLACEHOLDERS = frozenset({"image", "embeddable", "iframe"})
_HEAD_SIZE = {"arrow": 20.0, "bar": 12.0, "dot": 8.0, "circle": 8.0, "circle_outline": 8.0}


def render_svg(scene: Mapping[str, Any]) -> bytes:
    """The scene as UTF-8 SVG bytes (deleted elements and unknown types are not drawn)."""
    raw = scene.get("elements")
    elements = [
        e
        for e in (raw if isinstance(raw, list) else [])
        if isinstance(e, dict) and e.get("isDeleted") is not True
    ]
    by_id = {e["id"]: e for e in elements if isinstance(e.get("id"), str)}
    canvas = _Canvas()
    for element in elements:
        canvas.draw(element, by_id)
    left, top, right, bottom = canvas.bounds() or EMPTY_CANVAS
    left, top = left - PADDING, top - PADDING
    width, height = right - left + PADDING, bottom - top + PADDING
    app_state = scene.get("appState")
    background = sv.colour(
        app_state.get("viewBackgroundColor") if isinstance(app_state, dict) else None, "#ffffff"
    )
    view = f"{sv.fmt(left)} {sv.fmt(top)} {sv.fmt(width)} {sv.fmt(height)}"
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="{SVG_NS}" width="{sv.fmt(width)}" height="{sv.fmt(height)}" '
        f'viewBox="{view}">\n'
        f'<rect {sv.xywh(left, top, width, height)} fill="{sv.fill_colour(background)}"/>\n'
    )
    patterns = "".join(markup for _, markup in canvas.patterns.values())
    defs = f"<defs>{patterns}</defs>\n" if patterns else ""
    return (head + defs + "".join(canvas.parts) + "</svg>\n").encode("utf-8")


class _Canvas:
    """Accumulates SVG fragments, fill patterns and the drawing's bounds."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.patterns: dict[tuple[str, str], tuple[str, str]] = {}
        self.boxes: list[Box] = []

    def bounds(self) -> Box | None:
        if not self.boxes:
            return None
        return (
            min(b[0] for b in self.boxes),
            min(b[1] for b in self.boxes),
            max(b[2] for b in self.boxes),
            max(b[3] for b in self.boxes),
        )

    def draw(self, el: dict[str, Any], by_id: Mapping[str, dict[str, Any]]) -> None:
        kind = el.get("type")
        if kind in _SHAPES or kind in _PLACEHOLDERS or kind in ("frame", "magicframe"):
            box = sv.box(el)
            body = self._shape(el, str(kind), box)
        elif kind in _LINEAR or kind == "freedraw":
            points = sv.points(el)
            if not points:
                return
            xs, ys = [p[0] for p in points], [p[1] for p in points]
            box = (min(xs), min(ys), max(xs), max(ys))
            body = _freedraw(el, points) if kind == "freedraw" else self._linear(el, points)
        elif kind == "text":
            box, body = _text(el, by_id)
        else:
            return
        angle = sv.num(el.get("angle"))
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        attrs = ""
        if angle:
            attrs += f' transform="rotate({sv.fmt(math.degrees(angle))} {sv.fmt(cx)} {sv.fmt(cy)})"'
            box = _rotated(box, angle, cx, cy)
        opacity = min(max(sv.num(el.get("opacity"), 100.0), 0.0), 100.0) / 100
        if opacity < 1:
            attrs += f' opacity="{sv.fmt(opacity)}"'
        self.boxes.append(box)
        self.parts.append(f"<g{attrs}>{body}</g>\n")

    def _shape(self, el: dict[str, Any], kind: str, box: Box) -> str:
        left, top, right, bottom = box
        w, h = right - left, bottom - top
        if kind in _PLACEHOLDERS:
            return (
                f"<rect {sv.xywh(left, top, w, h)} "
                'fill="#f1f3f5" stroke="#adb5bd" stroke-dasharray="6 6"/>'
            )
        if kind in ("frame", "magicframe"):
            name = el.get("name")
            label = (
                f'<text x="{sv.fmt(left)}" y="{sv.fmt(top - 6)}" font-family="{_FONTS[2]}" '
                f'font-size="14" fill="#868e96">{sv.text_content(name)}</text>'
                if isinstance(name, str) and name
                else ""
            )
            return f'<rect {sv.xywh(left, top, w, h)} rx="8" fill="none" stroke="#bbb"/>{label}'
        paint = self._fill(el) + _stroke(el)
        if kind == "ellipse":
            return (
                f'<ellipse cx="{sv.fmt(left + w / 2)}" cy="{sv.fmt(top + h / 2)}" '
                f'rx="{sv.fmt(w / 2)}" ry="{sv.fmt(h / 2)}"{paint}/>'
            )
        if kind == "diamond":
            cx, cy = left + w / 2, top + h / 2
            corners = " ".join(
                f"{sv.fmt(px)},{sv.fmt(py)}"
                for px, py in ((cx, top), (right, cy), (cx, bottom), (left, cy))
            )
            return f'<polygon points="{corners}" stroke-linejoin="round"{paint}/>'
        radius = _corner_radius(el.get("roundness"), min(w, h))
        rounded = f' rx="{sv.fmt(radius)}" ry="{sv.fmt(radius)}"' if radius else ""
        return f"<rect {sv.xywh(left, top, w, h)}{rounded}{paint}/>"

    def _fill(self, el: dict[str, Any]) -> str:
        background = sv.colour(el.get("backgroundColor"), "transparent")
        if background == "transparent":
            return ' fill="none"'
        style = el.get("fillStyle")
        if style in (None, "solid") or not isinstance(style, str):
            return f' fill="{background}"'
        key = ("cross" if style == "cross-hatch" else "hachure", background)
        if key not in self.patterns:
            pid = f"fill-{len(self.patterns) + 1}"
            lines = f'<line x1="0" y1="0" x2="0" y2="8" stroke="{background}" stroke-width="2"/>'
            if key[0] == "cross":
                lines += f'<line x1="0" y1="4" x2="8" y2="4" stroke="{background}"/>'
            self.patterns[key] = (
                pid,
                f'<pattern id="{pid}" patternUnits="userSpaceOnUse" width="8" height="8" '
                f'patternTransform="rotate(-45)">{lines}</pattern>',
            )
        return f' fill="url(#{self.patterns[key][0]})"'

    def _linear(self, el: dict[str, Any], points: list[tuple[float, float]]) -> str:
        path = _path(points, curved=el.get("roundness") is not None)
        closed = len(points) > 2 and points[0] == points[-1] and el.get("type") == "line"
        fill = self._fill(el) if closed else ' fill="none"'
        out = f'<path d="{path}" stroke-linecap="round" stroke-linejoin="round"{fill}'
        out += _stroke(el) + "/>"
        is_arrow = el.get("type") == "arrow"
        start = el.get("startArrowhead")
        end = el.get("endArrowhead", "arrow" if is_arrow else None)
        colour = sv.colour(el.get("strokeColor"), INK)
        width = max(sv.num(el.get("strokeWidth"), 1.0), 0.0)
        if isinstance(start, str):
            out += _arrowhead(start, points, colour, width)
        if isinstance(end, str):
            out += _arrowhead(end, points[::-1], colour, width)
        return out


def _path(points: list[tuple[float, float]], *, curved: bool) -> str:
    """Path data through the points: straight segments, or for a rounded line a smooth
    Catmull-Rom curve through every point, as Excalidraw draws ``roundness`` lines."""
    start = f"M {sv.fmt(points[0][0])} {sv.fmt(points[0][1])}"
    if not curved or len(points) < 3:
        return start + "".join(f" L {sv.fmt(x)} {sv.fmt(y)}" for x, y in points[1:])
    padded = [points[0], *points, points[-1]]
    out = [start]
    for i in range(1, len(padded) - 2):
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = padded[i - 1 : i + 3]
        c1 = (x1 + (x2 - x0) / 6, y1 + (y2 - y0) / 6)
        c2 = (x2 - (x3 - x1) / 6, y2 - (y3 - y1) / 6)
        out.append(
            f" C {sv.fmt(c1[0])} {sv.fmt(c1[1])} {sv.fmt(c2[0])} {sv.fmt(c2[1])} "
            f"{sv.fmt(x2)} {sv.fmt(y2)}"
        )
    return "".join(out)


def _arrowhead(kind: str, points: list[tuple[float, float]], colour: str, width: float) -> str:
    """A head at ``points[0]``, pointing away from the next distinct point."""
    tip = points[0]
    toward = next((p for p in points[1:] if p != tip), None)
    if toward is None:
        return ""
    dx, dy = tip[0] - toward[0], tip[1] - toward[1]
    segment = math.hypot(dx, dy)
    size = min(_HEAD_SIZE.get(kind, 15.0) + 2 * width, segment / 2)
    ux, uy = dx / segment, dy / segment
    stroke = f'stroke="{colour}" stroke-width="{sv.fmt(width)}" stroke-linecap="round"'

    def at(back: float, side: float) -> str:
        return f"{sv.fmt(tip[0] - ux * back - uy * side)},{sv.fmt(tip[1] - uy * back + ux * side)}"

    if kind in ("dot", "circle", "circle_outline"):
        fill = "#ffffff" if kind == "circle_outline" else colour
        return (
            f'<circle cx="{sv.fmt(tip[0] - ux * size / 2)}" cy="{sv.fmt(tip[1] - uy * size / 2)}" '
            f'r="{sv.fmt(size / 2)}" fill="{fill}" {stroke}/>'
        )
    if kind == "bar":
        return f'<polyline points="{at(0, size / 2)} {at(0, -size / 2)}" fill="none" {stroke}/>'
    if kind.startswith(("triangle", "diamond")):
        fill = "#ffffff" if kind.endswith("_outline") else colour
        if kind.startswith("triangle"):
            shape = f"{at(0, 0)} {at(size, size / 2)} {at(size, -size / 2)}"
        else:
            shape = f"{at(0, 0)} {at(size / 2, size / 3)} {at(size, 0)} {at(size / 2, -size / 3)}"
        return f'<polygon points="{shape}" fill="{fill}" stroke-linejoin="round" {stroke}/>'
    # "arrow" and anything unknown (crowfoot…): an open chevron.
    spread = size * math.tan(math.radians(25))
    return (
        f'<polyline points="{at(size, spread)} {at(0, 0)} {at(size, -spread)}" fill="none" '
        f'stroke-linejoin="round" {stroke}/>'
    )


def _freedraw(el: dict[str, Any], points: list[tuple[float, float]]) -> str:
    colour = sv.colour(el.get("strokeColor"), INK)
    width = max(sv.num(el.get("strokeWidth"), 1.0), 0.5) * 2
    if len(points) == 1:
        x, y = points[0]
        return (
            f'<circle cx="{sv.fmt(x)}" cy="{sv.fmt(y)}" r="{sv.fmt(width / 2)}" fill="{colour}"/>'
        )
    path = "M " + " L ".join(f"{sv.fmt(x)} {sv.fmt(y)}" for x, y in points)
    return (
        f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="{sv.fmt(width)}" '
        'stroke-linecap="round" stroke-linejoin="round"/>'
    )


def _text(el: dict[str, Any], by_id: Mapping[str, dict[str, Any]]) -> tuple[Box, str]:
    """Text laid out free at its own box, or inside its container like Excalidraw does."""
    size = sv.num(el.get("fontSize"), 20.0)
    size = size if size > 0 else 20.0
    line_height = sv.num(el.get("lineHeight"), 1.25)
    line_height = line_height if line_height > 0 else 1.25
    raw = el.get("text")
    lines = ("" if raw is None else str(raw)).split("\n")
    block = size * line_height * len(lines)
    left, top, right, bottom = sv.box(el)
    if right - left <= 0:
        right = left + max(max(len(s) for s in lines) * size * 0.6, size * 3)
    align = el.get("textAlign")
    valign = el.get("verticalAlign")
    container = by_id.get(el["containerId"]) if isinstance(el.get("containerId"), str) else None
    if container is not None and container.get("type") in _SHAPES:
        left, top, right, bottom = _inner_box(container)
        if valign == "middle" or valign is None:
            top = (top + bottom - block) / 2
        elif valign == "bottom":
            top = bottom - block
        align = align if align in ("left", "right") else "center"
    elif container is not None and container.get("type") in _LINEAR:
        mid = _midpoint(sv.points(container))
        if mid is not None:
            width = right - left
            left, top = mid[0] - width / 2, mid[1] - block / 2
            right, align = left + width, "center"
    anchor, x = "start", left
    if align == "center":
        anchor, x = "middle", (left + right) / 2
    elif align == "right":
        anchor, x = "end", right
    family = el.get("fontFamily")
    font = _FONTS.get(family if isinstance(family, int) else 2, _FONTS[2])
    colour = sv.colour(el.get("strokeColor"), INK)
    spans = "".join(
        f'<tspan x="{sv.fmt(x)}" y="{sv.fmt(top + (i + 0.5) * size * line_height + 0.35 * size)}">'
        f"{sv.text_content(line)}</tspan>"
        for i, line in enumerate(lines)
        if line
    )
    body = (
        f'<text font-family="{font}" font-size="{sv.fmt(size)}" fill="{sv.fill_colour(colour)}" '
        f'text-anchor="{anchor}" xml:space="preserve">{spans}</text>'
    )
    # Bounds: the box, widened to the estimated ink width so long lines are not clipped.
    ink = max(len(line) for line in lines) * size * 0.6
    ink_left = {"start": x, "middle": x - ink / 2, "end": x - ink}[anchor]
    bounds = (min(left, ink_left), top, max(right, ink_left + ink), max(bottom, top + block))
    return bounds, body


def _inner_box(shape: dict[str, Any]) -> Box:
    """The area a bound text may use: the shape's box (for ellipses and diamonds the
    inscribed rectangle) less Excalidraw's 5 px bound-text padding."""
    left, top, right, bottom = sv.box(shape)
    w, h = right - left, bottom - top
    if shape.get("type") == "ellipse":
        inset_x, inset_y = w * (1 - math.sqrt(0.5)) / 2, h * (1 - math.sqrt(0.5)) / 2
    elif shape.get("type") == "diamond":
        inset_x, inset_y = w / 4, h / 4
    else:
        inset_x = inset_y = 0.0
    return (left + inset_x + 5, top + inset_y + 5, right - inset_x - 5, bottom - inset_y - 5)


def _midpoint(points: list[tuple[float, float]]) -> tuple[float, float] | None:
    """The point halfway along a polyline."""
    if not points:
        return None
    pairs = list(itertools.pairwise(points))
    lengths = [math.dist(a, b) for a, b in pairs]
    remaining = sum(lengths) / 2
    for (a, b), length in zip(pairs, lengths, strict=True):
        if length and remaining <= length:
            t = remaining / length
            return a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t
        remaining -= length
    return points[0]


def _rotated(box: Box, angle: float, cx: float, cy: float) -> Box:
    cos, sin = math.cos(angle), math.sin(angle)
    xs, ys = [], []
    for px, py in ((box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3])):
        xs.append(cx + (px - cx) * cos - (py - cy) * sin)
        ys.append(cy + (px - cx) * sin + (py - cy) * cos)
    return (min(xs), min(ys), max(xs), max(ys))


def _corner_radius(roundness: Any, size: float) -> float:
    """Excalidraw's corner radius: adaptive (type 3) is a quarter of the short side up to
    32 px; proportional (type 1, 2) is always a quarter."""
    kind = roundness.get("type") if isinstance(roundness, dict) else None
    if kind == 3:
        return size * 0.25 if size <= 128 else 32.0
    if kind in (1, 2):
        return size * 0.25
    return 0.0


def _stroke(el: dict[str, Any]) -> str:
    colour = sv.colour(el.get("strokeColor"), INK)
    if colour == "transparent":
        return ' stroke="none"'
    width = max(sv.num(el.get("strokeWidth"), 1.0), 0.0)
    out = f' stroke="{colour}" stroke-width="{sv.fmt(width)}"'
    style = el.get("strokeStyle")
    if style == "dashed":
        out += f' stroke-dasharray="8 {sv.fmt(8 + width)}"'
    elif style == "dotted":
        out += f' stroke-dasharray="1.5 {sv.fmt(6 + width)}"'
    return out
