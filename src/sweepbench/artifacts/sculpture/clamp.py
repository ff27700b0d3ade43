"""The lenient path for model output (spec artifacts.md §3.6, §3.8): every value is clamped or
defaulted rather than refused, and every change adds a note naming the field, e.g.
``parts[3].size.x 6.2 → 4.0``. The result is a canonical manifest dict (§3.9) without
structural repairs; :mod:`.structure` does those."""

from __future__ import annotations

import json
import math
from typing import Any

from sweepbench.artifacts.sculpture.geometry import DEFAULT_HEX, HEX
from sweepbench.artifacts.sculpture.mesh import SHAPES

MISSING: Any = object()
VECTORS = {"size": (0.01, 4.0, 0.5), "position": (-5.0, 5.0, 0.0), "rotation": (-360.0, 360.0, 0.0)}
SCALARS = {
    "metallic": (0.0, 1.0, 0.0),
    "roughness": (0.05, 1.0, 0.8),
    "emissive_strength": (0.0, 1.0, 0.0),
}
PART_FIELDS = ("name", "shape", "size", "position", "rotation", "color", *SCALARS)
NAME_LEN = 48
_NULLABLE = ("ref", "group", "children", "rotation", "name")
"""Keys that the v2 model schema may send as null, meaning absent."""


def show(value: Any) -> str:
    """A value as a note shows it."""
    if value is MISSING:
        return "missing"
    if isinstance(value, float):
        return repr(value)
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def number(value: Any, path: str, limits: tuple[float, float, float], notes: list[str]) -> float:
    """A number clamped to [lo, hi]; missing, boolean, non-numeric or non-finite → default."""
    lo, hi, default = limits
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        notes.append(f"{path} {show(value)} → {default!r}")
        return default
    result = float(value)
    if result < lo or result > hi:
        clamped = min(max(result, lo), hi)
        notes.append(f"{path} {show(value)} → {clamped!r}")
        return clamped
    return result


def vector(
    value: Any, path: str, limits: tuple[float, float, float], notes: list[str]
) -> dict[str, float]:
    """An ``{x, y, z}`` object, each axis through :func:`number`; unknown keys are dropped."""
    if not isinstance(value, dict):
        if value is not MISSING:
            notes.append(f"{path} {show(value)} is not an {{x, y, z}} object")
        value = {}
    for key in value:
        if key not in ("x", "y", "z"):
            notes.append(f"{path}.{key} dropped (unknown field)")
    return {
        axis: number(value.get(axis, MISSING), f"{path}.{axis}", limits, notes) for axis in "xyz"
    }


def name(value: Any, path: str, default: str, notes: list[str]) -> str:
    """A name cut to 48 characters; missing or not a string → ``default``."""
    if not isinstance(value, str) or not value.strip():
        notes.append(f"{path} {show(value)} → {show(default)}")
        return default
    if len(value) > NAME_LEN:
        notes.append(f"{path} truncated to {NAME_LEN} characters")
        return value[:NAME_LEN]
    return value


def color(value: Any, path: str, notes: list[str]) -> str:
    """``#RRGGBB``, the ``#`` optional; anything else → the default grey (§3.6)."""
    if isinstance(value, str):
        match = HEX.fullmatch(value.strip())
        if match is not None:
            result = "#" + match.group(1)
            if result != value:
                notes.append(f"{path} {show(value)} → {show(result)}")
            return result
    notes.append(f"{path} {show(value)} → {show(DEFAULT_HEX)} (linear 0.75, 0.75, 0.78)")
    return DEFAULT_HEX


def _unknown(raw: dict[str, Any], allowed: tuple[str, ...], path: str, notes: list[str]) -> None:
    for key, value in raw.items():
        if key in allowed or (key in _NULLABLE and value is None):
            continue
        notes.append(f"{path}.{key} dropped (unknown field)")


def leaf(
    raw: dict[str, Any], path: str, index: int, notes: list[str], *, placed: bool = True
) -> dict[str, Any] | None:
    """A clamped leaf part (``placed=False``: a leaf def, which has no position); None when
    its shape is unknown, and the part is dropped with a note."""
    shape = raw.get("shape", MISSING)
    if isinstance(shape, str) and shape.strip().lower() in SHAPES:
        if shape != shape.strip().lower():
            notes.append(f"{path}.shape {show(shape)} → {show(shape.strip().lower())}")
        shape = shape.strip().lower()
    else:
        notes.append(f"dropped {path} — unknown shape {show(shape)}")
        return None
    fields = PART_FIELDS if placed else tuple(f for f in PART_FIELDS if f != "position")
    _unknown(raw, fields, path, notes)
    part: dict[str, Any] = {
        "name": name(raw.get("name", MISSING), f"{path}.name", f"part{index}", notes)
    }
    part["shape"] = shape
    for key, limits in VECTORS.items():
        if key in fields:
            part[key] = vector(raw.get(key, MISSING), f"{path}.{key}", limits, notes)
    part["color"] = color(raw.get("color", MISSING), f"{path}.color", notes)
    for key, limits in SCALARS.items():
        part[key] = number(raw.get(key, MISSING), f"{path}.{key}", limits, notes)
    return part


