"""The model-facing JSON schemas for structured output (spec artifacts.md §3.3 and §3.8).
Every object is closed (``additionalProperties: false``) and lists every field as required, as
OpenAI's strict mode demands; optional v2 fields are required but nullable. v2 is unrolled to
depth 4 rather than recursive, because some providers reject recursive schemas. Both schemas
also convert to llama.cpp grammars."""

from __future__ import annotations

from typing import Any

from sweepbench.artifacts.sculpture.mesh import SHAPES

Schema = dict[str, Any]


def _object(properties: dict[str, Schema]) -> Schema:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, {"type": "null"}]}


_VEC = {"$ref": "#/$defs/vec3"}
_NUM: Schema = {"type": "number"}
_STR: Schema = {"type": "string"}
_MATERIAL: dict[str, Schema] = {
    "color": {"type": "string", "description": "#RRGGBB"},
    "metallic": _NUM,
    "roughness": _NUM,
    "emissive_strength": _NUM,
}


def _part(with_position: bool = True) -> Schema:
    fields: dict[str, Schema] = {"name": _STR, "shape": {"type": "string", "enum": list(SHAPES)}}
    fields["size"] = _VEC
    if with_position:
        fields["position"] = _VEC
    fields["rotation"] = _VEC
    return _object({**fields, **_MATERIAL})


_BASE_DEFS: dict[str, Schema] = {
    "vec3": _object({"x": _NUM, "y": _NUM, "z": _NUM}),
    "part": _part(),
}

V1: Schema = {
    **_object(
        {
            "name": _STR,
            "notes": _STR,
            "parts": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/part"}},
        }
    ),
    "$defs": _BASE_DEFS,
}


def _v2() -> Schema:
    defs: dict[str, Schema] = dict(_BASE_DEFS)
    defs["ref"] = _object(
        {"ref": _STR, "position": _VEC, "rotation": _nullable(_VEC), "name": _nullable(_STR)}
    )
    # entry<d>: what may stand at depth d (a group there holds entries of depth d + 1; at
    # depth 4 only leaves and refs, since a group's children would be deeper than 4).
    defs["entry4"] = {"anyOf": [{"$ref": "#/$defs/part"}, {"$ref": "#/$defs/ref"}]}
    for depth in (3, 2, 1):
        defs[f"group{depth}"] = _object(
            {
                "group": _STR,
                "position": _VEC,
                "rotation": _nullable(_VEC),
                "children": {"type": "array", "items": {"$ref": f"#/$defs/entry{depth + 1}"}},
            }
        )
        defs[f"entry{depth}"] = {
            "anyOf": [
                {"$ref": "#/$defs/part"},
                {"$ref": "#/$defs/ref"},
                {"$ref": f"#/$defs/group{depth}"},
            ]
        }
    defs["leaf_def"] = _part(with_position=False)
    # A def is placed by a ref at depth ≥ 1, so its children stand at depth 2 or deeper.
    defs["group_def"] = _object(
        {"children": {"type": "array", "items": {"$ref": "#/$defs/entry2"}}}
    )
    defs["def"] = _object(
        {
            "name": _STR,
            "body": {"anyOf": [{"$ref": "#/$defs/leaf_def"}, {"$ref": "#/$defs/group_def"}]},
        }
    )
    top = _object(
        {
            "name": _STR,
            "notes": _STR,
            "defs": {"type": "array", "items": {"$ref": "#/$defs/def"}},
            "parts": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/entry1"}},
        }
    )
    return {**top, "$defs": defs}


V2: Schema = _v2()
SCHEMAS: dict[str, Schema] = {"v1": V1, "v2": V2}
