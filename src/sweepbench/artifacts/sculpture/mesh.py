"""Tessellation of the six shapes (spec artifacts.md §3.11), with the reference vertex and
triangle counts the metrics depend on. Sizes are full extents (§3.4); every mesh is built in
its part's local frame, centred at the origin, and is cached by (shape, used sizes)."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
U32 = npt.NDArray[np.uint32]

SHAPES = ("box", "sphere", "cylinder", "cone", "torus", "plane")
AROUND = 24
"""Segments around a sphere, cylinder or cone."""
RINGS = 16
"""Rings of a sphere, pole to pole."""
TORUS_RING, TORUS_TUBE = 32, 16


class Mesh(NamedTuple):
    """Float32 positions and normals (N×3) and uint32 triangle indices (M×3)."""

    positions: F32
    normals: F32
    indices: U32


def used_size(shape: str, x: float, y: float, z: float) -> tuple[float, float, float]:
    """The size with the axes a shape ignores set to 0 (so equal meshes share a cache key)."""
    if shape == "box":
        return (x, y, z)
    if shape == "sphere":
        return (x, 0.0, 0.0)
    if shape in ("cylinder", "cone"):
        return (x, y, 0.0)
    return (x, 0.0, z)  # torus, plane


def tessellate(shape: str, x: float, y: float, z: float) -> Mesh:
    """The mesh of one shape at one size (cached; the arrays are read-only)."""
    return _tessellate(shape, *used_size(shape, x, y, z))


@lru_cache(maxsize=1024)
def _tessellate(shape: str, x: float, y: float, z: float) -> Mesh:
    if shape == "box":
        mesh = _box(x, y, z)
    elif shape == "plane":
        mesh = _plane(x, z)
    elif shape == "sphere":
        mesh = _sphere(x / 2)
    elif shape == "cylinder":
        mesh = _cylinder(x / 2, y)
    elif shape == "cone":
        mesh = _cone(x / 2, y)
    elif shape == "torus":
        mesh = _torus(x / 2, max(0.005, z / 2))
    else:
        raise ValueError(f"unknown shape {shape!r}")
    for array in mesh:
        array.setflags(write=False)
    return mesh


def _pack(parts: list[tuple[list[list[float]], list[list[float]], list[list[int]]]]) -> Mesh:
    """Concatenate (positions, normals, triangles) groups into one mesh."""
    positions: list[list[float]] = []
    normals: list[list[float]] = []
    indices: list[list[int]] = []
    for pos, nor, tri in parts:
        base = len(positions)
        positions.extend(pos)
        normals.extend(nor)
        indices.extend([a + base, b + base, c + base] for a, b, c in tri)
    return Mesh(
        np.asarray(positions, dtype=np.float32),
        np.asarray(normals, dtype=np.float32),
        np.asarray(indices, dtype=np.uint32).reshape(-1, 3),
    )


def _smooth(positions: list[list[float]], triangles: list[list[int]]) -> list[list[float]]:
    """Area-weighted vertex normals; vertices at the same position (seams, poles) are welded."""
    pos = np.asarray(positions, dtype=np.float64)
    tri = np.asarray(triangles, dtype=np.int64)
    face = np.cross(pos[tri[:, 1]] - pos[tri[:, 0]], pos[tri[:, 2]] - pos[tri[:, 0]])
    _, weld = np.unique(np.round(pos, 7), axis=0, return_inverse=True)
    weld = weld.reshape(-1)
    acc = np.zeros((int(weld.max()) + 1, 3))
    for corner in range(3):
        np.add.at(acc, weld[tri[:, corner]], face)
    normals = acc[weld]
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = np.divide(normals, length, out=np.zeros_like(normals), where=length > 0)
    result: list[list[float]] = normals.tolist()
    return result


def _box(x: float, y: float, z: float) -> Mesh:
    hx, hy, hz = x / 2, y / 2, z / 2
    faces = []
    # (normal, u axis, v axis): u × v = normal, so the quads wind counter-clockwise outside.
    for n, u, v in (
        ((1, 0, 0), (0, 0, -1), (0, 1, 0)),
        ((-1, 0, 0), (0, 0, 1), (0, 1, 0)),
        ((0, 1, 0), (1, 0, 0), (0, 0, -1)),
        ((0, -1, 0), (1, 0, 0), (0, 0, 1)),
        ((0, 0, 1), (1, 0, 0), (0, 1, 0)),
        ((0, 0, -1), (-1, 0, 0), (0, 1, 0)),
    ):
        quad = []
        for su, sv in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
            quad.append([(n[k] + su * u[k] + sv * v[k]) * h for k, h in enumerate((hx, hy, hz))])
        faces.append((quad, [list(map(float, n))] * 4, [[0, 1, 2], [0, 2, 3]]))
    return _pack(faces)


def _plane(x: float, z: float) -> Mesh:
    hx, hz = x / 2, z / 2
    quad = [[-hx, 0.0, hz], [hx, 0.0, hz], [hx, 0.0, -hz], [-hx, 0.0, -hz]]
    return _pack([(quad, [[0.0, 1.0, 0.0]] * 4, [[0, 1, 2], [0, 2, 3]])])


def _circle(i: int, n: int = AROUND) -> tuple[float, float]:
    """(cos, -sin) of segment i of n: counter-clockwise seen from +Y, seam exact."""
    if i % n == 0:
        return 1.0, 0.0
    angle = 2 * math.pi * i / n
    return math.cos(angle), -math.sin(angle)


def _sphere(r: float) -> Mesh:
    pos: list[list[float]] = []
    for j in range(RINGS + 1):
        theta = math.pi * j / RINGS
        y = r if j == 0 else -r if j == RINGS else r * math.cos(theta)
        ring = 0.0 if j in (0, RINGS) else r * math.sin(theta)
        for i in range(AROUND + 1):
            c, s = _circle(i)
            pos.append([ring * c, y, ring * s])
    tri: list[list[int]] = []
    w = AROUND + 1
    for j in range(RINGS):
        for i in range(AROUND):
            a, b, c, d = j * w + i, j * w + i + 1, (j + 1) * w + i, (j + 1) * w + i + 1
            if j != 0:
                tri.append([a, c, b])
            if j != RINGS - 1:
                tri.append([b, c, d])
    return _pack([(pos, _smooth(pos, tri), tri)])


def _disc(
    r: float, y: float, up: bool
) -> tuple[list[list[float]], list[list[float]], list[list[int]]]:
    """A flat cap: centre plus AROUND rim vertices, facing +Y (up) or −Y."""
    pos = [[0.0, y, 0.0]] + [[r * c, y, r * s] for c, s in map(_circle, range(AROUND))]
    tri = [[0, i + 1, (i + 1) % AROUND + 1] for i in range(AROUND)]
    if not up:
        tri = [[a, c, b] for a, b, c in tri]
    return pos, [[0.0, 1.0 if up else -1.0, 0.0]] * len(pos), tri


def _side(
    r_bottom: float, r_top: float, h: float
) -> tuple[list[list[float]], list[list[float]], list[list[int]]]:
    """The side of a cylinder or cone: two rings of AROUND+1 vertices (seam duplicated)."""
    pos = [
        [r * c, yy, r * s]
        for yy, r in ((-h / 2, r_bottom), (h / 2, r_top))
        for c, s in map(_circle, range(AROUND + 1))
    ]
    w = AROUND + 1
    tri: list[list[int]] = []
    for i in range(AROUND):
        a, b, c, d = i, i + 1, w + i, w + i + 1
        if r_top > 0:
            tri += [[a, b, d], [a, d, c]]
        else:
            tri.append([a, b, c])
    return pos, _smooth(pos, tri), tri


def _cylinder(r: float, h: float) -> Mesh:
    return _pack([_side(r, r, h), _disc(r, h / 2, True), _disc(r, -h / 2, False)])


def _cone(r: float, h: float) -> Mesh:
    return _pack([_side(r, 0.0, h), _disc(r, -h / 2, False)])


def _torus(ring: float, tube: float) -> Mesh:
    pos: list[list[float]] = []
    for i in range(TORUS_RING + 1):
        cu, su = _circle(i, TORUS_RING)
        for j in range(TORUS_TUBE + 1):
            cv, sv = _circle(j, TORUS_TUBE)
            sv = -sv
            reach = ring + tube * cv
            pos.append([reach * cu, tube * sv, reach * su])
    w = TORUS_TUBE + 1
    tri: list[list[int]] = []
    for i in range(TORUS_RING):
        for j in range(TORUS_TUBE):
            a, b, c, d = i * w + j, i * w + j + 1, (i + 1) * w + j, (i + 1) * w + j + 1
            tri += [[a, c, b], [b, c, d]]
    return _pack([(pos, _smooth(pos, tri), tri)])