def entry(raw: Any, path: str, index: int, notes: list[str]) -> dict[str, Any] | None:
    """One entry of ``parts`` or ``children``: a leaf, a ref or an inline group."""
    if not isinstance(raw, dict):
        notes.append(f"dropped {path} — not an object")
        return None
    if raw.get("ref") is not None:
        if not isinstance(raw["ref"], str):
            notes.append(f"dropped {path} — ref {show(raw['ref'])} is not a def name")
            return None
        _unknown(raw, ("ref", "position", "rotation", "name"), path, notes)
        out: dict[str, Any] = {"ref": raw["ref"]}
        out["position"] = vector(
            raw.get("position", MISSING), f"{path}.position", VECTORS["position"], notes
        )
        _optional_transform(raw, out, path, notes)
        return out
    if raw.get("group") is not None or raw.get("children") is not None:
        _unknown(raw, ("group", "position", "rotation", "children"), path, notes)
        out = {"group": name(raw.get("group", MISSING), f"{path}.group", f"group{index}", notes)}
        out["position"] = vector(
            raw.get("position", MISSING), f"{path}.position", VECTORS["position"], notes
        )
        _optional_transform(raw, out, path, notes, with_name=False)
        out["children"] = entries(raw.get("children"), f"{path}.children", notes)
        return out
    return leaf(raw, path, index, notes)


def _optional_transform(
    raw: dict[str, Any], out: dict[str, Any], path: str, notes: list[str], *, with_name: bool = True
) -> None:
    if raw.get("rotation") is not None:
        out["rotation"] = vector(raw["rotation"], f"{path}.rotation", VECTORS["rotation"], notes)
    if with_name and raw.get("name") is not None:
        out["name"] = name(raw["name"], f"{path}.name", "ref", notes)


def entries(raw: Any, path: str, notes: list[str]) -> list[dict[str, Any]]:
    """A list of entries; a non-list counts as empty (with a note)."""
    if not isinstance(raw, list):
        notes.append(f"{path} {show(raw if raw is not None else MISSING)} is not a list")
        return []
    kept = (entry(item, f"{path}[{i}]", i, notes) for i, item in enumerate(raw))
    return [item for item in kept if item is not None]


def defs(raw: Any, notes: list[str], limit: int = 8) -> dict[str, dict[str, Any]]:
    """Definitions, from the model's list of ``{name, body}`` or the file's object form; the
    first ``limit`` are kept."""
    if raw is None or raw is MISSING:
        return {}
    if isinstance(raw, dict):
        items: list[tuple[Any, Any, str]] = [(k, v, f"defs.{k}") for k, v in raw.items()]
    elif isinstance(raw, list):
        items = []
        for i, item in enumerate(raw):
            if (
                not isinstance(item, dict)
                or not isinstance(item.get("name"), str)
                or not item["name"]
            ):
                notes.append(f"dropped defs[{i}] — it needs a name and a body")
                continue
            _unknown(item, ("name", "body"), f"defs[{i}]", notes)
            items.append((item["name"], item.get("body"), f"defs[{i}]"))
    else:
        notes.append(f"defs {show(raw)} dropped — not a list")
        return {}
    out: dict[str, dict[str, Any]] = {}
    for def_name, body, path in items:
        if def_name in out:
            notes.append(f"dropped {path} — a second def named {def_name!r}")
        elif len(out) >= limit:
            notes.append(f"dropped {path} ({def_name!r}) — at most {limit} defs")
        elif not isinstance(body, dict):
            notes.append(f"dropped {path} — its body is not an object")
        elif body.get("children") is not None:
            _unknown(body, ("children",), f"{path}.body", notes)
            out[def_name] = {"children": entries(body["children"], f"{path}.children", notes)}
        else:
            if "position" in body:
                notes.append(f"{path}.position dropped — a def is placed by its refs")
                body = {k: v for k, v in body.items() if k != "position"}
            part = leaf(body, path, 0, notes, placed=False)
            if part is not None:
                out[def_name] = part
    return out
