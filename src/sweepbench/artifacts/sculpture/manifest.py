"""The manifest file format (spec artifacts.md §3.9): the strict path for imported files, with
pydantic models that refuse unknown keys and out-of-range values and name the exact path of
every error, plus the canonical export, provenance stamping and the download name."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
)

from sweepbench.artifacts.sculpture.structure import ManifestError, check
from sweepbench.nesting import bounded_json_loads

__all__ = ["Manifest", "ManifestError", "download_name", "dumps", "loads", "stamp", "validate"]

MAX_FILE_BYTES = 256 * 1024


def _number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number")
    return float(value)


def _range(lo: float, hi: float) -> Any:
    return Annotated[float, BeforeValidator(_number), Field(ge=lo, le=hi, allow_inf_nan=False)]


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Size(_Closed):
    """Full extents in metres."""

    x: _range(0.01, 4.0)  # type: ignore[valid-type]
    y: _range(0.01, 4.0)  # type: ignore[valid-type]
    z: _range(0.01, 4.0)  # type: ignore[valid-type]


class Position(_Closed):
    """A centre, metres, each axis within ±5."""

    x: _range(-5.0, 5.0)  # type: ignore[valid-type]
    y: _range(-5.0, 5.0)  # type: ignore[valid-type]
    z: _range(-5.0, 5.0)  # type: ignore[valid-type]


class Rotation(_Closed):
    """Euler degrees, each within ±360."""

    x: _range(-360.0, 360.0)  # type: ignore[valid-type]
    y: _range(-360.0, 360.0)  # type: ignore[valid-type]
    z: _range(-360.0, 360.0)  # type: ignore[valid-type]


Shape = Literal["box", "sphere", "cylinder", "cone", "torus", "plane"]
Color = Annotated[str, Field(pattern=r"^#[0-9a-fA-F]{6}$")]


class _Leaf(_Closed):
    name: Annotated[str, Field(max_length=48)]
    shape: Shape
    size: Size
    rotation: Rotation
    color: Color
    metallic: _range(0.0, 1.0)  # type: ignore[valid-type]
    roughness: _range(0.05, 1.0)  # type: ignore[valid-type]
    emissive_strength: _range(0.0, 1.0)  # type: ignore[valid-type]


class LeafDef(_Leaf):
    """A part without a position: placed by the refs to it."""

    position: Any = None

    @field_validator("position", mode="before")
    @classmethod
    def _no_position(cls, value: Any) -> Any:
        raise ValueError("a def has no position; each ref to it gives one")


class Part(_Leaf):
    """A placed leaf: a shape, its size, place, rotation and material."""

    position: Position


class Ref(_Closed):
    """A placement of a def."""

    ref: str
    position: Position
    rotation: Rotation | None = None
    name: Annotated[str, Field(max_length=48)] | None = None


class Group(_Closed):
    """Children that move and rotate together."""

    group: Annotated[str, Field(max_length=48)]
    position: Position
    rotation: Rotation | None = None
    children: Annotated[list[Entry], Field(min_length=1)]


def _entry_tag(value: Any) -> str:
    if isinstance(value, dict):
        return "ref" if "ref" in value else "group" if "group" in value else "part"
    return "ref" if isinstance(value, Ref) else "group" if isinstance(value, Group) else "part"


def _def_tag(value: Any) -> str:
    if isinstance(value, dict):
        return "group def" if "children" in value else "leaf def"
    return "group def" if isinstance(value, GroupDef) else "leaf def"


Entry = Annotated[
    Annotated[Part, Tag("part")] | Annotated[Ref, Tag("ref")] | Annotated[Group, Tag("group")],
    Discriminator(_entry_tag),
]


class GroupDef(_Closed):
    """A def made of children."""

    children: Annotated[list[Entry], Field(min_length=1)]


DefBody = Annotated[
    Annotated[LeafDef, Tag("leaf def")] | Annotated[GroupDef, Tag("group def")],
    Discriminator(_def_tag),
]


class Provenance(_Closed):
    """Where a manifest came from; informational, never read by the builder."""

    prompt: str
    model: str
    usd: Annotated[float, BeforeValidator(_number), Field(ge=0, allow_inf_nan=False)]
    generated: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]


class Manifest(_Closed):
    """A manifest file, version 1 or 2."""

    version: Literal[1, 2]
    parts: list[Entry]
    name: str | None = None
    notes: str | None = None
    provenance: Provenance | None = None
    defs: dict[str, DefBody] | None = None


Group.model_rebuild()
GroupDef.model_rebuild()
Manifest.model_rebuild()
_TAGS = {"part", "ref", "group", "leaf def", "group def"}


def error_path(loc: tuple[str | int, ...]) -> str:
    """A pydantic location as the spec writes paths: ``parts[3].colour``."""
    out = ""
    for i, key in enumerate(loc):
        after_entry = i > 0 and (isinstance(loc[i - 1], int) or (i == 2 and loc[0] == "defs"))
        if isinstance(key, str) and key in _TAGS and after_entry:
            continue
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else key)
    return out or "manifest"


def validate(data: Any) -> dict[str, Any]:
    """A parsed manifest as a canonical dict, or ManifestError naming the first bad path."""
    if isinstance(data, dict) and data.get("version") == 1 and "defs" in data:
        raise ManifestError("defs: defs require version 2")
    try:
        model = Manifest.model_validate(data)
    except ValidationError as exc:
        # An unknown key (``colour``) explains the "missing" error beside it, so it goes first.
        err = min(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
        words = {"extra_forbidden": "unknown key", "missing": "required"}.get(
            err["type"], err["msg"]
        )
        words = words.removeprefix("Value error, ")
        raise ManifestError(f"{error_path(err['loc'])}: {words}") from None
    manifest = model.model_dump(exclude_none=True)
    check(manifest)
    return manifest


def loads(text: str | bytes) -> dict[str, Any]:
    """Import a manifest file: UTF-8 JSON of at most 256 KiB, nested at most
    :data:`~sweepbench.nesting.MAX_DEPTH` levels, validated strictly."""
    raw = text.encode() if isinstance(text, str) else text
    if len(raw) > MAX_FILE_BYTES:
        raise ManifestError(f"manifest: {len(raw):,} bytes; the limit is {MAX_FILE_BYTES:,}")
    try:
        data = bounded_json_loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError as exc:
        raise ManifestError(f"manifest: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ManifestError(
            f"manifest: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except ValueError as exc:  # a NaN or Infinity constant, or TooDeep
        raise ManifestError(f"manifest: {exc}") from None
    return validate(data)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def dumps(manifest: dict[str, Any]) -> str:
    """Canonical text: ``version`` first, then keys sorted recursively, 2-space indent."""
    ordered = {
        "version": manifest["version"],
        **_sorted({k: v for k, v in manifest.items() if k != "version"}),
    }
    return json.dumps(ordered, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def stamp(
    manifest: dict[str, Any], *, prompt: str, model: str, usd: float, generated: str
) -> dict[str, Any]:
    """A model's manifest with its provenance filled in (``generated`` is ``YYYY-MM-DD``)."""
    provenance = {"prompt": prompt, "model": model, "usd": float(usd), "generated": generated}
    return {**manifest, "provenance": provenance}


def download_name(name: str | None) -> str:
    """The file stem for downloads: lower case, runs outside [a-z0-9] → ``-``, ≤ 48 chars."""
    stem = re.sub(r"[^a-z0-9]+", "-", (name or "").lower()).strip("-")[:48]
    return stem or "sculpture"
