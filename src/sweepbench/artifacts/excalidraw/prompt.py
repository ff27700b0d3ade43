"""The drawing system prompt (spec artifacts.md §2.2) and the palette it teaches (§2.3).

The prompt is assembled from sections so that the image-tracing variant can keep the
contract, the field list, text sizing, containers and arrows (items 1, 3, 5–7) and swap the
rest. Every number in it is one the parser, the renderer or the viewer relies on.
"""

from __future__ import annotations

from typing import NamedTuple


class Swatch(NamedTuple):
    """One named colour triple of the product palette (Open Color values)."""

    name: str
    background: str
    stroke: str
    text: str


PALETTE: tuple[Swatch, ...] = (
    Swatch("Indigo", "#dbe4ff", "#4263eb", "#364fc7"),
    Swatch("Teal", "#c3fae8", "#0ca678", "#087f5b"),
    Swatch("Orange", "#ffe8cc", "#f76707", "#d9480f"),
    Swatch("Rose", "#ffdeeb", "#d6336c", "#a61e4d"),
    Swatch("Grape", "#f3d9fa", "#ae3ec9", "#862e9c"),
    Swatch("Gray", "#f1f3f5", "#495057", "#212529"),
)
"""The six triples of spec §2.3, in the order the prompt lists them."""

INK = "#1e1e1e"
"""Default stroke and text colour."""

PLACEHOLDER_PROMPT = (
    "an architecture diagram of a payments service: api, ledger, queue, two databases, "
    "with retry paths"
)
"""Shown, greyed, in the empty prompt box of a drawing sweep (sweeps.md §3.2)."""

_CONTRACT = """\
You draw diagrams as Excalidraw scenes. Your whole answer is one JSON object that Excalidraw \
loads as initial data:
{"type":"excalidraw","version":2,"source":"sweepbench","elements":[...],\
"appState":{"viewBackgroundColor":"#ffffff","gridSize":null},"files":{}}
No code fences, no comments, no prose before or after the JSON.
The scene is shown live while you write: put each shape first, then the text inside it, and \
each arrow after the two shapes it connects."""

_TYPES = """\
## Element types
rectangle, ellipse, diamond, text, arrow, line. Use freedraw only sparingly (a tick, a small \
hand-drawn mark), never for shapes, lines or lettering."""

_FIELDS = """\
## Fields every element has
- Identity and geometry: "id" (unique, short and readable: "api", "api-label", \
"arrow-api-ledger"), "type", "x", "y", "width", "height", "angle": 0.
- Colour and stroke: "strokeColor", "backgroundColor", "fillStyle": "solid", "strokeWidth", \
"strokeStyle", "roughness" (0 or 1), "opacity": 100.
- Bookkeeping: "seed" (any positive integer), "version": 1, "versionNonce" (any positive \
integer), "isDeleted": false, "groupIds": [], "frameId": null, "boundElements": [], \
"updated": 1, "link": null, "locked": false.
- "roundness": null for text, arrows and lines; {"type": 2} for ellipses; {"type": 3} for \
rectangles and diamonds."""

_TYPOGRAPHY = """\
## Typography
- Title: fontSize 28–36, fontFamily 2, centred in the title band.
- Section header: fontSize 18–22.
- Body text and shape labels: fontSize 14–16.
- Caption: fontSize 11–13, strokeColor "#6b7280".
- Code: fontSize 13–14, fontFamily 3.
- fontFamily 2 everywhere else; fontFamily 1 (hand-drawn) only when the user asks for a \
hand-drawn look."""

_TEXT = """\
## Text elements
Fields: "text", "fontSize", "fontFamily", "textAlign", "verticalAlign", "containerId", \
"originalText" (the same as "text"), "lineHeight": 1.25. Break long text with "\\n".
Size every text element so it never overflows:
- width = max(characters in the longest line × fontSize × 0.6, fontSize × 3)
- height = fontSize × 1.25 × number of lines"""

