"""Parsing and validation of the per-instruction keyword arguments of IFEval items.

ELBench stores each instruction's kwargs as a JSON string (``"{}"`` when there are none); the
Hugging Face copy of IFEval stores dicts in which every unused key is present with a null value.
Both forms are accepted here, nulls are dropped, and the rest is checked against the
instruction's declared kwargs so that a malformed item fails loudly instead of being scored."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from sweepbench.errors import DataError

KwargKind = Literal["int", "positive_int", "str", "char", "str_list", "relation"]

RELATIONS: tuple[str, str] = ("less than", "at least")
"""The two comparison relations IFEval uses: count < threshold, count >= threshold."""


@dataclass(frozen=True)
class KwargSpec:
    """One keyword argument an instruction takes: its name, kind and whether it must be given."""

    name: str
    kind: KwargKind
    required: bool = True


def parse_kwargs_entry(
    entry: Mapping[str, Any] | str | None, instruction_id: str
) -> dict[str, Any]:
    """Turn one kwargs entry (a mapping, a JSON object string or None) into a dict without nulls."""
    if entry is None:
        return {}
    if isinstance(entry, str):
        text = entry.strip()
        if not text:
            return {}
        try:
            decoded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"IFEval kwargs for {instruction_id!r} are not valid JSON: {exc}"
            ) from exc
        if decoded is None:
            return {}
        if not isinstance(decoded, Mapping):
            raise DataError(f"IFEval kwargs for {instruction_id!r} must be a JSON object: {text!r}")
        entry = decoded
    if not isinstance(entry, Mapping):
        raise DataError(
            f"IFEval kwargs for {instruction_id!r} must be a mapping or JSON string, "
            f"got {type(entry).__name__}"
        )
    return {str(key): value for key, value in entry.items() if value is not None}


def _kind_error(instruction_id: str, name: str, expected: str, value: Any) -> DataError:
    """Build the DataError for a kwarg whose value has the wrong kind."""
    return DataError(
        f"IFEval kwarg {name!r} of {instruction_id!r} must be {expected}, got {value!r}"
    )


def _coerce_int(value: Any, instruction_id: str, name: str, minimum: int) -> int:
    """Return ``value`` as an int of at least ``minimum`` (integral floats are accepted)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _kind_error(instruction_id, name, f"an integer >= {minimum}", value)
    return value


def _coerce_value(spec: KwargSpec, value: Any, instruction_id: str) -> Any:
    """Check one kwarg value against its spec and return it in canonical form."""
    if spec.kind == "int":
        return _coerce_int(value, instruction_id, spec.name, 0)
    if spec.kind == "positive_int":
        return _coerce_int(value, instruction_id, spec.name, 1)
    if spec.kind == "relation":
        if value not in RELATIONS:
            raise _kind_error(instruction_id, spec.name, f"one of {RELATIONS}", value)
        return value
    if spec.kind == "char":
        if not isinstance(value, str) or len(value.strip()) != 1:
            raise _kind_error(instruction_id, spec.name, "a single character", value)
        return value.strip()
    if spec.kind == "str_list":
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(item, str) and item.strip() for item in value)
        ):
            raise _kind_error(instruction_id, spec.name, "a non-empty list of words", value)
        return [item.strip() for item in value]
    if not isinstance(value, str) or not value.strip():
        raise _kind_error(instruction_id, spec.name, "a non-empty string", value)
    return value


def validate_kwargs(
    instruction_id: str, given: Mapping[str, Any], specs: tuple[KwargSpec, ...]
) -> dict[str, Any]:
    """Check ``given`` against ``specs``: no unknown names, every required one present, right kinds.

    Returns the kwargs in canonical form (ints as int, a single letter stripped, …)."""
    known = {spec.name for spec in specs}
    unknown = sorted(set(given) - known)
    if unknown:
        raise DataError(
            f"IFEval instruction {instruction_id!r} got unknown kwarg(s) {unknown}; "
            f"it takes {sorted(known) or 'none'}"
        )
    validated: dict[str, Any] = {}
    for spec in specs:
        if spec.name not in given:
            if spec.required:
                raise DataError(f"IFEval instruction {instruction_id!r} needs kwarg {spec.name!r}")
            continue
        validated[spec.name] = _coerce_value(spec, given[spec.name], instruction_id)
    return validated
