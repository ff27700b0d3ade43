"""Expansion and instancing (spec artifacts.md §3.10): the manifest tree becomes a flat list
of placements in world space, composing transforms as quaternions. Leaves that come from a def
carry a ``share`` key, and placements with the same key share one mesh and one material."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sweepbench.artifacts.sculpture.geometry import (
    IDENTITY,
    Quat,
    Vec3,
    euler_to_quat,
    quat_mul,
    rotate,
)
from sweepbench.artifacts.sculpture.structure import Defs, Entry, kind_of

LIMIT = 5.0
_ZERO = {"x": 0.0, "y": 0.0, "z": 0.0}


@dataclass(frozen=True)
class Placement:
    """One leaf as built: its style, its world transform and its share key."""

    name: str
    shape: str
    size: Vec3
    color: str
    metallic: float
    roughness: float
    emissive_strength: float
    position: Vec3
    quat: Quat
    share: str | None = None


Transform = tuple[Vec3, Quat] | None
"""A world transform; None is the identity (children pass through unchanged)."""


def _vec(value: dict[str, float]) -> Vec3:
    return (value["x"], value["y"], value["z"])


def _compose(parent: Transform, position: Vec3, quat: Quat) -> tuple[Vec3, Quat]:
    if parent is None:
        return position, quat
    ppos, pquat = parent
    moved = rotate(pquat, position)
    return (moved[0] + ppos[0], moved[1] + ppos[1], moved[2] + ppos[2]), quat_mul(pquat, quat)


def _as_parent(transform: tuple[Vec3, Quat]) -> Transform:
    position, quat = transform
    return None if position == (0.0, 0.0, 0.0) and quat == IDENTITY else transform


def expand(manifest: dict[str, Any]) -> tuple[list[Placement], list[str]]:
    """The placements of a valid (or repaired) manifest, plus a note for every world position
    clamped to ±5 after composition."""
    out: list[Placement] = []
    notes: list[str] = []
    _walk(manifest["parts"], "parts", None, None, manifest.get("defs", {}), out, notes)
    return out, notes


def _walk(
    items: list[Entry],
    path: str,
    parent: Transform,
    share: str | None,
    defs: Defs,
    out: list[Placement],
    notes: list[str],
) -> None:
    for i, item in enumerate(items):
        where = f"{path}[{i}]"
        here = None if share is None else f"{share}/{i}"
        kind = kind_of(item)
        rotation = euler_to_quat(*_vec(item.get("rotation", _ZERO)))
        world = _compose(parent, _vec(item["position"]), rotation) if kind != "leaf" else None
        if kind == "group":
            assert world is not None
            _walk(item["children"], f"{where}.children", _as_parent(world), here, defs, out, notes)
        elif kind == "ref":
            assert world is not None
            name = item["ref"]
            body = defs[name]
            if "children" in body:
                _walk(
                    body["children"],
                    f"{where} -> defs.{name}.children",
                    _as_parent(world),
                    f"def:{name}",
                    defs,
                    out,
                    notes,
                )
            else:
                placed = {**body, "name": item.get("name", body["name"])}
                own = euler_to_quat(*_vec(body["rotation"]))
                quat = own if world[1] == IDENTITY else quat_mul(world[1], own)
                out.append(
                    _placement(
                        placed, f"{where} -> defs.{name}", world[0], quat, f"def:{name}", notes
                    )
                )
        else:
            position, quat = _compose(parent, _vec(item["position"]), rotation)
            out.append(_placement(item, where, position, quat, here, notes))


def _placement(
    leaf: Entry, path: str, position: Vec3, quat: Quat, share: str | None, notes: list[str]
) -> Placement:
    clamped = []
    for axis, value in zip("xyz", position, strict=True):
        fixed = min(max(value, -LIMIT), LIMIT)
        if fixed != value:
            notes.append(f"{path} world position.{axis} {value!r} → {fixed!r}")
        clamped.append(fixed)
    return Placement(
        name=leaf["name"],
        shape=leaf["shape"],
        size=_vec(leaf["size"]),
        color=leaf["color"],
        metallic=leaf["metallic"],
        roughness=leaf["roughness"],
        emissive_strength=leaf["emissive_strength"],
        position=(clamped[0], clamped[1], clamped[2]),
        quat=quat,
        share=share,
    )
