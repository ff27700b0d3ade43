"""A terminal preview of a cell's artifact: one line per drawing element or sculpture part,
so a stored sweep can be read without a browser."""

from __future__ import annotations

from typing import Any

MAX_LINES = 40


def _num(value: Any) -> str:
    return f"{value:g}" if isinstance(value, int | float) else "?"


def element_line(element: dict[str, Any]) -> str:
    """``rectangle "API" at (0, 0) 200×80``."""
    kind = str(element.get("type", "?"))
    label = element.get("text")
    words = f' "{str(label)[:40]}"' if label else ""
    size = ""
    if "width" in element and "height" in element:
        size = f" {_num(element['width'])}×{_num(element['height'])}"
    return f"{kind}{words} at ({_num(element.get('x'))}, {_num(element.get('y'))}){size}"


def part_line(part: dict[str, Any]) -> str:
    """``cylinder tower #f1ede4 0.6×1.6×0.6 m at (0, 0.8, 0)`` (refs and groups named)."""
    if "ref" in part:
        return f"ref {part['ref']}"
    if "children" in part:
        return f"group {part.get('name', '')} of {len(part['children'])}".rstrip()
    size = part.get("size") or {}
    where = part.get("position") or {}
    dims = "×".join(_num(size.get(axis)) for axis in "xyz")
    at = ", ".join(_num(where.get(axis)) for axis in "xyz")
    shape, name, colour = part.get("shape", "?"), part.get("name", ""), part.get("color", "")
    return f"{shape} {name} {colour} {dims} m at ({at})"


def outline(kind: str, artifact: dict[str, Any]) -> list[str]:
    """Preview lines for an artifact (empty for text or an empty artifact)."""
    if kind == "excalidraw":
        items = [e for e in artifact.get("elements", []) if not e.get("isDeleted")]
        lines = [element_line(e) for e in items if isinstance(e, dict)]
    elif kind == "sculpture":
        lines = [part_line(p) for p in artifact.get("parts", []) if isinstance(p, dict)]
    else:
        return []
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES], f"… and {len(lines) - MAX_LINES} more"]
    return lines
