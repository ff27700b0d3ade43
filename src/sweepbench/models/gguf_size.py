"""A model's size in billions of parameters (spec §17.5's size filter): the catalogue's
``size_b`` (operator-editable in ``SWEEPBENCH_HOME/models.toml``), else for a local model what
its GGUF file says of itself, else undisclosed (None).

A GGUF file's count is its ``general.parameter_count`` key when written, else the sum of its
tensors' element counts, else its ``general.size_label`` (``135M``, ``7B``, ``8x7B``). Reading
it maps the file and its tensor index only (the ``gguf`` package), never the weights."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

BILLION = 1_000_000_000
_LABEL = re.compile(r"^(?:(\d+)x)?(\d+(?:\.\d+)?)([KMBT])$", re.IGNORECASE)
_SCALE = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}


def size_label_parameters(label: str) -> int | None:
    """The parameters a ``general.size_label`` names (``135M`` → 135,000,000; ``8x7B`` →
    56,000,000,000); None for a label of another shape."""
    match = _LABEL.match(label.strip())
    if match is None:
        return None
    experts, number, unit = match.groups()
    return round(int(experts or 1) * float(number) * _SCALE[unit.upper()])


def _field_value(reader: Any, key: str) -> Any:
    field = reader.fields.get(key)
    if field is None:
        return None
    try:
        return field.contents()
    except (IndexError, ValueError, TypeError):
        return None


def gguf_parameters(path: Path) -> int | None:
    """The parameter count a GGUF file gives of itself; None when the file cannot be read as
    GGUF or says nothing usable."""
    return _gguf_parameters(str(path.resolve()), *_stamp(path))


def _stamp(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError:
        return (-1, -1)
    return (stat.st_size, stat.st_mtime_ns)


@cache
def _gguf_parameters(path: str, size: int, mtime_ns: int) -> int | None:
    """Cached per file and its size and modification time."""
    if size < 0:
        return None
    try:
        from gguf import GGUFReader

        reader = GGUFReader(path)
    except Exception:  # any unreadable file is simply "undisclosed"
        return None
    count = _field_value(reader, "general.parameter_count")
    if isinstance(count, int) and count > 0:
        return count
    total = sum(int(t.n_elements) for t in reader.tensors)
    if total > 0:
        return total
    label = _field_value(reader, "general.size_label")
    return size_label_parameters(label) if isinstance(label, str) else None


def model_size_b(model_id: str) -> float | None:
    """A model's total size in billions: the catalogue's ``size_b``, else a local model's
    GGUF, else None (undisclosed, as for an id the catalogue cannot resolve)."""
    from sweepbench.errors import SweepbenchError
    from sweepbench.models.registry import model_info

    try:
        info = model_info(model_id)
    except SweepbenchError:
        return None
    if info.size_b is not None:
        return info.size_b
    if info.provider != "local":
        return None
    from sweepbench.models.local import resolve_weights

    try:
        weights = resolve_weights(info)
    except SweepbenchError:
        return None
    count = gguf_parameters(weights)
    return None if count is None else count / BILLION
