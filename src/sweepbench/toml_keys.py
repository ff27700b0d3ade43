"""Unknown keys and sections in the settings files are refused, not ignored (issue 28 §4).

A typo in ``models.toml`` (``price_input`` for ``price_in``) would otherwise leave a model
free, and one in ``config.toml`` (``[endpoint.x]``, ``[leaderbord]``) a server or a shared
place silently unused. A *schema* says which names a table may hold:

* a ``frozenset`` of names: the table's settings (their values are not looked into);
* a ``dict``: sub-tables by name, ``"*"`` standing for any name (each checked against its
  value), others refused;
* :data:`ANY`: any names (a table of the user's own names, such as ``[keys]``).

The message names the file, the line, the table, the unknown name and the nearest known one.
Keyword settings given to the Python API (a sweep's, a generation's: each a ``TypedDict``) are
refused the same way (:func:`refuse_unknown_settings`): a typo is never silently dropped.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final, TypeAlias

from sweepbench.errors import UserError

ANY: Final = "any"
"""A table whose names are the user's own (every name allowed)."""

Schema: TypeAlias = "frozenset[str] | Mapping[str, Schema] | str"

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*=""")


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the known name nearest ``name``; empty when none is near."""
    nearest = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {nearest[0]!r}?)" if nearest else ""


def refuse_unknown_settings(settings: Mapping[str, object], declared: type, what: str) -> None:
    """A UserError naming the first of ``settings`` that ``declared`` (a ``TypedDict``) does not
    declare, the nearest one and all of them; ``what`` names whose settings they are."""
    known = sorted(declared.__annotations__)
    for name in settings:
        if name not in known:
            raise UserError(
                f"{what} has no setting {name!r}{did_you_mean(name, known)}; its settings are: "
                f"{', '.join(known)}"
            )


def refuse_unknown_keys(data: Mapping[str, Any], schema: Schema, text: str, shown: str) -> None:
    """Raise a UserError for the first name in ``data`` that ``schema`` does not allow."""
    for path, name, known in _unknown(data, schema, ()):
        line = line_of(text, path, name)
        where = f"{shown}, line {line}" if line else shown
        hint = did_you_mean(name, known)
        listed = ", ".join(sorted(known)) or "none"
        if path:
            table = ".".join(path)
            raise UserError(
                f"{where}: [{table}] has no setting {name!r}{hint}; its settings are: {listed}"
            )
        raise UserError(f"{where}: no section [{name}]{hint}; the sections are: {listed}")


def _unknown(
    data: Mapping[str, Any], schema: Schema, path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], str, list[str]]]:
    if isinstance(schema, str):  # ANY
        return
    if isinstance(schema, frozenset):
        for name in data:
            if name not in schema:
                yield path, name, sorted(schema)
        return
    known = sorted(k for k in schema if k != "*")
    for name, value in data.items():
        sub = schema.get(name, schema.get("*"))
        if sub is None:
            yield path, name, known
        elif isinstance(value, Mapping):
            yield from _unknown(value, sub, (*path, name))


def _parts(header: str) -> tuple[str, ...]:
    parts = re.findall(r"""\s*("[^"]*"|'[^']*'|[^.\s]+)\s*(?:\.|$)""", header)
    return tuple(p.strip("\"'") for p in parts)


def line_of(text: str, path: tuple[str, ...], name: str) -> int | None:
    """The line (from 1) where ``name`` is set in table ``path``, or where table
    ``path + (name,)`` (or one below it) starts; None when it cannot be told."""
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = _parts(header.group(1))
            if table[: len(path) + 1] == (*path, name):
                return number
            continue
        key = _KEY.match(line)
        if key and table == path and key.group(1).strip("\"'") == name:
            return number
    return None
