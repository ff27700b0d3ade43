"""The .glb writer (spec artifacts.md §3.12). pygltflib assembles the container (header, a JSON
chunk padded with spaces, a BIN chunk padded with zeros, 4-byte aligned buffer views) and
serialises its dataclasses in a fixed field order with compact separators and Python's
shortest round-trip floats, so the same placements always give the same bytes."""

from __future__ import annotations

import json
from importlib import metadata
from typing import Any

import pygltflib  # type: ignore[import-untyped]

from sweepbench.artifacts.sculpture.expand import Placement
from sweepbench.artifacts.sculpture.geometry import IDENTITY, hex_to_linear
from sweepbench.artifacts.sculpture.mesh import tessellate

MAX_GLB_BYTES = 3_000_000


def _version() -> str:
    """The installed version, read without importing the root package (no import cycle)."""
    try:
        return metadata.version("sweepbench")
    except metadata.PackageNotFoundError:
        return "0+unknown"


GENERATOR = f"sweepbench {_version()}"


class TooLarge(ValueError):
    """The .glb is over the size cap."""

    def __init__(self, size: int) -> None:
        super().__init__(f"sculpture too large ({size:,} bytes; the limit is {MAX_GLB_BYTES:,})")
        self.size = size


def _material(placement: Placement) -> Any:
    r, g, b = hex_to_linear(placement.color)
    strength = placement.emissive_strength
    emissive = [r * strength, g * strength, b * strength]
    return pygltflib.Material(
        name=placement.name,
        pbrMetallicRoughness=pygltflib.PbrMetallicRoughness(
            baseColorFactor=[r, g, b, 1.0],
            metallicFactor=placement.metallic,
            roughnessFactor=placement.roughness,
        ),
        emissiveFactor=emissive if strength > 0 and max(emissive) > 0 else None,
        alphaMode=None,
        doubleSided=True,
    )


def build_glb(placements: list[Placement]) -> bytes:
    """The .glb of a list of placements: one node each, one mesh and material per unshared
    leaf or per share key. Raises :class:`TooLarge` over 3,000,000 bytes."""
    gltf = pygltflib.GLTF2(asset=pygltflib.Asset(version="2.0", generator=GENERATOR))
    blob = bytearray()
    mesh_of: dict[str, int] = {}

    def view(data: bytes, target: int) -> int:
        gltf.bufferViews.append(
            pygltflib.BufferView(
                buffer=0, byteOffset=len(blob), byteLength=len(data), target=target
            )
        )
        blob.extend(data)
        blob.extend(b"\0" * (-len(blob) % 4))
        return len(gltf.bufferViews) - 1

    for index, placement in enumerate(placements):
        key = placement.share if placement.share is not None else f"#{index}"
        if key not in mesh_of:
            mesh = tessellate(placement.shape, *placement.size)
            accessor = len(gltf.accessors)
            gltf.accessors += [
                pygltflib.Accessor(
                    bufferView=view(mesh.positions.tobytes(), pygltflib.ARRAY_BUFFER),
                    componentType=pygltflib.FLOAT,
                    count=len(mesh.positions),
                    type=pygltflib.VEC3,
                    min=[float(v) for v in mesh.positions.min(axis=0)],
                    max=[float(v) for v in mesh.positions.max(axis=0)],
                ),
                pygltflib.Accessor(
                    bufferView=view(mesh.normals.tobytes(), pygltflib.ARRAY_BUFFER),
                    componentType=pygltflib.FLOAT,
                    count=len(mesh.normals),
                    type=pygltflib.VEC3,
                ),
                pygltflib.Accessor(
                    bufferView=view(mesh.indices.tobytes(), pygltflib.ELEMENT_ARRAY_BUFFER),
                    componentType=pygltflib.UNSIGNED_INT,
                    count=int(mesh.indices.size),
                    type=pygltflib.SCALAR,
                ),
            ]
            gltf.materials.append(_material(placement))
            primitive = pygltflib.Primitive(
                attributes=pygltflib.Attributes(POSITION=accessor, NORMAL=accessor + 1),
                indices=accessor + 2,
                material=len(gltf.materials) - 1,
            )
            gltf.meshes.append(pygltflib.Mesh(name=placement.name, primitives=[primitive]))
            mesh_of[key] = len(gltf.meshes) - 1
        translation = list(placement.position)
        gltf.nodes.append(
            pygltflib.Node(
                name=placement.name,
                mesh=mesh_of[key],
                translation=translation if any(v != 0 for v in translation) else None,
                rotation=list(placement.quat) if placement.quat != IDENTITY else None,
            )
        )
    gltf.scenes = [pygltflib.Scene(nodes=list(range(len(gltf.nodes))))]
    gltf.scene = 0
    gltf.buffers = [pygltflib.Buffer(byteLength=len(blob))]
    gltf.set_binary_blob(bytes(blob))
    data = b"".join(gltf.save_to_bytes())
    if len(data) > MAX_GLB_BYTES:
        raise TooLarge(len(data))
    return data


def read_glb(data: bytes) -> dict[str, Any]:
    """The JSON chunk of a .glb, read back from the bytes (for metrics taken from the built
    file). Reading it directly is ~50× faster than pygltflib's dataclass loader."""
    if data[:4] != b"glTF" or data[16:20] != b"JSON":
        raise ValueError("not a .glb with a leading JSON chunk")
    length = int.from_bytes(data[12:16], "little")
    document: dict[str, Any] = json.loads(data[20 : 20 + length])
    return document
