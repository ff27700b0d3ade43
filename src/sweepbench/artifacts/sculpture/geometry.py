"""Colours (spec artifacts.md §3.7) and rotations (§3.5): the small numeric helpers shared by
the clamps, the expansion and the .glb writer."""

from __future__ import annotations

import math
import re

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]
"""A unit quaternion (x, y, z, w), glTF's order."""

IDENTITY: Quat = (0.0, 0.0, 0.0, 1.0)
HEX = re.compile(r"#?([0-9a-fA-F]{6})")


def srgb_to_linear(channel: float) -> float:
    """One sRGB channel in [0, 1] to linear light (§3.7)."""
    if channel <= 0.04045:
        return channel / 12.92
    return float(((channel + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(channel: float) -> float:
    """The inverse of :func:`srgb_to_linear`."""
    if channel <= 0.04045 / 12.92:
        return channel * 12.92
    return float(1.055 * channel ** (1 / 2.4) - 0.055)


def hex_to_linear(color: str) -> Vec3:
    """``#RRGGBB`` (the ``#`` optional) to linear RGB; raises ValueError otherwise."""
    match = HEX.fullmatch(color.strip())
    if match is None:
        raise ValueError(f"not a #RRGGBB colour: {color!r}")
    digits = match.group(1)
    r, g, b = (srgb_to_linear(int(digits[k : k + 2], 16) / 255) for k in (0, 2, 4))
    return (r, g, b)


def nearest_hex(linear: Vec3) -> str:
    """The ``#RRGGBB`` whose linear value is nearest to ``linear``, channel by channel."""

    def one(value: float) -> int:
        guess = round(linear_to_srgb(value) * 255)
        candidates = [c for c in (guess - 1, guess, guess + 1) if 0 <= c <= 255]
        return min(candidates, key=lambda c: abs(srgb_to_linear(c / 255) - value))

    return "#" + "".join(f"{one(v):02X}" for v in linear)


DEFAULT_LINEAR: Vec3 = (0.75, 0.75, 0.78)
DEFAULT_HEX = nearest_hex(DEFAULT_LINEAR)
"""An invalid colour in model output becomes this (#E1E1E5): the stored manifest must hold a
strict ``#RRGGBB`` so that a re-imported export builds the same bytes."""


def euler_to_quat(x: float, y: float, z: float) -> Quat:
    """Degrees applied extrinsically X, then Y, then Z (R = Rz·Ry·Rx) as (x, y, z, w)."""
    if x == 0 and y == 0 and z == 0:
        return IDENTITY
    qx = (math.sin(math.radians(x) / 2), 0.0, 0.0, math.cos(math.radians(x) / 2))
    qy = (0.0, math.sin(math.radians(y) / 2), 0.0, math.cos(math.radians(y) / 2))
    qz = (0.0, 0.0, math.sin(math.radians(z) / 2), math.cos(math.radians(z) / 2))
    return quat_mul(qz, quat_mul(qy, qx))


def quat_mul(a: Quat, b: Quat) -> Quat:
    """The Hamilton product a × b (apply b first, then a)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


def rotate(q: Quat, v: Vec3) -> Vec3:
    """Rotate a vector by a unit quaternion."""
    qx, qy, qz, qw = q
    x, y, z = v
    # t = 2 (q.xyz × v); v' = v + w t + q.xyz × t
    tx, ty, tz = 2 * (qy * z - qz * y), 2 * (qz * x - qx * z), 2 * (qx * y - qy * x)
    return (
        x + qw * tx + (qy * tz - qz * ty),
        y + qw * ty + (qz * tx - qx * tz),
        z + qw * tz + (qx * ty - qy * tx),
    )


def quat_matrix(q: Quat) -> list[list[float]]:
    """The 3×3 rotation matrix of a unit quaternion (rows)."""
    x, y, z, w = q
    return [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