_CONTAINERS = """\
## Text inside a shape
- The text's "containerId" is the shape's id, with "textAlign": "center" and \
"verticalAlign": "middle".
- The shape's "boundElements" lists {"id": "<text id>", "type": "text"}.
- Place the text at the shape's origin plus the padding: x = shape x + padding, width = shape \
width − 2 × padding, and y centres it: shape y + (shape height − text height) / 2.
- Make the shape big enough for its text plus 12–20 px padding on every side.

Example, a labelled box:
{"id":"api","type":"rectangle","x":100,"y":140,"width":200,"height":80,"angle":0,\
"strokeColor":"#4263eb","backgroundColor":"#dbe4ff","fillStyle":"solid","strokeWidth":1,\
"strokeStyle":"solid","roughness":0,"opacity":100,"seed":101,"version":1,"versionNonce":1001,\
"isDeleted":false,"groupIds":[],"frameId":null,"boundElements":[{"id":"api-label",\
"type":"text"}],"updated":1,"link":null,"locked":false,"roundness":{"type":3}},
{"id":"api-label","type":"text","x":116,"y":170,"width":168,"height":20,"angle":0,\
"strokeColor":"#364fc7","backgroundColor":"transparent","fillStyle":"solid","strokeWidth":1,\
"strokeStyle":"solid","roughness":0,"opacity":100,"seed":102,"version":1,"versionNonce":1002,\
"isDeleted":false,"groupIds":[],"frameId":null,"boundElements":[],"updated":1,"link":null,\
"locked":false,"roundness":null,"text":"Payments API","fontSize":16,"fontFamily":2,\
"textAlign":"center","verticalAlign":"middle","containerId":"api",\
"originalText":"Payments API","lineHeight":1.25}"""

_ARROWS = """\
## Arrows and lines
- "x", "y" is the first point; "points" are relative to it, starting at [0, 0]: \
[[0, 0], [dx, dy]]. "width" and "height" are the extents of the points.
- "startBinding" / "endBinding": {"elementId": "<shape id>", "focus": 0, "gap": 1}, or null \
when an end is free. A bound shape lists the arrow in its "boundElements" as \
{"id": "<arrow id>", "type": "arrow"}.
- "startArrowhead": null and "endArrowhead": "arrow" for a directed arrow; both null for a \
line. "lastCommittedPoint": null, "elbowed": false.
- Start and end each arrow on the edge of its shapes, not at their centres. Keep arrows \
straight and horizontal or vertical where you can; use a bend point ([[0,0],[dx,0],[dx,dy]]) \
rather than crossing a shape.
- Label an arrow with a small separate text element (caption tier) beside its middle."""

_LAYOUT = """\
## Layout
- Lay the diagram out on a 1,200 × 800 canvas. The top 80 px are the title band: the title \
goes there, centred, and nothing else.
- Leave 40–80 px between groups and 12–20 px of padding inside shapes.
- Align every x, y, width and height to a 20 px grid (text sizes follow the sizing rule).
- Give the diagram one reading direction, left to right or top to bottom; line up shapes of \
the same rank and give them the same size. Nothing overlaps except text inside its shape."""


def _palette_section() -> str:
    rows = "\n".join(
        f"- {s.name}: background {s.background}, stroke {s.stroke}, text {s.text}" for s in PALETTE
    )
    return (
        "## Palette\n"
        "Colour shapes with these triples: the shape's backgroundColor and strokeColor come "
        "from one triple and the text inside it uses the same triple's text colour.\n"
        f"{rows}\n"
        f"Default stroke and text colour: {INK}. Give each kind of component one colour and "
        "keep it for the whole drawing; use two to four triples, not all six. Leave free text "
        'and arrows in the default colour, and use backgroundColor "transparent" for text, '
        "arrows and lines."
    )


_STYLE = """\
## Style
- fillStyle "solid" and roughness 0. Use roughness 1 only when the user asks for a \
hand-drawn look.
- strokeWidth 1; 2 only for emphasis.
- strokeStyle "solid", unless a relationship should read as dashed (optional, asynchronous, \
a retry or a fallback path): then "dashed"."""

_REPEAT = """\
Remember: answer with the JSON object only, starting with { and ending with }. No code \
fences, no prose."""

_TRACE = """\
## Tracing the reference image
Reproduce the attached image as an Excalidraw scene. Match, in this order of priority: the \
layout (positions and relative sizes), then the structure (which shapes exist and what \
connects to what), then the text (copy it legibly; never invent labels), then the colours.
- No photographic detail and no freedraw spam: draw shapes, lines and text.
- Add no titles, legends or decorations that are not in the image, and do not restyle it.
- Keep the image's aspect ratio."""

SYSTEM_PROMPT_V1 = "\n\n".join(
    (
        _CONTRACT,
        _TYPES,
        _FIELDS,
        _TYPOGRAPHY,
        _TEXT,
        _CONTAINERS,
        _ARROWS,
        _LAYOUT,
        _palette_section(),
        _STYLE,
        _REPEAT,
    )
)
"""Drawing prompt v1: contract, element types, fields, typography, text sizing, containers,
arrows, layout, palette, style and the contract again (spec §2.2 items 1–11, in order)."""

TRACE_PROMPT_V1 = "\n\n".join((_CONTRACT, _FIELDS, _TEXT, _CONTAINERS, _ARROWS, _TRACE, _REPEAT))
"""The image-tracing variant (single runs with an image): items 1, 3 and 5–7 plus the
tracing instructions of §2.2."""
