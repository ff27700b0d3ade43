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
