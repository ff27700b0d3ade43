"""Sculpture metrics (spec artifacts.md §3.13), taken from the artifact itself: palette and
triangles are read back from the built .glb, and the blend rate comes from the world-space
bounding boxes of the same meshes the .glb holds. Parts that coincide exactly with an earlier
part (same shape, size, position and rotation) are copies, not joints: :func:`distinct` drops
them before the .glb is built, and :func:`blend` never pairs them."""

from __future__ import annotations

from typing import Any

import numpy as np

from sweepbench.artifacts.sculpture.expand import Placement
from sweepbench.artifacts.sculpture.geometry import quat_matrix
from sweepbench.artifacts.sculpture.glb import read_glb
from sweepbench.artifacts.sculpture.mesh import tessellate

JOINT_GAP = 0.02
"""Boxes at most this far apart (metres) read as joined."""
SAME_PLACE = 6
"""Decimals (micrometres) to which two parts' numbers must agree to coincide."""

Geometry = tuple[str, tuple[float, ...]]
"""What a placement occupies: its shape and its rounded size, position and rotation."""


def geometry(placement: Placement) -> Geometry:
    """The space a placement fills; two with equal geometry draw one on top of the other."""
    numbers = (*placement.size, *placement.position, *placement.quat)
    return placement.shape, tuple(round(n, SAME_PLACE) + 0.0 for n in numbers)


def distinct(placements: list[Placement]) -> tuple[list[Placement], list[str]]:
    """The placements without exact copies of an earlier one, and a note per copied part
    saying how many copies were dropped."""
    first: dict[Geometry, int] = {}
    copies: dict[int, int] = {}
    kept: list[Placement] = []
    for placement in placements:
        index = first.setdefault(geometry(placement), len(kept))
        if index == len(kept):
            kept.append(placement)
        else:
            copies[index] = copies.get(index, 0) + 1
    notes = [
        f"{count} cop{'y' if count == 1 else 'ies'} of part {kept[index].name!r} at the same "
        "place (same shape, size, position and rotation) dropped"
        for index, count in copies.items()
    ]
    return kept, notes


def glb_metrics(glb: bytes) -> dict[str, Any]:
    """``part_count``, ``palette``, ``triangles``, ``glb_bytes`` and ``kb`` of a built file."""
    gltf = read_glb(glb)
    default = [1.0, 1.0, 1.0, 1.0]  # glTF's baseColorFactor when a material omits it
    colours = {
        tuple(
            round(float(c), 4)
            for c in m.get("pbrMetallicRoughness", {}).get("baseColorFactor", default)[:3]
        )
        for m in gltf.get("materials", [])
    }
    nodes = gltf.get("nodes", [])
    triangles = 0
    for node in nodes:
        if "mesh" not in node:
            continue
        for primitive in gltf["meshes"][node["mesh"]]["primitives"]:
            triangles += gltf["accessors"][primitive["indices"]]["count"] // 3
    return {
        "part_count": sum("mesh" in node for node in nodes),
        "palette": len(colours),
        "triangles": triangles,
        "glb_bytes": len(glb),
        "kb": round(len(glb) / 1024),
    }


def world_box(placement: Placement) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The world-space axis-aligned bounding box of a placement's transformed vertices."""
    mesh = tessellate(placement.shape, *placement.size)
    rotation = np.asarray(quat_matrix(placement.quat), dtype=np.float64)
    world = mesh.positions.astype(np.float64) @ rotation.T + np.asarray(placement.position)
    return world.min(axis=0), world.max(axis=0)


def blend(placements: list[Placement]) -> dict[str, Any]:
    """The interpenetration report: of the part pairs within 2 cm (joints), how many overlap.
    A part that coincides with another is no joint of it."""
    boxes = [world_box(p) for p in placements]
    shapes = [geometry(p) for p in placements]
    overlap_pairs: list[list[int]] = []
    gap_pairs: list[list[int]] = []
    for i, (amin, amax) in enumerate(boxes):
        for j in range(i + 1, len(boxes)):
            if shapes[i] == shapes[j]:
                continue
            bmin, bmax = boxes[j]
            separation = float(np.max(np.maximum(amin - bmax, bmin - amax)))
            if separation < 0:
                overlap_pairs.append([i, j])
            elif separation <= JOINT_GAP:
                gap_pairs.append([i, j])
    joints = len(overlap_pairs) + len(gap_pairs)
    return {
        "parts": len(placements),
        "joints": joints,
        "overlapping": len(overlap_pairs),
        "gapped": len(gap_pairs),
        "rate": len(overlap_pairs) / joints if joints else None,
        "overlap_pairs": overlap_pairs,
        "gap_pairs": gap_pairs,
    }


def blend_words(report: dict[str, Any]) -> str:
    """The cell's blend line: "k/n joints blend (p%)" or "N parts, no joints within 2 cm"."""
    if not report["joints"]:
        parts = report["parts"]
        return f"{parts} part{'' if parts == 1 else 's'}, no joints within 2 cm"
    return f"{report['overlapping']}/{report['joints']} joints blend ({report['rate'] * 100:.0f}%)"
