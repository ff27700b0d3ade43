"""A JSON schema of the scene the drawing prompt asks for, in the strict subset that OpenAI
structured outputs, Anthropic structured outputs and llama.cpp grammars all accept: every
object closed (``additionalProperties: false``) with every property required, nullable
fields as ``[type, "null"]``, element kinds as an ``anyOf`` of four closed shapes (shape,
text, arrow/line, freedraw), no numeric bounds, no recursion.

Spec artifacts.md §2.1 sends drawings *without* a schema (the streaming parser tolerates
prose), so the kind does not attach it by default; it is here for backends that need a
grammar to write JSON at all (a small local model) and for validating stored scenes.
"""

from __future__ import annotations

from typing import Any

from sweepbench.artifacts.excalidraw.prompt import INK, PALETTE


def _closed(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


_NUMBER = {"type": "number"}
_INTEGER = {"type": "integer"}
_STRING = {"type": "string"}
_BOOLEAN = {"type": "boolean"}
_NULL = {"type": "null"}
_POINTS = {"type": "array", "items": {"type": "array", "items": _NUMBER}}
_BINDING = _nullable(_closed({"elementId": _STRING, "focus": _NUMBER, "gap": _NUMBER}))
_ARROWHEAD = _nullable(
    {"type": "string", "enum": ["arrow", "bar", "dot", "triangle", "triangle_outline", "diamond"]}
)


def _common(types: list[str]) -> dict[str, Any]:
    """The fields every element has (spec §2.2 item 3), in the order the prompt lists them."""
    return {
        "id": _STRING,
        "type": {"type": "string", "enum": types},
        "x": _NUMBER,
        "y": _NUMBER,
        "width": _NUMBER,
        "height": _NUMBER,
        "angle": _NUMBER,
        "strokeColor": _STRING,
        "backgroundColor": _STRING,
        "fillStyle": {"type": "string", "enum": ["solid", "hachure", "cross-hatch"]},
        "strokeWidth": _NUMBER,
        "strokeStyle": {"type": "string", "enum": ["solid", "dashed", "dotted"]},
        "roughness": _INTEGER,
        "opacity": _NUMBER,
        "seed": _INTEGER,
        "version": _INTEGER,
        "versionNonce": _INTEGER,
        "isDeleted": _BOOLEAN,
        "groupIds": {"type": "array", "items": _STRING},
        "frameId": _NULL,
        "boundElements": {
            "type": "array",
            "items": _closed(
                {"id": _STRING, "type": {"type": "string", "enum": ["text", "arrow"]}}
            ),
        },
        "updated": _INTEGER,
        "link": _NULL,
        "locked": _BOOLEAN,
        "roundness": _nullable(_closed({"type": _INTEGER})),
    }


SHAPE_SCHEMA = _closed(_common(["rectangle", "ellipse", "diamond"]))
TEXT_SCHEMA = _closed(
    {
        **_common(["text"]),
        "text": _STRING,
        "fontSize": _NUMBER,
        "fontFamily": _INTEGER,
        "textAlign": {"type": "string", "enum": ["left", "center", "right"]},
        "verticalAlign": {"type": "string", "enum": ["top", "middle", "bottom"]},
        "containerId": {"type": ["string", "null"]},
        "originalText": _STRING,
        "lineHeight": _NUMBER,
    }
)
LINEAR_SCHEMA = _closed(
    {
        **_common(["arrow", "line"]),
        "points": _POINTS,
        "startBinding": _BINDING,
        "endBinding": _BINDING,
        "lastCommittedPoint": _NULL,
        "startArrowhead": _ARROWHEAD,
        "endArrowhead": _ARROWHEAD,
        "elbowed": _BOOLEAN,
    }
)
FREEDRAW_SCHEMA = _closed(
    {
        **_common(["freedraw"]),
        "points": _POINTS,
        "pressures": {"type": "array", "items": _NUMBER},
        "simulatePressure": _BOOLEAN,
        "lastCommittedPoint": _NULL,
    }
)

SCENE_SCHEMA: dict[str, Any] = _closed(
    {
        "type": {"type": "string", "enum": ["excalidraw"]},
        "version": _INTEGER,
        "source": _STRING,
        "elements": {
            "type": "array",
            "items": {"anyOf": [SHAPE_SCHEMA, TEXT_SCHEMA, LINEAR_SCHEMA, FREEDRAW_SCHEMA]},
        },
        "appState": _closed({"viewBackgroundColor": _STRING, "gridSize": _NULL}),
        "files": _closed({}),
    }
)
"""The whole scene (spec §2.2 item 1). ``elements`` comes before ``appState`` so a
schema-following stream reaches the elements at once."""


# --------------------------------------------------------------------------- the local grammar

_STROKES = [INK, *(swatch.stroke for swatch in PALETTE)]
_FILLS = ["transparent", *(swatch.background for swatch in PALETTE)]
_WHOLE = {"type": "integer"}
_NAME = {"type": "string", "minLength": 1, "maxLength": 40}
"""An id or a label: one to forty characters (a bound on the tokens an element can take)."""
_POINT = {"type": "array", "items": _WHOLE, "minItems": 2, "maxItems": 2}
_PLACE = {
    "x": {"type": "integer", "enum": list(range(0, 1201, 40))},
    "y": {"type": "integer", "enum": list(range(0, 801, 40))},
}
"""A point of a 40 px grid on the 1200 x 800 canvas the prompt lays out on (the converter
takes no numeric bounds; left free, the model drew 12 px shapes in one corner)."""
LOCAL_ELEMENTS = (3, 8)
"""The fewest and most elements the local grammar lets a scene have: left alone,
SmolLM2-135M wrote one text and stopped, or repeated one element until the budget ran out."""


def _lean(kinds: list[str], fields: dict[str, Any]) -> dict[str, Any]:
    """An element of ``kinds`` with only the fields that decide what is drawn: the type first,
    so that a small model commits to what it draws before how."""
    return _closed({"type": {"type": "string", "enum": kinds}, "id": _NAME, **fields})


LOCAL_SHAPE_SCHEMA = _lean(
    ["rectangle", "ellipse", "diamond"],
    {
        "label": _NAME,
        **_PLACE,
        "width": {"type": "integer", "enum": [120, 160, 200, 240]},
        "height": {"type": "integer", "enum": [60, 80, 100, 120]},
        "strokeColor": {"type": "string", "enum": _STROKES},
        "backgroundColor": {"type": "string", "enum": _FILLS},
    },
)
"""A shape and the text inside it in one: ``label`` becomes a text element bound to the shape
(:func:`sweepbench.artifacts.excalidraw.repair.expand_label`)."""
LOCAL_LINEAR_SCHEMA = _lean(
    ["arrow", "line"],
    {
        **_PLACE,
        "points": {"type": "array", "items": _POINT, "minItems": 2, "maxItems": 4},
        "strokeColor": {"type": "string", "enum": _STROKES},
    },
)
LOCAL_SCENE_SCHEMA: dict[str, Any] = _closed(
    {
        "type": {"type": "string", "enum": ["excalidraw"]},
        "version": _INTEGER,
        "source": _STRING,
        "elements": {
            "type": "array",
            "minItems": LOCAL_ELEMENTS[0],
            "maxItems": LOCAL_ELEMENTS[1],
            "items": {"anyOf": [LOCAL_SHAPE_SCHEMA, LOCAL_LINEAR_SCHEMA]},
        },
        "appState": _closed(
            {"viewBackgroundColor": {"type": "string", "enum": ["#ffffff"]}, "gridSize": _NULL}
        ),
        "files": _closed({}),
    }
)
"""What the local model is held to (as a llama.cpp grammar): 3 to 8 labelled shapes and
arrows, each cut down to what decides the drawing (type, id, label, place on a 40 px grid,
one of a few sizes, palette colours, two to four whole-number points), in that order, on a
white canvas. Under the full
:data:`SCENE_SCHEMA`, SmolLM2-135M spent ~300 tokens per element on twenty-five fields and
copied the prompt's example (empty texts, one spot, opacity 1 of 100); free texts it wrote
one on top of another. The normaliser and Excalidraw's own restore fill in the rest."""
